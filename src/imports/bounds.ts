// What one CSV record and one cell of an import may hold (docs/imports.md#bounds, docs/decisions.md
// §24): the parser stops at a record over MAX_RECORD_BYTES, so memory holds at most one such record
// whatever the file; a row with a cell over MAX_CELL_BYTES fails, naming the cell's column.
import type { ErrorDetails } from '../errors.js';

export const MAX_RECORD_BYTES = 1024 * 1024;
export const MAX_CELL_BYTES = 64 * 1024;

/** The row's cells over MAX_CELL_BYTES, by their column as the file's header spells it; null when none is. */
export function oversizedCells(cells: string[], headers: string[]): ErrorDetails | null {
  let details: ErrorDetails | null = null;
  cells.forEach((cell, i) => {
    // A UTF-8 character is at most 3 bytes per UTF-16 unit: shorter cells need no count.
    if (cell.length * 3 <= MAX_CELL_BYTES || Buffer.byteLength(cell) <= MAX_CELL_BYTES) return;
    (details ??= {})[headers[i] ?? `column ${i + 1}`] = [`Longer than 64 KB (${MAX_CELL_BYTES} bytes)`];
  });
  return details;
}
