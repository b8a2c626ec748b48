import { rawRead } from '../db/raw.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { isUuid } from '../validation.js';

export type Role = 'owner' | 'member';

/** Accounts `userId` owns or belongs to: a Prisma filter on accounts. */
export const accountsOf = (userId: string) => ({ OR: [{ ownerId: userId }, { members: { some: { userId } } }] });

/**
 * `owner` and `member`, the caller's standing in the account row `a`: one definition for loadRole and
 * for a read by id that reads it with its record (graphql/reads.ts), so the access check asks no statement of its own.
 */
export const roleColumns = (userId: string) => Prisma.sql`a.owner_id = ${userId}::uuid AS owner,
           EXISTS (SELECT 1 FROM team_members m WHERE m.account_id = a.id AND m.user_id = ${userId}::uuid) AS member`;

/** The role those columns give; null for no row (an unknown account) or neither. */
export const roleOf = (row: { owner: boolean; member: boolean } | undefined): Role | null =>
  !row ? null : row.owner ? 'owner' : row.member ? 'member' : null;

/** The caller's role in an account, or null when the account is unknown or not theirs. */
export async function loadRole(db: PrismaClient, accountId: string, userId: string): Promise<Role | null> {
  if (!isUuid(accountId) || !isUuid(userId)) return null;
  // One round trip (Prisma's nested select takes two): every request that reads account data asks.
  const [row] = await rawRead<{ owner: boolean; member: boolean }>(db, Prisma.sql`SELECT ${roleColumns(userId)} FROM accounts a WHERE a.id = ${accountId}::uuid`);
  return roleOf(row);
}
