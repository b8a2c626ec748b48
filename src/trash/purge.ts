// The trash's purge (docs/trash.md#the-purge): a record deleted more than TRASH_RETENTION_DAYS ago
// leaves the trash for good, with the rows kept in its trash row (notes about it alone). Its
// `<kind>.deleted` event went out when it was deleted: the purge emits nothing. Modelled on the
// overdue job (src/invoices/overdue.ts): bounded batches, one instance at a time, no state of its
// own, so a restart resumes where the rows say.
import type { PrismaClient } from '../generated/prisma/client.js';
import { WRITE_TRANSACTION } from '../db/client.js';

/** One run at a time across instances: a batch takes this lock or the run stops (another is under way). */
const LOCK_KEY = 'trash:purge';

/** Trash rows deleted per statement (each its own transaction): a purge never holds many locks nor a long transaction. */
export const PURGE_BATCH = 500;

export const DAY_MS = 24 * 60 * 60 * 1000;

/** When a record deleted at `deletedAt` is purged (Account.trash's expiresAt). */
export const expiresAt = (deletedAt: Date, retentionDays: number) => new Date(deletedAt.getTime() + retentionDays * DAY_MS);

export type PurgeOptions = {
  retentionDays: number;
  batchSize?: number;
  /** The moment the retention counts back from (tests set it); now by default. */
  now?: Date;
  /** Checked between batches: a stopping instance ends after the batch under way commits. */
  running?: () => boolean;
};

export type PurgeRun = { purged: number; batches: number; lockedOut: boolean };

/**
 * Deletes every trash row deleted before `now` less the retention, oldest first, a batch per
 * transaction. Rows a restore holds are skipped (SKIP LOCKED): the restore takes them out anyway.
 */
export async function purgeTrash(db: PrismaClient, options: PurgeOptions): Promise<PurgeRun> {
  const size = options.batchSize ?? PURGE_BATCH;
  const cutoff = new Date((options.now ?? new Date()).getTime() - options.retentionDays * DAY_MS);
  const run: PurgeRun = { purged: 0, batches: 0, lockedOut: false };
  while (options.running?.() ?? true) {
    const purged = await db.$transaction(async (tx) => {
      const [lock] = await tx.$queryRaw<{ got: boolean }[]>`SELECT pg_try_advisory_xact_lock(hashtextextended(${LOCK_KEY}, 0)) AS got`;
      if (!lock?.got) return null;
      return tx.$executeRaw`
        DELETE FROM trash_items WHERE (account_id, id) IN (
          SELECT account_id, id FROM trash_items WHERE deleted_at < ${cutoff}::timestamptz
           ORDER BY deleted_at LIMIT ${size} FOR UPDATE SKIP LOCKED)`;
    }, WRITE_TRANSACTION);
    if (purged === null) return { ...run, lockedOut: true };
    run.purged += purged;
    if (purged > 0) run.batches++;
    if (purged < size) break;
  }
  return run;
}
