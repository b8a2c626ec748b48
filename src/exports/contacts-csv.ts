// CSV via @json2csv/plainjs 7, the maintained line of json2csv (the legacy `json2csv` 5.x package is
// no longer maintained). Its Parser turns a page of rows into CSV text; we supply the cell formatter
// (see below). Its stream flavour (@json2csv/node) would add nothing: the pages are streamed here.
import { Parser, type ParserOptions } from '@json2csv/plainjs';
import type pg from 'pg';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { keysetPages, textStream } from './pages.js';
import { recordShapes, shapesOf, type RecordShapes } from '../model/shapes.js';
import { CONTACT_MODEL } from '../contacts/contact.model.js';

/**
 * The Company column as people read it (docs/decisions.md §26): the contact's own `company` text,
 * else the name of the company it is linked to. Read on the page's rows (pages.ts names them
 * `page_rows`); the company is found by its primary key within the account.
 */
const COMPANY_LABEL = 'Company';
const COMPANY_CELL = `coalesce(page_rows."company", (SELECT c.name FROM companies c WHERE c.id = page_rows.company_id AND c.account_id = page_rows.account_id))`;

/**
 * The CSV's columns from the contact's shapes for its account (its `csv` fields in spec order, then
 * the account's own fields): the header row, exactly (docs/decisions.md §6), and what each cell is
 * read as; a time in epoch ms, written back as ISO 8601 (a Date's toISOString).
 */
const columnsOf = (shapes: RecordShapes) => shapes.csvColumns.map((column) => (column.label === COMPANY_LABEL ? { ...column, sql: COMPANY_CELL } : column));
/** The columns every account's CSV has, in order (the account's own fields follow them). */
export const CSV_COLUMNS = columnsOf(shapesOf(CONTACT_MODEL, [])).map(({ label }) => label);

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

/** A contact as the page query answers it: its cells in COLUMNS' order. */
type ContactRow = (string | number | null)[];

/** How one set of columns is written: the header, the records' parser, and the page query's cells; made once per set. */
type CsvFormat = { header: string; records: { parse(rows: ContactRow[]): string }; values: Prisma.Sql };
const formats = new WeakMap<RecordShapes, CsvFormat>();

function formatOf(shapes: RecordShapes): CsvFormat {
  let format = formats.get(shapes);
  if (format) return format;
  const columns = columnsOf(shapes);
  const options: ParserOptions<ContactRow> = {
    fields: columns.map(({ label, time }, i) => ({ label, value: time ? (row: ContactRow) => new Date(row[i] as number).toISOString() : (row: ContactRow) => row[i] })),
    // json2csv separates records by `eol` (not after the last); null cells are empty.
    eol: RECORD_END,
    includeEmptyRows: true,
    formatters: { string: csvCell, header: csvCell },
  };
  format = { header: new Parser(options).parse([]), records: new Parser({ ...options, header: false }), values: Prisma.raw(columns.map(({ sql }) => sql).join(', ')) };
  formats.set(shapes, format);
  return format;
}

/**
 * The account's contacts oldest first, a keyset page at a time (pages.ts). A page comes back as one
 * JSON text that PostgreSQL builds, not as Prisma records: one string of ~120 bytes a row piles up
 * far slower in old space than Prisma's records (~700 bytes a row; BENCHMARKS.md "CSV memory").
 */
const contactPages = (db: PrismaClient, pool: pg.Pool | null, accountId: string, pageSize: number, values: Prisma.Sql) =>
  keysetPages({ db, pool }, {
    table: 'contacts',
    filter: Prisma.sql`account_id = ${accountId}::uuid`,
    keys: [{ name: 'created_at', udt: 'timestamptz' }, { name: 'id', udt: 'uuid' }],
    values,
    pageSize,
  }) as AsyncGenerator<ContactRow[]>;

/** Characters per chunk handed to the response: one row per chunk would mean a write per row. */
export const CSV_CHUNK_CHARS = 64 * 1024;

/**
 * The CSV's text a page of contacts at a time, the header with the first (so the first bytes cost
 * one query, as every later part does); returned early (the client cancelled), it stops the queries.
 */
async function* csvParts(db: PrismaClient, pool: pg.Pool | null, accountId: string, pageSize: number): AsyncGenerator<string> {
  const { header: first, records, values } = formatOf(await recordShapes.of(db, accountId, CONTACT_MODEL));
  let header = first;
  for await (const page of contactPages(db, pool, accountId, pageSize, values)) {
    yield header + RECORD_END + records.parse(page);
    header = '';
  }
  yield header + RECORD_END; // after the last record too (the header at least)
}

/**
 * The contacts CSV as a web stream of UTF-8 bytes (`textStream`): a page is read only when the
 * client asks for bytes, so memory holds one page and one chunk, whatever the number of contacts.
 * `db` (or `pool`, when given) runs the raw SQL where the export should read.
 */
export function contactsCsvStream(
  db: PrismaClient,
  accountId: string,
  options: { chunkSize?: number; chunkChars?: number; pool?: pg.Pool | null } = {},
): ReadableStream<Uint8Array> {
  return textStream(csvParts(db, options.pool ?? null, accountId, options.chunkSize ?? CSV_CHUNK_SIZE), options.chunkChars ?? CSV_CHUNK_CHARS);
}
