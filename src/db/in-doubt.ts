/**
 * A write whose connection broke after its statement (or its COMMIT) was sent may have committed:
 * PostgreSQL can commit and lose the connection before its answer leaves (a fast shutdown, a crash,
 * a failover). Answering 503 then would tell the client a stored write failed (docs/faults.md,
 * "A write in doubt"). Every write makes its events' ids in this process (src/events/ids.ts,
 * eventId), and its events commit with it, so once the database answers again, finding one of them
 * says it committed.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PrismaClient } from '../generated/prisma/client.js';
import { errorChain } from './sql-state.js';
import { isDatabaseUnavailable } from './unavailable.js';

/** The event ids made during one write. */
const madeInWrite = new AsyncLocalStorage<string[]>();

/** Notes an event id for the write it is made in, if any. */
export const noteEventId = (id: string): void => void madeInWrite.getStore()?.push(id);

/** Runs `work`, noting in `ids` the id of every event it makes. */
export const notingEventIds = <T>(ids: string[], work: () => Promise<T>): Promise<T> => madeInWrite.run(ids, work);

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

/** The committed event of `ids` (its type and subject), once the database answers; null when none committed. */
export type CommittedEvent = { type: string; subjectId: string | null; occurredAt: Date };

/**
 * Asks the database, until it answers or `waitMs` has passed, whether any of `ids` committed.
 * Undefined when it never answered: the write stays in doubt.
 */
export async function committedEvent(db: PrismaClient, ids: readonly string[], waitMs: number): Promise<CommittedEvent | null | undefined> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const rows = await db.$queryRaw<{ type: string; subject_id: string | null; occurred_at: Date }[]>`
        SELECT type, subject_id, occurred_at FROM events WHERE id = ANY(${ids as string[]}::uuid[]) ORDER BY id LIMIT 1`;
      const row = rows[0];
      return row ? { type: row.type, subjectId: row.subject_id, occurredAt: row.occurred_at } : null;
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() >= deadline) return undefined;
      await sleep(100);
    }
  }
}
