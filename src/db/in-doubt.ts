/**
 * A write whose connection broke after its statement (or its COMMIT) was sent may have committed:
 * PostgreSQL can commit and lose the connection before its answer leaves (a fast shutdown, a crash,
 * a failover). Answering 503 then would tell the client a stored write failed (docs/faults.md,
 * "A write in doubt"). Every write makes its events' ids in this process (src/events/ids.ts,
 * eventId), and its events commit with it, so once the database answers again, finding one of them
 * says it committed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { errorChain } from './sql-state.js';
import type { InFlight } from './in-flight.js';
import { isDatabaseUnavailable } from './unavailable.js';

// The connection went away while a statement was on it: lost (08006, our pool's word for it; 08003
// no connection), the server shutting down or crashing (57P01, 57P02), or the socket reset. Refusals
// before a statement was sent (08001: no connection could be had) and statement timeouts (57014: the
// server cancelled it, or never answered) are not in doubt.
const LOST = new Set(['08006', '08003', '57P01', '57P02', 'P1017', 'ECONNRESET', 'EPIPE']);

/** True when `err` says the connection broke while a statement was in flight. */
export function isInDoubt(err: unknown): boolean {
  if (!isDatabaseUnavailable(err)) return false;
  for (const e of errorChain(err)) {
    if (typeof e.code === 'string' && LOST.has(e.code)) return true;
    if (e.kind === 'ConnectionClosed') return true;
  }
  return false;
}

/** A committed event of a write: its type and subject. */
export type CommittedEvent = { type: string; subjectId: string | null; occurredAt: Date };

/**
 * Asks the database, until it answers or `waitMs` has passed, whether any event of `flight`
 * committed. A backend that had the write's statement and still runs (PostgreSQL shutting down
 * ends backends one by one; one may still be committing) is waited for first: only once it is gone
 * does "no event" mean the write did not commit. Undefined when that could not be known in time.
 */
export async function committedEvent(db: PrismaClient, flight: InFlight, failedAt: Date, waitMs: number): Promise<CommittedEvent | null | undefined> {
  const deadline = Date.now() + waitMs;
  const pids = [...flight.backends];
  const running = pids.length
    ? Prisma.sql`(SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(${pids}::int[]) AND backend_start < ${failedAt}::timestamptz)::int`
    : Prisma.sql`0`;
  for (;;) {
    try {
      const [row] = await db.$queryRaw<{ running: number; type: string | null; subject_id: string | null; occurred_at: Date | null }[]>`
        SELECT ${running} AS running, e.type, e.subject_id, e.occurred_at
        FROM (SELECT 1) AS one LEFT JOIN LATERAL (
          SELECT type, subject_id, occurred_at FROM events WHERE id = ANY(${flight.eventIds}::uuid[]) ORDER BY id LIMIT 1) AS e ON true`;
      if (row!.type !== null) return { type: row!.type, subjectId: row!.subject_id, occurredAt: row!.occurred_at! };
      if (row!.running === 0) return null;
    } catch (err) {
      if (!isDatabaseUnavailable(err)) return undefined;
    }
    if (Date.now() >= deadline) return undefined;
    await sleep(100);
  }
}
