// The import worker in a thread of its own (docs/imports.md#the-worker), where the database is a
// PostgreSQL server. A chunk's judging, its statement's parameters and the garbage they leave ran
// on the main thread before, between the list requests it serves (BENCHMARKS.md, "## Imports"); in
// the thread they have their own event loop and their own heap, bounded by `heapMb`. The main
// thread keeps only this: starting the thread, telling it a file was stored, closing it, logging
// what it logs, and restarting it when it dies. Its claims and leases are the worker's own
// (src/imports/worker.ts), so many instances stay as safe as before.
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
import { handBackImports, reasonOf, REASONS } from './worker.js';
import type { Worker as ImportWorker } from '../deps.js';

/** What the thread is started with (its `workerData`). */
/** `concurrency`: the imports the thread's worker runs at once (IMPORT_CONCURRENCY; src/imports/worker.ts). */
export type ImportThreadData = { databaseUrl: string; bounds: Partial<Bounds>; leaseMs: number; pollMs: number; logLevel: string; owner: string; limits?: ChunkLimits; concurrency?: number };
export type ToImportThread = { type: 'nudge' } | { type: 'close' };
export type FromImportThread = { type: 'log'; line: string } | { type: 'closed' };

/** Between a thread's death and its restart. */
const RESTART_DELAY_MS = 1_000;

export type ImportThreadOptions = Omit<ImportThreadData, 'owner'> & {
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

export function startImportThread(options: ImportThreadOptions): ImportWorker & { thread: () => Worker } {
  const { heapMb, log, db, ...data } = options;
  // The thread's records arrive serialized (errors included): logged as they are, with the main thread's own lines.
  const relay = log.child({}, { serializers: { err: (err: unknown) => err } });
  const relayLine = (line: string) => {
    const { level, msg, time: _time, pid: _pid, hostname: _hostname, ...fields } = JSON.parse(line) as { level: number; msg?: string } & Record<string, unknown>;
    relay[(pino.levels.labels[level] ?? 'info') as pino.Level](fields, msg);
  };
  let closing = false;
  let running = false;
  let closed: (() => void) | null = null;

  const start = (): Worker => {
    const owner = randomUUID();
    const thread = newThread({
      workerData: { ...data, owner } satisfies ImportThreadData,
      resourceLimits: { maxOldGenerationSizeMb: heapMb },
    });
    const importThread = thread.threadId; // -1 once it has exited
    running = true;
    // Why it died, for its import's attempt: out of its heap (resourceLimits), an uncaught error, or stopped.
    let reason: string = REASONS.died;
    thread.on('message', (message: FromImportThread) => (message.type === 'log' ? relayLine(message.line) : closed?.()));
    thread.on('error', (err) => {
      reason = reasonOf(err);
      log.error({ err, importThread }, 'import thread died');
    });
    thread.once('exit', (code) => {
      running = false;
      if (closing) return closed?.();
      log.warn({ code, importThread, reason }, 'import thread exited; restarting it');
      // The attempt failed with its reason; the import is resumed at once (after its open chunk, which
      // died with it), here or elsewhere, or fails if that was its last attempt (docs/imports.md#attempts).
      void handBackImports(db, owner, reason)
        .catch((err: unknown) => log.warn({ err }, 'import thread: lease not handed back; it lapses'))
        // A pause: a thread that dies as it starts must not take a core starting again and again.
        .then(() => sleep(RESTART_DELAY_MS))
        .then(() => {
          if (!closing) current = start();
        });
    });
    return thread;
  };
  let current = start();

  return {
    nudge: () => current.postMessage({ type: 'nudge' } satisfies ToImportThread),
    /** Stops after the chunk under way commits; the thread hands its lease back and exits. */
    close: async () => {
      closing = true;
      if (!running) return; // died, and not started again since
      const done = new Promise<void>((resolve) => (closed = resolve));
      current.postMessage({ type: 'close' } satisfies ToImportThread);
      await done;
      await current.terminate(); // it has closed its pool: nothing left to lose
    },
    /** The thread running now (tests stop it as a crash would). */
    thread: () => current,
  };
}
