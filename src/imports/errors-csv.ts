// The errors CSV of an import (docs/decisions.md §17): `line`, the file's own columns, `errors`;
// one row per refused row, in line order, its cells as sent, `errors` always the last column under
// its header (a ragged row fitted to it: fitted() below). Cells go through the export's csvCell, so
// a formula-looking cell is guarded as in exports (docs/decisions.md §6).
import { csvCell } from '../exports/contacts-csv.js';
import type { PrismaClient } from '../generated/prisma/client.js';

const PAGE = 1000;
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
        const page = await db.importError.findMany({
          where: { accountId, importId, line: { gt: after } },
          orderBy: { line: 'asc' },
          take: PAGE,
        });
        for (const e of page) text += row([String(e.line), ...fitted(e.cells as string[], headers.length, messagesOf(e.details as Record<string, string[]>))]);
        if (page.length) after = page[page.length - 1]!.line;
        if (text) controller.enqueue(encoder.encode(text));
        if (page.length < PAGE) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}
