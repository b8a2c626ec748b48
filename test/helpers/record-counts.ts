import type { PrismaClient } from '../../src/generated/prisma/client.js';

type Count = { account: string; table: string; key: string; n: number };
const lines = (counts: Count[]) => counts.map((c) => `${c.account} ${c.table} ${c.key} ${c.n}`).sort();

/**
 * record_counts summed per (account, table, key), and count(*) of the real rows per (account, table,
 * contact_type or status), as sorted "account table key n" lines: equal when every counter is exact.
 */
export async function countersAndRows(db: PrismaClient): Promise<{ counters: string[]; rows: string[] }> {
  const counters = await db.$queryRaw<Count[]>`
    SELECT account_id::text AS account, table_name AS table, key, sum(n)::int AS n FROM record_counts GROUP BY 1, 2, 3 HAVING sum(n) <> 0`;
  const rows = await db.$queryRaw<Count[]>`
    SELECT account_id::text AS account, 'contacts' AS table, contact_type::text AS key, count(*)::int AS n FROM contacts GROUP BY 1, 3
    UNION ALL SELECT account_id::text, 'deals', status::text, count(*)::int FROM deals GROUP BY 1, 3
    UNION ALL SELECT account_id::text, 'invoices', status::text, count(*)::int FROM invoices GROUP BY 1, 3`;
  return { counters: lines(counters), rows: lines(rows) };
}
