// Overdue tasks (docs/decisions.md §21): an open task whose due time has passed gets `task.overdue`
// once (tasks.overdue_notified_at marks it; a new due date clears the mark). One run announces every
// such task, a batch per transaction, in one instance at a time (an advisory lock, as the invoices'
// job: src/invoices/overdue.ts); src/invoices/overdue-worker.ts runs both every minute.
import type { PrismaClient } from '../generated/prisma/client.js';
import { WRITE_TRANSACTION } from '../db/client.js';
import { emitMany } from '../events/emit.js';
import { columnsIn } from '../events/record.js';
import { SYSTEM } from '../events/types.js';

const LOCK_KEY = 'tasks:overdue';

export type OverdueTasksRun = { announced: number; batches: number; lockedOut: boolean };

/**
 * Marks and announces the open tasks due before `asOf` (now) not yet announced, soonest due first,
 * `batchSize` a transaction. Rows a user's write holds are skipped (SKIP LOCKED) and taken by the
 * next run if still due; a marked task no longer matches, so nothing is announced twice.
 */
export async function announceOverdueTasks(db: PrismaClient, options: { batchSize: number; asOf?: Date; running?: () => boolean }): Promise<OverdueTasksRun> {
  const asOf = options.asOf ?? new Date();
  const run: OverdueTasksRun = { announced: 0, batches: 0, lockedOut: false };
  while (options.running?.() ?? true) {
    const count = await db.$transaction(async (tx) => {
      const [lock] = await tx.$queryRaw<{ got: boolean }[]>`SELECT pg_try_advisory_xact_lock(hashtextextended(${LOCK_KEY}, 0)) AS got`;
      if (!lock?.got) return null;
      // The partial index tasks_overdue_due_idx holds exactly these rows.
      const due = await tx.$queryRaw<{ id: string }[]>`
        SELECT id::text AS id FROM tasks
         WHERE status = 'open' AND overdue_notified_at IS NULL AND due_at IS NOT NULL AND due_at < ${asOf}::timestamptz
         ORDER BY due_at, id LIMIT ${options.batchSize} FOR UPDATE SKIP LOCKED`;
      if (due.length === 0) return 0;
      const rows = await tx.task.updateManyAndReturn({ where: { id: { in: due.map((d) => d.id) } }, data: { overdueNotifiedAt: new Date() } });
      await emitMany(tx, rows.map((row) => ({ type: 'task.overdue' as const, accountId: row.accountId, actor: SYSTEM, object: columnsIn('Task', row) })));
      return rows.length;
    }, WRITE_TRANSACTION);
    if (count === null) return { ...run, lockedOut: true };
    run.announced += count;
    if (count > 0) run.batches++;
    if (count < options.batchSize) break;
  }
  return run;
}
