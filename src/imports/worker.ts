// The import worker every instance runs (docs/imports.md#the-worker): it claims a queued import, or
// a running one whose lease lapsed (its instance died), and writes it a chunk a transaction. One
// running import per account: claims are taken one at a time under an advisory lock, so the
// "no other running import of this account" check is exact; FOR UPDATE SKIP LOCKED spreads imports
// over instances.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { runChunk, type JudgedChunk } from './chunk.js';
import { forgetChunkQueries } from './debug-history.js';
import { finishImport, sweepImports } from './import.service.js';

export type ImportWorkerOptions = { leaseMs: number; pollMs: number; log: Logger };
/** A chunk failing this many times in a row (not a lost lease) fails its import. */
const MAX_ATTEMPTS = 3;
/** How often each worker sweeps what dead instances left (sweepImports). */
const SWEEP_EVERY_MS = 60_000;

/** Takes one import for `owner`, or null when none is due. */
export async function claimImport(db: PrismaClient, owner: string, leaseMs: number): Promise<string | null> {
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended('imports:claim', 0))::text`;
    const [claimed] = await tx.$queryRaw<{ id: string }[]>`
      UPDATE imports i SET status = 'running', lease_owner = ${owner}::uuid,
        lease_until = now() + make_interval(secs => ${leaseMs / 1000}), started_at = coalesce(i.started_at, now())
      WHERE i.id = (
        SELECT c.id FROM imports c
        WHERE c.rows_total IS NOT NULL AND (
          (c.status = 'running' AND c.lease_until < now())
          OR (c.status = 'queued' AND NOT EXISTS (SELECT 1 FROM imports o WHERE o.account_id = c.account_id AND o.status = 'running')))
        ORDER BY c.created_at, c.id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING i.id::text`;
    return claimed?.id ?? null;
  });
}

/** Runs claimed imports to their end, chunk by chunk; returns when none is due. */
export async function drainImports(db: PrismaClient, owner: string, options: ImportWorkerOptions, running: () => boolean): Promise<number> {
  let done = 0;
  for (let id = await claimImport(db, owner, options.leaseMs); id && running(); id = await claimImport(db, owner, options.leaseMs)) {
    options.log.info({ importId: id }, 'import claimed');
    let attempts = 0;
    // The chunk the last one judged while its statement ran (src/imports/chunk.ts).
    let ahead: JudgedChunk | null = null;
    for (;;) {
      if (!running()) return done;
      try {
        const started = performance.now();
        const { outcome, next } = await runChunk(db, id, owner, options.leaseMs, ahead);
        const ms = Math.round(performance.now() - started);
        forgetChunkQueries();
        attempts = 0;
        ahead = next ? await next : null;
        // `ms`: the transaction; `waitedMs`: for the next chunk's judging after it (0 when it kept up).
        options.log.debug({ importId: id, outcome, ms, waitedMs: Math.round(performance.now() - started) - ms }, 'import chunk committed');
        if (outcome !== 'more') {
          options.log.info({ importId: id, outcome }, 'import left');
          break;
        }
      } catch (err) {
        ahead = null;
        options.log.warn({ err, importId: id }, 'import chunk failed');
        if (++attempts >= MAX_ATTEMPTS) {
          await db.$transaction(async (tx) => {
            const row = await tx.import.findUnique({ where: { id } });
            if (row?.status === 'running' && row.leaseOwner === owner) await finishImport(tx, row, 'failed', 'Stopped by an internal error; the rows before it are written');
          });
          break;
        }
      }
    }
    done++;
  }
  return done;
}

/**
 * Makes the imports `owner` holds claimable now rather than when their lease lapses: its worker
 * stopped (shutdown, or its thread died). Safe while a chunk of it might still be open: a chunk
 * locks the import's row and a claim skips locked rows, so a claim waits for that chunk's end.
 */
export async function handBackImports(db: PrismaClient, owner: string): Promise<void> {
  await db.$executeRaw`UPDATE imports SET lease_until = now() WHERE lease_owner = ${owner}::uuid AND status = 'running'`;
}

/** `owner`: the lease owner it claims as (a new one unless the caller must hand its leases back itself). */
export function startImportWorker(db: PrismaClient, options: ImportWorkerOptions, owner: string = randomUUID()) {
  let running = true;
  let wake: (() => void) | null = null;
  let sweptAt = 0;
  const loop = (async () => {
    while (running) {
      try {
        await drainImports(db, owner, options, () => running);
        if (running && Date.now() - sweptAt >= SWEEP_EVERY_MS) {
          sweptAt = Date.now();
          await sweepImports(db);
        }
      } catch (err) {
        if (running) options.log.warn({ err }, 'import worker: claim or sweep failed; retrying');
      }
      if (!running) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        sleep(options.pollMs, undefined, { ref: false }).then(resolve);
      });
      wake = null;
    }
  })();
  return {
    owner,
    /** Look for work now (a file was just stored). */
    nudge: () => wake?.(),
    /** Stops after the chunk under way commits; an unfinished import is resumed by the next claim. */
    close: async () => {
      running = false;
      wake?.();
      await loop;
      await handBackImports(db, owner).catch(() => undefined);
    },
  };
}

/** What the rest of the service sees of the import worker, in-process (PGlite) or in its thread (src/imports/thread.ts). */
export type ImportWorker = Pick<ReturnType<typeof startImportWorker>, 'nudge' | 'close'>;
