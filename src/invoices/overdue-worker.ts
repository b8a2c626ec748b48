import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { startPoller } from '../db/poller.js';
import { markOverdueInvoices } from './overdue.js';
import { announceOverdueTasks } from '../activities/overdue.js';

export type OverdueWorkerOptions = { intervalMs: number; batchSize: number; log: Logger };

/**
 * Runs the overdue jobs, invoices (docs/decisions.md §19 "Billing time") then tasks (§21), at start
 * and then every `intervalMs` in this instance. Every instance runs one; the job's advisory lock lets one at a time work, and
 * what a stopped instance left is found by the next run anywhere (the job keeps no state of its own).
 */
export function startOverdueWorker(db: PrismaClient, options: OverdueWorkerOptions) {
  const { close } = startPoller({
    pollMs: options.intervalMs,
    onError: (err) => options.log.warn({ err }, 'overdue tasks job failed; retrying at the next interval'),
    step: async (running) => {
      // The invoices' failure is caught here so that the tasks' job runs all the same.
      try {
        const run = await markOverdueInvoices(db, { batchSize: options.batchSize, running });
        if (run.moved > 0) options.log.info({ moved: run.moved, batches: run.batches }, 'invoices fell due');
        for (const { id, err } of run.setAside) options.log.error({ err, invoiceId: id }, 'overdue job: an invoice could not move; set aside until the next run');
      } catch (err) {
        if (running()) options.log.warn({ err }, 'overdue job failed; retrying at the next interval');
      }
      const tasks = await announceOverdueTasks(db, { batchSize: options.batchSize, running });
      if (tasks.announced > 0) options.log.info({ announced: tasks.announced, batches: tasks.batches }, 'tasks fell due');
    },
  });
  /** Stops after the batch under way commits. */
  return { close };
}

export type OverdueWorker = ReturnType<typeof startOverdueWorker>;
