// docs/events.md "Live events": committed events wake the worker through LISTEN/NOTIFY; the poll is the fallback.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationsArrive } from '../../src/db/listen.js';
import { emit, emitMany } from '../../src/events/emit.js';
import { EVENTS_CHANNEL } from '../../src/events-runtime.js';
import { RELAY_BATCH } from '../../src/events/worker.js';
import { SYSTEM } from '../../src/events/types.js';
import type { Envelope } from '../../src/events/envelope.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { WAIT } from '../helpers/live.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

// The worker polls once a minute here: only a notification can bring an event in time for these tests.
// The bus is this process's own (no REDIS_URL), so a subscription is registered when it starts.
let app: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  app = await createTestApp({ env: { EVENT_POLL_MS: '60000', REDIS_URL: '' }, worker: true });
  acc = await createAccount(app);
});
afterAll(() => app?.close());

const emitContactEvent = (accountId: string, id: string = crypto.randomUUID()) =>
  app.db.$transaction((tx) => emit(tx, { type: 'contact.created', accountId, actor: SYSTEM, object: { id, accountId, firstName: unique('N') } as { id: string } }));

/**
 * Returns once no relay step that asked who listens before now can still take an event. An event
 * committed as a subscription starts may be missed (docs/events.md, "Live subscriptions"): a step
 * already under way takes it for nobody. A marker committed now, to an account nobody follows, has
 * left the queue only after any such step has taken what it takes.
 */
async function relayCaughtUp(): Promise<void> {
  const marker = crypto.randomUUID();
  await emitContactEvent((await createAccount(app)).id, marker);
  await expect.poll(() => app.db.eventQueue.count({ where: { subjectId: marker } }), WAIT).toBe(0);
}

/**
 * Subscribes to the account's live events, then commits a contact.created event: resolves when it
 * arrives. `caughtUp`: the event is committed once the relay has caught up with the subscription.
 */
async function emitAndReceive(accountId: string, { caughtUp = false } = {}): Promise<Envelope> {
  const id = crypto.randomUUID();
  const live = app.deps.events.bus.subscribe('accountEvents', accountId)[Symbol.asyncIterator]();
  const arrived = (async () => {
    for (let next = await live.next(); !next.done; next = await live.next()) {
      const event = JSON.parse(next.value) as Envelope;
      if ((event.data as { object?: { id?: string } } | null)?.object?.id === id) return event;
    }
    throw new Error('the bus ended');
  })();
  if (caughtUp) await relayCaughtUp();
  await emitContactEvent(accountId, id);
  try {
    return await arrived;
  } finally {
    await live.return?.();
  }
}

describe('events reach subscribers by notification', () => {
  it('committing an event notifies every listener of the events channel once per commit', async () => {
    let heard = 0;
    const stop = await app.deps.db.listen(EVENTS_CHANNEL, () => heard++);
    try {
      const before = heard; // a listener hears once on opening (what committed before it listened)
      await emitContactEvent(acc.id);
      await expect.poll(() => heard - before).toBeGreaterThanOrEqual(1);
    } finally {
      await stop();
    }
  });

  it("start-up's probe hears its own notification sent through the pool, so it warns of nothing (behind PgBouncer it does not: test/scale/pgbouncer.test.ts)", async () => {
    const { listen, prisma } = app.deps.db;
    await expect(notificationsArrive(listen, (channel) => prisma.$executeRaw`SELECT pg_notify(${channel}, '')`, WAIT.timeout)).resolves.toBe(true);
    await expect(notificationsArrive(listen, async () => undefined, 200)).resolves.toBe(false); // the open's own call is not counted
  });

  it('an event committed while the worker sleeps on a one-minute poll reaches the bus at once', async () => {
    // Each round starts after the previous event was relayed: the worker is asleep on its poll. The
    // first also waits for a step the test before may have started (relayCaughtUp).
    for (let round = 0; round < 3; round++) {
      await expect(emitAndReceive(acc.id, { caughtUp: round === 0 })).resolves.toMatchObject({ type: 'contact.created', account_id: acc.id });
    }
  });
});

describe('a backlog', () => {
  it('a commit of more events than a relay batch reaches the bus whole, without waiting for the one-minute poll', async () => {
    const account = await createAccount(app);
    const n = RELAY_BATCH * 2 + 50; // one notification, three batches
    const live = app.deps.events.bus.subscribe('accountEvents', account.id)[Symbol.asyncIterator]();
    let received = 0;
    const counting = (async () => {
      for (let next = await live.next(); !next.done; next = await live.next()) received++;
    })();
    try {
      const inputs = Array.from({ length: n }, (_, i) => ({ type: 'workflow.created' as const, accountId: account.id, actor: SYSTEM, object: { id: crypto.randomUUID(), name: `W${i}` } }));
      await relayCaughtUp();
      await app.db.$transaction((tx) => emitMany(tx, inputs));
      await expect.poll(() => received, WAIT).toBe(n);
    } finally {
      await live.return?.();
      await counting;
    }
  });
});

describe('the listener on PostgreSQL', () => {
  const skip = skipIfMissing(unsetVariables('DATABASE_URL'));
  it.skipIf(skip)('listens again after its connection is cut, and events flow again', async () => {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      // This app's own listener: its database is a clone of its own (test/helpers/database.ts).
      const [{ database }] = await app.db.$queryRaw<[{ database: string }]>`SELECT current_database() AS database`;
      const { rowCount } = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1 AND datname = $2',
        [`LISTEN "${EVENTS_CHANNEL}"`, database],
      );
      expect(rowCount).toBe(1);
      // The listener reopens after about a second; what committed meanwhile is announced when it is back.
      await expect(emitAndReceive(acc.id)).resolves.toMatchObject({ type: 'contact.created' });
    } finally {
      await admin.end();
    }
  });
});
