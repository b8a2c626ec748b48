// One chunk of an import (docs/imports.md#the-worker): up to CHUNK stored rows through the one
// set-based write path (src/batches/), their failures, and the import's progress, in one
// transaction. The import's row is locked first: a chunk commits only while its worker still holds
// the lease, so a row is never written twice.
//
// Pipelined: each chunk's transaction also reads the next chunk's stored rows, and judges them
// (parse, zod rules: no database) while its own write statement runs, so the next transaction
// starts with its items judged. The judged chunk is used only if the next transaction, after its
// lock, finds `done_seq` where the chunk begins; anything else (a retry, another worker) reads again.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { judgeBatch, writeJudged, type BatchKind, type BatchMode, type Judged } from '../batches/batch.service.js';
import { contactBatch } from '../contacts/contact.service.js';
import { dealBatch } from '../deals/deal.service.js';
import type { ErrorDetails } from '../errors.js';
import type { Import, Prisma, PrismaClient } from '../generated/prisma/client.js';
import { userActor } from '../events/types.js';
import { inputOf } from './columns.js';
import { finishImport } from './import.service.js';

export const CHUNK_ROWS = 1000;
const KINDS: Record<string, BatchKind> = { contacts: contactBatch, deals: dealBatch };
/** A chunk of 1,000 upserts may wait on locks a while; it is one transaction all the same. */
const CHUNK_TRANSACTION = { maxWait: 10_000, timeout: 120_000 };

export type ChunkOutcome = 'more' | 'finished' | 'lost';

/** The import as a chunk reads it (locked): what never changes after the intake, and its progress. */
type ImportRow = Pick<Import, 'id' | 'accountId' | 'object' | 'status' | 'matchOn' | 'columns' | 'doneSeq' | 'createdById' | 'apiKeyId' | 'leaseOwner'>;
type StoredRow = { seq: number; line: number; cells: string };
type Failure = { line: number; cells: string; details: ErrorDetails };

/** The stored rows after `from`, judged: `judged[i]` is the batch item of `sources[i]`; ragged rows are failures already. */
export type JudgedChunk = { from: number; rows: StoredRow[]; failures: Failure[]; sources: StoredRow[]; judged: Judged[] };

const modeOf = (row: ImportRow): BatchMode => (row.matchOn ? { mode: 'upsert', on: row.matchOn as 'email' | 'externalId' } : { mode: 'create' });

/**
 * The next CHUNK_ROWS stored rows after `from`. The intake numbers them 1, 2, 3... without gaps,
 * so this is a bounded range: with `seq > done` alone, statistics taken while import_rows was small
 * planned a bitmap scan of every row still to come, sorted for its first 1,000 (1.2 s a chunk,
 * 800,000 rows left).
 */
function readStored(tx: Prisma.TransactionClient, row: ImportRow, from: number): Promise<StoredRow[]> {
  return tx.$queryRaw<StoredRow[]>`
    SELECT seq, line, cells::text AS cells FROM import_rows
    WHERE account_id = ${row.accountId}::uuid AND import_id = ${row.id}::uuid
      AND seq > ${from}::int AND seq <= ${from + CHUNK_ROWS}::int
    ORDER BY seq`;
}

/** Stored rows as batch items, judged by the object's rules (no database). */
async function judgeChunk(row: ImportRow, from: number, rows: StoredRow[]): Promise<JudgedChunk> {
  const columns = row.columns as (string | null)[];
  const failures: Failure[] = [];
  const inputs: Record<string, unknown>[] = [];
  const sources: StoredRow[] = [];
  for (const r of rows) {
    const cells = JSON.parse(r.cells) as string[];
    // A ragged row (docs/decisions.md §17) fails whole: which cell is which is unknown.
    if (cells.length !== columns.length) failures.push({ line: r.line, cells: r.cells, details: { row: [`Has ${cells.length} cells; the header has ${columns.length}`] } });
    else {
      inputs.push(inputOf(columns, cells));
      sources.push(r);
    }
  }
  return { from, rows, failures, sources, judged: await judgeBatch(KINDS[row.object]!, row.accountId, inputs, modeOf(row)) };
}

export type ChunkRun = {
  outcome: ChunkOutcome;
  /** The next chunk, read in this transaction and judged while its statement ran (null: none was read). */
  next: Promise<JudgedChunk | null> | null;
};

/**
 * Writes the next chunk of `importId` for the worker `owner`, extending its lease; 'lost' when it
 * is no longer its own. `ahead`: the chunk the previous run judged, used if it begins at `done_seq`.
 */
export function runChunk(db: PrismaClient, importId: string, owner: string, leaseMs: number, ahead: JudgedChunk | null = null): Promise<ChunkRun> {
  return db.$transaction(async (tx): Promise<ChunkRun> => {
    const [row] = await tx.$queryRaw<ImportRow[]>`
      SELECT id, account_id AS "accountId", object, status, match_on AS "matchOn", columns, done_seq AS "doneSeq",
             created_by AS "createdById", api_key_id AS "apiKeyId", lease_owner::text AS "leaseOwner"
      FROM imports WHERE id = ${importId}::uuid FOR UPDATE`;
    if (!row || row.status !== 'running' || row.leaseOwner !== owner) return { outcome: 'lost', next: null };
    const actor = row.apiKeyId ? userActor({ id: row.apiKeyId, apiKey: {} }) : userActor(row.createdById ? { id: row.createdById } : null);
    const chunk = ahead?.from === row.doneSeq ? ahead : await judgeChunk(row, row.doneSeq, await readStored(tx, row, row.doneSeq));
    if (chunk.rows.length === 0) {
      await finishImport(tx, (await tx.import.findUniqueOrThrow({ where: { id: importId } })), 'completed', null, actor);
      return { outcome: 'finished', next: null };
    }

    const last = chunk.rows[chunk.rows.length - 1]!.seq;
    // The next chunk's rows now (one index range, ~10 ms); judged once this chunk's statement is
    // sent (a turn later, so the statement leaves first), or at once if there is none to send.
    const nextRows = await readStored(tx, row, last);
    let next: Promise<JudgedChunk | null> | null = null;
    const judgeNext = () => {
      if (next || nextRows.length === 0) return;
      next = nextTurn().then(() => judgeChunk(row, last, nextRows)).catch(() => null);
    };
    // The counters and failures are all a chunk needs of the answer: no records back (docs/batches.md).
    const how = { ...modeOf(row), allOrNothing: false, records: false, whileWriting: judgeNext };
    const result = chunk.judged.length ? await writeJudged(tx, KINDS[row.object]!, row.accountId, chunk.judged, how, actor) : null;
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
        lease_until = now() + make_interval(secs => ${leaseMs / 1000})
      WHERE id = ${importId}::uuid`;
    return { outcome: 'more', next };
  }, CHUNK_TRANSACTION);
}
