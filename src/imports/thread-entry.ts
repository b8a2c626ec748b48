// Inside the import thread (started by src/imports/thread.ts): this instance's import worker with a
// client and pool of its own. Nothing here is shared with the main thread but messages.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import path from 'node:path';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { openDatabase } from '../db/client.js';
import { createLogger } from '../logger.js';
import type { FromImportThread, ImportThreadData, ToImportThread } from './thread.js';
import { DEFAULT_IMPORT_CONCURRENCY, startImportWorker } from './worker.js';

/** Each import under way holds one connection for its chunk's transaction, and a claim is made between chunks: one more. */
const concurrency = (workerData as ImportThreadData).concurrency ?? DEFAULT_IMPORT_CONCURRENCY;
const POOL_MAX = concurrency + 1;

/**
 * Niceness of the thread (Linux): with the cores taken, the main thread's requests run first.
 * Measured on a shared 2-core machine it made no clear difference to list p99 (BENCHMARKS.md), nor to rows/s.
 */
const NICE = 10;

/**
 * On Linux a thread is a task of its own, with its own priority; elsewhere this stays as it is.
 * The chunk's statement runs in PostgreSQL at its own priority, so this orders only our JavaScript.
 */
function lowerPriority(): void {
  try {
    setPriority(Number(path.basename(readlinkSync('/proc/thread-self'))), NICE);
  } catch {
    // not Linux, or not allowed: the thread runs at the process's priority
  }
}

const port = parentPort!;
const data = workerData as ImportThreadData;
const send = (message: FromImportThread) => port.postMessage(message);
// Serialized here (errors through the logger's safe serializer), logged by the main thread.
const log = createLogger({ level: data.logLevel, destination: { write: (line: string) => send({ type: 'log', line }) } }).child({ importThread: threadId });

lowerPriority();
const db = await openDatabase({
  databaseUrl: data.databaseUrl, dataDir: '', poolMax: POOL_MAX, bounds: data.bounds,
  onConnectionError: (err) => log.warn({ err }, 'database connection error'),
});
// The main thread sweeps (it runs whether this thread does or not).
const worker = startImportWorker(db.prisma, { leaseMs: data.leaseMs, pollMs: data.pollMs, log, limits: data.limits, concurrency, sweep: false }, data.owner);
log.info('import thread started');

/** Ends the worker (its chunks under way commit, its leases are handed back) and the pool, once. */
let stopping: Promise<void> | null = null;
const stop = () =>
  (stopping ??= worker.close()
    .then(() => db.close())
    .catch((err: unknown) => log.warn({ err }, 'import thread: pool not closed cleanly'))
    .finally(() => send({ type: 'closed' })));

// Idle for `idleMs` (no import run, none found due): the thread ends, and its heap, client and pool
// with it; the main thread starts it again when an import is due (src/imports/thread.ts).
const idleCheck = setInterval(() => {
  if (stopping || worker.idleMs() < data.idleMs) return;
  log.info({ idleMs: data.idleMs }, 'import thread idle; ending');
  send({ type: 'idle' });
  void stop();
}, Math.min(1_000, data.idleMs));
idleCheck.unref();

port.on('message', (message: ToImportThread) => (message.type === 'nudge' ? worker.nudge() : void stop()));
