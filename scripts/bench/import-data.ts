// The import bench's rows (scripts/bench/import.ts): one generator behind both the CSV file the
// service imports and the COPY that sets the limit, so both write the same contacts. Everything is
// streamed a block of lines at a time: memory does not grow with the number of rows.
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { person, uuidv7 } from '../../src/cli/seed-bench-data.js';
import { CSV_COLUMNS, csvCell } from '../../src/exports/contacts-csv.js';

/** Every generated e-mail ends here: the dataset's own addresses never do (seed-bench-data MAIL_DOMAINS). */
export const IMPORT_DOMAIN = 'bench-import.example';
/** Not the dataset's seed (42), so the names differ from the contacts already there. */
const SEED = 1717;
const LINES_PER_BLOCK = 1000;

type Row = { firstName: string; lastName: string | null; email: string; phone: string | null; company: string | null; contactType: string; source: string };

/** Contact `i`: a realistic person with an address unique to `i` (so match_on=email creates every row). */
function rowOf(i: number): Row {
  const p = person(SEED, i);
  // The dataset's local part (a name and its number), renumbered: the number alone keeps it unique.
  const local = p.email ? p.email.slice(0, p.email.indexOf('@')).replace(/\d+$/, '') : 'contact';
  return { ...p, email: `${local}.${i}@${IMPORT_DOMAIN}` };
}

/** Lines of rows `0..rows-1`, joined into blocks: one write per block, not per row. */
async function* blocks(rows: number, line: (row: Row, i: number) => string, header?: string): AsyncGenerator<string> {
  if (header) yield header;
  for (let start = 0; start < rows; start += LINES_PER_BLOCK) {
    let text = '';
    for (let i = start; i < Math.min(rows, start + LINES_PER_BLOCK); i++) text += line(rowOf(i), i);
    yield text;
  }
}

/**
 * As the contacts export writes it (src/exports/contacts-csv.ts): its header, formula guard and
 * quoting, CRLF; the last cell, External Id, empty (without it every row was a ragged row that failed).
 */
const csvLine = (r: Row, i: number) =>
  [r.firstName, r.lastName, r.email, r.phone, r.company, r.contactType, r.source]
    .map((v) => (v === null ? '' : csvCell(v)))
    .join(',') + `,${new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString()},\r\n`;

/** Writes the CSV of `rows` contacts to `file`; its size in bytes. */
export async function writeImportCsv(file: string, rows: number): Promise<number> {
  await pipeline(Readable.from(blocks(rows, csvLine, `${CSV_COLUMNS.map(csvCell).join(',')}\r\n`)), createWriteStream(file));
  return (await stat(file)).size;
}

/** COPY's text format: `\N` for null; backslash, tab and line breaks escaped (the generated values hold none, but a limit must not be wrong). */
const copyCell = (v: string | null) => (v === null ? '\\N' : v.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!));

/**
 * The limit: the same rows COPYed into a bare twin of `contacts` (same columns, defaults and indexes;
 * no foreign keys, triggers, events or counters), timed from the first byte to COPY's end. The values
 * are those the import writes: a UUIDv7 id, the account, the fields as the CSV holds them unguarded,
 * and created_at / updated_at from the column defaults (now(), as the service stamps them).
 */
export async function copyLimit(url: string, accountId: string, rows: number): Promise<{ seconds: number; rowsPerSecond: number }> {
  // Unbounded: the service sets its role's statement_timeout in this database (docs/scaling.md#pgbouncer).
  const client = new pg.Client({ connectionString: url, options: '-c statement_timeout=0' });
  await client.connect();
  try {
    await client.query('DROP TABLE IF EXISTS bench_import_limit');
    await client.query('CREATE TABLE bench_import_limit (LIKE contacts INCLUDING ALL)');
    const line = (r: Row) =>
      [uuidv7(Date.now()), accountId, r.firstName, r.lastName, r.email, r.phone, r.company, r.contactType, r.source].map(copyCell).join('\t') + '\n';
    const started = performance.now();
    await pipeline(
      Readable.from(blocks(rows, line)),
      client.query(copyFrom('COPY bench_import_limit (id, account_id, first_name, last_name, email, phone, company, contact_type, source) FROM STDIN')),
    );
    const seconds = (performance.now() - started) / 1000;
    return { seconds, rowsPerSecond: rows / seconds };
  } finally {
    await client.query('DROP TABLE IF EXISTS bench_import_limit').catch(() => undefined);
    // The COPY's dirty pages are written now, not by a checkpoint in the middle of the import that follows.
    await client.query('CHECKPOINT').catch(() => undefined);
    await client.end();
  }
}
