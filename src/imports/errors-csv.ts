// The errors CSV of an import (docs/decisions.md §17): `line`, the file's own columns, `errors`;
// one row per refused row, in line order, its cells as sent, `errors` always the last column under
// its header (a ragged row fitted to it: fitted() below). Cells go through the export's csvCell, so
// a formula-looking cell is guarded as in exports (docs/decisions.md §6).
import { csvCell } from '../exports/contacts-csv.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { CHUNK_LIMITS } from './chunk.js';

const PAGE = 1000;
/**
 * A page stops at the row that takes its cells past this, and a stored row's cells past the chunk's
 * record bound are left out (never written by the worker, which stores a too-large row's cells as
 * []): a page, and the text made of it, stays a few MB (docs/security.md#what-a-job-holds).
 */
const PAGE_BYTES = CHUNK_LIMITS.chunkBytes;
const { recordBytes } = CHUNK_LIMITS;
type StoredError = { line: number; cells: string | null; details: Record<string, string[]> };
const row = (cells: string[]) => `${cells.map(csvCell).join(',')}\r\n`;

/** "field: message" for each failing field, `; ` between them. */
export const messagesOf = (details: Record<string, string[]>): string =>
  Object.entries(details).map(([field, messages]) => `${field}: ${messages.join(', ')}`).join('; ');

/**
 * A refused row's cells and `errors` under the header's `width` columns (docs/imports.md#intake): a
 * row shorter than the header gets empty cells; one longer keeps its first `width` cells in their
 * columns and every cell beyond them, as a JSON array, at the end of its `errors`.
 */
function fitted(cells: string[], width: number, errors: string): string[] {
  if (cells.length < width) return [...cells, ...Array<string>(width - cells.length).fill(''), errors];
  if (cells.length === width) return [...cells, errors];
  return [...cells.slice(0, width), `${errors}; beyond the header: ${JSON.stringify(cells.slice(width))}`];
}

/** The next page of errors after `after`, bounded in rows and bytes (the LIMIT first, so a page reads PAGE rows at most). */
function readPage(db: PrismaClient, accountId: string, importId: string, after: number): Promise<StoredError[]> {
  return db.$queryRaw<StoredError[]>`
    SELECT line, CASE WHEN size <= ${recordBytes} THEN cells END AS cells, details FROM (
      SELECT line, cells, details, size, sum(least(size, ${recordBytes})) OVER (ORDER BY line) - least(size, ${recordBytes}) AS before
      FROM (SELECT line, cells::text AS cells, details, octet_length(cells::text) AS size FROM import_errors
            WHERE account_id = ${accountId}::uuid AND import_id = ${importId}::uuid AND line > ${after}::int
            ORDER BY line LIMIT ${PAGE}) e) w
    WHERE before < ${PAGE_BYTES}
    ORDER BY line`;
}

/** The CSV as a web stream, a page of rows per pull (memory holds one page whatever the number of errors). */
export function importErrorsCsvStream(db: PrismaClient, accountId: string, importId: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let after = -1;
  let headerSent = false;
  let headers: string[] = [];
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let text = '';
        if (!headerSent) {
          const found = await db.import.findFirst({ where: { id: importId, accountId }, select: { headers: true } });
          headers = found?.headers ?? [];
          text += row(['line', ...headers, 'errors']);
          headerSent = true;
        }
        const page = await readPage(db, accountId, importId, after);
        for (const e of page) text += row([String(e.line), ...fitted(e.cells === null ? [] : (JSON.parse(e.cells) as string[]), headers.length, messagesOf(e.details))]);
        if (page.length) after = page[page.length - 1]!.line;
        if (text) controller.enqueue(encoder.encode(text));
        if (page.length === 0) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}
