import type { PrismaClient } from '../../src/generated/prisma/client.js';

/**
 * Where each needle is stored (`table.column: needle`, lower case): every text-like column of every
 * table, found in information_schema so a table or column added later is searched too (erasure,
 * docs/decisions.md §12, §24).
 */
export async function whereFound(db: PrismaClient, needles: string[]): Promise<string[]> {
  const columns = await db.$queryRaw<{ table_name: string; column_name: string }[]>`
    SELECT c.table_name, c.column_name FROM information_schema.columns c
      JOIN information_schema.tables tb ON tb.table_schema = c.table_schema AND tb.table_name = c.table_name
     WHERE c.table_schema = 'public' AND tb.table_type = 'BASE TABLE'
       AND (c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'USER-DEFINED'))`;
  if (columns.length < 20) throw new Error(`whereFound: only ${columns.length} text columns found: is the schema there?`);
  const found: string[] = [];
  for (const { table_name, column_name } of columns) {
    for (const needle of needles.map((n) => n.toLowerCase())) {
      const [row] = await db.$queryRawUnsafe<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM "${table_name}" WHERE strpos(lower("${column_name}"::text), $1) > 0`,
        needle,
      );
      if (row!.n > 0) found.push(`${table_name}.${column_name}: ${needle}`);
    }
  }
  return found;
}
