// The account export's records, read a keyset page at a time, each page one JSON text that
// PostgreSQL builds (the contacts CSV reads its pages the same way: src/exports/contacts-csv.ts).
import type pg from 'pg';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';

/**
 * Where the export reads. Pages go through the pool's own `pg` client when there is one: what a
 * Prisma query answers outlives young-generation GCs, so a million records read through Prisma
 * pile up in old space as garbage (BENCHMARKS.md "CSV memory"); `pg`'s answers die young.
 * PGlite has no pool: Prisma's raw query there.
 */
export type ExportSource = { db: PrismaClient; pool: pg.Pool | null };

export type Column = { name: string; dataType: string; udt: string };

const ident = (name: string) => Prisma.raw(`"${name.replaceAll('"', '""')}"`);

function query<T>(source: ExportSource, sql: Prisma.Sql): Promise<T[]> {
  return source.pool ? source.pool.query(sql.text, sql.values as unknown[]).then((r) => r.rows as T[]) : source.db.$queryRaw<T[]>(sql);
}

/**
 * The live columns of each table, from the catalogue rather than a hand-kept list, so a new
 * column is exported (snake_case, as stored) the day it is added.
 */
export async function columnsOf(source: ExportSource, tables: string[]): Promise<Map<string, Column[]>> {
  const rows = await query<{ table_name: string; column_name: string; data_type: string; udt_name: string }>(source, Prisma.sql`
    SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name IN (${Prisma.join(tables)})
    ORDER BY table_name, ordinal_position`);
  const byTable = new Map<string, Column[]>();
  for (const row of rows) {
    const list = byTable.get(row.table_name) ?? [];
    list.push({ name: row.column_name, dataType: row.data_type, udt: row.udt_name });
    byTable.set(row.table_name, list);
  }
  return byTable;
}

// As a JS Date prints (toISOString): milliseconds truncated, as `MS` truncates.
const ISO_MS = Prisma.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/**
 * A column as the document shows it, so the page needs no conversion in Node: timestamps ISO 8601
 * in UTC with Z, `date` columns YYYY-MM-DD; money, counts, JSON and arrays are JSON already.
 */
function valueSql(column: Column): Prisma.Sql {
  const name = ident(column.name);
  switch (column.dataType) {
    case 'timestamp with time zone':
      return Prisma.sql`to_char(${name} AT TIME ZONE 'UTC', ${ISO_MS})`;
    case 'timestamp without time zone':
      return Prisma.sql`to_char(${name}, ${ISO_MS})`;
    case 'date':
      return Prisma.sql`to_char(${name}, 'YYYY-MM-DD')`;
    default:
      return name;
  }
}

/** Record text from a row's values: `{"column":value,...}`, exactly as JSON.stringify writes the object. */
function recordWriter(columns: Column[]): (values: unknown[]) => string {
  const keys = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`);
  return (values) => {
    let text = '';
    for (let i = 0; i < keys.length; i++) text += keys[i] + JSON.stringify(values[i] ?? null);
    return `${text}}`;
  };
}

/**
 * Characters a page's JSON text aims at. Strings over ~128 KB go to V8's large-object space, which
 * only a full GC frees: pages of 1,000 contacts (~400 KB) piled up there, 75-141 MB of RSS over
 * 1.5 million records; pages this small die young, in scavenges.
 */
export const PAGE_CHARS = 48 * 1024;

/**
 * The records of `table` where `filter` holds, ordered by the unique key `orderBy`, one keyset page
 * per query, each yielded as its records' text joined by `,\n`. A page holds at most `pageSize`
 * records, fewer when the last page's records were long (about PAGE_CHARS of text). The next page
 * starts after the last row's key, as PostgreSQL wrote it (JSON text: exact for any column type).
 */
export async function* recordPages(
  source: ExportSource,
  table: string,
  filter: Prisma.Sql,
  orderBy: readonly string[],
  columns: Column[],
  pageSize: number,
): AsyncGenerator<string> {
  const keys = orderBy.map((name) => {
    const column = columns.find((c) => c.name === name);
    if (!column) throw new Error(`account export: ${table} has no column ${name}`);
    return column;
  });
  const order = Prisma.join(keys.map((k) => ident(k.name)));
  const backwards = Prisma.join(keys.map((k) => Prisma.sql`${ident(k.name)} DESC`));
  const values = Prisma.join(columns.map(valueSql));
  const record = recordWriter(columns);
  let after: unknown[] | undefined;
  let limit = pageSize;
  for (;;) {
    // A row comparison on the ordering key: each page starts where the last one ended.
    const since = after
      ? Prisma.sql`AND (${order}) > (${Prisma.join(keys.map((k, i) => Prisma.sql`${after![i]}::${ident(k.udt)}`))})`
      : Prisma.empty;
    // The page size is the statement's last parameter (test/graphql/exports.test.ts counts pages by it).
    const [answer] = await query<{ page: string | null; last: string | null }>(source, Prisma.sql`
      SELECT json_agg(json_build_array(${values}) ORDER BY ${order})::text AS page,
             (array_agg(json_build_array(${order}) ORDER BY ${backwards}))[1]::text AS last
      FROM (SELECT * FROM ${ident(table)} WHERE ${filter} ${since} ORDER BY ${order} LIMIT ${limit}) AS page_rows`);
    const rows: unknown[][] = answer?.page ? JSON.parse(answer.page) : [];
    if (rows.length > 0) yield rows.map(record).join(',\n');
    if (rows.length < limit) return;
    after = JSON.parse(answer!.last!) as unknown[];
    limit = Math.max(1, Math.min(pageSize, Math.floor((PAGE_CHARS * rows.length) / answer!.page!.length)));
  }
}
