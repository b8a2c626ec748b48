// Invoice PDFs are drawn off the event loop (docs/decisions.md §26 "Anonymous work never starves the
// service"): a 100-line invoice costs tens to hundreds of milliseconds of CPU, which on the main
// thread every other tenant's request waited behind. A bounded pool of worker threads draws them:
// PDF_THREADS threads, PDF_QUEUE documents waiting for one, and past that the download is refused
// (503 with Retry-After) rather than queued without end.
//
// piscina (a maintained pool, the one Node's own docs point to) rather than node:worker_threads and
// a queue of our own: it bounds the queue (maxQueue, a rejection past it), starts threads on demand
// and lets idle ones go (idleTimeout), replaces a thread that dies, moves the bytes back without a
// copy, and counts completed tasks. What it cannot do is load TypeScript in a thread under tsx or
// Vitest (a thread lacks the loader, and `--import` in a thread's execArgv is ignored by Node 20):
// there the thread is given tsx's require hook (`--require tsx/cjs`), which piscina's loader uses
// first; built (dist/), the thread loads the compiled pdf-worker.js as it is.
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { PdfConfig } from '../config.js';
import { unavailable } from '../errors.js';
import type { PdfPool } from '../deps.js';
import type { InvoiceDocument } from './invoice-document.js';

export type { PdfPool } from '../deps.js';

/** An idle thread ends after this; the next PDF starts one again (fonts parsed anew: ~0.2 s). */
const IDLE_MS = 60_000;

/** The worker beside this module: .js when built; .ts under tsx or Vitest. */
function workerFile(): { filename: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  const filename = path.join(path.dirname(here), `pdf-worker${ext}`);
  if (ext === '.js') return { filename, execArgv: [] };
  return { filename, execArgv: ['--require', createRequire(import.meta.url).resolve('tsx/cjs')] };
}

/** Piscina's rejections when every thread is busy and the queue is full (maxQueue, or none at 0). */
const isQueueFull = (error: unknown): boolean =>
  error instanceof Error && (error.message === 'Task queue is at limit' || error.message.startsWith('No task queue available'));

/**
 * The pool: no thread until the first PDF, at most `threads`, idle ones let go (nothing keeps the
 * process alive for them); `close()` ends them. A document past the queue rejects with the core's
 * SERVICE_UNAVAILABLE (503 with Retry-After on the page and in REST).
 */
export function startPdfPool(
  config: PdfConfig,
  /** `gate`: while its first Int32 is 1, a thread waits before drawing (tests fill the pool with it). */
  options: { gate?: SharedArrayBuffer } = {},
): PdfPool & { readonly completed: number; readonly queued: number } {
  const { filename, execArgv } = workerFile();
  const pool = new Piscina<InvoiceDocument, Uint8Array>({
    filename,
    execArgv,
    workerData: { gate: options.gate },
    minThreads: 0,
    maxThreads: config.threads,
    maxQueue: config.queue,
    idleTimeout: IDLE_MS,
  });
  let closed: Promise<void> | null = null;
  return {
    async draw(document) {
      try {
        const bytes = await pool.run(document as InvoiceDocument);
        return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      } catch (error) {
        if (isQueueFull(error)) throw unavailable();
        throw error;
      }
    },
    close: () => (closed ??= pool.close()),
    get completed() {
      return pool.completed;
    },
    get queued() {
      return pool.queueSize;
    },
  };
}
