/** Mutation.createCompany · updateCompany · deleteCompany (docs/decisions.md §21) */
import { WRITES } from '../graphql/limits.js';
import { builder } from '../graphql/builder.js';
import { recordObject } from '../graphql/record-object.js';
import { exposedFieldsOf, inputFieldsOf } from '../graphql/spec-fields.js';
import { COMPANY_FIELDS, COMPANY_MODEL } from './company.model.js';
import { checked } from '../graphql/rules.js';
import { deleteById, restoreById, staleConflict, updateById, type ById } from '../writes/by-id.js';
import { TRASH_KINDS } from '../writes/trash.js';
import { userActor } from '../events/types.js';
import {
  companyLinks,
  companyTarget,
  createCompany,
  createCompanyInput,
  deleteCompany,
  updateCompany,
  updateCompanyArgs,
  type CreateCompanyInput,
} from './company.service.js';
import type { RecordKey } from '../db/client.js';

export const CompanyRef = recordObject('Company', 'COMPANIES_READ', (t) => ({
  // Every field of the model, as stored (docs/fields.md#a-records-model).
  ...exposedFieldsOf(COMPANY_MODEL)(t as never),
  // A key reads the owner's id only: people are never a key's to read (docs/decisions.md §15).
  owner: t.relation('owner', { nullable: true, embedded: ['id'] }),
}));

const CreateCompanyInputType = builder.inputType('CreateCompanyInput', {
  fields: (t) => ({ accountId: t.id({ required: true }), ...inputFieldsOf(COMPANY_FIELDS, 'create')(t) }),
});
const UpdateCompanyInputType = builder.inputType('UpdateCompanyInput', {
  description: 'Absent = unchanged; null = cleared (Required for name). At least one field.',
  fields: inputFieldsOf(COMPANY_FIELDS, 'update'),
});

const company: ById<RecordKey> = { type: 'Company', scope: 'COMPANIES_WRITE', limit: WRITES, target: companyTarget };

builder.mutationField('createCompany', (t) =>
  t.prismaField({
    type: 'Company',
    args: { input: t.arg({ type: CreateCompanyInputType, required: true }) },
    rules: { access: 'member', scope: 'COMPANIES_WRITE', input: createCompanyInput, from: 'input', linked: companyLinks, limit: WRITES, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateCompanyInput>(info);
      return write((tx) => createCompany(tx, input, userActor(viewer), query));
    },
  }),
);
updateById(company, { input: UpdateCompanyInputType, args: updateCompanyArgs, linked: companyLinks, update: updateCompany, description: staleConflict('company') });
deleteById(company, { remove: deleteCompany, description: 'Moves the company to the trash (docs/trash.md); its contacts and deals stay, unlinked.' });
restoreById(company, TRASH_KINDS.company, 'Brings the company back from the trash (docs/trash.md) with every link it had; NOT_FOUND when the trash holds no such company; BAD_USER_INPUT (TAKEN) when a unique value of it was taken since.');
