import { setTimeout as sleep } from 'node:timers/promises';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { markOverdueInvoices } from './overdue.js';
import { announceOverdueTasks } from '../activities/overdue.js';

export type OverdueWorkerOptions = { intervalMs: number; batchSize: number; log: Logger };

/**
 * Runs the overdue jobs, invoices (docs/decisions.md §19 "Billing time") then tasks (§21), at start
 * and then every `intervalMs` in this instance. Every instance runs one; the job's advisory lock lets one at a time work, and
 * what a stopped instance left is found by the next run anywhere (the job keeps no state of its own).
 */
export function startOverdueWorker(db: PrismaClient, options: OverdueWorkerOptions) {
  let running = true;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (running) {
      try {
        const run = await markOverdueInvoices(db, { batchSize: options.batchSize, running: () => running });
        if (run.moved > 0) options.log.info({ moved: run.moved, batches: run.batches }, 'invoices fell due');
        for (const { id, err } of run.setAside) options.log.error({ err, invoiceId: id }, 'overdue job: an invoice could not move; set aside until the next run');
      } catch (err) {
        if (running) options.log.warn({ err }, 'overdue job failed; retrying at the next interval');
      }
      try {
        const tasks = await announceOverdueTasks(db, { batchSize: options.batchSize, running: () => running });
        if (tasks.announced > 0) options.log.info({ announced: tasks.announced, batches: tasks.batches }, 'tasks fell due');
      } catch (err) {
        if (running) options.log.warn({ err }, 'overdue tasks job failed; retrying at the next interval');
      }
      if (!running) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        sleep(options.intervalMs, undefined, { ref: false }).then(resolve);
      });
      wake = null;
    }
  })();
  return {
    /** Stops after the batch under way commits. */
    close: async () => {
      running = false;
      wake?.();
      await loop;
    },
  };
}

export type OverdueWorker = ReturnType<typeof startOverdueWorker>;
