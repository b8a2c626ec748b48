import { setTimeout as sleep } from 'node:timers/promises';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import type { EventBus } from './bus.js';
import { envelope, type EventRow } from './envelope.js';

export const RELAY_BATCH = 500;
export const PURGE_BATCH = 1000;
const PURGE_EVERY_MS = 60_000;
const MIN_STEP_GAP_MS = 10;

export type WorkerOptions = {
  bus: EventBus;
  /** Webhook delivery's step (handed in by events/runtime.ts, which wires webhooks); null = none. */
  deliver: ((signal: AbortSignal) => Promise<void>) | null;
  pollMs: number;
  retentionDays: number;
  log: Logger;
};

/**
 * The loop every instance runs (docs/events.md): relay new events to live subscribers, deliver due
 * webhooks, purge old events. Each step claims its rows with FOR UPDATE SKIP LOCKED, so instances
 * share the work and never do the same piece twice.
 */
export function startWorker(db: PrismaClient, options: WorkerOptions) {
  let running = true;
  let wake: (() => void) | null = null;
  // Set by a nudge that came while a step ran: what it announced may have committed after the step looked.
  let nudged = false;
  let lastPurge = 0;
  const stop = new AbortController();

  const step = async () => {
    await relay(db, options.bus);
    if (options.deliver) await options.deliver(stop.signal);
    if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
      lastPurge = Date.now();
      await purge(db, options.retentionDays);
    }
  };

  const loop = (async () => {
    while (running) {
      nudged = false;
      const started = Date.now();
      try {
        await step();
      } catch (err) {
        if (running) options.log.warn({ err }, 'event worker: step failed; retrying');
      }
      if (!running) break;
      // Under a stream of commits, one step per MIN_STEP_GAP_MS at most: each relays a whole batch.
      const wait = nudged ? Math.max(0, MIN_STEP_GAP_MS - (Date.now() - started)) : options.pollMs;
      await new Promise<void>((resolve) => {
        wake = nudged ? null : resolve;
        sleep(wait, undefined, { ref: false }).then(resolve);
      });
      wake = null;
    }
  })();

  return {
    /** Look for work now rather than at the next poll (a committed event's notification calls it). */
    nudge: () => {
      nudged = true;
      wake?.();
    },
    /** Stops claiming; a delivery under way finishes (10 s at most) before this resolves. */
    close: async () => {
      running = false;
      wake?.();
      await loop;
    },
  };
}

export type Worker = ReturnType<typeof startWorker>;

// The steps below find the rows they claimed again by `ctid`, the locked row's own address (a TID
// scan), not by their key: with statistics taken while a table was small (a burst after a quiet
// time, an import's first minutes) the planner joined back through the wrong index of `events`,
// reading every one of the account's events for each row (0.4-1.7 s per 500 events during a
// 300,000-row import; BENCHMARKS.md). A claimed row is locked, so its address holds until the statement ends.

/** Committed events to the bus, oldest first: each is taken off the queue (event_queue) by one instance only. */
export async function relay(db: PrismaClient, bus: EventBus, batch = RELAY_BATCH): Promise<number> {
  const rows = await db.$queryRaw<EventRow[]>`
    DELETE FROM event_queue
    WHERE ctid = ANY(ARRAY(SELECT ctid FROM event_queue ORDER BY occurred_at LIMIT ${batch} FOR UPDATE SKIP LOCKED))
    RETURNING event_id AS id, account_id AS "accountId", type, occurred_at AS "occurredAt", actor_type AS "actorType",
              actor_id AS "actorId", subject_id AS "subjectId", contact_id AS "contactId", data`;
  rows.sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime() || (a.id < b.id ? -1 : 1));
  for (const row of rows) bus.publish('accountEvents', row.accountId, envelope(row));
  return rows.length;
}

/** Deletes events (their queued messages go with them) and delivery logs past retention, a batch at a time. */
export async function purge(db: PrismaClient, retentionDays: number, batch = PURGE_BATCH): Promise<number> {
  const cutoff = new Date(Date.now() - retentionDays * 24 * 60 * 60 * 1000);
  let total = 0;
  for (;;) {
    const events = await db.$executeRaw`
      DELETE FROM events WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM events WHERE occurred_at < ${cutoff}::timestamptz ORDER BY occurred_at LIMIT ${batch} FOR UPDATE SKIP LOCKED))`;
    const deliveries = await db.$executeRaw`
      DELETE FROM webhook_deliveries WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM webhook_deliveries WHERE attempted_at < ${cutoff}::timestamptz ORDER BY attempted_at LIMIT ${batch} FOR UPDATE SKIP LOCKED))`;
    total += events + deliveries;
    if (events < batch && deliveries < batch) return total;
  }
}
