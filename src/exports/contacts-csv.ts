// CSV via @json2csv/node 7, the maintained line of json2csv (the legacy `json2csv` 5.x package is
// no longer maintained). Its Transform turns rows into CSV text; we supply the cell formatter (see below).
import { Transform, type ParserOptions } from '@json2csv/node';
import type pg from 'pg';
import { contacts } from '../contacts/contact-reads.schema.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { ident } from '../graphql/collection.js';
import { beyond, orderSql } from '../graphql/keyset.js';

/** The header row, exactly (docs/decisions.md §6). */
export const CSV_COLUMNS = [
  'First Name',
  'Last Name',
  'Email',
  'Phone',
  'Company',
  'Contact Type',
  'Source',
  'Created At',
] as const;

/** Rows fetched per query: memory holds one page, whatever the number of contacts. */
export const CSV_CHUNK_SIZE = 1000;

const FORMULA_START = /^[=+\-@\t\r]/;
// `;` too: spreadsheets in locales whose list separator is `;` split an unquoted cell there.
const NEEDS_QUOTES = /[",;\r\n]/;

const guard = (part: string) => (FORMULA_START.test(part) ? `'${part}` : part);

/**
 * One string cell: a leading `'` when a spreadsheet would read it as a formula (CSV injection),
 * then RFC 4180 quoting when it holds a quote, comma, semicolon or line break. Each `;`-separated
 * part is guarded like a cell of its own, since a `;` spreadsheet may read it as one (`x;=1+1`).
 * json2csv's own `stringExcel` formatter is not such a guard (it wraps every value in `="..."`).
 */
export function csvCell(value: string): string {
  // Most cells hold no `;`: guard them whole rather than split and join (an array and copies per cell).
  const safe = value.includes(';') ? value.split(';').map(guard).join(';') : guard(value);
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** RFC 4180 ends every record in CRLF; json2csv writes the separator between records only. */
const RECORD_END = '\r\n';

/** A contact as the page query answers it: the CSV's columns in order, created_at in epoch ms. */
type ContactRow = [
  firstName: string,
  lastName: string | null,
  email: string | null,
  phone: string | null,
  company: string | null,
  contactType: string,
  source: string,
  createdAt: number,
];
const CREATED_AT = 7;

/** One write to the transform is a page of rows: the transform spreads it into rows and answers their text. */
const PARSER_OPTIONS: ParserOptions<ContactRow[], ContactRow> = {
  fields: CSV_COLUMNS.map((label, i) => ({
    label,
    value: i === CREATED_AT ? (row: ContactRow) => new Date(row[CREATED_AT]).toISOString() : (row: ContactRow) => row[i],
  })),
  // Records are separated by CRLF (the last one's is added at the end); null cells are empty (json2csv's object formatter maps null to '').
  eol: '\r\n',
  includeEmptyRows: true,
  transforms: [(page) => page],
  formatters: { string: csvCell, header: csvCell },
};

/**
 * The account's contacts oldest first, one keyset page per query (the contacts collection's
 * CREATED_AT key and its cursor condition, as the connections page): never all at once, and each
 * page starts its index scan at the last row, so a million contacts cost no more per page than ten.
 *
 * A page comes back as one JSON text that PostgreSQL builds, not as Prisma records: what a Prisma
 * query answers outlives young-generation GCs (measured, BENCHMARKS.md "CSV memory"), so every page
 * read is promoted and piles up in old space as garbage until a full GC. One string of ~120 bytes a
 * row piles up far slower than Prisma's records (~700 bytes a row). `db` (or `pool`, when given) must
 * run the raw SQL where the export should read (the REST download passes the reader's replica
 * client and its pool).
 */
export async function* contactPages(db: PrismaClient, accountId: string, pageSize = CSV_CHUNK_SIZE, pool: pg.Pool | null = null): AsyncGenerator<ContactRow[]> {
  // Through the pool's own `pg` client when there is one: Prisma's raw query keeps what it answered
  // alive past young-generation GCs (the page strings still piled up to 126 MB of RSS over a million
  // contacts); `pg`'s answers die young. PGlite has no pool: Prisma's query.
  const query = <T>(sql: Prisma.Sql): Promise<T[]> =>
    pool ? pool.query(sql.text, sql.values as unknown[]).then((r) => r.rows as T[]) : db.$queryRaw<T[]>(sql);
  const key = contacts.orders.CREATED_AT;
  let after: { value: string; id: string } | undefined;
  for (;;) {
    // The page size is the statement's last parameter (test/unit/contacts-csv.test.ts counts it there).
    const [answer] = await query<{ page: string | null; lastId: string | null }>(Prisma.sql`
      SELECT json_agg(json_build_array(first_name, last_name, email, phone, company, contact_type, source,
                                       (extract(epoch FROM created_at) * 1000)::bigint) ORDER BY created_at, id)::text AS page,
             (array_agg(id ORDER BY created_at DESC, id DESC))[1]::text AS "lastId"
      FROM (SELECT * FROM ${ident(contacts.table)} t WHERE t.account_id = ${accountId}::uuid ${after ? Prisma.sql`AND ${beyond(key, after, 'greater')}` : Prisma.empty}
            ORDER BY ${orderSql(key, 'ASC')} LIMIT ${pageSize}) AS page_rows`);
    const rows: ContactRow[] = answer?.page ? JSON.parse(answer.page) : [];
    if (rows.length > 0) yield rows;
    if (rows.length < pageSize) return;
    // As text with its zone, so the session's TimeZone cannot shift it.
    after = { value: new Date(rows[rows.length - 1]![CREATED_AT]).toISOString(), id: answer!.lastId! };
  }
}

/** Characters per chunk handed to the response: one row per chunk would mean a write per row. */
export const CSV_CHUNK_CHARS = 64 * 1024;

/**
 * The CSV text of `page` (null: the end) from json2csv's transform, whose writes take effect in
 * order: the header comes with the first page (or alone at the end when there is none), and every
 * record after the first starts with the record separator.
 */
function csvText(csv: Transform<ContactRow[], ContactRow>, page: ContactRow[] | null): Promise<string> {
  return new Promise<void>((resolve, reject) => {
    if (page) csv.write(page, (error) => (error ? reject(error) : resolve()));
    else csv.end(resolve);
  }).then(() => {
    let text = '';
    for (let part: string | null; (part = csv.read() as string | null) !== null; ) text += part;
    return text;
  });
}

/**
 * The contacts CSV as a web stream of UTF-8 bytes, for `new Response(...)`. A page is read only when
 * the client asks for bytes (highWaterMark 0: nothing is read ahead of the socket) and turned into
 * bytes at once, so its rows die young; memory holds one page and one chunk, whatever the number of
 * contacts; cancelling stops the queries.
 */
export function contactsCsvStream(
  db: PrismaClient,
  accountId: string,
  options: { chunkSize?: number; chunkChars?: number; pool?: pg.Pool | null } = {},
): ReadableStream<Uint8Array> {
  const chunkChars = options.chunkChars ?? CSV_CHUNK_CHARS;
  const pages = contactPages(db, accountId, options.chunkSize, options.pool ?? null);
  const csv = new Transform(PARSER_OPTIONS, {}, { objectMode: true });
  csv.on('error', () => {}); // also handed to the write's callback, which fails the stream
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let text = '';
        let finished = false;
        while (text.length < chunkChars) {
          const page = await pages.next();
          if ((finished = Boolean(page.done))) break;
          text += await csvText(csv, page.value);
        }
        if (finished) text += (await csvText(csv, null)) + RECORD_END; // after the last record too (the header at least)
        if (text) controller.enqueue(encoder.encode(text));
        if (finished) controller.close();
      },
      async cancel() {
        await pages.return(undefined);
        csv.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}
