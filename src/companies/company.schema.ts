/** Mutation.createCompany · updateCompany · deleteCompany (docs/decisions.md §21) */
import { WRITES } from '../graphql/limits.js';
import { builder } from '../graphql/builder.js';
import { recordObject } from '../graphql/record-object.js';
import { checked } from '../graphql/rules.js';
import { deleteById, staleConflict, updateById, type ById } from '../writes/by-id.js';
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
  name: t.exposeString('name'),
  domain: t.exposeString('domain', { nullable: true, description: 'A lower-case host name (acme.com); unique in the account where present.' }),
  phone: t.exposeString('phone', { nullable: true }),
  industry: t.exposeString('industry', { nullable: true }),
  website: t.exposeString('website', { nullable: true }),
  externalId: t.exposeString('externalId', { nullable: true, description: 'Its id in the integrating system; unique in the account where present.' }),
  ownerId: t.exposeID('ownerId', { nullable: true }),
  // A key reads the owner's id only: people are never a key's to read (docs/decisions.md §15).
  owner: t.relation('owner', { nullable: true, embedded: ['id'] }),
}));

/** The company's input fields: CreateCompanyInput's (with accountId, name required), else UpdateCompanyInput's and BatchCompanyInput's. */
export const companyInputFields = (t: any, create: boolean) => ({
  ...(create ? { accountId: t.id({ required: true }), name: t.string({ required: true }) } : { name: t.string() }),
  domain: t.string({ description: 'A host name; `https://www.Acme.com/` is stored as `acme.com`. Unique in the account.' }),
  phone: t.string(),
  industry: t.string(),
  website: t.string(),
  externalId: t.string({ description: 'At most 255 characters; unique in the account.' }),
  ownerId: t.id({ description: "The account's owner or one of its members; none: unowned." }),
});

const CreateCompanyInputType = builder.inputType('CreateCompanyInput', { fields: (t) => companyInputFields(t, true) });
const UpdateCompanyInputType = builder.inputType('UpdateCompanyInput', {
  description: 'Absent = unchanged; null = cleared (Required for name). At least one field.',
  fields: (t) => companyInputFields(t, false),
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
deleteById(company, { remove: deleteCompany, description: 'Removes the company; its contacts and deals stay, unlinked.' });
