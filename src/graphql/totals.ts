// Exact totals without counting rows (docs/scaling.md#exact-totals): PostgreSQL triggers keep, in
// the transaction of every write, how many contacts each account has per contact_type and how many
// deals and invoices per status (table record_counts, migration *_record_counts). A total whose
// filter is the account alone, or the account and one such value, is a sum over at most 8 rows per
// value, whatever the account's size; any other filter is counted as before.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';

/** The counted tables, and the field (Prisma name) and column their counters are kept by. */
const COUNTED: Record<string, { table: string; field: string }> = {
  Contact: { table: 'contacts', field: 'contactType' },
  Deal: { table: 'deals', field: 'status' },
  Invoice: { table: 'invoices', field: 'status' },
};

/**
 * The counters' sum for `table` in `account` (SQL of a uuid); `keys` null = every key, else those
 * keys only (an empty list sums nothing). A numeric expression, one value.
 */
export function counterSql(table: string, account: Prisma.Sql, keys: readonly string[] | null): Prisma.Sql {
  const only = keys === null ? Prisma.empty : keys.length === 0 ? Prisma.sql`AND FALSE` : Prisma.sql`AND c.key IN (${Prisma.join(keys)})`;
  return Prisma.sql`(SELECT coalesce(sum(c.n), 0) FROM record_counts c WHERE c.account_id = ${account} AND c.table_name = ${table} ${only})`;
}

/**
 * The counters' SQL for the total of a list's Prisma `where`, when it is exactly `{accountId}` or
 * `{accountId, <counted field>: <value>}` (contactsWhere, dealsWhere, invoicesWhere without a
 * search); null otherwise, and then the rows are counted.
 */
export function totalSql(model: string, where: unknown): Prisma.Sql | null {
  const counted = COUNTED[model];
  if (!counted || where === null || typeof where !== 'object') return null;
  const given = Object.entries(where).filter(([, value]) => value !== undefined);
  if (!given.every(([name, value]) => (name === 'accountId' || name === counted.field) && typeof value === 'string')) return null;
  const { accountId, [counted.field]: key } = where as Record<string, string | undefined>;
  if (accountId === undefined) return null;
  return counterSql(counted.table, Prisma.sql`CAST(${accountId} AS uuid)`, key === undefined ? null : [key]);
}

/** The total of `where` from the counters, or null when its filter is not one they keep. */
export async function countedTotal(db: PrismaClient, model: string, where: unknown): Promise<number | null> {
  const sql = totalSql(model, where);
  if (!sql) return null;
  const [row] = await db.$queryRaw<{ n: number }[]>`SELECT ${sql}::int AS n`;
  return Number(row!.n);
}
