// Sync never skips a change (docs/decisions.md §24; docs/rest.md#following-changes), and one tenant
// never holds back another's (docs/decisions.md §26). A write is stamped as it starts but seen when it
// commits, maybe long after (a row lock held elsewhere, a slow batch). A reader paging in ascending
// time order would hand out positions past that stamp and never come back to it. So such a page
// stops short of the horizon, before which everything stamped has committed or never will.
//
// The horizon is the account's own: the first row a transaction writes for an account takes a shared
// advisory lock of that account, held to the transaction's end, and stamps that account's rows no
// earlier than the moment it took it (migration 20261128090000_sync_horizon_per_account). The
// horizon of account A is the start of the oldest transaction holding A's lock, or now when none
// does. A write holding it is waited for; one that takes it after this statement looked stamps later
// than now; one that let it go has committed (a transaction becomes visible before its locks are
// released), so the page's statement, after this one, sees it. Another account's transactions, an
// import's included, are not looked at.
import { rawRead } from '../db/raw.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { Order } from './keyset.js';
import type { OrderColumn } from './collection.js';

/** Whether a list's positions follow changes forward in time: an ascending timestamp order. */
export const followsTime = (order: Order, column: OrderColumn) => order.direction === 'ASC' && column.type === 'timestamptz' && column.follows !== false;

/**
 * The tables whose writes take their account's lock and are stamped from it (the
 * stamps_from_transaction_start and event_stamp_from_transaction_start triggers; test/db/sync-horizon.test.ts
 * holds this list to the database's triggers). A list of another table falls back to the horizon of
 * the whole database.
 */
export const ACCOUNT_STAMPED: ReadonlySet<string> = new Set([
  'contacts', 'companies', 'deals', 'pipeline_stages', 'invoices', 'payments', 'notes', 'tasks', 'lead_forms', 'form_submissions',
  'proposals', 'contracts', 'galleries', 'bookings', 'workflows', 'webhook_endpoints', 'events', 'custom_field_definitions',
]);

/** The class (first key) of the accounts' two-key advisory locks: 'sync' in ASCII, as the migration takes them. */
export const SYNC_LOCK_CLASS = 1937337955;

// Its own statement, before the page's: a transaction that ends between them is then committed in the
// page's snapshot. Truncated to the millisecond the columns keep, so a stamp rounded down is still at
// or past it. statement_timestamp() is taken before pg_locks is read, so a lock taken after that read
// stamps later than it. A holder whose start this role may not see (another role's session, a
// prepared transaction) holds the horizon at -infinity: the page waits for its end rather than risk
// passing its stamps; an idle one has just committed (docs/rest.md#following-changes). On PGlite (one
// connection, one statement at a time) no other transaction is ever open: the horizon is now.
const accountHorizon = (accountIds: readonly string[]) => Prisma.sql`
  SELECT date_trunc('milliseconds', least(statement_timestamp(), min(
    CASE WHEN a.pid IS NULL OR a.state IS NULL THEN '-infinity'::timestamptz ELSE coalesce(a.xact_start, statement_timestamp()) END)))::text AS horizon
  FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.classid = ${SYNC_LOCK_CLASS}::oid AND l.objsubid = 2
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.objid IN (SELECT hashtext(x.id)::oid FROM (VALUES ${Prisma.join(accountIds.map((id) => Prisma.sql`(CAST(${id} AS uuid)::text)`))}) AS x(id))
    AND l.pid IS DISTINCT FROM pg_backend_pid()`;

// Tables written without the accounts' locks: the start of the oldest transaction still open in the
// database. xact_start is null for idle sessions and for other roles' (docs/rest.md says so).
const DATABASE_HORIZON = Prisma.sql`
  SELECT date_trunc('milliseconds', least(clock_timestamp(), min(xact_start)))::text AS horizon FROM pg_stat_activity
  WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND xact_start IS NOT NULL`;

/**
 * The horizon of a list of `table` under these accounts, read on the primary (a replica knows
 * nothing of the primary's open transactions).
 */
export async function horizonOf(primary: PrismaClient, table: string, accountIds: readonly string[]): Promise<string> {
  const accounts = [...new Set(accountIds)];
  const [row] = await rawRead<{ horizon: string }>(primary, ACCOUNT_STAMPED.has(table) && accounts.length > 0 ? accountHorizon(accounts) : DATABASE_HORIZON);
  return row!.horizon;
}
