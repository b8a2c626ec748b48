import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { rawWrite } from '../db/raw.js';
import { startPoller } from '../db/poller.js';
import type { LiveBus } from './bus.js';
import type { Worker } from '../deps.js';
import { ENVELOPE_TEXT } from './envelope.js';

export const RELAY_BATCH = 500;
export const PURGE_BATCH = 1000;
const PURGE_EVERY_MS = 60_000;
/** The least time between two steps under a stream of commits: at most one relay (and one wake-up NOTIFY) per instance in it. */
export const MIN_STEP_GAP_MS = 10;
/** Events an instance takes off the queue between two VACUUMs of it (tidyQueue). */
export const VACUUM_QUEUE_EVERY = 5_000;

/** One outbox's step: claim what is due and deliver it (`signal`: the worker is stopping); true when it took a whole batch (more may be due). */
export type Delivery = (signal: AbortSignal) => Promise<boolean | void>;

export type WorkerOptions = {
  live: LiveBus;
  /** The outboxes' delivery steps (handed in by src/events-runtime.ts: webhooks, invoice mail), run side by side. */
  deliveries: Delivery[];
  pollMs: number;
  retentionDays: number;
  log: Logger;
};

/**
 * The loop every instance runs (docs/events.md): relay new events to live subscribers, deliver due
 * webhooks and invoice mail, run due workflow steps (docs/workflows.md), purge old events. Each step claims its rows with FOR UPDATE SKIP LOCKED, so instances
 * share the work and never do the same piece twice.
 */
export function startWorker(db: PrismaClient, options: WorkerOptions): Worker {
  let lastPurge = 0;
  const tidy = tidyQueue(db, options.log);
  const stop = new AbortController();
  const poller = startPoller({
    pollMs: options.pollMs,
    // Under a stream of commits, or a backlog (a commit of more events than a batch: an import's
    // chunk), one step per MIN_STEP_GAP_MS at most, each a whole batch.
    minGapMs: MIN_STEP_GAP_MS,
    onError: (err) => options.log.warn({ err }, 'event worker: step failed; retrying'),
    step: async () => {
      const relayed = await relay(db, options.live);
      await tidy(relayed);
      // Side by side: a slow webhook endpoint holds up no mail, nor the other way round.
      const delivered = await Promise.allSettled(options.deliveries.map((deliver) => deliver(stop.signal)));
      const failed = delivered.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      if (Date.now() - lastPurge >= PURGE_EVERY_MS) {
        lastPurge = Date.now();
        await purge(db, options.retentionDays);
      }
      const more = delivered.some((outcome) => outcome.status === 'fulfilled' && outcome.value === true);
      return relayed === RELAY_BATCH || more;
    },
  });
  return {
    /** Look for work now rather than at the next poll (a committed event's notification calls it). */
    nudge: poller.nudge,
    /** Stops claiming; a delivery under way finishes (10 s at most) before this resolves. */
    close: poller.close,
  };
}

// The steps below find the rows they claimed again by `ctid`, the locked row's own address (a TID
// scan), not by their key: with statistics taken while a table was small (a burst after a quiet
// time, an import's first minutes) the planner joined back through the wrong index of `events`,
// reading every one of the account's events for each row (0.4-1.7 s per 500 events during a
// 300,000-row import; BENCHMARKS.md). A claimed row is locked, so its address holds until the statement ends.

/**
 * Committed events to the bus, oldest first: each is taken off the queue (event_queue) by one
 * instance only. Only the events of accounts someone listens to are read: an import's million
 * events to nobody cost a delete, not a million envelopes through the service and Redis. The
 * answer is one row (how many were taken, and the listened ones' accounts and envelopes as two
 * arrays), not a row per event: a row each was 500 objects a step for the main thread to collect
 * (its garbage collection during a 300,000-row import: 0.41 s before, 0.28 s after; BENCHMARKS.md).
 * Who listens is asked before the claim, so a subscription that starts meanwhile may miss events
 * committed up to then, as live events always could (docs/events.md#live-subscriptions).
 */
export async function relay(db: PrismaClient, live: LiveBus, batch = RELAY_BATCH): Promise<number> {
  const listened = (await live.listened()).join(',');
  const heard = Prisma.sql`q.account_id::text = ANY(string_to_array(${listened}, ','))`;
  // Straight on the pool (src/db/raw.ts): every create's event passes here once.
  const [answer] = await rawWrite<{ taken: number; accounts: string[] | null; envelopes: string[] | null }>(db, Prisma.sql`
    WITH taken AS (
      DELETE FROM event_queue
      WHERE ctid = ANY(ARRAY(SELECT ctid FROM event_queue ORDER BY occurred_at LIMIT ${batch} FOR UPDATE SKIP LOCKED))
      RETURNING *)
    SELECT count(*)::int AS taken,
           array_agg(q.account_id::text ORDER BY q.occurred_at, q.event_id) FILTER (WHERE ${heard}) AS accounts,
           array_agg(${ENVELOPE_TEXT} ORDER BY q.occurred_at, q.event_id) FILTER (WHERE ${heard}) AS envelopes
    FROM taken q`);
  const { taken = 0, accounts, envelopes } = answer ?? {};
  accounts?.forEach((accountId, i) => live.bus.publish('accountEvents', accountId, envelopes![i]!));
  return taken;
}

/**
 * `taken(n)` after each relay: every VACUUM_QUEUE_EVERY events this instance took, the queue is
 * vacuumed. Each relay deletes what it takes, and its claim reads the queue's index from the oldest
 * end, through every deleted entry that no VACUUM has removed yet: with 100,000 of them it took 8.5 ms
 * (1.0 once they were marked dead), against 0.02 after a VACUUM of 11 ms; during form submits after
 * other writes a claim took 10.4 ms, and 1.4 with this (BENCHMARKS.md "The event queue's dead rows").
 * Autovacuum comes by once a minute at most. SKIP_LOCKED: an instance whose VACUUM finds another one under way skips
 * it. A VACUUM that fails (a role that does not own the table only gets a warning) is logged, and
 * the relay goes on.
 */
export function tidyQueue(db: PrismaClient, log: Logger): (taken: number) => Promise<void> {
  let takenSinceVacuum = 0;
  return async (taken) => {
    takenSinceVacuum += taken;
    if (takenSinceVacuum < VACUUM_QUEUE_EVERY) return;
    takenSinceVacuum = 0;
    await rawWrite(db, Prisma.sql`VACUUM (SKIP_LOCKED) event_queue`).catch((err: Error) => log.warn({ err }, 'event worker: VACUUM of the queue failed'));
  };
}

/** Deletes events (their queued messages go with them), delivery logs and ended workflow runs past retention, a batch at a time. */
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
    // Workflow runs ended before the cutoff go with their events (docs/workflows.md#runs).
    const runs = await db.$executeRaw`
      DELETE FROM workflow_runs WHERE ctid = ANY(ARRAY(
        SELECT ctid FROM workflow_runs WHERE finished_at < ${cutoff}::timestamptz ORDER BY finished_at LIMIT ${batch} FOR UPDATE SKIP LOCKED))`;
    total += events + deliveries + runs;
    if (events < batch && deliveries < batch && runs < batch) return total;
  }
}
