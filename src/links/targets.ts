// What notes and tasks point at (docs/decisions.md §21): a contact, a deal and/or a company of the
// same account, and (tasks) an assignee who is the account's owner or a member. The write rules
// judge them here; the records' deletes and eraseContact let go of them here.
import type { Prisma } from '../generated/prisma/client.js';
import { NOT_A_MEMBER, NOT_IN_ACCOUNT, type ErrorDetails } from '../errors.js';
import { isUuid } from '../validation.js';

export const TARGET_FIELDS = ['contactId', 'dealId', 'companyId'] as const;
export type TargetField = (typeof TARGET_FIELDS)[number];
export const NEEDS_A_TARGET = 'Give a contact, a deal or a company (at least one)';

const idOf = (value: unknown): string | null => (typeof value === 'string' && isUuid(value) ? value : null);

/**
 * The given targets that are not the account's and, when `member` names a field (a task's assignee),
 * a person who is not one of its people, by field (GraphQL's names).
 */
export async function targetProblems(db: Prisma.TransactionClient, accountId: string, refs: Record<string, unknown>, member?: string): Promise<ErrorDetails> {
  if (![...TARGET_FIELDS, ...(member ? [member] : [])].some((field) => idOf(refs[field]))) return {};
  return (await targetProblemsOfMany(db, [{ ...refs, accountId }], member))[0]!;
}

/**
 * targetProblems for many inputs at once (a burst of workflow runs' notes or tasks), each of its own
 * account: one query for all, each input's problems in its place.
 */
export async function targetProblemsOfMany(db: Prisma.TransactionClient, refs: ({ accountId: string } & Record<string, unknown>)[], member?: string): Promise<ErrorDetails[]> {
  if (!refs.length) return [];
  const column = (field: string | undefined) => refs.map((r) => (field ? idOf(r[field]) : null));
  const rows = await db.$queryRaw<{ contact: boolean; deal: boolean; company: boolean; person: boolean }[]>`
    SELECT (t.c IS NULL OR EXISTS (SELECT 1 FROM contacts WHERE account_id = t.a AND id = t.c)) AS contact,
           (t.d IS NULL OR EXISTS (SELECT 1 FROM deals WHERE account_id = t.a AND id = t.d)) AS deal,
           (t.co IS NULL OR EXISTS (SELECT 1 FROM companies WHERE account_id = t.a AND id = t.co)) AS company,
           (t.u IS NULL OR EXISTS (SELECT 1 FROM accounts WHERE id = t.a AND owner_id = t.u)
                        OR EXISTS (SELECT 1 FROM team_members WHERE account_id = t.a AND user_id = t.u)) AS person
    FROM unnest(${refs.map((r) => r.accountId)}::uuid[], ${column('contactId')}::uuid[], ${column('dealId')}::uuid[], ${column('companyId')}::uuid[], ${column(member)}::uuid[])
      WITH ORDINALITY AS t (a, c, d, co, u, n)
    ORDER BY t.n`;
  return rows.map((row) => {
    const details: ErrorDetails = {};
    if (!row.contact) details.contactId = [NOT_IN_ACCOUNT];
    if (!row.deal) details.dealId = [NOT_IN_ACCOUNT];
    if (!row.company) details.companyId = [NOT_IN_ACCOUNT];
    if (member && !row.person) details[member] = [NOT_A_MEMBER];
    return details;
  });
}

/** An input (create) or a row after its update (the row's targets with the input's over them) with no target: the 400 naming all three. */
export function targetless(targets: Partial<Record<TargetField, string | null | undefined>>): ErrorDetails {
  return TARGET_FIELDS.some((f) => targets[f]) ? {} : Object.fromEntries(TARGET_FIELDS.map((f) => [f, [NEEDS_A_TARGET]]));
}

/**
 * A contact, deal or company is going (deleted or erased): the notes about it alone go with it, the
 * other notes and the tasks keep their other targets (the link is cleared). No events: a link is
 * not the note's or task's own change, as a deleted company's contacts (src/companies/company.service.ts).
 */
export async function releaseTargets(tx: Prisma.TransactionClient, accountId: string, field: TargetField, id: string): Promise<void> {
  const others = TARGET_FIELDS.filter((f) => f !== field);
  await tx.note.deleteMany({ where: { accountId, [field]: id, [others[0]!]: null, [others[1]!]: null } });
  await tx.note.updateMany({ where: { accountId, [field]: id }, data: { [field]: null } });
  await tx.task.updateMany({ where: { accountId, [field]: id }, data: { [field]: null } });
}
