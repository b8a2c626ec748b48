// CSV via @json2csv/node 7, the maintained line of json2csv (the legacy `json2csv` 5.x package is
// no longer maintained). Its Transform streams rows; we supply the cell formatter (see below).
import { Readable, pipeline } from 'node:stream';
import { Transform, type ParserOptions } from '@json2csv/node';
import type { PrismaClient } from '../generated/prisma/client.js';

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

type CsvRow = Record<(typeof CSV_COLUMNS)[number], string | null>;

/** Rows fetched per query: memory holds one chunk, whatever the number of contacts. */
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
  const safe = value.split(';').map(guard).join(';');
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** RFC 4180 ends every record in CRLF; json2csv writes the separator between records only. */
const RECORD_END = '\r\n';

const PARSER_OPTIONS: ParserOptions<CsvRow, CsvRow> = {
  fields: [...CSV_COLUMNS],
  // Records are separated by CRLF (the last one's is added at the end); null cells are empty (json2csv's object formatter maps null to '').
  eol: '\r\n',
  includeEmptyRows: true,
  formatters: { string: csvCell, header: csvCell },
};

type ContactRow = {
  id: string;
  firstName: string;
  lastName: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  contactType: string;
  source: string;
  createdAt: Date;
};

function toCsvRow(contact: ContactRow): CsvRow {
  return {
    'First Name': contact.firstName,
    'Last Name': contact.lastName,
    Email: contact.email,
    Phone: contact.phone,
    Company: contact.company,
    'Contact Type': contact.contactType,
    Source: contact.source,
    'Created At': contact.createdAt.toISOString(),
  };
}

/**
 * The account's contacts oldest first, by keyset pages on (created_at, id): never all at once.
 * "created_at >= last AND NOT (created_at = last AND id <= last id)" is the same set as "after the
 * last row", but PostgreSQL starts the index scan at `last`; the OR form is only a filter, and every
 * page would rescan the account from its first contact (quadratic: minutes at 1,000,000 contacts).
 */
export async function* contactsOldestFirst(db: PrismaClient, accountId: string, chunkSize = CSV_CHUNK_SIZE) {
  let after: ContactRow | undefined;
  for (;;) {
    const rows: ContactRow[] = await db.contact.findMany({
      where: {
        accountId,
        ...(after && {
          createdAt: { gte: after.createdAt },
          NOT: { createdAt: after.createdAt, id: { lte: after.id } },
        }),
      },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: chunkSize,
      select: {
        id: true,
        firstName: true,
        lastName: true,
        email: true,
        phone: true,
        company: true,
        contactType: true,
        source: true,
        createdAt: true,
      },
    });
    yield* rows;
    if (rows.length < chunkSize) return;
    after = rows[rows.length - 1];
  }
}

/** Characters per chunk handed to the response: one row per chunk would mean a write per row. */
export const CSV_CHUNK_CHARS = 64 * 1024;

/**
 * The contacts CSV as a web stream of UTF-8 bytes, for `new Response(...)`. Rows are read only as
 * the client reads (each pull takes lines from the CSV transform until a chunk is full), so memory
 * holds one page of rows and one chunk, whatever the number of contacts; cancelling stops the queries.
 */
export function contactsCsvStream(
  db: PrismaClient,
  accountId: string,
  options: { chunkSize?: number; chunkChars?: number } = {},
): ReadableStream<Uint8Array> {
  const chunkChars = options.chunkChars ?? CSV_CHUNK_CHARS;
  const rows = Readable.from(
    (async function* () {
      for await (const contact of contactsOldestFirst(db, accountId, options.chunkSize)) yield toCsvRow(contact);
    })(),
  );
  // pipeline (not pipe) so a failed query errors the stream instead of leaving the response hanging.
  const csv = pipeline(rows, new Transform(PARSER_OPTIONS, {}, { objectMode: true }), () => {});
  const lines = csv[Symbol.asyncIterator]() as AsyncIterator<string>;
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = '';
      let finished = false;
      while (text.length < chunkChars) {
        const next = await lines.next();
        if ((finished = Boolean(next.done))) break;
        text += next.value;
      }
      if (finished) text += RECORD_END; // after the last record too (the header at least)
      if (text) controller.enqueue(encoder.encode(text));
      if (finished) controller.close();
    },
    async cancel() {
      await lines.return?.();
    },
  });
}
