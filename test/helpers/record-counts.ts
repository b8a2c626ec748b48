import { Prisma, type PrismaClient } from '../../src/generated/prisma/client.js';

type Count = { account: string; table: string; key: string; n: number };
const lines = (counts: Count[]) => counts.map((c) => `${c.account} ${c.table} ${c.key} ${c.n}`).sort();

/** The column each counted table keeps its counters by; the others (companies, notes, tasks) keep one total, key ''. */
const KEY_COLUMNS: Record<string, string> = { contacts: 'contact_type', deals: 'status', invoices: 'status' };

/**
 * record_counts summed per (account, table, key), and count(*) of the real rows per (account, table,
 * key), as sorted "account table key n" lines: equal when every counter is exact. The tables are
 * those the counters' triggers are on in this database (a test may stop at an earlier migration).
 */
export async function countersAndRows(db: PrismaClient): Promise<{ counters: string[]; rows: string[] }> {
  const counters = await db.$queryRaw<Count[]>`
    SELECT account_id::text AS account, table_name AS table, key, sum(n)::int AS n FROM record_counts GROUP BY 1, 2, 3 HAVING sum(n) <> 0`;
  const tables = await db.$queryRaw<{ name: string }[]>`
    SELECT DISTINCT event_object_table AS name FROM information_schema.triggers WHERE trigger_name = 'record_counts_insert' ORDER BY 1`;
  const rows = await db.$queryRaw<Count[]>(Prisma.sql`${Prisma.join(
    tables.map(({ name }) => Prisma.raw(
      `SELECT account_id::text AS account, '${name}' AS table, ${KEY_COLUMNS[name] ? `${KEY_COLUMNS[name]}::text` : "''"} AS key, count(*)::int AS n FROM "${name}" GROUP BY 1, 3`,
    )),
    ' UNION ALL ',
  )}`);
  return { counters: lines(counters), rows: lines(rows) };
}
