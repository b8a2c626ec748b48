// The links §21 adds to contacts, deals and companies (docs/decisions.md §21): a company of the
// same account and an owner who is one of the account's people. The single writes (the `linked`
// rule) and the batches (src/writes/) share them. A new contact's company by its e-mail domain is
// found by the write's own statement (src/writes/set-write.ts, `companyByDomain`).
import { Prisma } from '../generated/prisma/client.js';
import { rawWrite } from '../db/raw.js';
import { NOT_A_MEMBER, NOT_IN_ACCOUNT, type ErrorDetails } from '../errors.js';
import type { Judged } from '../writes/batch.service.js';
import { isUuid } from '../validation.js';
import { snakeCase } from '../names.js';

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
