// docs/events.md "How delivery works" and decisions §13: the service's own writes wake the event
// workers after their commit (src/events/emit.ts) instead of a NOTIFY inside the writing transaction.
// What that must not break: every committed write has its event and a rolled-back one none, under
// concurrency; the counters stay exact; live subscribers and webhook deliveries of another instance,
// whose worker polls once a minute here, are still woken at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { emit, inTransaction, wakeAfterCommit } from '../../src/events/emit.js';
import { EVENTS_CHANNEL, openEvents } from '../../src/events-runtime.js';
import type { Events } from '../../src/deps.js';
import { SYSTEM } from '../../src/events/types.js';
import type { Envelope } from '../../src/events/envelope.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { WAIT } from '../helpers/live.js';
import { startReceiver } from './receiver.js';

const ENV = { EVENT_POLL_MS: '60000', REDIS_URL: '', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '40' };

// Instance A serves the requests and runs no worker; instance B runs the only worker, on a database
// connection of its own (on PostgreSQL; the embedded database is one handle per process).
let a: TestApp;
let b: { db: Database | null; events: Events };
let acc: TestAccount;

beforeAll(async () => {
  a = await createTestApp({ env: ENV, worker: false });
  const url = (a.deps.db.pool as { options?: { connectionString?: string } } | undefined)?.options?.connectionString;
  const db = url ? await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 3 }) : null;
  const events = await openEvents(a.deps.config, db?.prisma ?? a.deps.db.prisma, a.deps.log, { worker: true, listen: (db ?? a.deps.db).listen });
  b = { db, events };
  acc = await createAccount(a);
});
afterAll(async () => {
  await b?.events.close();
  await b?.db?.close();
  await a?.close();
});

/**
 * Returns once no relay step of B that asked who listens before now can still take an event: a
 * marker committed now, to an account nobody follows, has left the queue only after any such step
 * has taken what it takes (as test/events/notify.test.ts).
 */
async function relayCaughtUp(): Promise<void> {
  const marker = crypto.randomUUID();
  const account = await createAccount(a);
  await inTransaction(a.db, (tx) => emit(tx, { type: 'contact.created', accountId: account.id, actor: SYSTEM, object: { id: marker, accountId: account.id } as { id: string } }));
  await expect.poll(() => a.db.eventQueue.count({ where: { subjectId: marker } }), WAIT).toBe(0);
}

/** The envelopes B's bus publishes for `accountId` about the records `write` names, once all have arrived. */
async function receivedOnB(accountId: string, write: () => Promise<string[]>): Promise<Envelope[]> {
  const live = b.events.bus.subscribe('accountEvents', accountId)[Symbol.asyncIterator]();
  const seen: Envelope[] = [];
  const reading = (async () => {
    for (let next = await live.next(); !next.done; next = await live.next()) seen.push(JSON.parse(next.value) as Envelope);
  })();
  try {
    await relayCaughtUp();
    const ids = new Set(await write());
    const about = () => seen.filter((e) => ids.has((e.data as { object: { id: string } }).object.id));
    await expect.poll(() => about().length, WAIT).toBe(ids.size);
    return about();
  } finally {
    await live.return?.();
    void reading.catch(() => undefined);
  }
}

describe('wake-ups after commit, across two instances', () => {
  it('a contact created through A in one statement reaches a live subscriber of B at once, though B polls once a minute', async () => {
    const account = await createAccount(a);
    const events = await receivedOnB(account.id, async () => {
      const r = await a.rest('POST', '/api/v1/contacts', { body: { account_id: account.id, first_name: unique('Live') }, as: account.member });
      expect(r.status).toBe(201);
      return [r.body.data.id as string];
    });
    expect(events.map((e) => e.type)).toEqual(['contact.created']);
  });

  it("a batch through A (one statement) and a form submit through A (its own transaction) reach B's subscriber, every event once", async () => {
    const account = await createAccount(a);
    const form = await a.gql('mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
      input: { accountId: account.id, name: unique('Form'), fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
    }, { as: account.owner });
    expect(form.errors).toBeUndefined();
    const events = await receivedOnB(account.id, async () => {
      const batch = await a.rest('POST', '/api/v1/contacts/batch', {
        body: { account_id: account.id, mode: 'create', records: [{ first_name: unique('B1') }, { first_name: unique('B2') }] }, as: account.member,
      });
      expect(batch.status).toBe(200);
      const submitted = await a.rest('POST', `/api/v1/forms/${form.data.createLeadForm.id}/submit`, { body: { data: { email: `${unique('lead')}@example.com` } }, clientIp: '203.0.113.9' });
      expect(submitted.status).toBe(200);
      return [...batch.body.data.map((item: { id: string }) => item.id), submitted.body.contact_id as string];
    });
    expect(events.map((e) => e.type).sort()).toEqual(['contact.created', 'contact.created', 'contact.created']);
  });

  it("a webhook endpoint receives the form's events, delivered by B's worker, which only A's wake-up can start in time", async () => {
    const receiver = await startReceiver();
    try {
      const account = await createAccount(a);
      const created = await a.gql('mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }', {
        input: { accountId: account.id, url: receiver.url, eventTypes: ['contact.created', 'form.submitted'] },
      }, { as: account.owner });
      expect(created.errors).toBeUndefined();
      const form = await a.gql('mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
        input: { accountId: account.id, name: unique('Form'), fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
      }, { as: account.owner });
      const r = await a.rest('POST', `/api/v1/forms/${form.data.createLeadForm.id}/submit`, { body: { data: { email: `${unique('hook')}@example.com` } }, clientIp: '203.0.113.10' });
      expect(r.status).toBe(200);
      await expect.poll(() => receiver.received.length, WAIT).toBe(2);
      expect(receiver.received.map((x) => (JSON.parse(x.body) as Envelope).type).sort()).toEqual(['contact.created', 'form.submitted']);
    } finally {
      await receiver.close();
    }
  });
});

describe('who wakes the workers', () => {
  it("a transaction the service opens for its writes tells the trigger not to notify and wakes the workers once after its commit, never after a rollback; another writer's transaction leaves the trigger to notify", async () => {
    const account = await createAccount(a);
    let woken = 0;
    const restore = wakeAfterCommit(a.db, () => woken++);
    const event = (tx: Parameters<typeof emit>[0]) =>
      emit(tx, { type: 'contact.created', accountId: account.id, actor: SYSTEM, object: { id: crypto.randomUUID(), accountId: account.id } as { id: string } });
    const flag = async (tx: Parameters<typeof emit>[0]) => (await tx.$queryRaw<{ v: string | null }[]>`SELECT current_setting('crm.events_wake', true) AS v`)[0]!.v;
    try {
      const settings: (string | null)[] = [];
      await inTransaction(a.db, async (tx) => {
        await event(tx);
        await event(tx);
        settings.push(await flag(tx));
      });
      expect(settings).toEqual(['after_commit']);
      expect(woken).toBe(1); // one wake-up for the transaction, however many events it wrote
      await expect(inTransaction(a.db, async (tx) => {
        await event(tx);
        throw new Error('rolled back');
      })).rejects.toThrow('rolled back');
      expect(woken).toBe(1);
      await a.db.$transaction(async (tx) => {
        await event(tx);
        settings.push(await flag(tx));
      });
      expect(settings[1] ?? '').toBe(''); // unset: the trigger notifies at this commit
      expect(woken).toBe(1);
      await a.db.$transaction(async (tx) => settings.push(await flag(tx)));
      expect(settings[2] ?? '').toBe(''); // the setting ended with its transaction: a pooled connection does not keep it
    } finally {
      restore();
    }
  });
});

describe("a form submit's new contact, written with its events in one statement", () => {
  it('the contact.created and form.submitted events show the rows as stored, times included', async () => {
    const account = await createAccount(a);
    const form = await a.gql('mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
      input: { accountId: account.id, name: unique('Form'), fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
    }, { as: account.owner });
    const r = await a.rest('POST', `/api/v1/forms/${form.data.createLeadForm.id}/submit`, { body: { data: { email: `${unique('row')}@example.com` } }, clientIp: '203.0.113.11' });
    expect(r.status).toBe(200);
    const contact = await a.db.contact.findUniqueOrThrow({ where: { id: r.body.contact_id } });
    const submission = await a.db.formSubmission.findFirstOrThrow({ where: { contactId: contact.id } });
    const events = await a.db.event.findMany({ where: { accountId: account.id, type: { in: ['contact.created', 'form.submitted'] } }, orderBy: { type: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['contact.created', 'form.submitted']);
    const [created, submitted] = events.map((e) => (e.data as { object: Record<string, unknown> }).object);
    expect(created).toMatchObject({ id: contact.id, email: contact.email, first_name: contact.firstName, contact_type: 'lead', source: 'website', created_at: contact.createdAt.toISOString(), updated_at: contact.updatedAt.toISOString() });
    expect(submitted).toMatchObject({ id: submission.id, contact_id: contact.id, form_id: submission.formId, data: submission.data, created_at: submission.createdAt.toISOString() });
    expect(submitted).not.toHaveProperty('client_ip');
  });
});

describe('the outbox under concurrency, with wake-ups after commit', () => {
  it('40 concurrent transactions, every other one rolled back after writing its event: exactly the committed ones have events, and the workers are woken', async () => {
    let heard = 0;
    const stop = await (b.db ?? a.deps.db).listen(EVENTS_CHANNEL, () => heard++);
    try {
      const account = await createAccount(a);
      const before = heard;
      const ids = Array.from({ length: 40 }, () => crypto.randomUUID());
      const outcomes = await Promise.allSettled(ids.map((id, i) =>
        inTransaction(a.db, async (tx) => {
          await tx.contact.create({ data: { id, accountId: account.id, firstName: unique('C') } });
          await emit(tx, { type: 'contact.created', accountId: account.id, actor: SYSTEM, object: { id, accountId: account.id } as { id: string } });
          if (i % 2 === 1) throw new Error('rolled back');
        })));
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(20);
      const committed = ids.filter((_, i) => i % 2 === 0);
      const events = await a.db.event.findMany({ where: { accountId: account.id, type: 'contact.created' }, select: { subjectId: true } });
      expect(events.map((e) => e.subjectId).sort()).toEqual([...committed].sort());
      expect(await a.db.contact.count({ where: { accountId: account.id } })).toBe(20);
      // The wake-ups are coalesced, and at least one follows the last commit.
      await expect.poll(() => heard - before, WAIT).toBeGreaterThanOrEqual(1);
    } finally {
      await stop();
    }
  });

  it('60 concurrent creates through the API (contacts, batches, deals, form submits): one event per record, and the counters equal the rows', async () => {
    const account = await createAccount(a);
    const form = await a.gql('mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
      input: { accountId: account.id, name: unique('Form'), fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
    }, { as: account.owner });
    const requests = Array.from({ length: 60 }, (_, i) => {
      switch (i % 4) {
        case 0: return a.rest('POST', '/api/v1/contacts', { body: { account_id: account.id, first_name: unique('C') }, as: account.member });
        case 1: return a.rest('POST', '/api/v1/contacts/batch', { body: { account_id: account.id, mode: 'create', records: [{ first_name: unique('B') }, { first_name: unique('B') }] }, as: account.member });
        case 2: return a.rest('POST', '/api/v1/deals', { body: { account_id: account.id, title: unique('D') }, as: account.member });
        default: return a.rest('POST', `/api/v1/forms/${form.data.createLeadForm.id}/submit`, { body: { data: { email: `${unique('f')}@example.com` } }, clientIp: `203.0.113.${100 + i}` });
      }
    });
    const answers = await Promise.all(requests);
    expect(answers.map((r) => r.status).filter((s) => s >= 300)).toEqual([]);
    const [contacts, deals, submissions] = await Promise.all([
      a.db.contact.count({ where: { accountId: account.id } }),
      a.db.deal.count({ where: { accountId: account.id } }),
      a.db.formSubmission.count({ where: { accountId: account.id } }),
    ]);
    expect([contacts, deals, submissions]).toEqual([15 + 30 + 15, 15, 15]);
    const byType = await a.db.event.groupBy({ by: ['type'], where: { accountId: account.id }, _count: true });
    expect(Object.fromEntries(byType.map((g) => [g.type, g._count]))).toMatchObject({ 'contact.created': contacts, 'deal.created': deals, 'form.submitted': submissions });
    // Each contact has exactly one contact.created event (none twice, none missing).
    const subjects = await a.db.event.findMany({ where: { accountId: account.id, type: 'contact.created' }, select: { subjectId: true } });
    expect(new Set(subjects.map((s) => s.subjectId)).size).toBe(contacts);
    const counted = await a.db.$queryRaw<{ table_name: string; n: bigint }[]>`
      SELECT table_name, sum(n)::bigint AS n FROM record_counts WHERE account_id = ${account.id}::uuid GROUP BY table_name ORDER BY table_name`;
    expect(counted.map((c) => [c.table_name, Number(c.n)])).toEqual([['contacts', contacts], ['deals', deals]]);
  });
});
