/**
 * Load with nothing lost (docs/decisions.md §5: "Concurrent submissions with the same new e-mail create
 * exactly one contact", "Nothing is lost when two arrive at once"). Many requests at once over real
 * HTTP, bounded to a fixed number in flight so it runs on a small machine, on PGlite and PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lockKey } from '../../src/writes/batch.service.js';
import type { Prisma } from '../../src/generated/prisma/client.js';
import { createAccount, createContact, createUser, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

const IN_FLIGHT = 50;
const LOAD_TIMEOUT = 600_000;

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

/** Runs `task(0..count-1)` with at most `limit` running at once; results in index order. */
async function bounded<T>(count: number, limit: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  let running = 0;
  let peak = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      peak = Math.max(peak, ++running);
      try {
        results[i] = await task(i);
      } finally {
        running--;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  expect(peak).toBeLessThanOrEqual(limit);
  return results;
}

/** A distinct client address per request (the harness trusts one X-Forwarded-For hop). */
const ipOf = (i: number) => `10.${Math.floor(i / 62_500) % 250}.${Math.floor(i / 250) % 250}.${(i % 250) + 1}`;

/** `n` team members of the account, so per-user rate limits are not what the test measures. */
async function members(acc: TestAccount, n: number): Promise<TestUser[]> {
  const users = await Promise.all(Array.from({ length: n }, () => createUser(t)));
  await t.db.teamMember.createMany({ data: users.map((u) => ({ accountId: acc.id, userId: u.id })) });
  return users;
}

describe('1,000 concurrent form submissions from distinct client IPs with 100 distinct e-mails', () => {
  const SUBMISSIONS = 1_000;
  const EMAILS = 100;
  let acc: TestAccount;
  let formId: string;
  let answers: { status: number; body: any; email: string }[];
  const tag = unique('load');
  // The ten submissions of one e-mail are neighbours, so they are in flight together; one in ten
  // writes the address in capitals (e-mails compare case-insensitively).
  const emailOf = (i: number) => {
    const email = `lead-${Math.floor(i / (SUBMISSIONS / EMAILS))}-${tag}@example.com`;
    return i % 10 === 3 ? email.toUpperCase() : email;
  };

  beforeAll(async () => {
    acc = await createAccount(t);
    formId = (
      await t.db.leadForm.create({
        data: {
          accountId: acc.id,
          name: 'Load',
          fields: {
            create: [
              { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 },
              { key: 'name', label: 'Name', type: 'text', mapsTo: 'first_name', position: 1 },
            ],
          },
        },
      })
    ).id;
    answers = await bounded(SUBMISSIONS, IN_FLIGHT, async (i) => {
      const r = await t.rest('POST', `/api/v1/forms/${formId}/submit`, {
        body: { data: { email: emailOf(i), name: `Visitor ${i}` }, metadata: { page: `/load/${i}` } },
        clientIp: ipOf(i),
      });
      return { status: r.status, body: r.body, email: emailOf(i).toLowerCase() };
    });
  }, LOAD_TIMEOUT);

  it('every submission is answered 200', () => {
    const statuses = answers.reduce<Record<number, number>>((n, a) => ({ ...n, [a.status]: (n[a.status] ?? 0) + 1 }), {});
    expect(statuses).toEqual({ 200: SUBMISSIONS });
  });

  it('exactly 100 contacts exist: one per e-mail, whatever its letter case', async () => {
    expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(EMAILS);
    const rows = await t.db.contact.findMany({ where: { accountId: acc.id }, select: { email: true } });
    expect(new Set(rows.map((r) => r.email!.toLowerCase())).size).toBe(EMAILS);
  });

  it('exactly 1,000 submissions are recorded, each with its own page and client IP', async () => {
    const rows = await t.db.formSubmission.findMany({ where: { formId }, select: { page: true, clientIp: true, contactId: true, isSpam: true } });
    expect(rows).toHaveLength(SUBMISSIONS);
    expect(new Set(rows.map((r) => r.page)).size).toBe(SUBMISSIONS);
    expect(new Set(rows.map((r) => r.clientIp)).size).toBe(SUBMISSIONS);
    expect(rows.every((r) => r.contactId !== null && !r.isSpam)).toBe(true);
  });

  it('all answers for one e-mail name the same contact, and it holds that e-mail', async () => {
    const byEmail = new Map<string, Set<string>>();
    for (const a of answers) byEmail.set(a.email, (byEmail.get(a.email) ?? new Set()).add(a.body.contact_id));
    expect(byEmail.size).toBe(EMAILS);
    for (const [email, ids] of byEmail) {
      expect(ids.size, email).toBe(1);
      const contact = await t.db.contact.findUniqueOrThrow({ where: { id: [...ids][0]! } });
      expect(contact.email!.toLowerCase()).toBe(email);
      expect(await t.db.formSubmission.count({ where: { contactId: contact.id } })).toBe(SUBMISSIONS / EMAILS);
    }
  });
});

// PostgreSQL only: the embedded database has one connection, which every request takes in turn.
describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('writes that would wait on one lock wait in the instance, holding no pooled connection', () => {
  /** Backends of this database waiting for a lock (an advisory lock, a row). */
  const lockWaiters = async () =>
    (await t.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0]!.n;

  /** Takes a lock in a transaction of our own (one of the test pool's five connections) and keeps it until released. */
  async function hold(lock: (tx: Prisma.TransactionClient) => Promise<unknown>) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const done = t.db.$transaction(async (tx) => {
      await lock(tx);
      holding();
      await released;
    }, { timeout: LOAD_TIMEOUT });
    await held;
    return () => (release(), done);
  }

  /** Ten requests blocked behind the lock; then another that needs a connection must be answered meanwhile. `lines`: connections the ten may hold. */
  async function tenBlockedThenAnother<T>(blocked: () => Promise<T>, another: () => Promise<void>, lines = 1): Promise<() => Promise<T[]>> {
    const ten = Array.from({ length: 10 }, blocked);
    await vi.waitFor(async () => expect(await lockWaiters()).toBe(lines), { timeout: LOAD_TIMEOUT, interval: 20 });
    // Were the ten each holding a connection while they wait, the pool would be spent and this a 503.
    await another();
    expect(await lockWaiters()).toBe(lines);
    return () => Promise.all(ten);
  }

  it("ten submissions of one e-mail blocked on its lock hold one connection: another e-mail's submission is answered meanwhile", async () => {
    const acc = await createAccount(t);
    const form = await t.db.leadForm.create({
      data: { accountId: acc.id, name: 'Hot', fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 }] } },
    });
    const hot = `${unique('hot')}@example.com`;
    let ip = 0;
    const submit = (email: string) =>
      t.rest('POST', `/api/v1/forms/${form.id}/submit`, { body: { data: { email } }, clientIp: `10.77.0.${++ip}` });

    const release = await hold((tx) => tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${lockKey(acc.id, 'contacts', 'email', hot)}::text, 0))`);
    const rest = await tenBlockedThenAnother(
      () => submit(hot),
      async () => expect((await submit(`${unique('cold')}@example.com`)).status).toBe(200),
    );
    await release();
    const answers = await rest();
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((a) => a.body.contact_id)).size).toBe(1);
    expect(await t.db.contact.count({ where: { accountId: acc.id, email: hot } })).toBe(1);
  }, LOAD_TIMEOUT);

  it("ten invoices of one account blocked on its next number hold two connections (its two lines): another account's invoice is created meanwhile", async () => {
    const [acc, other] = [await createAccount(t), await createAccount(t)];
    const create = (owner: TestAccount) =>
      t.gql('mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { invoiceNumber } }', { input: { accountId: owner.id, amount: 10, dueDate: '2030-01-31' } }, { as: owner.owner });

    const release = await hold((tx) => tx.$queryRaw`SELECT id FROM accounts WHERE id = ${acc.id}::uuid FOR UPDATE`);
    const rest = await tenBlockedThenAnother(
      () => create(acc),
      async () => expect((await create(other)).errors).toBeUndefined(),
      2,
    );
    await release();
    const answers = await rest();
    expect(answers.flatMap((a) => a.errors ?? [])).toEqual([]);
    expect(answers.map((a) => a.data.createInvoice.invoiceNumber).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
  }, LOAD_TIMEOUT);

  it("ten edits of one contact blocked on its row hold one connection: another contact's edit is answered meanwhile", async () => {
    const acc = await createAccount(t);
    const [hot, cold] = [await createContact(t, acc), await createContact(t, acc)];
    let n = 0;
    const edit = (id: string) =>
      t.gql('mutation ($id: ID!, $input: UpdateContactInput!) { updateContact(id: $id, input: $input) { company } }', { id, input: { company: `Edit ${++n}` } }, { as: acc.owner });

    const release = await hold((tx) => tx.$queryRaw`SELECT id FROM contacts WHERE id = ${hot.id}::uuid FOR UPDATE`);
    const rest = await tenBlockedThenAnother(
      () => edit(hot.id),
      async () => expect((await edit(cold.id)).errors).toBeUndefined(),
    );
    await release();
    const answers = await rest();
    expect(answers.flatMap((a) => a.errors ?? [])).toEqual([]);
    expect(await t.db.event.count({ where: { accountId: acc.id, type: 'contact.updated', subjectId: hot.id } })).toBe(10);
  }, LOAD_TIMEOUT);
});

describe('concurrent creates through REST lose and duplicate nothing', () => {
  const EACH = 200;
  const USERS = 10; // 20 creates of each kind per user: inside the 30 per minute per user

  it(`${EACH} contacts and ${EACH} deals by ${USERS} users at once: every one created exactly once`, async () => {
    const acc = await createAccount(t);
    const users = await members(acc, USERS);
    const tag = unique('burst');
    const results = await bounded(EACH * 2, IN_FLIGHT, async (i) => {
      const as = users[Math.floor(i / 2) % USERS]!;
      const n = Math.floor(i / 2);
      return i % 2 === 0
        ? t.rest('POST', '/api/v1/contacts', { as, body: { account_id: acc.id, first_name: `C${n}`, last_name: tag } })
        : t.rest('POST', '/api/v1/deals', { as, body: { account_id: acc.id, title: `D${n} ${tag}`, value: n } });
    });
    expect(results.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.text}`)).toEqual([]);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(EACH * 2);

    const contacts = await t.db.contact.findMany({ where: { accountId: acc.id, lastName: tag }, select: { firstName: true } });
    expect(contacts.map((c) => c.firstName).sort()).toEqual(Array.from({ length: EACH }, (_, n) => `C${n}`).sort());
    const deals = await t.db.deal.findMany({ where: { accountId: acc.id }, select: { title: true, value: true } });
    expect(deals).toHaveLength(EACH);
    expect(deals.map((d) => d.title).sort()).toEqual(Array.from({ length: EACH }, (_, n) => `D${n} ${tag}`).sort());
    expect(deals.reduce((sum, d) => sum + d.value.toNumber(), 0)).toBe((EACH * (EACH - 1)) / 2);

    // The lists agree with the table: every record once, none twice across pages.
    const listed = new Set<string>();
    for (let page = 1; page <= 3; page++) {
      const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&page=${page}&page_size=100`, { as: users[0] });
      expect(r.body.total).toBe(EACH);
      for (const c of r.body.data) listed.add(c.id);
    }
    expect(listed.size).toBe(EACH);
  }, LOAD_TIMEOUT);

  it('retries under load write once: 10 users each send one create 10 times at once with one Idempotency-Key', async () => {
    const acc = await createAccount(t);
    const users = await members(acc, 10);
    const keys = users.map(() => randomUUID());
    const results = await bounded(100, IN_FLIGHT, (i) =>
      t.rest('POST', '/api/v1/contacts', {
        as: users[i % 10],
        body: { account_id: acc.id, first_name: `Retry ${i % 10}` },
        headers: { 'idempotency-key': keys[i % 10]! },
      }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(100).fill(201));
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(10);
    expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(10);
  }, LOAD_TIMEOUT);

  it('100 invoices created at once get 100 distinct numbers INV-000001 to INV-000100, no gap, no duplicate', async () => {
    const acc = await createAccount(t);
    const users = await members(acc, 10); // createInvoice counts 30 a minute per user
    const results = await bounded(100, IN_FLIGHT, (i) =>
      t.gql(
        'mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { invoiceNumber } }',
        { input: { accountId: acc.id, amount: 10, dueDate: '2030-01-31' } },
        { as: users[i % 10] },
      ),
    );
    expect(results.flatMap((r) => r.errors ?? [])).toEqual([]);
    const numbers = results.map((r) => r.data.createInvoice.invoiceNumber as string).sort();
    expect(numbers).toEqual(Array.from({ length: 100 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
  }, LOAD_TIMEOUT);
});
