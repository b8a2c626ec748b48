/** Mutation.mergeCompanies · Account.duplicateCompanies · Query.duplicateCompanies (docs/decisions.md §22, docs/duplicates.md) */
import { Prisma, type Company } from '../generated/prisma/client.js';
import { builder } from '../graphql/builder.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { checked } from '../graphql/rules.js';
import { userActor } from '../events/types.js';
import { parseInput } from '../validation.js';
import { AccountRef } from '../accounts/account.schema.js';
import { CompanyRef } from './company.schema.js';
import { companyTarget } from './company.service.js';
import { mergeRecords, type MergeArgs, type MergeKind } from '../contacts/merge.js';
import { MERGE_DESCRIPTION, mergeRules } from '../contacts/merge.schema.js';
import { duplicatesArgs, duplicatesByAccountArgs, groupsOf, inGroup, MAX_GROUP, oldestFirst, sameKey, similarNames, type Candidate } from '../contacts/duplicates.js';
import type { RecordKey } from '../db/client.js';

const COMPANIES: MergeKind = { model: 'Company', table: 'companies', kind: 'company' };

builder.mutationField('mergeCompanies', (t) =>
  t.prismaField({
    type: 'Company',
    nullable: true,
    description: `${MERGE_DESCRIPTION('company')} Contacts, deals, notes and tasks of a duplicate move to the primary.`,
    args: { primaryId: t.arg.id({ required: true }), duplicateIds: t.arg.idList({ required: true }) },
    rules: mergeRules('COMPANIES_WRITE', companyTarget as never),
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, target, write } = checked<MergeArgs, RecordKey>(info);
      return write((tx) => mergeRecords<Company>(tx, COMPANIES, target, input.duplicateIds, userActor(viewer), query)) as never;
    },
  }),
);

type CompanyGroup = { companies: Company[]; score: number; reasons: string[] };

/** Candidates among the account's companies: one domain (a company's domain, or its website's host), or similar names (legal forms aside). */
async function companyCandidates(db: Prisma.TransactionClient, accountId: string): Promise<Candidate[]> {
  const [domain, name] = await Promise.all([
    sameKey(db, 'companies', accountId, 'domain', Prisma.sql`dedupe_company_domain(t.domain, t.website)`),
    similarNames(db, 'companies', accountId, { block: Prisma.sql`''::text`, name: Prisma.sql`dedupe_company_name(t.name)` }),
  ]);
  return [...domain, ...name];
}

export async function duplicateCompanies(db: Prisma.TransactionClient, accountId: string, first: number): Promise<CompanyGroup[]> {
  const groups = groupsOf(await companyCandidates(db, accountId), oldestFirst, first);
  const rows = await db.company.findMany({ where: { accountId, id: { in: groups.flatMap((g) => g.ids) } } });
  return groups.map((g) => ({ companies: inGroup(rows, g.ids), score: g.score, reasons: g.reasons }));
}

const CompanyDuplicateGroupRef = builder.objectRef<CompanyGroup>('CompanyDuplicateGroup').implement({
  description: 'Companies that are likely one organisation (docs/duplicates.md)',
  fields: (t) => ({
    companies: t.field({ type: [CompanyRef], maxItems: MAX_GROUP, description: `At most ${MAX_GROUP}, oldest first`, resolve: (g) => g.companies }),
    score: t.exposeFloat('score', { description: 'How likely they are one: 0 to 1, from the reasons' }),
    reasons: t.exposeStringList('reasons', { description: "domain (a company's domain or its website's host), name (similar names, legal forms aside)" }),
  }),
});

const FIRST = 'How many groups, best score first (1–100)';

builder.prismaObjectFields(AccountRef, (t) => ({
  duplicateCompanies: t.field({
    type: [CompanyDuplicateGroupRef],
    description: 'Groups of companies that are likely one organisation, best score first',
    args: { first: t.arg.int({ defaultValue: 25, description: FIRST }) },
    resolve: (account, args, ctx) => duplicateCompanies(ctx.db, account.id, parseInput(duplicatesArgs, args).first),
  }),
}));

builder.queryField('duplicateCompanies', (t) =>
  t.field({
    type: [CompanyDuplicateGroupRef],
    nullable: true,
    description: 'Account.duplicateCompanies by account id (API keys: companies:read; REST GET /api/v1/companies/duplicates)',
    args: { accountId: t.arg.id({ required: true }), first: t.arg.int({ defaultValue: 25, description: FIRST }) },
    rules: { access: 'member', scope: 'COMPANIES_READ', input: duplicatesByAccountArgs, limit: READS_BEYOND_CONTRACT },
    resolve: (_root, _args, ctx, info) => {
      const { accountId, first } = checked<{ accountId: string; first: number }>(info).input;
      return duplicateCompanies(ctx.db, accountId, first);
    },
  }),
);
