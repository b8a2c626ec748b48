// Sync never skips a change (docs/decisions.md §24; docs/rest.md#following-changes). A write is
// stamped when its transaction starts (the stamps_from_transaction_start triggers see to it) but seen
// when it commits, maybe long after (a row lock held elsewhere, a slow batch). A reader paging in
// ascending time order would hand out positions past that stamp and never come back to it. So such
// a page stops short of the horizon: the start of the oldest transaction still open in the database,
// or now when none is. Everything stamped before it has committed, or never will.
import { rawRead } from '../db/raw.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { Order } from './keyset.js';
import type { OrderColumn } from './collection.js';

/** Whether a list's positions follow changes forward in time: an ascending timestamp order. */
export const followsTime = (order: Order, column: OrderColumn) => order.direction === 'ASC' && column.type === 'timestamptz' && column.follows !== false;

// Its own statement, before the page's: a transaction that ends between them is then committed in the
// page's snapshot. xact_start is null for idle sessions and for other roles' (docs/rest.md says so);
// truncated to the millisecond the columns keep, so a stamp rounded down is still at or past it. On
// PGlite (one connection, one statement at a time) no other transaction is ever open: it is now.
const HORIZON = Prisma.sql`
  SELECT date_trunc('milliseconds', least(clock_timestamp(), min(xact_start)))::text AS horizon FROM pg_stat_activity
  WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`;

/** The horizon, read on the primary (a replica knows nothing of the primary's open transactions). */
export async function horizonOf(primary: PrismaClient): Promise<string> {
  const [row] = await rawRead<{ horizon: string }>(primary, HORIZON);
  return row!.horizon;
}
