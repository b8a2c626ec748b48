/**
 * RFC 4180 reader for checking the service's CSV: records end in CRLF; quoted cells may hold
 * commas, doubled quotes and line breaks. Hand-written rather than a CSV library on purpose: it is
 * strict where the export promises to be (a bare LF ends no record, a stray quote throws), where
 * parsers accept any line ending and repair bad quoting.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  let closed = false; // just after a quoted cell's closing quote: only a separator may follow
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') (quoted = false), (closed = true);
      else cell += c;
    } else if (c === ',') row.push(cell), (cell = ''), (closed = false);
    else if (c === '\r' && text[i + 1] === '\n') row.push(cell), rows.push(row), (row = []), (cell = ''), (closed = false), i++;
    else if (closed) throw new Error(`CSV: ${JSON.stringify(c)} after a closing quote at ${i}`);
    else if (c === '"' && cell === '') quoted = true;
    else if (c === '"') throw new Error(`CSV: a quote inside an unquoted cell at ${i}`);
    else cell += c;
  }
  if (quoted) throw new Error('CSV: a quoted cell is never closed');
  if (cell !== '' || closed || row.length > 0) row.push(cell), rows.push(row);
  return rows;
}
