import { rawRead } from '../db/raw.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { isUuid } from '../validation.js';

export type Role = 'owner' | 'member';

/** Accounts `userId` owns or belongs to: a Prisma filter on accounts. */
export const accountsOf = (userId: string) => ({ OR: [{ ownerId: userId }, { members: { some: { userId } } }] });

/** The caller's role in an account, or null when the account is unknown or not theirs. */
export async function loadRole(db: PrismaClient, accountId: string, userId: string): Promise<Role | null> {
  if (!isUuid(accountId) || !isUuid(userId)) return null;
  // One round trip (Prisma's nested select takes two): every request that reads account data asks.
  const [row] = await rawRead<{ owner: boolean; member: boolean }>(db, Prisma.sql`
    SELECT a.owner_id = ${userId}::uuid AS owner,
           EXISTS (SELECT 1 FROM team_members m WHERE m.account_id = a.id AND m.user_id = ${userId}::uuid) AS member
    FROM accounts a WHERE a.id = ${accountId}::uuid`);
  if (!row) return null;
  if (row.owner) return 'owner';
  return row.member ? 'member' : null;
}
