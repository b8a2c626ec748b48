// docs/events.md "The outbox" and docs/decisions.md §13: every change writes its event in its own transaction.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { contactBatch, createContact as createContactRow, createContactInput } from '../../src/contacts/contact.service.js';
import { envelope, type Envelope } from '../../src/events/envelope.js';
import { recordSubmission } from '../../src/forms/submission.service.js';
import { SYSTEM, userActor } from '../../src/events/types.js';
import { newId, writeSet, type Row } from '../../src/writes/set-write.js';
import { createAccount, createUser, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const ok = async (p: Promise<{ errors?: unknown[]; data: any }>) => {
  const r = await p;
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data;
};

const eventsOf = (accountId: string) => t.db.event.findMany({ where: { accountId }, orderBy: { occurredAt: 'asc' } });

describe('the outbox', () => {
  it('1,000 writes of mixed types from 20 concurrent clients (creates, updates, deletes) leave exactly 1,000 events', async () => {
    const account = await createAccount(t);
    const clients: TestUser[] = await Promise.all(Array.from({ length: 20 }, () => createUser(t)));
    await t.db.teamMember.createMany({ data: clients.map((u) => ({ accountId: account.id, userId: u.id })) });
    const accountId = account.id;
    const gql = async (as: TestUser, doc: string, vars: Record<string, unknown>) => Object.values(await ok(t.gql(doc, vars, { as })))[0] as { id: string };
    // One round is 10 writes: each kind created, then updated or deleted (REST and GraphQL).
    const round = async (as: TestUser) => {
      const contact = await t.rest('POST', '/api/v1/contacts', { as, body: { account_id: accountId, first_name: unique('C') } });
      expect(contact.status).toBe(201);
      const patched = await t.rest('PATCH', `/api/v1/contacts/${contact.body.data.id}`, { as, body: { company: unique('Co') } });
      expect(patched.status).toBe(200);
      const deal = await gql(as, 'mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId, title: unique('D') } });
      await gql(as, 'mutation ($id: ID!) { updateDeal(id: $id, input: { value: 99 }) { id } }', { id: deal.id });
      const invoice = await gql(as, 'mutation ($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }', { i: { accountId, amount: 10, dueDate: '2031-01-01' } });
      await gql(as, 'mutation ($id: ID!) { updateInvoice(id: $id, input: { amount: 11 }) { id } }', { id: invoice.id });
      const proposal = await gql(as, 'mutation ($i: CreateProposalInput!) { createProposal(input: $i) { id } }', { i: { accountId, title: unique('P') } });
      await gql(as, 'mutation ($id: ID!) { deleteProposal(id: $id) { id } }', { id: proposal.id });
      const workflow = await gql(as, 'mutation ($i: CreateWorkflowInput!) { createWorkflow(input: $i) { id } }', { i: { accountId, name: unique('W') } });
      await gql(as, 'mutation ($id: ID!) { deleteWorkflow(id: $id) { id } }', { id: workflow.id });
    };
    // 5 rounds per client: 50 writes each, under every per-user limit.
    await Promise.all(clients.map(async (as) => {
      for (let i = 0; i < 5; i++) await round(as);
    }));
    const byType = await t.db.event.groupBy({ by: ['type'], where: { accountId }, _count: true });
    expect(Object.fromEntries(byType.map((g) => [g.type, g._count]))).toEqual({
      'contact.created': 100, 'contact.updated': 100, 'deal.created': 100, 'deal.updated': 100, 'invoice.created': 100,
      'invoice.updated': 100, 'proposal.created': 100, 'proposal.deleted': 100, 'workflow.created': 100, 'workflow.deleted': 100,
    });
    const kept = await Promise.all([t.db.contact.count({ where: { accountId } }), t.db.deal.count({ where: { accountId } }),
      t.db.invoice.count({ where: { accountId } }), t.db.proposal.count({ where: { accountId } }), t.db.workflow.count({ where: { accountId } })]);
    expect(kept).toEqual([100, 100, 100, 0, 0]);
    const updated = await t.db.event.findFirst({ where: { accountId, type: 'deal.updated' } });
    expect(updated!.data).toMatchObject({ object: { value: 99 }, previous: { value: 0 } });
    // A ceiling against a hang, not a speed bound: the 1,000 writes take about 10 s on a quiet
    // machine and took over 120 s beside a second copy of the suite on two cores.
  }, 600_000);

  it('a rolled-back write leaves no event (and no record)', async () => {
    const account = await createAccount(t);
    const firstName = unique('Rolled');
    await expect(t.db.$transaction(async (tx) => {
      await createContactRow(tx, createContactInput.parse({ accountId: account.id, firstName }), userActor(account.owner));
      throw new Error('the rest of the change failed');
    })).rejects.toThrow('the rest of the change failed');
    expect(await t.db.contact.count({ where: { firstName } })).toBe(0);
    expect(await eventsOf(account.id)).toEqual([]);
  });

  it('a refused write (a taken invoice number) leaves no event', async () => {
    const account = await createAccount(t);
    const input = { accountId: account.id, amount: 5, dueDate: '2031-01-01', invoiceNumber: 'X-1' };
    await ok(t.gql('mutation ($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }', { i: input }, { as: account.owner }));
    const again = await t.gql('mutation ($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }', { i: input }, { as: account.owner });
    expect(again.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await eventsOf(account.id)).map((e) => e.type)).toEqual(['invoice.created']);
  });
});

describe('the envelope', () => {
  it('data.object is the record as REST shows it; a status change carries previous', async () => {
    const deal = (await ok(t.gql('mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }',
      { i: { accountId: acc.id, title: 'Envelope', value: 12.5, expectedCloseDate: '2031-02-03' } }, { as: acc.member }))).createDeal;
    await ok(t.gql('mutation ($id: ID!) { setDealStatus(id: $id, status: won) { id } }', { id: deal.id }, { as: acc.member }));
    const [created, moved] = await t.db.event.findMany({ where: { accountId: acc.id, subjectId: deal.id }, orderBy: { occurredAt: 'asc' } });
    expect(created).toMatchObject({ type: 'deal.created', actorType: 'user', actorId: acc.member.id });
    expect((created!.data as any).object).toMatchObject({ id: deal.id, title: 'Envelope', value: 12.5, status: 'open', expected_close_date: '2031-02-03' });
    expect((created!.data as any).previous).toBeUndefined();
    expect(moved).toMatchObject({ type: 'deal.status_changed' });
    expect((moved!.data as any)).toMatchObject({ object: { status: 'won' }, previous: { status: 'open' } });
  });

  it('a form submit is a visitor: contact.created then form.submitted, without the client address', async () => {
    const form = (await ok(t.gql('mutation ($i: CreateLeadFormInput!) { createLeadForm(input: $i) { id } }', {
      i: { accountId: acc.id, name: 'Ev', fields: [{ key: 'email', label: 'E', type: 'email', required: true, mapsTo: 'email' }] },
    }, { as: acc.owner }))).createLeadForm;
    const r = await t.rest('POST', `/api/v1/forms/${form.id}/submit`, { body: { data: { email: `${unique('v')}@example.com` } } });
    expect(r.status).toBe(200);
    const events = await t.db.event.findMany({ where: { accountId: acc.id, actorType: 'visitor' }, orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] });
    expect(events.map((e) => e.type)).toEqual(['contact.created', 'form.submitted']);
    expect(events[1]!.contactId).toBe(events[0]!.subjectId);
    expect(Object.keys((events[1]!.data as any).object)).not.toContain('client_ip');
  });
});

describe("an event's times", () => {
  it('a set-write event shows created_at and updated_at as the row stored them, not the earlier stamp the service took', async () => {
    // Stamped two seconds before its statement: the stamps trigger moves such a stamp to the
    // transaction's start (docs/rest.md#following-changes), and the event must show the moved one.
    const earlier = new Date(Date.now() - 2_000);
    const actor = userActor(acc.member);
    const id = newId();
    const row = contactBatch.newRow({ accountId: acc.id, firstName: 'Stamped', contactType: 'lead', source: 'other' }, id, earlier);
    await writeSet(t.db, contactBatch.spec, actor, [row], []);
    const stored = await t.db.contact.findUniqueOrThrow({ where: { id } });
    expect(stored.createdAt.getTime()).toBeGreaterThan(earlier.getTime());
    await writeSet(t.db, contactBatch.spec, actor, [], [{ row: { ...stored, lastName: 'Again', updatedAt: earlier } as Row, previous: { lastName: null } }]);
    const updated = await t.db.contact.findUniqueOrThrow({ where: { id } });
    expect(updated.updatedAt.getTime()).toBeGreaterThan(earlier.getTime());
    const events = await t.db.event.findMany({ where: { accountId: acc.id, subjectId: id }, orderBy: { occurredAt: 'asc' } });
    expect(events.map((e) => [e.type, (e.data as any).object.created_at, (e.data as any).object.updated_at])).toEqual([
      ['contact.created', stored.createdAt.toISOString(), stored.updatedAt.toISOString()],
      ['contact.updated', stored.createdAt.toISOString(), updated.updatedAt.toISOString()],
    ]);
  });

  it("a form submission's new contact and its submission: their events show the times the rows were stored with, whatever the service's clock", async () => {
    // The service's clock two seconds behind the database's: the rows take the database's stamps.
    const form = await t.db.leadForm.create({ data: { accountId: acc.id, name: unique('Form') } });
    const email = `${unique('visitor')}@example.com`.toLowerCase();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 2_000);
    let contactId: string;
    try {
      contactId = await recordSubmission(t.db, form, { values: { email }, contact: { email }, referrer: null, page: null }, { clientIp: '127.0.0.1', userAgent: null });
    } finally {
      vi.useRealTimers();
    }
    const contact = await t.db.contact.findUniqueOrThrow({ where: { id: contactId } });
    const submission = await t.db.formSubmission.findFirstOrThrow({ where: { accountId: acc.id, contactId } });
    const events = await t.db.event.findMany({ where: { accountId: acc.id, subjectId: { in: [contactId, submission.id] } }, orderBy: { type: 'asc' } });
    expect(events.map((e) => [e.type, (e.data as any).object.created_at, (e.data as any).object.updated_at])).toEqual([
      ['contact.created', contact.createdAt.toISOString(), contact.updatedAt.toISOString()],
      ['form.submitted', submission.createdAt.toISOString(), submission.updatedAt.toISOString()],
    ]);
  });
});

describe('Account.events and Contact.timeline', () => {
  it('lists newest first with keyset cursors and filters', async () => {
    const account = await createAccount(t);
    const contact = (await ok(t.gql('mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }',
      { i: { accountId: account.id, firstName: 'Tim' } }, { as: account.owner }))).createContact;
    for (let i = 0; i < 3; i++) {
      await ok(t.gql('mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId: account.id, title: `D${i}`, contactId: contact.id } }, { as: account.owner }));
    }
    await ok(t.gql('mutation ($i: CreateWorkflowInput!) { createWorkflow(input: $i) { id } }', { i: { accountId: account.id, name: 'W' } }, { as: account.owner }));
    const Q = `query ($id: ID!, $after: String, $filter: EventFilter) { account(id: $id) { events(first: 2, after: $after, filter: $filter) {
      nodes { type subjectId actor { type id } data } pageInfo { hasNextPage endCursor } } } }`;
    const p1 = (await ok(t.gql(Q, { id: account.id }, { as: account.member }))).account.events;
    expect(p1.nodes.map((n: any) => n.type)).toEqual(['workflow.created', 'deal.created']);
    expect(p1.nodes[0].actor).toEqual({ type: 'user', id: account.owner.id });
    const p2 = (await ok(t.gql(Q, { id: account.id, after: p1.pageInfo.endCursor }, { as: account.member }))).account.events;
    const p3 = (await ok(t.gql(Q, { id: account.id, after: p2.pageInfo.endCursor }, { as: account.member }))).account.events;
    expect([...p2.nodes, ...p3.nodes].map((n: any) => n.type)).toEqual(['deal.created', 'deal.created', 'contact.created']);
    expect(p3.pageInfo.hasNextPage).toBe(false);
    const filtered = (await ok(t.gql(Q, { id: account.id, filter: { types: ['contact.created'], subjectId: contact.id } }, { as: account.member }))).account.events;
    expect(filtered.nodes).toHaveLength(1);
    const timeline = await ok(t.gql(`query ($id: ID!) { contacts(accountId: $id) { nodes { id timeline(first: 10) { nodes { type data } } } } }`, { id: account.id }, { as: account.member }));
    expect(timeline.contacts.nodes[0].timeline.nodes.map((n: any) => n.type)).toEqual(['deal.created', 'deal.created', 'deal.created', 'contact.created']);
  });

  it('a cursor from elsewhere is a 400 on after', async () => {
    const r = await t.gql('query ($id: ID!) { account(id: $id) { events(after: "nope") { nodes { id } } } }', { id: acc.id }, { as: acc.member });
    expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { after: ['Not a cursor of this list'] } });
  });
});

describe('retention', () => {
  it('events and delivery logs older than EVENT_RETENTION_DAYS are purged in bounded batches; newer ones stay', async () => {
    const { purge } = await import('../../src/events/worker.js');
    const account = await createAccount(t);
    const old = new Date(Date.now() - 91 * 24 * 3600_000);
    await t.db.event.createMany({ data: Array.from({ length: 5 }, () => ({ accountId: account.id, type: 'contact.created', actorType: 'system', occurredAt: old, data: {} })) });
    await t.db.event.create({ data: { accountId: account.id, type: 'deal.created', actorType: 'system', data: {} } });
    const removed = await purge(t.db, 90, 2); // 2 a batch: three batches for five rows
    expect(removed).toBeGreaterThanOrEqual(5);
    expect((await eventsOf(account.id)).map((e) => e.type)).toEqual(['deal.created']);
  });
});

describe('the relay', () => {
  it('hands each committed event to live subscribers once, however many instances relay at once, and never rewrites the event', async () => {
    const { relay } = await import('../../src/events/worker.js');
    const { emitMany } = await import('../../src/events/emit.js');
    const account = await createAccount(t);
    const actor = userActor(account.owner);
    const inputs = Array.from({ length: 120 }, (_, i) => ({ type: 'workflow.created' as const, accountId: account.id, actor, object: { id: crypto.randomUUID(), name: `W${i}` } }));
    const ids = await t.db.$transaction((tx) => emitMany(tx, inputs));
    const versions = () => t.db.$queryRaw<{ id: string; version: string }[]>`SELECT id::text, xmin::text AS version FROM events WHERE account_id = ${account.id}::uuid ORDER BY id`;
    const written = await versions();
    const published: string[] = [];
    const bus = { publish: (_topic: string, accountId: string, text: string) => accountId === account.id && published.push((JSON.parse(text) as Envelope).id) };
    const live = { bus: bus as never, listened: async () => [account.id] };
    // Four instances, small batches so that their claims interleave, each until it finds nothing.
    await Promise.all(Array.from({ length: 4 }, async () => {
      while ((await relay(t.db, live, 7)) > 0);
    }));
    expect(published.toSorted()).toEqual(ids.toSorted());
    expect(await t.db.eventQueue.count({ where: { accountId: account.id } })).toBe(0);
    expect(await versions(), 'each event row is the version its write committed').toEqual(written);
  });

  it('hands on, oldest first, the same envelope webhooks send, as PostgreSQL writes it', async () => {
    const { relay } = await import('../../src/events/worker.js');
    const { emitMany } = await import('../../src/events/emit.js');
    const account = await createAccount(t);
    // A system actor (id null), a user, quotes and non-ASCII text, nested data.
    const inputs = [SYSTEM, userActor(account.owner)].map((actor, i) => ({
      type: 'workflow.created' as const, accountId: account.id, actor, object: { id: crypto.randomUUID(), name: `"Zoë" ${i}`, steps: [{ at: 1.5 }] },
    }));
    await t.db.$transaction((tx) => emitMany(tx, inputs));
    const published: Envelope[] = [];
    const bus = { publish: (_topic: string, accountId: string, text: string) => accountId === account.id && published.push(JSON.parse(text)) };
    while ((await relay(t.db, { bus: bus as never, listened: async () => [account.id] })) > 0);
    const stored = await t.db.event.findMany({ where: { accountId: account.id }, orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] });
    expect(published).toEqual(stored.map((e) => JSON.parse(JSON.stringify(envelope(e)))));
  });

  it('takes the events of accounts nobody listens to off the queue without publishing them', async () => {
    const { relay } = await import('../../src/events/worker.js');
    const { emitMany } = await import('../../src/events/emit.js');
    const [heard, unheard] = [await createAccount(t), await createAccount(t)];
    const inputs = [heard, unheard, heard].map((a, i) => ({ type: 'workflow.created' as const, accountId: a.id, actor: SYSTEM, object: { id: crypto.randomUUID(), name: `W${i}` } }));
    await t.db.$transaction((tx) => emitMany(tx, inputs));
    const published: string[] = [];
    const bus = { publish: (_topic: string, accountId: string) => [heard.id, unheard.id].includes(accountId) && published.push(accountId) };
    while ((await relay(t.db, { bus: bus as never, listened: async () => [heard.id, crypto.randomUUID()] })) > 0);
    expect(published).toEqual([heard.id, heard.id]);
    expect(await t.db.eventQueue.count({ where: { accountId: { in: [heard.id, unheard.id] } } })).toBe(0);
  });
});

describe("the queue's VACUUM", () => {
  it('the relay vacuums the queue once it has taken VACUUM_QUEUE_EVERY events since the last time, not before, without an error', async () => {
    const { tidyQueue, VACUUM_QUEUE_EVERY } = await import('../../src/events/worker.js');
    const vacuums = async () => (await t.db.$queryRaw<{ n: number }[]>`
      SELECT (vacuum_count + autovacuum_count)::int AS n FROM pg_stat_user_tables WHERE relname = 'event_queue'`)[0]?.n ?? 0;
    // The statistics reach pg_stat_user_tables within a second or so of the VACUUM.
    const settled = async (previous: number) => {
      for (let i = 0; i < 200 && (await vacuums()) === previous; i++) {
        await t.db.$executeRaw`SELECT pg_stat_clear_snapshot()`;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return vacuums();
    };
    const warned: unknown[] = [];
    const tidy = tidyQueue(t.db, { warn: (...args: unknown[]) => warned.push(args) } as never);
    const before = await vacuums();
    await tidy(VACUUM_QUEUE_EVERY - 1);
    await t.db.$executeRaw`SELECT pg_stat_clear_snapshot()`;
    expect(await vacuums()).toBe(before);
    await tidy(1);
    expect(await settled(before)).toBe(before + 1);
    expect(warned).toEqual([]);
  });
});

describe('erasure', () => {
  it("scrubContactFromEvents leaves the person's earlier events with ids only", async () => {
    const { scrubContactFromEvents } = await import('../../src/contacts/erase.js');
    const account = await createAccount(t);
    const contact = (await ok(t.gql('mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }',
      { i: { accountId: account.id, firstName: 'Erin', email: 'erin@example.com' } }, { as: account.owner }))).createContact;
    await ok(t.gql('mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId: account.id, title: 'Erin deal', contactId: contact.id } }, { as: account.owner }));
    expect(await t.db.$transaction((tx) => scrubContactFromEvents(tx, account.id, { id: contact.id, email: 'erin@example.com' }, []))).toBe(2);
    const events = await eventsOf(account.id);
    expect(JSON.stringify(events.map((e) => e.data))).not.toMatch(/Erin|erin@example/);
    expect(events.map((e) => (e.data as any).object.id)).toContain(contact.id);
    // No relay runs here: the copies wait in the relay's queue, and are scrubbed alike.
    const queued = await t.db.eventQueue.findMany({ where: { accountId: account.id } });
    expect(queued.map((e) => e.eventId).toSorted()).toEqual(events.map((e) => e.id).toSorted());
    expect(JSON.stringify(queued.map((e) => e.data))).not.toMatch(/Erin|erin@example/);
  });
});
