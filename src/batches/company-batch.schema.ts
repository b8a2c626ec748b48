/** Mutation.upsertCompanies (docs/decisions.md §21, docs/batches.md): the contacts' batch machinery (src/batches/) over companies. */
import { builder } from '../graphql/builder.js';
import { batchRules, common, resultTypes, runBatch } from './batch.schema.js';
import { CompanyRef } from '../companies/company.schema.js';
import { COMPANY_FIELDS } from '../companies/company.model.js';
import { inputFieldsOf } from '../graphql/spec-fields.js';
import { companyBatch } from '../companies/company.service.js';

const CompanyMatchEnum = builder.enumType('CompanyMatch', {
  values: { DOMAIN: { value: 'domain', description: 'The domain as a write stores it (`https://www.Acme.com/` matches `acme.com`)' }, EXTERNAL_ID: { value: 'externalId', description: 'Exact' } } as const,
});

const BatchCompanyInput = builder.inputType('BatchCompanyInput', {
  description: 'CreateCompanyInput less accountId. Creating needs name; an upsert that matches changes only the fields given.',
  fields: inputFieldsOf(COMPANY_FIELDS, 'batch'),
});

const CompanyBatchResult = resultTypes('Company', 'company', CompanyRef);

builder.mutationField('upsertCompanies', (t) =>
  t.field({
    type: CompanyBatchResult,
    nullable: true,
    description: 'Up to 100 companies: a match updates only the fields given (UNCHANGED when none differ); no match creates.',
    args: { ...common(t), matchOn: t.arg({ type: CompanyMatchEnum, required: true }), inputs: t.arg({ type: [BatchCompanyInput], required: true }) },
    rules: { ...batchRules, scope: 'COMPANIES_WRITE' },
    resolve: (_root, _args, _ctx, info) => runBatch(companyBatch, (args) => ({ mode: 'upsert', on: args.matchOn ?? 'domain' }), info),
  }),
);
