// How an import's file is written (docs/imports.md#reading-the-file): its encoding (a BOM, else
// `encoding=`, else the Content-Type's charset, else UTF-8) and its delimiter (`delimiter=`, else
// the one the header line uses most). Files from spreadsheets and other CRMs differ in both: a
// European Excel writes `;` in Windows-1252, Excel's "Unicode text" tabs in UTF-16.
import { Transform } from 'node:stream';
import iconv from 'iconv-lite';

/** The delimiters a file may use, by the names `delimiter=` takes (a tab is `tab`, or the character itself). */
export const DELIMITERS: Record<string, string> = { ',': ',', ';': ';', '|': '|', tab: '\t', '\t': '\t' };
/** What detection picks between, in the order a tie is settled. */
const CANDIDATES = [',', ';', '\t', '|'];

/** The encodings a file may be in, by the names `encoding=` and a charset take (lower-case), as iconv-lite names them. */
export const ENCODINGS: Record<string, string> = {
  'utf-8': 'utf-8', utf8: 'utf-8', 'us-ascii': 'utf-8', ascii: 'utf-8', // ASCII is UTF-8's first half
  'utf-16le': 'utf-16le', 'utf-16be': 'utf-16be',
  'windows-1252': 'windows-1252', cp1252: 'windows-1252',
  'iso-8859-1': 'iso-8859-1', latin1: 'iso-8859-1',
  'iso-8859-15': 'iso-8859-15', latin9: 'iso-8859-15',
};
export const ENCODING_NAMES = ['utf-8', 'utf-16le', 'utf-16be', 'windows-1252', 'iso-8859-1', 'iso-8859-15'];

/** A byte order mark says the encoding whatever the client says: the file's own word is the surer. */
const BOMS: [bytes: number[], encoding: string][] = [
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xff, 0xfe], 'utf-16le'],
  [[0xfe, 0xff], 'utf-16be'],
];

export type Dialect = { encoding: string; bomBytes: number; delimiter: string };

/** The `charset` parameter of a Content-Type, lower-cased; null when there is none. */
export function charsetOf(contentType: string | null): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match ? match[1]!.toLowerCase() : null;
}

/**
 * The file's dialect from its first bytes (`head`: enough for its header line) and what the client
 * said (`delimiter`, `encoding`: names already judged by the core; `charset`: the Content-Type's).
 */
export function sniffDialect(head: Buffer, given: { delimiter?: string | null; encoding?: string | null; charset?: string | null }): Dialect {
  const bom = BOMS.find(([bytes]) => bytes.every((b, i) => head[i] === b));
  const encoding = bom?.[1] ?? ENCODINGS[(given.encoding ?? given.charset ?? 'utf-8').toLowerCase()] ?? 'utf-8';
  const bomBytes = bom?.[0].length ?? 0;
  const delimiter = given.delimiter ? DELIMITERS[given.delimiter]! : detectDelimiter(iconv.decode(head.subarray(bomBytes), encoding));
  return { encoding, bomBytes, delimiter };
}

/**
 * The candidate the header line holds most often outside quotes (`,` when none: a one-column file).
 * A header names columns, so it seldom holds another candidate by chance; the rows may (a company
 * `Smith, Jones`), which is why they are not counted.
 */
export function detectDelimiter(text: string): string {
  const counts = new Map(CANDIDATES.map((c) => [c, 0]));
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ',';
  for (const c of CANDIDATES) if (counts.get(c)! > counts.get(best)!) best = c;
  return best;
}

/** Bytes in `encoding` to text; a UTF-8 file with bytes that are not UTF-8 is refused by `refuse()`. */
export function decoder(encoding: string, refuse: () => Error): Transform {
  if (encoding !== 'utf-8') return iconv.decodeStream(encoding, { stripBOM: false }) as unknown as Transform;
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  return new Transform({
    readableObjectMode: false,
    transform(chunk: Buffer, _enc, done) {
      try {
        done(null, utf8.decode(chunk, { stream: true }));
      } catch {
        done(refuse());
      }
    },
    flush(done) {
      try {
        done(null, utf8.decode());
      } catch {
        done(refuse());
      }
    },
  });
}
