/** Mutation.mergeCompanies · Account.duplicateCompanies · Query.duplicateCompanies (docs/decisions.md §22, docs/duplicates.md) */
import { Prisma, type Company } from '../generated/prisma/client.js';
import { builder } from '../graphql/builder.js';
import { CompanyRef } from './company.schema.js';
import { companyTarget } from './company.service.js';
import type { MergeKind } from '../contacts/merge.js';
import { mergeFields } from '../contacts/merge.schema.js';
import { groupsOf, inGroup, MAX_GROUP, oldestFirst, sameKey, similarNames, type Candidate } from '../contacts/duplicates.js';

const COMPANIES: MergeKind = { model: 'Company', table: 'companies', kind: 'company' };

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

mergeFields({
  kind: COMPANIES,
  scopes: { write: 'COMPANIES_WRITE', read: 'COMPANIES_READ' },
  target: companyTarget as never,
  moves: 'Contacts, deals, notes and tasks of a duplicate move to the primary.',
  groupRef: CompanyDuplicateGroupRef,
  groups: 'Groups of companies that are likely one organisation, best score first',
  duplicates: duplicateCompanies,
});
