// Billing time (docs/decisions.md §19 "Billing time"): an invoice that can fall due and whose due
// date has passed becomes overdue without anyone asking. One run moves every such invoice, a batch
// per transaction; src/invoices/overdue-worker.ts runs it every minute in each instance.
import { Prisma, InvoiceStatus, type PrismaClient } from '../generated/prisma/client.js';
import { WRITE_TRANSACTION } from '../db/client.js';
import { SYSTEM } from '../events/types.js';
import { canTransition, INVOICE_TRANSITIONS } from '../state-machines.js';
import { setInvoicesStatus, type InvoiceToMove } from './invoice.service.js';

/** The states the §8 machine lets move to overdue (sent, viewed, partial): read from it, not restated. */
export const CAN_FALL_DUE = (Object.keys(INVOICE_TRANSITIONS) as InvoiceStatus[]).filter((status) =>
  canTransition(INVOICE_TRANSITIONS, status, InvoiceStatus.overdue),
);

// Written into the SQL as literals (a closed set of enum names), so the planner sees the partial
// index's own predicate (migration 20261123200100_overdue_invoices) and reads that index.
const FALLS_DUE_SQL = Prisma.raw(CAN_FALL_DUE.map((status) => `'${status}'`).join(', '));

/** One run at a time across instances: a batch takes this lock or the run stops (another is under way). */
const LOCK_KEY = 'invoices:overdue';

export type OverdueOptions = {
  /** Invoices moved per transaction (OVERDUE_BATCH_SIZE). */
  batchSize: number;
  /** The moment whose UTC date decides "passed" (tests set it); now by default. */
  asOf?: Date;
  /** Checked between batches: a stopping instance ends after the batch under way commits. */
  running?: () => boolean;
};

/** `setAside`: invoices whose move failed in this run (the next run tries them again), each with why. */
export type OverdueRun = { moved: number; batches: number; lockedOut: boolean; setAside: { id: string; err: unknown }[] };

/**
 * Moves every invoice in a state that can fall due whose due date is before today's UTC date (a
 * DATE: due today is not yet overdue) to overdue, oldest due first, with its invoice.status_changed
 * event (actor system), a batch per transaction. Rows a user's write holds are skipped (SKIP LOCKED)
 * and taken by the next run if they are still due. Running it again moves nothing twice: a moved
 * invoice no longer matches.
 */
export async function markOverdueInvoices(db: PrismaClient, options: OverdueOptions): Promise<OverdueRun> {
  const today = (options.asOf ?? new Date()).toISOString().slice(0, 10);
  const run: OverdueRun = { moved: 0, batches: 0, lockedOut: false, setAside: [] };
  // One invoice whose move fails must not hold back its batch, and every run after it, for ever:
  // its batch is moved again one invoice a transaction, and the one that fails is set aside.
  let size = options.batchSize;
  while (options.running?.() ?? true) {
    let picked: string[] = [];
    let moved: number | null;
    try {
      moved = await db.$transaction(async (tx) => {
        const [lock] = await tx.$queryRaw<{ got: boolean }[]>`SELECT pg_try_advisory_xact_lock(hashtextextended(${LOCK_KEY}, 0)) AS got`;
        if (!lock?.got) return null;
        const due = await tx.$queryRaw<InvoiceToMove[]>`
          SELECT i.id::text AS id, i.status::text AS status FROM invoices i
          WHERE i.status IN (${FALLS_DUE_SQL}) AND i.due_date < ${today}::date AND NOT (i.id::text = ANY(${run.setAside.map((a) => a.id)}::text[]))
          ORDER BY i.due_date, i.id LIMIT ${size} FOR UPDATE SKIP LOCKED`;
        picked = due.map((d) => d.id);
        return setInvoicesStatus(tx, due, InvoiceStatus.overdue, SYSTEM);
      }, WRITE_TRANSACTION);
    } catch (err) {
      if (picked.length === 0) throw err; // not an invoice's doing (the database): the next run tries again
      if (size > 1) size = 1;
      else {
        run.setAside.push({ id: picked[0]!, err });
        size = options.batchSize;
      }
      continue;
    }
    if (moved === null) return { ...run, lockedOut: true };
    run.moved += moved;
    if (moved > 0) run.batches++;
    if (moved < size) break;
  }
  return run;
}
