// One chunk of an import (docs/imports.md#the-worker): up to CHUNK stored rows through the one
// set-based write path (src/writes/), their failures, and the import's progress, in one
// transaction. The import's row is locked first: a chunk commits only while its worker still holds
// the lease, so a row is never written twice.
//
// Pipelined: each chunk's transaction also reads the next chunk's stored rows, and judges them
// (parse, zod rules: no database) while its own write statement runs, so the next transaction
// starts with its items judged. The judged chunk is used only if the next transaction, after its
// lock, finds `done_seq` where the chunk begins; anything else (a retry, another worker) reads again.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { writeJudged, type BatchMode, type Judged, type MatchOn } from '../writes/batch.service.js';
import type { ErrorDetails } from '../errors.js';
import type { Import, Prisma, PrismaClient } from '../generated/prisma/client.js';
import { userActor } from '../events/types.js';
import { oversizedCells } from './bounds.js';
import { customTypesOf, inputOf, type CellReading, type ValueMapping } from './columns.js';
import { recordShapes } from '../model/shapes.js';
import { finishImport } from './import.service.js';
import { nameDuplicates, takeKeys } from './keys.js';
import { IMPORT_OBJECTS } from './objects.js';
import { judgeRows, keepCreatedAt, resolveReferences, takeExtras, type Refs } from './references.js';
import type { ImportObjectName } from './columns.js';

export const CHUNK_ROWS = 1000;
/**
 * The job side's own bounds (docs/security.md#what-a-job-holds), whatever a stored row holds (the
 * intake's bounds aside): a row's cells larger than RECORD_BYTES are never read into the worker (the
 * row fails, named by its line), and a chunk stops at the row that takes it past CHUNK_BYTES, so a
 * chunk's strings, its statement's parameters and its failures' JSON stay a few MB (1,000 rows of a
 * usual file are ~0.2 MB).
 */
export const CHUNK_LIMITS = { recordBytes: 1024 * 1024, chunkBytes: 2 * 1024 * 1024 };
export type ChunkLimits = typeof CHUNK_LIMITS;
/** A chunk of 1,000 upserts may wait on locks a while; it is one transaction all the same. */
const CHUNK_TRANSACTION = { maxWait: 10_000, timeout: 120_000 };

export type ChunkOutcome = 'more' | 'finished' | 'lost';

/** The import as a chunk reads it (locked): what never changes after the intake, and its progress. */
type ImportRow = Pick<Import, 'id' | 'accountId' | 'object' | 'status' | 'matchOn' | 'columns' | 'headers' | 'delimiter' | 'valueMapping' | 'doneSeq' | 'createdById' | 'apiKeyId' | 'leaseOwner'>;
/** `cells` null: larger than `recordBytes` (`size`), left in the database. */
type StoredRow = { seq: number; line: number; cells: string | null; size: number };
type Failure = { line: number; cells: string; details: ErrorDetails };
type ReadRow = StoredRow & { cells: string };

/**
 * The stored rows after `from`, judged: `judged[i]` is the batch item of `sources[i]`, `refs[i]` the
 * references it names (found in the chunk's transaction); ragged rows are failures already.
 */
export type JudgedChunk = { from: number; rows: StoredRow[]; failures: Failure[]; sources: ReadRow[]; judged: Judged[]; refs: (Refs | null)[] };

const modeOf = (row: ImportRow): BatchMode => (row.matchOn ? { mode: 'upsert', on: row.matchOn as MatchOn } : { mode: 'create' });
const kindOf = (row: ImportRow) => IMPORT_OBJECTS[row.object as ImportObjectName].kind;

/**
 * The next CHUNK_ROWS stored rows after `from`. The intake numbers them 1, 2, 3... without gaps,
 * so this is a bounded range: with `seq > done` alone, statistics taken while import_rows was small
 * planned a bitmap scan of every row still to come, sorted for its first 1,000 (1.2 s a chunk,
 * 800,000 rows left). Fewer when their cells pass `chunkBytes`; a row's cells past `recordBytes` stay behind.
 */
function readStored(tx: Prisma.TransactionClient, row: ImportRow, from: number, { recordBytes, chunkBytes }: ChunkLimits): Promise<StoredRow[]> {
  return tx.$queryRaw<StoredRow[]>`
    SELECT seq, line, CASE WHEN size <= ${recordBytes} THEN cells END AS cells, size FROM (
      SELECT seq, line, cells, size,
             sum(CASE WHEN size <= ${recordBytes} THEN size ELSE 0 END) OVER (ORDER BY seq) - CASE WHEN size <= ${recordBytes} THEN size ELSE 0 END AS before
      FROM (SELECT seq, line, cells::text AS cells, octet_length(cells::text) AS size FROM import_rows
            WHERE account_id = ${row.accountId}::uuid AND import_id = ${row.id}::uuid
              AND seq > ${from}::int AND seq <= ${from + CHUNK_ROWS}::int) r) w
    WHERE before < ${chunkBytes}
    ORDER BY seq`;
}

/** A stored row's cells, or why it cannot be imported (too large, or not an array of strings: never written by the intake). */
function cellsOf(r: StoredRow, limits: ChunkLimits): string[] | string {
  if (r.cells === null) return `Too large: ${r.size} bytes; a row may have at most ${limits.recordBytes} bytes`;
  const cells: unknown = JSON.parse(r.cells);
  return Array.isArray(cells) && cells.every((c) => typeof c === 'string') ? cells : 'Not a row of text cells';
}

/** Stored rows as batch items, judged by the object's rules (no database). */
async function judgeChunk(row: ImportRow, from: number, rows: StoredRow[], limits: ChunkLimits, custom: CellReading['custom']): Promise<JudgedChunk> {
  const columns = row.columns as (string | null)[];
  // A `;` file is a European spreadsheet's, whose decimal mark is the comma (docs/imports.md#reading-the-file).
  const reading = { values: row.valueMapping as ValueMapping, decimalComma: row.delimiter === ';', custom };
  const failures: Failure[] = [];
  const inputs: Record<string, unknown>[] = [];
  const extras: ReturnType<typeof takeExtras>[] = [];
  const sources: ReadRow[] = [];
  for (const r of rows) {
    const cells = cellsOf(r, limits);
    if (typeof cells === 'string') failures.push({ line: r.line, cells: '[]', details: { row: [cells] } });
    else {
      const oversized = oversizedCells(cells, row.headers); // docs/imports.md#bounds
      if (oversized) failures.push({ line: r.line, cells: r.cells!, details: oversized });
      // A ragged row (docs/decisions.md §17) fails whole: which cell is which is unknown.
      else if (cells.length !== columns.length) failures.push({ line: r.line, cells: r.cells!, details: { row: [`Has ${cells.length} cells; the header has ${columns.length}`] } });
      else {
        const input = inputOf(columns, cells, reading);
        extras.push(takeExtras(input));
        inputs.push(input);
        sources.push(r as ReadRow);
      }
    }
  }
  const judged = await judgeRows(kindOf(row), row.accountId, inputs, modeOf(row));
  keepCreatedAt(judged, extras, modeOf(row));
  nameDuplicates(kindOf(row), judged, sources.map((r) => r.line), row.matchOn);
  return { from, rows, failures, sources, judged, refs: extras.map((e) => e.refs) };
}

export type ChunkRun = {
  outcome: ChunkOutcome;
  /** The next chunk, read in this transaction and judged while its statement ran (null: none was read). */
  next: Promise<JudgedChunk | null> | null;
};

/**
 * Writes the next chunk of `importId` for the worker `owner`; 'lost' when it is no longer its own.
 * A commit is progress: the attempts start again at this one (docs/imports.md#attempts).
 * `ahead`: the chunk the previous run judged, used if it begins at `done_seq`.
 */
export function runChunk(db: PrismaClient, importId: string, owner: string, ahead: JudgedChunk | null = null, limits = CHUNK_LIMITS): Promise<ChunkRun> {
  return db.$transaction(async (tx): Promise<ChunkRun> => {
    const [row] = await tx.$queryRaw<ImportRow[]>`
      SELECT id, account_id AS "accountId", object, status, match_on AS "matchOn", columns, headers, delimiter,
             value_mapping AS "valueMapping", done_seq AS "doneSeq",
             created_by AS "createdById", api_key_id AS "apiKeyId", lease_owner::text AS "leaseOwner"
      FROM imports WHERE id = ${importId}::uuid FOR UPDATE`;
    if (!row || row.status !== 'running' || row.leaseOwner !== owner) return { outcome: 'lost', next: null };
    const actor = row.apiKeyId ? userActor({ id: row.apiKeyId, apiKey: {} }) : userActor(row.createdById ? { id: row.createdById } : null);
    // The types of the account's own fields, read in this transaction before the chunks are judged
    // (the next one is judged while a statement runs, when the transaction takes no other query).
    const custom = customTypesOf(await recordShapes.of(tx, row.accountId, kindOf(row).spec));
    const chunk = ahead?.from === row.doneSeq ? ahead : await judgeChunk(row, row.doneSeq, await readStored(tx, row, row.doneSeq, limits), limits, custom);
    if (chunk.rows.length === 0) {
      await finishImport(tx, (await tx.import.findUniqueOrThrow({ where: { id: importId } })), 'completed', null, actor);
      return { outcome: 'finished', next: null };
    }

    const last = chunk.rows[chunk.rows.length - 1]!.seq;
    // The next chunk's rows now (one index range, ~10 ms); judged once this chunk's statement is
    // sent (a turn later, so the statement leaves first), or at once if there is none to send.
    const nextRows = await readStored(tx, row, last, limits);
    let next: Promise<JudgedChunk | null> | null = null;
    const judgeNext = () => {
      if (next || nextRows.length === 0) return;
      next = nextTurn().then(() => judgeChunk(row, last, nextRows, limits, custom)).catch(() => null);
    };
    // The counters and failures are all a chunk needs of the answer: no records back (docs/batches.md).
    const how = { ...modeOf(row), allOrNothing: false, records: false, whileWriting: judgeNext };
    // A deal's contact and stage named by e-mail, external id or name: the chunk's all in one statement.
    await resolveReferences(tx, row.accountId, chunk.judged, chunk.refs);
    // Keys an earlier chunk's rows took fail these rows; the rest take theirs (src/imports/keys.ts).
    await takeKeys(tx, kindOf(row), row, chunk.judged, chunk.sources.map((r) => r.line));
    const result = chunk.judged.length ? await writeJudged(tx, kindOf(row), row.accountId, chunk.judged, how, actor) : null;
    judgeNext();
    const failures = [...chunk.failures];
    for (const item of result?.items ?? []) {
      if (item.status === 'FAILED') failures.push({ line: chunk.sources[item.index]!.line, cells: chunk.sources[item.index]!.cells, details: item.details ?? {} });
    }
    if (failures.length) {
      await tx.$executeRaw`
        INSERT INTO import_errors (account_id, import_id, line, cells, details)
        SELECT ${row.accountId}::uuid, ${importId}::uuid, f.line, f.cells::json, f.details
        FROM json_to_recordset(${JSON.stringify(failures)}::json) AS f(line int, cells text, details jsonb)`;
    }
    await tx.$executeRaw`
      UPDATE imports SET done_seq = ${last}, rows_processed = rows_processed + ${chunk.rows.length},
        created = created + ${result?.created ?? 0}, updated = updated + ${result?.updated ?? 0},
        unchanged = unchanged + ${result?.unchanged ?? 0}, failed = failed + ${failures.length},
        attempts = 1, attempt_error = NULL
      WHERE id = ${importId}::uuid`;
    return { outcome: 'more', next };
  }, CHUNK_TRANSACTION);
}
