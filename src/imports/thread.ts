// The import worker in a thread of its own (docs/imports.md#the-worker), where the database is a
// PostgreSQL server. A chunk's judging, its statement's parameters and the garbage they leave ran
// on the main thread before, between the list requests it serves (BENCHMARKS.md, "## Imports"); in
// the thread they have their own event loop and their own heap, bounded by `heapMb`. The main
// thread keeps only this: starting the thread when an import is due, telling it a file was stored,
// closing it, logging what it logs, restarting it when it dies, and the sweep. Its claims and leases
// are the worker's own (src/imports/worker.ts), so many instances stay as safe as before.
//
// The thread is started on demand: a thread with its own client, pool and heap holds 30-50 MB, and
// most instances import rarely (BENCHMARKS.md, "Memory"). The main thread asks every EVENT_POLL_MS
// whether an import is due (one EXISTS, no lock; a claim is a transaction under an advisory lock),
// and a file stored here starts it at once; an import left by a dead instance or a restart is found
// by the same question. Idle for `idleMs`, the thread ends itself.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import pino from 'pino';
import type { Bounds } from '../db/bounds.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import type { ChunkLimits } from './chunk.js';
import { sweepImports } from './import.service.js';
import { handBackImports, importsDue, reasonOf, REASONS, SWEEP_EVERY_MS } from './worker.js';
import { startPoller } from '../db/poller.js';
import type { Worker as ImportWorker } from '../deps.js';

/** What the thread is started with (its `workerData`). */
/** `concurrency`: the imports the thread's worker runs at once (IMPORT_CONCURRENCY; src/imports/worker.ts). */
/** `idleMs`: how long the thread runs no import before it ends. */
export type ImportThreadData = { databaseUrl: string; bounds: Partial<Bounds>; leaseMs: number; pollMs: number; logLevel: string; owner: string; limits?: ChunkLimits; concurrency?: number; idleMs: number };
export type ToImportThread = { type: 'nudge' } | { type: 'close' };
/** `idle`: it is ending for want of work (then `closed`); `closed`: its worker and pool are closed. */
export type FromImportThread = { type: 'log'; line: string } | { type: 'idle' } | { type: 'closed' };

/** Between a thread's death and its restart. */
const RESTART_DELAY_MS = 1_000;
/** A thread idle this long ends: started again costs ~0.5 s of CPU (modules, client, pool), off the main thread. */
export const IMPORT_THREAD_IDLE_MS = 60_000;

export type ImportThreadOptions = Omit<ImportThreadData, 'owner' | 'idleMs'> & {
  /** IMPORT_THREAD_IDLE_MS unless given (tests shorten it). */
  idleMs?: number;
  /** The thread's old generation cap (IMPORT_THREAD_HEAP_MB); past it the thread dies and is restarted. */
  heapMb: number;
  log: Logger;
  /** The main thread's client: hands a dead thread's imports back. */
  db: PrismaClient;
};

/** The entry beside this module: .js when built; .ts under tsx or Vitest, whose loader a new thread lacks until it registers one. */
function newThread(options: WorkerOptions): Worker {
  const entry = new URL(`./thread-entry${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  if (entry.pathname.endsWith('.js')) return new Worker(entry, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => tsx.register()).then(() => import(${JSON.stringify(entry.href)}))`, { ...options, eval: true });
}

export function startImportThread(options: ImportThreadOptions): ImportWorker & { thread: () => Worker | null } {
  const { heapMb, log, db, idleMs = IMPORT_THREAD_IDLE_MS, ...data } = options;
  // The thread's records arrive serialized (errors included): logged as they are, with the main thread's own lines.
  const relay = log.child({}, { serializers: { err: (err: unknown) => err } });
  const relayLine = (line: string) => {
    const { level, msg, time: _time, pid: _pid, hostname: _hostname, ...fields } = JSON.parse(line) as { level: number; msg?: string } & Record<string, unknown>;
    relay[(pino.levels.labels[level] ?? 'info') as pino.Level](fields, msg);
  };
  let closing = false;
  let closed: (() => void) | null = null;
  /** The thread running now; null before the first import, after it ended idle, or while a dead one waits to restart. */
  let current: Worker | null = null;
  /** The current thread said it is ending for want of work. */
  let ending = false;
  /** Between a death and its restart. */
  let restarting = false;
  /** Work came while the thread was ending or restarting: start one as soon as it has gone. */
  let again = false;

  const start = (): Worker => {
    const owner = randomUUID();
    const thread = newThread({
      workerData: { ...data, owner, idleMs } satisfies ImportThreadData,
      resourceLimits: { maxOldGenerationSizeMb: heapMb },
    });
    const importThread = thread.threadId; // -1 once it has exited
    ending = false;
    // Why it died, for its import's attempt: out of its heap (resourceLimits), an uncaught error, or stopped.
    let reason: string = REASONS.died;
    thread.on('message', (message: FromImportThread) => {
      if (message.type === 'log') return relayLine(message.line);
      if (message.type === 'idle') return void (ending = true);
      if (closing) return closed?.();
      if (ending) void thread.terminate(); // it has closed its pool: nothing left to lose
    });
    thread.on('error', (err) => {
      reason = reasonOf(err);
      log.error({ err, importThread }, 'import thread died');
    });
    thread.once('exit', (code) => {
      if (current === thread) current = null;
      if (closing) return closed?.();
      if (ending) {
        ending = false;
        if (again) want();
        return;
      }
      log.warn({ code, importThread, reason }, 'import thread exited; restarting it');
      restarting = true;
      // The attempt failed with its reason; the import is resumed at once (after its open chunk, which
      // died with it), here or elsewhere, or fails if that was its last attempt (docs/imports.md#attempts).
      void handBackImports(db, owner, reason)
        .catch((err: unknown) => log.warn({ err }, 'import thread: lease not handed back; it lapses'))
        // A pause: a thread that dies as it starts must not take a core starting again and again.
        .then(() => sleep(RESTART_DELAY_MS))
        .then(() => {
          restarting = false;
          again = false;
          if (!closing && !current) current = start();
        });
    });
    return thread;
  };

  /** There is import work: a thread runs it (now, or once the one ending or dead has gone). */
  const want = () => {
    again = false;
    if (closing) return;
    if (ending || restarting) return void (again = true);
    current ??= start();
  };

  // The main thread's watch: is an import due while no thread runs? And the sweep of what dead
  // instances left, which needs no thread either (sweepImports: a few bounded statements a minute).
  let sweptAt = Date.now();
  const watch = startPoller({
    pollMs: data.pollMs,
    onError: (err) => log.warn({ err }, 'import watch: the due check or sweep failed; retrying'),
    step: async () => {
      if ((!current || ending) && (await importsDue(db, data.leaseMs))) want();
      if (Date.now() - sweptAt >= SWEEP_EVERY_MS) {
        sweptAt = Date.now();
        await sweepImports(db);
      }
    },
  });

  return {
    /** A file was stored here: the running thread looks now, or one is started. */
    nudge: () => (current && !ending ? current.postMessage({ type: 'nudge' } satisfies ToImportThread) : want()),
    /** Stops after the chunk under way commits; the thread hands its lease back and exits. */
    close: async () => {
      closing = true;
      await watch.close();
      const thread = current;
      if (!thread) return; // none started, ended idle, or died and not started again since
      const done = new Promise<void>((resolve) => (closed = resolve));
      thread.postMessage({ type: 'close' } satisfies ToImportThread);
      await done;
      await thread.terminate(); // it has closed its pool: nothing left to lose
    },
    /** The thread running now, or null (tests stop it as a crash would). */
    thread: () => current,
  };
}
