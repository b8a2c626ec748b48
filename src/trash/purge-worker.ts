import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { startPoller } from '../db/poller.js';
import { purgeTrash } from './purge.js';

export type TrashPurgeOptions = { intervalMs: number; retentionDays: number; log: Logger };

/**
 * Runs the trash's purge (docs/trash.md#the-purge) at start and then every `intervalMs` in this
 * instance. Every instance runs one; the job's advisory lock lets one at a time work, and what a
 * stopped instance left is found by the next run anywhere.
 */
export function startTrashPurge(db: PrismaClient, options: TrashPurgeOptions) {
  const { close } = startPoller({
    pollMs: options.intervalMs,
    onError: (err) => options.log.warn({ err }, 'trash purge failed; retrying at the next interval'),
    step: async (running) => {
      const run = await purgeTrash(db, { retentionDays: options.retentionDays, running });
      if (run.purged > 0) options.log.info({ purged: run.purged, batches: run.batches }, 'trash purged');
    },
  });
  /** Stops after the batch under way commits. */
  return { close };
}
