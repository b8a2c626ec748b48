// The import worker every instance runs (docs/imports.md#the-worker): it claims a queued import, or
// a running one whose lease lapsed (its instance died), and writes it a chunk a transaction. It runs
// `concurrency` imports side by side (IMPORT_CONCURRENCY, at least two), each slot a claim loop of its
// own, so one account's long import never keeps another account's waiting (docs/decisions.md §26).
// One running import per account: claims are taken one at a time under an advisory lock, so the
// "no other running import of this account" check is exact, and the slots go to different accounts,
// oldest import first; FOR UPDATE SKIP LOCKED spreads imports over instances.
import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { startPoller } from '../db/poller.js';
import { runChunk, type ChunkLimits, type JudgedChunk } from './chunk.js';
import { forgetChunkQueries } from './debug-history.js';
import { finishImport, sweepImports } from './import.service.js';

/**
 * `limits`: what a chunk may hold (src/imports/chunk.ts); tests raise them to make a thread run out of memory.
 * `concurrency`: how many imports (of different accounts) it runs at once; DEFAULT_IMPORT_CONCURRENCY unless given.
 */
export type ImportWorkerOptions = { leaseMs: number; pollMs: number; log: Logger; limits?: ChunkLimits; concurrency?: number };
/** `sweep: false`: someone else sweeps (the main thread, when the worker runs in the import thread). */
export type StartImportWorkerOptions = ImportWorkerOptions & { sole?: boolean; sweep?: boolean };
/** IMPORT_CONCURRENCY's default (src/config.ts): imports of two accounts side by side in each instance. */
export const DEFAULT_IMPORT_CONCURRENCY = 2;
/** A claim is an attempt at the chunk due; the claim after this many without a commit fails the import. */
export const MAX_ATTEMPTS = 3;
/** How often each worker sweeps what dead instances left (sweepImports). */
export const SWEEP_EVERY_MS = 60_000;
/** `attempt_error` is a varchar(500); the import's `error` quotes it. */
const REASON_CHARS = 300;

/** Why an attempt stopped, as the import's `error` may say it: no internals (those are logged). */
export const REASONS = {
  died: 'its worker stopped mid-chunk (its instance died or restarted)',
  memory: 'ran out of memory',
  error: 'an internal error',
} as const;

/** The worker's heartbeat: `owner` is alive for `leaseMs` more (docs/imports.md#lease-and-heartbeat). */
export async function beat(db: Pick<PrismaClient, '$executeRaw'>, owner: string, leaseMs: number): Promise<void> {
  await db.$executeRaw`
    INSERT INTO import_workers (id, alive_until) VALUES (${owner}::uuid, now() + make_interval(secs => ${leaseMs / 1000}))
    ON CONFLICT (id) DO UPDATE SET alive_until = excluded.alive_until`;
}

/** Whether `owner`'s heartbeat is current (by the database's clock, as the claim judges it). */
export async function workerAlive(db: Pick<PrismaClient, '$queryRaw'>, owner: string | null): Promise<boolean> {
  if (!owner) return false;
  const [row] = await db.$queryRaw<{ alive: boolean }[]>`SELECT EXISTS (SELECT 1 FROM import_workers WHERE id = ${owner}::uuid AND alive_until > now()) AS alive`;
  return row?.alive ?? false;
}

/**
 * An import `c` a claim may take: stored whole, and running with no worker whose row is alive
 * `aheadSeconds` from now (0: alive now), or queued with none of its account's running.
 */
const dueAhead = (aheadSeconds: number) => Prisma.sql`c.rows_total IS NOT NULL AND (
  (c.status = 'running' AND NOT EXISTS (SELECT 1 FROM import_workers w WHERE w.id = c.lease_owner AND w.alive_until > now() + make_interval(secs => ${aheadSeconds})))
  OR (c.status = 'queued' AND NOT EXISTS (SELECT 1 FROM imports o WHERE o.account_id = c.account_id AND o.status = 'running')))`;
const DUE = dueAhead(0);

/**
 * Whether a claim would find an import to take (or to fail, past its attempts), or soon may: a
 * running import whose worker has missed a heartbeat (renewed every third of the lease, so a live
 * worker's row stays more than two thirds of the lease ahead), without taking it or any lock. What
 * the main thread asks before it starts the import thread (src/imports/thread.ts): a thread takes a
 * few seconds to start on a loaded machine, so it starts while the dead worker's lease runs out, not
 * after, and claims as soon as it lapses (the 15 s of docs/imports.md#lease-and-heartbeat). A live
 * worker's late beat only starts a thread that finds nothing to claim and ends when idle.
 */
export async function importsDue(db: Pick<PrismaClient, '$queryRaw'>, leaseMs: number): Promise<boolean> {
  const [row] = await db.$queryRaw<{ due: boolean }[]>`SELECT EXISTS (SELECT 1 FROM imports c WHERE ${dueAhead((leaseMs * 0.6) / 1000)}) AS due`;
  return row?.due ?? false;
}

/**
 * Takes one import for `owner`, or null when none is due. Each claim counts an attempt, in the
 * database, so the count holds across restarts and instances: an import whose chunk was claimed
 * MAX_ATTEMPTS times without committing ends `failed` with the last attempt's reason here instead
 * (docs/imports.md#attempts): a chunk that kills its worker is never a crash loop.
 */
export async function claimImport(db: PrismaClient, owner: string, leaseMs: number): Promise<string | null> {
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtextextended('imports:claim', 0))::text`;
    for (;;) {
      const [due] = await tx.$queryRaw<{ id: string; attempts: number }[]>`
        SELECT c.id::text, c.attempts FROM imports c WHERE ${DUE}
        ORDER BY c.created_at, c.id LIMIT 1 FOR UPDATE OF c SKIP LOCKED`;
      if (!due) return null;
      if (due.attempts >= MAX_ATTEMPTS) {
        const row = await tx.import.findUniqueOrThrow({ where: { id: due.id } });
        const reason = `Stopped after ${MAX_ATTEMPTS} failed attempts (the last: ${row.attemptError ?? REASONS.died}); the rows before it are written`;
        await finishImport(tx, row, 'failed', reason);
        continue;
      }
      await beat(tx, owner, leaseMs);
      // A running import found here was left without a word by a worker that died: that is its attempt's reason.
      await tx.$executeRaw`
        UPDATE imports SET status = 'running', lease_owner = ${owner}::uuid, attempts = attempts + 1,
          attempt_error = CASE WHEN status = 'running' THEN coalesce(attempt_error, ${REASONS.died}) END,
          started_at = coalesce(started_at, now())
        WHERE id = ${due.id}::uuid`;
      return due.id;
    }
  });
}

/**
 * Ends `owner`'s hold on the import: another claim may take it at once. With a `reason` the attempt
 * failed (it stays counted); without, the worker stopped on purpose (shutdown) and the attempt is given back.
 */
async function letGo(db: PrismaClient, id: string, owner: string, reason: string | null): Promise<void> {
  await db.$executeRaw`
    UPDATE imports SET lease_owner = NULL,
      attempt_error = CASE WHEN ${reason}::text IS NULL THEN attempt_error ELSE ${reason?.slice(0, REASON_CHARS) ?? null}::text END,
      attempts = CASE WHEN ${reason}::text IS NULL THEN greatest(attempts - 1, 0) ELSE attempts END
    WHERE id = ${id}::uuid AND lease_owner = ${owner}::uuid AND status = 'running'`;
}

/** An error's reason for the import: a V8 allocation refused is running out of memory too. */
export function reasonOf(err: unknown): string {
  const memory = err instanceof RangeError && /Invalid (string|array) length|Array buffer allocation failed/.test(err.message);
  return memory || (err as { code?: string } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY' ? REASONS.memory : REASONS.error;
}

/**
 * Runs claimed imports to their end, chunk by chunk; returns when none is due. While it holds one,
 * its heartbeat is renewed every third of the lease, whatever a chunk is doing. A chunk that throws
 * ends the attempt with its reason; the next claim (here or anywhere) tries again, or fails the import.
 */
export async function drainImports(db: PrismaClient, owner: string, options: ImportWorkerOptions, running: () => boolean): Promise<number> {
  let done = 0;
  for (let id = await claimImport(db, owner, options.leaseMs); id && running(); id = await claimImport(db, owner, options.leaseMs)) {
    options.log.info({ importId: id }, 'import claimed');
    const heartbeat = setInterval(() => {
      beat(db, owner, options.leaseMs).catch((err: unknown) => options.log.warn({ err, importId: id }, 'import heartbeat failed'));
    }, options.leaseMs / 3);
    heartbeat.unref();
    try {
      await runImport(db, id, owner, options, running);
    } finally {
      clearInterval(heartbeat);
    }
    done++;
  }
  return done;
}

/** Chunks of one claimed import until it ends, is lost, fails an attempt, or the worker stops. */
async function runImport(db: PrismaClient, id: string, owner: string, options: ImportWorkerOptions, running: () => boolean): Promise<void> {
  // The chunk the last one judged while its statement ran (src/imports/chunk.ts).
  let ahead: JudgedChunk | null = null;
  while (running()) {
    try {
      const started = performance.now();
      const { outcome, next } = await runChunk(db, id, owner, ahead, options.limits);
      const ms = Math.round(performance.now() - started);
      forgetChunkQueries();
      ahead = next ? await next : null;
      // `ms`: the transaction; `waitedMs`: for the next chunk's judging after it (0 when it kept up).
      options.log.debug({ importId: id, outcome, ms, waitedMs: Math.round(performance.now() - started) - ms }, 'import chunk committed');
      if (outcome !== 'more') {
        options.log.info({ importId: id, outcome }, 'import left');
        return;
      }
    } catch (err) {
      options.log.warn({ err, importId: id }, 'import chunk failed');
      await letGo(db, id, owner, reasonOf(err));
      return;
    }
  }
}

/**
 * Makes the imports `owner` held claimable now rather than when its heartbeat lapses: its worker
 * stopped (shutdown: `reason` null, the attempt is given back) or its thread died (`reason`: why).
 * Safe while a chunk of it might still be open: a chunk locks the import's row and a claim skips
 * locked rows, so a claim waits for that chunk's end.
 */
export async function handBackImports(db: PrismaClient, owner: string, reason: string | null = null): Promise<void> {
  const held = await db.$queryRaw<{ id: string }[]>`SELECT id::text FROM imports WHERE lease_owner = ${owner}::uuid AND status = 'running'`;
  for (const { id } of held) await letGo(db, id, owner, reason);
  await db.$executeRaw`DELETE FROM import_workers WHERE id = ${owner}::uuid`;
}

/**
 * PGlite: this process alone opens the data directory (src/db/client.ts), so any worker holding an
 * import is a run of it that died: its imports are resumed at once, not after its heartbeat lapses.
 */
async function handBackDead(db: PrismaClient): Promise<void> {
  await db.$executeRaw`UPDATE imports SET lease_owner = NULL WHERE status = 'running' AND lease_owner IS NOT NULL`;
  await db.$executeRaw`DELETE FROM import_workers`;
}

/**
 * `owner`: the lease owner it claims as (a new one unless the caller must hand its leases back itself),
 * shared by its slots: one heartbeat keeps all their imports. `sole`: no other process can run workers
 * on this database (PGlite).
 */
export function startImportWorker(db: PrismaClient, options: StartImportWorkerOptions, owner: string = randomUUID()) {
  let sweptAt = 0;
  // For idleMs(): steps under way, and when the last one that ran an import ended.
  let stepping = 0;
  let workedAt = Date.now();
  const handedBack = options.sole
    ? handBackDead(db).catch((err: unknown) => options.log.warn({ err }, 'import worker: a dead run\'s imports wait for its heartbeat to lapse'))
    : null;
  // Each slot claims and runs one import at a time; a file just stored wakes them all, and the first
  // free one takes it (the others find nothing due, or the next import).
  const slots = Array.from({ length: Math.max(1, options.concurrency ?? DEFAULT_IMPORT_CONCURRENCY) }, (_, slot) =>
    startPoller({
      pollMs: options.pollMs,
      onError: (err) => options.log.warn({ err, slot }, 'import worker: claim or sweep failed; retrying'),
      step: async (running) => {
        stepping++;
        try {
          await handedBack;
          if ((await drainImports(db, owner, options, running)) > 0) workedAt = Date.now();
          if (options.sweep !== false && slot === 0 && running() && Date.now() - sweptAt >= SWEEP_EVERY_MS) {
            sweptAt = Date.now();
            await sweepImports(db);
          }
        } finally {
          stepping--;
        }
      },
    }),
  );
  return {
    owner,
    /** Look for work now (a file was just stored). */
    nudge: () => slots.forEach((s) => s.nudge()),
    /** How long it has run no import: 0 while a slot looks or runs one, else since the last import left. */
    idleMs: () => (stepping > 0 ? 0 : Date.now() - workedAt),
    /** Stops after the chunks under way commit; an unfinished import is resumed by the next claim. */
    close: async () => {
      await Promise.all(slots.map((s) => s.close()));
      await handBackImports(db, owner).catch(() => undefined); // or its heartbeat lapses
    },
  };
}
