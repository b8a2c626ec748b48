import { rawRead } from '../db/raw.js';
import { together } from '../db/together.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { isUuid } from '../validation.js';

export type Role = 'owner' | 'member';

/** Accounts `userId` owns or belongs to: a Prisma filter on accounts. */
export const accountsOf = (userId: string) => ({ OR: [{ ownerId: userId }, { members: { some: { userId } } }] });

/**
 * `owner` and `member`, the standing of the user `userId` names in the account row `a`: one definition
 * for loadRole and for a read by id that reads it with its record (graphql/reads.ts), so the access
 * check asks no statement of its own. `userId`: a uuid, or the SQL of a uuid column.
 */
export const roleColumns = (userId: string | Prisma.Sql) => {
  const user = typeof userId === 'string' ? Prisma.sql`${userId}::uuid` : userId;
  return Prisma.sql`a.owner_id = ${user} AS owner,
           EXISTS (SELECT 1 FROM team_members m WHERE m.account_id = a.id AND m.user_id = ${user}) AS member`;
};

/** The role those columns give; null for no row (an unknown account) or neither. */
export const roleOf = (row: { owner: boolean | null; member: boolean } | undefined): Role | null =>
  !row ? null : row.owner ? 'owner' : row.member ? 'member' : null;

type Standing = { owner: boolean | null; member: boolean };
type Ask = { accountId: string; userId: string };

/**
 * The caller's role in an account, or null when the account is unknown or not theirs. Every request
 * that reads account data asks, so concurrent requests' asks share one statement (src/db/together.ts):
 * one that arrives while another's read runs is read with the others that waited, after it.
 */
export async function loadRole(db: PrismaClient, accountId: string, userId: string): Promise<Role | null> {
  if (!isUuid(accountId) || !isUuid(userId)) return null;
  return roleOf(await together(db, 'role', { accountId, userId }, (asks) => standings(db, asks)));
}

/** Each ask's standing, in order: one round trip (Prisma's nested select takes two); a statement of its own for one ask, whose plan is simpler. */
async function standings(db: PrismaClient, asks: Ask[]): Promise<(Standing | undefined)[]> {
  if (asks.length === 1) {
    const [{ accountId, userId }] = asks as [Ask];
    return rawRead<Standing>(db, Prisma.sql`SELECT ${roleColumns(userId)} FROM accounts a WHERE a.id = ${accountId}::uuid`);
  }
  return rawRead<Standing>(db, Prisma.sql`
    SELECT ${roleColumns(Prisma.sql`r.user_id`)}
    FROM unnest(${asks.map((a) => a.accountId)}::uuid[], ${asks.map((a) => a.userId)}::uuid[]) WITH ORDINALITY AS r(account_id, user_id, n)
    LEFT JOIN accounts a ON a.id = r.account_id ORDER BY r.n`);
}
