// One chunk of an import (docs/imports.md#the-worker): up to CHUNK stored rows through the one
// set-based write path (src/batches/), their failures, and the import's progress, in one
// transaction. The import's row is locked first: a chunk commits only while its worker still holds
// the lease, so a row is never written twice.
import { writeBatch, type BatchKind } from '../batches/batch.service.js';
import { contactBatch } from '../contacts/contact.service.js';
import { dealBatch } from '../deals/deal.service.js';
import type { ErrorDetails } from '../errors.js';
import type { Import, PrismaClient } from '../generated/prisma/client.js';
import { userActor } from '../events/types.js';
import { inputOf } from './columns.js';
import { finishImport } from './import.service.js';

export const CHUNK_ROWS = 1000;
const KINDS: Record<string, BatchKind> = { contacts: contactBatch, deals: dealBatch };
/** A chunk of 1,000 upserts may wait on locks a while; it is one transaction all the same. */
const CHUNK_TRANSACTION = { maxWait: 10_000, timeout: 120_000 };

export type ChunkOutcome = 'more' | 'finished' | 'lost';

/** Writes the next chunk of `importId` for the worker `owner`, extending its lease; 'lost' when it is no longer its own. */
export function runChunk(db: PrismaClient, importId: string, owner: string, leaseMs: number): Promise<ChunkOutcome> {
  return db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<Import[]>`
      SELECT id, account_id AS "accountId", object, status, match_on AS "matchOn", columns, done_seq AS "doneSeq",
             created_by AS "createdById", api_key_id AS "apiKeyId", lease_owner::text AS "leaseOwner"
      FROM imports WHERE id = ${importId}::uuid FOR UPDATE`;
    if (!row || row.status !== 'running' || row.leaseOwner !== owner) return 'lost';
    // The intake numbers stored rows 1, 2, 3... without gaps, so the next chunk is a bounded range:
    // with `seq > done` alone, statistics taken while import_rows was small planned a bitmap scan
    // of every row still to come, sorted for its first 1,000 (1.2 s a chunk, 800,000 rows left).
    const rows = await tx.$queryRaw<{ seq: number; line: number; cells: string }[]>`
      SELECT seq, line, cells::text AS cells FROM import_rows
      WHERE account_id = ${row.accountId}::uuid AND import_id = ${importId}::uuid
        AND seq > ${row.doneSeq}::int AND seq <= ${row.doneSeq + CHUNK_ROWS}::int
      ORDER BY seq`;
    const actor = row.apiKeyId ? userActor({ id: row.apiKeyId, apiKey: {} }) : userActor(row.createdById ? { id: row.createdById } : null);
    if (rows.length === 0) {
      await finishImport(tx, (await tx.import.findUniqueOrThrow({ where: { id: importId } })), 'completed', null, actor);
      return 'finished';
    }

    const columns = row.columns as (string | null)[];
    const failures: { line: number; cells: string; details: ErrorDetails }[] = [];
    const inputs: Record<string, unknown>[] = [];
    /** The stored row of each input, by the input's index (its line and cells, should it fail). */
    const sources: { line: number; cells: string }[] = [];
    for (const r of rows) {
      const cells = JSON.parse(r.cells) as string[];
      // A ragged row (docs/decisions.md §17) fails whole: which cell is which is unknown.
      if (cells.length !== columns.length) failures.push({ line: r.line, cells: r.cells, details: { row: [`Has ${cells.length} cells; the header has ${columns.length}`] } });
      else {
        inputs.push(inputOf(columns, cells));
        sources.push(r);
      }
    }
    const mode = row.matchOn ? { mode: 'upsert' as const, on: row.matchOn as 'email' | 'externalId' } : { mode: 'create' as const };
    // The counters and failures are all a chunk needs of the answer: no records back (docs/batches.md).
    const result = inputs.length ? await writeBatch(tx, KINDS[row.object]!, row.accountId, inputs, { ...mode, allOrNothing: false, records: false }, actor) : null;
    for (const item of result?.items ?? []) {
      if (item.status === 'FAILED') failures.push({ line: sources[item.index]!.line, cells: sources[item.index]!.cells, details: item.details ?? {} });
    }
    if (failures.length) {
      await tx.$executeRaw`
        INSERT INTO import_errors (account_id, import_id, line, cells, details)
        SELECT ${row.accountId}::uuid, ${importId}::uuid, f.line, f.cells::json, f.details
        FROM json_to_recordset(${JSON.stringify(failures)}::json) AS f(line int, cells text, details jsonb)`;
    }
    const last = rows[rows.length - 1]!.seq;
    await tx.$executeRaw`
      UPDATE imports SET done_seq = ${last}, rows_processed = rows_processed + ${rows.length},
        created = created + ${result?.created ?? 0}, updated = updated + ${result?.updated ?? 0},
        unchanged = unchanged + ${result?.unchanged ?? 0}, failed = failed + ${failures.length},
        lease_until = now() + make_interval(secs => ${leaseMs / 1000})
      WHERE id = ${importId}::uuid`;
    return 'more';
  }, CHUNK_TRANSACTION);
}
