// The links §21 adds to contacts, deals and companies (docs/decisions.md §21): a company of the
// same account, an owner who is one of the account's people, and a new contact's company found by
// its e-mail domain. The single writes (the `linked` rule) and the batches (src/writes/) share them.
import { Prisma } from '../generated/prisma/client.js';
import { rawWrite } from '../db/raw.js';
import type { ErrorDetails } from '../errors.js';
import { NOT_A_MEMBER } from '../accounts/account.service.js';
import type { Judged } from '../writes/batch.service.js';
import { isUuid } from '../validation.js';
import { snakeCase } from '../names.js';
import { linkableDomain } from './domain.js';

export const NOT_IN_ACCOUNT = 'Not found in this account';

const idOf = (value: unknown): string | null => (typeof value === 'string' && isUuid(value) ? value : null);

/** Of these ids, the companies of the account and the users who are its owner or members: one query. */
async function known(db: Prisma.TransactionClient, accountId: string, companyIds: string[], userIds: string[]) {
  if (companyIds.length === 0 && userIds.length === 0) return { companies: new Set<string>(), people: new Set<string>() };
  // On the primary, where the write that follows goes: its pool outside a transaction (src/db/raw.ts).
  const rows = await rawWrite<{ kind: string; id: string }>(db, Prisma.sql`
    SELECT 'company' AS kind, id::text FROM companies
     WHERE account_id = ${accountId}::uuid AND id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(companyIds)}::json)::uuid))
    UNION ALL
    SELECT 'person', owner_id::text FROM accounts
     WHERE id = ${accountId}::uuid AND owner_id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(userIds)}::json)::uuid))
    UNION ALL
    SELECT 'person', user_id::text FROM team_members
     WHERE account_id = ${accountId}::uuid AND user_id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(userIds)}::json)::uuid))`);
  return {
    companies: new Set(rows.filter((r) => r.kind === 'company').map((r) => r.id)),
    people: new Set(rows.filter((r) => r.kind === 'person').map((r) => r.id)),
  };
}

/** `companyId` and `ownerId` of one input, by the field names given (GraphQL's camelCase). */
export async function ownershipProblems(db: Prisma.TransactionClient, accountId: string, refs: { companyId?: unknown; ownerId?: unknown }): Promise<ErrorDetails> {
  const [companyId, ownerId] = [idOf(refs.companyId), idOf(refs.ownerId)];
  const found = await known(db, accountId, companyId ? [companyId] : [], ownerId ? [ownerId] : []);
  const details: ErrorDetails = {};
  if (companyId && !found.companies.has(companyId)) details.companyId = [NOT_IN_ACCOUNT];
  if (ownerId && !found.people.has(ownerId)) details.ownerId = [NOT_A_MEMBER];
  return details;
}

const given = (item: Judged, field: string) => idOf('data' in item ? item.data[field] : item.input?.[field]);

/**
 * A batch's items (src/writes/, `BatchKind.links`), in one query for the whole set: an item naming
 * another account's company or a stranger as owner fails on that field (beside its other problems).
 */
export async function checkOwnership(tx: Prisma.TransactionClient, accountId: string, judged: Judged[], fields: { company?: boolean } = { company: true }) {
  const companyIds = fields.company ? judged.map((i) => given(i, 'companyId')).filter((id): id is string => id !== null) : [];
  const userIds = judged.map((i) => given(i, 'ownerId')).filter((id): id is string => id !== null);
  if (companyIds.length === 0 && userIds.length === 0) return;
  const found = await known(tx, accountId, [...new Set(companyIds)], [...new Set(userIds)]);
  for (const [i, item] of judged.entries()) {
    const details: ErrorDetails = 'details' in item ? { ...item.details } : {};
    const companyId = fields.company ? given(item, 'companyId') : null;
    const ownerId = given(item, 'ownerId');
    if (companyId && !found.companies.has(companyId)) details[snakeCase('companyId')] ??= [NOT_IN_ACCOUNT];
    if (ownerId && !found.people.has(ownerId)) details[snakeCase('ownerId')] ??= [NOT_A_MEMBER];
    if (Object.keys(details).length) judged[i] = { index: item.index, details, ...('input' in item ? { input: item.input } : {}) };
  }
}

/**
 * New contacts of a batch that name no company take the company whose domain is their e-mail's
 * (never a free-mail domain's): one query for the set. Only a create's data is filled in; an upsert
 * that updates a contact leaves its company as it is.
 */
export async function linkByEmailDomain(tx: Prisma.TransactionClient, accountId: string, judged: Judged[]) {
  const creates = judged.flatMap((item) => {
    if (!('data' in item)) return [];
    const data = item.asCreate ? ('data' in item.asCreate ? item.asCreate.data : null) : item.data;
    if (!data || data.companyId) return [];
    const domain = linkableDomain(data.email as string | null | undefined);
    return domain ? [{ data, domain }] : [];
  });
  if (creates.length === 0) return;
  const domains = [...new Set(creates.map((c) => c.domain))];
  // A single create's lookup is one statement on the primary's pool, not Prisma's raw path (about 0.15 ms
  // of CPU a create; BENCHMARKS.md "The fixed cost of a REST request"); in a transaction, through it.
  const rows = await rawWrite<{ id: string; domain: string }>(tx, Prisma.sql`
    SELECT id::text, domain FROM companies
     WHERE account_id = ${accountId}::uuid AND domain = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(domains)}::json)))`);
  const byDomain = new Map(rows.map((r) => [r.domain, r.id]));
  for (const { data, domain } of creates) {
    const id = byDomain.get(domain);
    if (id) data.companyId = id;
  }
}
