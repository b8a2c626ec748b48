// Receiving an import's file (docs/imports.md#intake): the request body is spooled to a temporary
// file as it arrives (bounded in size and pace), holding no database connection however slowly it
// comes; the file is then parsed (csv-parse) and stored as it is parsed, COPY into import_rows on
// PostgreSQL (pg-copy-streams), multi-row INSERTs of CHUNK rows on PGlite, with backpressure all the
// way back to the disk: memory holds a chunk, never the file.
import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { from as copyFrom } from 'pg-copy-streams';
import type { Database } from '../db/client.js';
import { AppError, badInput, payloadTooLarge, requestTimeout, unsupportedMediaType } from '../errors.js';
import { MAX_RECORD_BYTES } from './bounds.js';
import { charsetOf, decoder, ENCODINGS, sniffDialect, type Dialect } from './dialect.js';

export const MAX_IMPORT_BYTES = 200 * 1024 * 1024;
export const MAX_IMPORT_ROWS = 1_000_000;
const CHUNK = 1000;

export type Staged = { importId: string; accountId: string };
/** `sha256`: of the body's bytes as sent (hex), so a retry of the same file is known as one. */
export type Received = Staged & { sha256: string };

/** 400 on `body`: a file this service cannot read as CSV at all (not UTF-8, empty, header only, broken quoting). */
const badFile = (message: string) => badInput({ body: [message] });
const NOT_UTF8 = 'Not UTF-8: give the encoding the file is in (encoding=windows-1252, for one), or save it as UTF-8 and send it again';

/** What the client says of the file's form (`delimiter=`, `encoding=`), as the core judged it; the Content-Type's charset is read here. */
export type Given = { delimiter?: string | null; encoding?: string | null };
/** The header row, and the dialect the file was read in (its delimiter is the import's). */
export type Begin = (headers: string[], dialect: Dialect) => Promise<Staged>;
/** Bytes of the file's start its dialect is judged from: a header line longer than this is judged on its start. */
const HEAD_BYTES = 64 * 1024;

/** A body slower than `minBytes` in any `windowMs` is cut off (408: docs/imports.md#bounds). */
export type Pace = { windowMs: number; minBytes: number };

/**
 * Reads `request`'s CSV body: spooled to a temporary file first (removed afterwards in every case),
 * then parsed in its dialect: `begin(headers, dialect)` runs once the header and a first row are in
 * (it creates the import, or throws the refusal), then every row is stored under that import. A
 * file refused after `begin` throws; the caller removes what was stored.
 */
export async function receiveCsv(db: Database, request: Request, begin: Begin, pace: Pace, gone: AbortSignal, given: Given = {}): Promise<Received> {
  checkCsvMessage(request);
  if (!request.body) throw badFile('Empty file');
  const dir = await mkdtemp(join(tmpdir(), 'import-'));
  try {
    const file = join(dir, 'body.csv');
    const digest = createHash('sha256');
    await pipeline(bodyOf(request.body, gone), metered(digest, pace), createWriteStream(file));
    const dialect = sniffDialect(await headOf(file), { ...given, charset: charsetOf(request.headers.get('content-type')) });
    return { ...(await storeCsv(db, file, dialect, begin)), sha256: digest.digest('hex') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The first HEAD_BYTES of the spooled file. */
async function headOf(file: string): Promise<Buffer> {
  const handle = await open(file);
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The spooled file parsed in its dialect and stored under the import `begin` makes. */
async function storeCsv(db: Database, file: string, dialect: Dialect, begin: Begin): Promise<Staged> {
  let staged: Staged | null = null;
  let stager: Stager | null = null;
  let headers: string[] | null = null;
  let seq = 0;
  let line = 1; // the line the next record starts on
  // The row being stored: a refusal waits for it, so nothing it opens (the import, a COPY) outlives the refusal.
  let storing: Promise<void> = Promise.resolve();
  const sink = new Writable({
    objectMode: true,
    highWaterMark: CHUNK,
    write({ record, raw }: { record: string[]; raw: string }, _enc, done) {
      const at = line;
      line += (raw.match(/\r\n|\r|\n/g) ?? []).length;
      if (record.length === 1 && record[0] === '') return done(); // a blank line
      // PostgreSQL's text holds no NUL: a file with one is no text in the encoding it was read in.
      if (record.some((cell) => cell.includes('\u0000'))) return done(badFile(`Line ${at} holds a NUL character: not text in ${dialect.encoding} (a UTF-16 file without a byte order mark wants encoding=utf-16le or utf-16be)`));
      if (!headers) {
        headers = record;
        return done();
      }
      if (++seq > MAX_IMPORT_ROWS) return done(payloadTooLarge());
      storing = (async () => {
        if (!stager) {
          staged = await begin(headers!, dialect);
          stager = await openStager(db, staged);
        }
        await stager.add(seq, at, record);
      })();
      storing.then(() => done(), done);
    },
    final(done) {
      if (!headers) return done(badFile('Empty file'));
      if (!stager) return done(badFile('No rows: the file has a header only'));
      stager.end().then(() => done(), done);
    },
  });
  try {
    await pipeline(
      createReadStream(file, { start: dialect.bomBytes }),
      decoder(dialect.encoding, () => badFile(NOT_UTF8)),
      // max_record_size: the parser holds at most one record's bytes, however long a cell or line runs.
      parse({ delimiter: dialect.delimiter, raw: true, relax_column_count: true, relax_quotes: true, max_record_size: MAX_RECORD_BYTES }),
      sink,
    );
  } catch (error) {
    await storing.catch(() => undefined);
    await (stager as Stager | null)?.abort();
    if (error instanceof AppError) throw error;
    if (csvCode(error) === 'CSV_MAX_RECORD_SIZE') throw badFile(`Line ${(error as { lines: number }).lines}: a record longer than 1 MB (${MAX_RECORD_BYTES} bytes)`);
    // csv-parse's own errors (an unclosed quote): the file's problem, said by the parser.
    if (csvCode(error)?.startsWith('CSV_')) throw badFile(`Not valid CSV: ${(error as Error).message}`);
    throw error;
  }
  return staged!;
}

const csvCode = (error: unknown) => (error instanceof Error && 'code' in error ? String(error.code) : undefined);

/**
 * The body's chunks as they arrive (Yoga's request body is a ponyfilled stream, which Readable.fromWeb
 * refuses); destroyed (a refusal, a cut-off), it cancels the body at once, even mid-read.
 */
function bodyOf(body: ReadableStream<Uint8Array>, signal: AbortSignal): Readable {
  const reader = body.getReader();
  const source: Readable = new Readable({
    read() {
      reader.read().then((next) => this.push(next.done ? null : next.value), (error: Error) => this.destroy(error));
    },
    destroy(error, done) {
      reader.cancel().catch(() => undefined);
      done(error);
    },
  });
  // A client gone mid-body: a pending read may never settle, so the signal ends the upload.
  const gone = () => source.destroy(new Error('the client closed the upload'));
  if (signal.aborted) gone();
  else signal.addEventListener('abort', gone, { once: true });
  source.on('close', () => signal.removeEventListener('abort', gone));
  return source;
}

/**
 * Counts the body's bytes (413 past MAX_IMPORT_BYTES) into `digest`, and cuts it off (408) when a
 * window of `pace.windowMs` brings fewer than `pace.minBytes`.
 */
function metered(digest: Hash, pace: Pace): Transform {
  let bytes = 0;
  let inWindow = 0;
  const meter: Transform = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.byteLength;
      inWindow += chunk.byteLength;
      if (bytes > MAX_IMPORT_BYTES) return done(payloadTooLarge());
      digest.update(chunk);
      done(null, chunk);
    },
  });
  const timer = setInterval(() => {
    if (inWindow < pace.minBytes) meter.destroy(requestTimeout());
    inWindow = 0;
  }, pace.windowMs);
  meter.on('close', () => clearInterval(timer));
  meter.on('finish', () => clearInterval(timer));
  return meter;
}

/**
 * 415 unless the body is CSV in an encoding this service reads (a charset it does not know is a
 * 415 too); 413 when the client says it is larger than MAX_IMPORT_BYTES, before a byte of it is
 * read (it is counted while reading too, whatever the header claims).
 */
export function checkCsvMessage(request: Request): void {
  const contentType = request.headers.get('content-type');
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const charset = charsetOf(contentType);
  if (type !== 'text/csv' || (charset !== null && !ENCODINGS[charset])) throw unsupportedMediaType();
  if (Number(request.headers.get('content-length') ?? 0) > MAX_IMPORT_BYTES) throw payloadTooLarge();
}

type Stager = { add(seq: number, line: number, cells: string[]): Promise<void>; end(): Promise<void>; abort(): Promise<void> };

async function openStager(db: Database, staged: Staged): Promise<Stager> {
  return db.pool ? copyStager(db.pool, staged) : insertStager(db, staged);
}

/**
 * How long the COPY of one file may run: as long as its upload, which Node's request timeout (5
 * minutes by default) ends first. Every other statement keeps DATABASE_STATEMENT_TIMEOUT_MS (10 s):
 * a million rows take about a minute to arrive.
 */
export const INTAKE_TIMEOUT_MS = 6 * 60_000;

/** Characters of COPY text per write to the connection: about 500 rows. */
const COPY_BATCH_CHARS = 64 * 1024;

/**
 * PostgreSQL: one COPY per file, in COPY's text format (the cells as JSON, whose escapes COPY keeps
 * as they are once `\` is doubled), in a transaction of its own whose SET LOCAL lifts the statement
 * bound for it alone (never a session SET: behind PgBouncer it would outlive the request).
 */
async function copyStager(pool: NonNullable<Database['pool']>, { importId, accountId }: Staged): Promise<Stager> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL statement_timeout = ${INTAKE_TIMEOUT_MS}`);
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
  const copy = client.query(copyFrom('COPY import_rows (account_id, import_id, seq, line, cells) FROM STDIN'));
  let failed: Error | null = null;
  copy.on('error', (err: Error) => (failed = err));
  const release = (err?: Error) => client.release(err);
  // Rows go to the COPY in writes of COPY_BATCH_CHARS: written one by one, each was a socket write of
  // its own, three quarters of the intake's time on the main thread (BENCHMARKS.md, "The intake and
  // the relay, measured apart").
  let batch = '';
  const send = async () => {
    const text = batch;
    batch = '';
    if (!copy.write(text)) await once(copy, 'drain');
  };
  return {
    async add(seq, line, cells) {
      if (failed) throw failed;
      batch += `${accountId}\t${importId}\t${seq}\t${line}\t${JSON.stringify(cells).replaceAll('\\', '\\\\')}\n`;
      if (batch.length >= COPY_BATCH_CHARS) await send();
    },
    async end() {
      if (batch) await send();
      copy.end();
      try {
        await once(copy, 'finish');
        await client.query('COMMIT');
      } catch (error) {
        failed ??= error as Error;
        throw error;
      } finally {
        release(failed ?? undefined);
      }
    },
    async abort() {
      // Destroying the stream ends the COPY with an error: nothing it sent is kept. The connection is
      // then dropped, and its transaction with it.
      copy.destroy(new Error('import intake aborted'));
      release(new Error('import intake aborted'));
    },
  };
}

/** Characters of cells per INSERT at most: rows may be up to MAX_RECORD_BYTES each. */
const INSERT_BATCH_CHARS = 4 * 1024 * 1024;

/**
 * PGlite: CHUNK rows (or INSERT_BATCH_CHARS) per INSERT, each its own statement (the intake's rows
 * are removed with the import if it fails).
 */
function insertStager(db: Database, { importId, accountId }: Staged): Stager {
  let rows: { seq: number; line: number; cells: string[] }[] = [];
  let chars = 0;
  const flush = async () => {
    if (rows.length === 0) return;
    const batch = JSON.stringify(rows);
    rows = [];
    chars = 0;
    await db.prisma.$executeRaw`
      INSERT INTO import_rows (account_id, import_id, seq, line, cells)
      SELECT ${accountId}::uuid, ${importId}::uuid, r.seq, r.line, r.cells FROM json_to_recordset(${batch}::json) AS r(seq int, line int, cells json)`;
  };
  return {
    async add(seq, line, cells) {
      rows.push({ seq, line, cells });
      for (const cell of cells) chars += cell.length;
      if (rows.length >= CHUNK || chars >= INSERT_BATCH_CHARS) await flush();
    },
    end: flush,
    async abort() {
      rows = [];
    },
  };
}
