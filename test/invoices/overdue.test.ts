// docs/decisions.md §19 "Billing time": invoices that fall due become overdue by themselves, through
// the §8 machine, each with one invoice.status_changed event (actor system) that webhooks and
// subscriptions hear. The job is run by calling it (markOverdueInvoices), never by waiting a minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import type { InvoiceStatus } from '../../src/generated/prisma/client.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { serializeRecord } from '../../src/events/serialize.js';
import { CAN_FALL_DUE, markOverdueInvoices } from '../../src/invoices/overdue.js';
import { startOverdueWorker } from '../../src/invoices/overdue-worker.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { WAIT, watchSubscriptions } from '../helpers/live.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { countersAndRows } from '../helpers/record-counts.js';
import { startReceiver } from '../events/receiver.js';

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date(); // every run below judges "passed" against this moment's UTC date
const TODAY = new Date(NOW.toISOString().slice(0, 10));
const YESTERDAY = new Date(TODAY.getTime() - DAY);
const LONG_AGO = new Date(TODAY.getTime() - 40 * DAY);

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', EVENT_POLL_MS: '30' }, worker: true });
});
afterAll(async () => {
  await t?.close();
});

const run = (batchSize = 500) => markOverdueInvoices(t.db, { batchSize, asOf: NOW });

/** Invoices of `account`, created straight in the database in the given states and due dates. */
async function invoices(account: TestAccount, rows: { status: InvoiceStatus; dueDate: Date }[]) {
  return t.db.invoice.createManyAndReturn({
    data: rows.map((row) => ({ accountId: account.id, invoiceNumber: unique('INV'), amount: '100.00', ...row })),
    select: { id: true, status: true },
  });
}

const statusEvents = (accountId: string) =>
  t.db.event.findMany({ where: { accountId, type: 'invoice.status_changed' }, orderBy: { occurredAt: 'asc' } });

describe('the overdue job', () => {
  it('the states that fall due are the ones the §8 machine lets move to overdue', () => {
    expect([...CAN_FALL_DUE].sort()).toEqual(['partial', 'sent', 'viewed']);
  });

  it('sent, viewed and partial invoices due before today (UTC) become overdue, each with one invoice.status_changed event from the system', async () => {
    const account = await createAccount(t);
    const due = await invoices(account, [
      { status: 'sent', dueDate: YESTERDAY },
      { status: 'viewed', dueDate: LONG_AGO },
      { status: 'partial', dueDate: YESTERDAY },
    ]);
    const result = await run();
    expect(result.moved).toBeGreaterThanOrEqual(3);
    for (const invoice of due) expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).status).toBe('overdue');
    const events = await statusEvents(account.id);
    expect(events).toHaveLength(3);
    for (const invoice of due) {
      const event = events.find((e) => e.subjectId === invoice.id)!;
      expect(event).toMatchObject({ actorType: 'system', actorId: null });
      expect(event.data).toMatchObject({ object: { id: invoice.id, status: 'overdue' }, previous: { status: invoice.status } });
      // The record as every other invoice event shows it (REST's shape).
      const row = await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } });
      expect((event.data as { object: unknown }).object).toEqual(serializeRecord('invoice', row));
    }
  });

  it('draft, paid, cancelled, refunded and already-overdue invoices, and invoices due today, are left alone', async () => {
    const account = await createAccount(t);
    const left = await invoices(account, [
      { status: 'draft', dueDate: LONG_AGO },
      { status: 'paid', dueDate: LONG_AGO },
      { status: 'cancelled', dueDate: LONG_AGO },
      { status: 'refunded', dueDate: LONG_AGO },
      { status: 'overdue', dueDate: LONG_AGO },
      { status: 'sent', dueDate: TODAY },
      { status: 'viewed', dueDate: new Date(TODAY.getTime() + DAY) },
    ]);
    await run();
    const now = await t.db.invoice.findMany({ where: { accountId: account.id }, select: { id: true, status: true } });
    expect(new Map(now.map((i) => [i.id, i.status]))).toEqual(new Map(left.map((i) => [i.id, i.status])));
    expect(await statusEvents(account.id)).toHaveLength(0);
  });

  it('running again moves nothing and writes no event', async () => {
    const account = await createAccount(t);
    await invoices(account, [{ status: 'sent', dueDate: YESTERDAY }]);
    expect((await run()).moved).toBeGreaterThanOrEqual(1);
    const before = await t.db.event.count();
    expect(await run()).toEqual({ moved: 0, batches: 0, lockedOut: false, setAside: [] });
    expect(await t.db.event.count()).toBe(before);
    expect(await statusEvents(account.id)).toHaveLength(1);
  });

  it('a batch smaller than the number due still moves every invoice, across batches', async () => {
    const account = await createAccount(t);
    await invoices(account, Array.from({ length: 23 }, (_, i) => ({ status: 'sent' as const, dueDate: new Date(YESTERDAY.getTime() - i * DAY) })));
    expect(await run(5)).toEqual({ moved: 23, batches: 5, lockedOut: false, setAside: [] });
    expect(await t.db.invoice.count({ where: { accountId: account.id, status: 'overdue' } })).toBe(23);
    expect(await statusEvents(account.id)).toHaveLength(23);
  });

  it('the invoices due longest ago go first', async () => {
    const account = await createAccount(t);
    const rows = await invoices(account, Array.from({ length: 8 }, (_, i) => ({ status: 'sent' as const, dueDate: new Date(YESTERDAY.getTime() - i * DAY) })));
    let batches = 0;
    expect(await markOverdueInvoices(t.db, { batchSize: 3, asOf: NOW, running: () => batches++ < 1 })).toMatchObject({ moved: 3, batches: 1 });
    const moved = await t.db.invoice.findMany({ where: { accountId: account.id, status: 'overdue' }, select: { id: true } });
    expect(new Set(moved.map((i) => i.id))).toEqual(new Set(rows.slice(5).map((i) => i.id)));
    await run();
  });

  it('concurrent runs (instances) move each invoice exactly once, with exactly one event each', async () => {
    const account = await createAccount(t);
    await invoices(account, Array.from({ length: 60 }, (_, i) => ({ status: CAN_FALL_DUE[i % 3]!, dueDate: new Date(YESTERDAY.getTime() - (i % 7) * DAY) })));
    const runs = await Promise.all(Array.from({ length: 4 }, () => run(7)));
    // A run locked out of a batch leaves the rest to the next one: run until nothing is due.
    let moved = runs.reduce((sum, r) => sum + r.moved, 0);
    while (await t.db.invoice.count({ where: { accountId: account.id, status: { in: CAN_FALL_DUE } } })) moved += (await run(7)).moved;
    expect(moved).toBe(60);
    const events = await statusEvents(account.id);
    expect(events).toHaveLength(60);
    expect(new Set(events.map((e) => e.subjectId)).size).toBe(60);
  });

  it.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('two instances on one PostgreSQL move each invoice exactly once, with exactly one event each', async () => {
    const account = await createAccount(t);
    await invoices(account, Array.from({ length: 90 }, (_, i) => ({ status: CAN_FALL_DUE[i % 3]!, dueDate: new Date(YESTERDAY.getTime() - (i % 5) * DAY) })));
    // Instance B: a pool of its own on the same database, as a second process would have.
    const other = await openDatabase({ databaseUrl: t.deps.db.pool!.options.connectionString!, dataDir: '', poolMax: 3 });
    try {
      const instances = [t.db, other.prisma];
      const left = () => t.db.invoice.count({ where: { accountId: account.id, status: { in: CAN_FALL_DUE } } });
      let moved = 0;
      while (await left()) {
        const runs = await Promise.all([0, 1, 0, 1].map((i) => markOverdueInvoices(instances[i]!, { batchSize: 6, asOf: NOW })));
        moved += runs.reduce((sum, r) => sum + r.moved, 0);
      }
      expect(moved).toBe(90);
      const events = await statusEvents(account.id);
      expect(events).toHaveLength(90);
      expect(new Set(events.map((e) => e.subjectId)).size).toBe(90);
    } finally {
      await other.close();
    }
  });

  it('record counts stay exact: a moved invoice is counted as overdue, not as what it was', async () => {
    const account = await createAccount(t);
    await invoices(account, [{ status: 'sent', dueDate: YESTERDAY }, { status: 'partial', dueDate: YESTERDAY }]);
    await run();
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
  });

  it('a webhook endpoint receives the move, signed, with actor system and the old status', async () => {
    const account = await createAccount(t);
    const receiver = await startReceiver();
    const created = await t.gql(
      'mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } secret } }',
      { input: { accountId: account.id, url: receiver.url, eventTypes: ['invoice.status_changed'] } },
      { as: account.owner },
    );
    const { secret } = created.data.createWebhookEndpoint;
    const [invoice] = await invoices(account, [{ status: 'viewed', dueDate: YESTERDAY }]);
    await run();
    await receiver.waitFor(1);
    const [request] = receiver.received;
    const payload = new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>);
    expect(payload).toMatchObject({
      type: 'invoice.status_changed',
      account_id: account.id,
      actor: { type: 'system', id: null },
      data: { object: { id: invoice!.id, status: 'overdue' }, previous: { status: 'viewed' } },
    });
    await receiver.close();
  });

  it('a GraphQL subscription to the account hears the move', async () => {
    const account = await createAccount(t);
    const live = watchSubscriptions(t);
    const abort = new AbortController();
    const response = await fetch(`${t.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${account.member.token}` },
      body: JSON.stringify({
        query: 'subscription ($a: ID!) { accountEvents(accountId: $a, types: ["invoice.status_changed"]) { type actor { type id } data } }',
        variables: { a: account.id },
      }),
      signal: abort.signal,
    });
    const heard = (async () => {
      let buffer = '';
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += Buffer.from(chunk).toString('utf8');
        const data = /event: next\ndata: (.*)\n/.exec(buffer)?.[1];
        if (data) return JSON.parse(data).data.accountEvents;
      }
    })();
    await live.listening(account.id);
    const [invoice] = await invoices(account, [{ status: 'partial', dueDate: YESTERDAY }]);
    await run();
    const event = await Promise.race([heard, new Promise((_, reject) => setTimeout(() => reject(new Error('no event heard')), WAIT.timeout))]);
    expect(event).toMatchObject({ type: 'invoice.status_changed', actor: { type: 'system', id: null }, data: { object: { id: invoice!.id, status: 'overdue' }, previous: { status: 'partial' } } });
    abort.abort();
    await live.close();
  });
});

describe('the overdue worker', () => {
  it('runs every minute, 500 invoices a transaction, unless OVERDUE_INTERVAL_MS and OVERDUE_BATCH_SIZE say otherwise', () => {
    expect(loadConfig({}).overdue).toEqual({ intervalMs: 60_000, batchSize: 500 });
    expect(loadConfig({ OVERDUE_INTERVAL_MS: '5000', OVERDUE_BATCH_SIZE: '50' }).overdue).toEqual({ intervalMs: 5000, batchSize: 50 });
    expect(() => loadConfig({ OVERDUE_BATCH_SIZE: '0' })).toThrow(/OVERDUE_BATCH_SIZE must be an integer from 1/);
  });

  it('a started worker moves what fell due without being asked, and stops when closed', async () => {
    const account = await createAccount(t);
    await invoices(account, [{ status: 'sent', dueDate: LONG_AGO }]);
    const worker = startOverdueWorker(t.db, { intervalMs: 50, batchSize: 500, log: t.deps.log });
    await expect.poll(() => t.db.invoice.count({ where: { accountId: account.id, status: 'overdue' } }), WAIT).toBe(1);
    await worker.close();
    expect(await statusEvents(account.id)).toHaveLength(1);
  });
});

describe('the overdue job: an invoice that cannot move', () => {
  it('an invoice whose move fails is set aside with its reason; the others of its batch and after it move, and the run ends', async () => {
    const account = await createAccount(t);
    const due = await invoices(account, Array.from({ length: 5 }, () => ({ status: 'sent' as InvoiceStatus, dueDate: LONG_AGO })));
    const poison = due[2]!.id;
    // A real failure of that one invoice's update, every time.
    await t.db.$executeRawUnsafe(`CREATE FUNCTION refuse_overdue() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.id = '${poison}'::uuid AND NEW.status = 'overdue' THEN RAISE EXCEPTION 'cannot move'; END IF; RETURN NEW; END $$`);
    await t.db.$executeRawUnsafe('CREATE TRIGGER refuse_overdue BEFORE UPDATE ON invoices FOR EACH ROW EXECUTE FUNCTION refuse_overdue()');
    try {
      const result = await run(3);
      expect(result.setAside.map((a) => a.id)).toEqual([poison]);
      const after = await t.db.invoice.findMany({ where: { accountId: account.id }, select: { id: true, status: true } });
      expect(after.filter((i) => i.status === 'overdue').map((i) => i.id).sort()).toEqual(due.map((i) => i.id).filter((id) => id !== poison).sort());
      expect(after.find((i) => i.id === poison)!.status).toBe('sent');
    } finally {
      await t.db.$executeRawUnsafe('DROP TRIGGER refuse_overdue ON invoices');
    }
  });
});
