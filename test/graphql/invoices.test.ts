import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { InvoiceStatus } from '../../src/generated/prisma/enums.js';
import { createAccount, createContact, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, type GqlResult, type TestApp, type TestUser, errorOf } from '../helpers/app.js';

const CREATE = /* GraphQL */ `
  mutation CreateInvoice($input: CreateInvoiceInput!) {
    createInvoice(input: $input) {
      id accountId invoiceNumber amount status dueDate createdAt updatedAt
      contact { id firstName lastName }
    }
  }
`;
const LIST = /* GraphQL */ `
  query Invoices($accountId: ID!, $page: Int, $pageSize: Int, $status: InvoiceStatus) {
    invoices(accountId: $accountId, page: $page, pageSize: $pageSize, status: $status) {
      total page pageSize
      nodes { id invoiceNumber amount status dueDate contact { id } }
    }
  }
`;
const SET_STATUS = /* GraphQL */ `
  mutation SetInvoiceStatus($id: ID!, $status: InvoiceStatus!) {
    setInvoiceStatus(id: $id, status: $status) { id status updatedAt }
  }
`;

let t: TestApp;
let acc: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
});
afterAll(() => t?.close());

const expectCode = (result: GqlResult, code: string) => expect(errorOf(result).extensions?.code).toBe(code);
const expectDetails = (result: GqlResult, details: Record<string, string[]>) => {
  const error = errorOf(result);
  expect(error.extensions?.code).toBe('BAD_USER_INPUT');
  expect(error.extensions?.details).toEqual(details);
};

const DUE = '2025-03-31';
const create = (account: TestAccount, input: Record<string, unknown>, as: TestUser | null = account.owner) =>
  t.gql(CREATE, { input: { accountId: account.id, amount: 100, dueDate: DUE, ...input } }, { as });
const numberOf = (result: GqlResult): string => {
  expect(result.errors).toBeUndefined();
  return result.data.createInvoice.invoiceNumber;
};

let seeded = 0;
const invoiceRow = (account: { id: string }, data: { status?: InvoiceStatus; invoiceNumber?: string; [k: string]: unknown } = {}) =>
  t.db.invoice.create({
    data: { accountId: account.id, invoiceNumber: `SEED-${++seeded}`, amount: 10, dueDate: new Date('2025-01-31'), ...data },
  });

/** On PostgreSQL, waits until another session blocks on a lock; PGlite (one connection) just yields. */
async function untilSomeoneWaitsForALock() {
  for (let i = 0; i < 100; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (t.deps.db.kind !== 'postgres') return;
    const [row] = await t.db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if (row && row.n > 0) return;
  }
  throw new Error('nobody waited for the lock');
}

describe('Mutation.createInvoice', () => {
  test('a new invoice is a draft numbered INV-000001, then INV-000002, per account', async () => {
    const fresh = await createAccount(t);
    const first = await create(fresh, { amount: 1500.5, dueDate: '2024-02-29' });
    expect(first.errors).toBeUndefined();
    expect(first.data.createInvoice).toMatchObject({
      accountId: fresh.id,
      invoiceNumber: 'INV-000001',
      amount: 1500.5,
      status: 'draft',
      dueDate: '2024-02-29',
      contact: null,
    });
    expect(numberOf(await create(fresh, {}, fresh.member))).toBe('INV-000002');
    // Another account counts on its own.
    expect(numberOf(await create(await createAccount(t), {}))).toBe('INV-000001');
  });

  test('a given invoice number is trimmed and kept', async () => {
    expect(numberOf(await create(acc, { invoiceNumber: '  2025/0042  ' }))).toBe('2025/0042');
  });

  test('an invoice number already used in the account is refused; another account may reuse it', async () => {
    await create(acc, { invoiceNumber: 'DUP-1' });
    expectDetails(await create(acc, { invoiceNumber: 'DUP-1' }, acc.member), { invoiceNumber: ['Already used in this account'] });
    expect(numberOf(await create(other, { invoiceNumber: 'DUP-1' }))).toBe('DUP-1');
    expect(await t.db.invoice.count({ where: { accountId: acc.id, invoiceNumber: 'DUP-1' } })).toBe(1);
  });

  test('an invoice number over 50 characters is refused; a blank one is assigned', async () => {
    expectDetails(await create(acc, { invoiceNumber: 'n'.repeat(51) }), { invoiceNumber: ['Must be at most 50 characters'] });
    const fresh = await createAccount(t);
    expect(numberOf(await create(fresh, { invoiceNumber: '   ' }))).toBe('INV-000001');
  });

  test('assigned numbers skip numbers already taken by hand', async () => {
    const fresh = await createAccount(t);
    await create(fresh, { invoiceNumber: 'INV-000001' });
    await create(fresh, { invoiceNumber: 'INV-000002' });
    await create(fresh, { invoiceNumber: 'INV-000004' });
    expect(numberOf(await create(fresh, {}))).toBe('INV-000003');
    expect(numberOf(await create(fresh, {}))).toBe('INV-000005');
  });

  test('a long run of numbers taken by hand is skipped in one go', async () => {
    const fresh = await createAccount(t);
    await t.db.invoice.createMany({
      data: Array.from({ length: 250 }, (_, i) => ({
        accountId: fresh.id,
        invoiceNumber: `INV-${String(i + 1).padStart(6, '0')}`,
        amount: 1,
        dueDate: new Date('2025-01-01'),
      })),
    });
    expect(numberOf(await create(fresh, {}))).toBe('INV-000251');
    expect((await t.db.account.findUniqueOrThrow({ where: { id: fresh.id } })).nextInvoiceNumber).toBe(252);
  });

  test('concurrent creates without a number all get distinct, consecutive numbers', async () => {
    const fresh = await createAccount(t);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => create(fresh, { amount: i + 1 }, i % 2 ? fresh.owner : fresh.member)),
    );
    const numbers = results.map(numberOf).sort();
    expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
  });

  test('concurrent creates with and without numbers never collide', async () => {
    const fresh = await createAccount(t);
    const manual = ['INV-000002', 'INV-000003', 'INV-000005'];
    const results = await Promise.all([
      ...manual.map((invoiceNumber) => create(fresh, { invoiceNumber })),
      ...Array.from({ length: 6 }, () => create(fresh, {}, fresh.member)),
    ]);
    // Every automatic create gets a number. A hand-made number an automatic one took first is refused
    // as taken (a 400 on invoiceNumber), never duplicated; which of the two wins is timing.
    const automatic = results.slice(manual.length).map(numberOf);
    const byHand = results.slice(0, manual.length).map((r, i) => {
      if (!r.errors) return numberOf(r);
      expectDetails(r, { invoiceNumber: ['Already used in this account'] });
      expect(automatic).toContain(manual[i]);
      return null;
    });
    const numbers = [...automatic, ...byHand.filter((n): n is string => n !== null)];
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  test('an assigned number that loses a race to a hand-made one is retried with the next number', async () => {
    const fresh = await createAccount(t);
    let pending: Promise<GqlResult> | undefined;
    // The hand-made INV-000001 is inserted but not yet committed while the automatic create runs.
    await t.db.$transaction(async (tx) => {
      await tx.invoice.create({ data: { accountId: fresh.id, invoiceNumber: 'INV-000001', amount: 1, dueDate: new Date('2025-01-01') } });
      pending = create(fresh, {});
      await untilSomeoneWaitsForALock();
    });
    expect(numberOf(await pending!)).toBe('INV-000002');
  });

  test('a new invoice may only be a draft', async () => {
    expect((await create(acc, { status: 'draft' })).data.createInvoice.status).toBe('draft');
    expectDetails(await create(acc, { status: 'paid' }), { status: ['A new invoice must be draft; use setInvoiceStatus to move it on'] });
  });

  test('amount has at most the currency\'s decimals (two in USD) and lies from 0 to 9999999999.99', async () => {
    expectDetails(await create(acc, { amount: 10.001 }), { amount: ['Must have at most 2 decimals in USD'] });
    expectDetails(await create(acc, { amount: 1e13 }), { amount: ['Must be from 0 to 9999999999.99'] });
    expectDetails(await create(acc, { amount: -0.01 }), { amount: ['Must be from 0 to 9999999999.99'] });
    const result = await create(acc, { amount: 9999999999.99 });
    expect(result.data.createInvoice.amount).toBe(9999999999.99);
    const row = await t.db.invoice.findUniqueOrThrow({ where: { id: result.data.createInvoice.id } });
    expect(row.amount.toFixed(2)).toBe('9999999999.99');
  });

  test('amount (or lines) and dueDate are required; dueDate must be a real date (2025-02-30 is refused)', async () => {
    const missing = await t.gql(CREATE, { input: { accountId: acc.id, dueDate: DUE } }, { as: acc.owner });
    expect(missing.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(Object.values(missing.errors?.[0]?.extensions?.details ?? {}).flat().join('\n')).toContain('Required (or lines)');
    const badDate = await create(acc, { invoiceNumber: 'BAD-DATE', dueDate: '2025-02-30' });
    expect(Object.values(badDate.errors?.[0]?.extensions?.details ?? {}).flat().join('\n')).toContain('Must be a real date in the form YYYY-MM-DD');
    expect(await t.db.invoice.count({ where: { invoiceNumber: 'BAD-DATE' } })).toBe(0);
  });

  test('a contact of the account is linked; one of another account is BAD_USER_INPUT on contactId', async () => {
    const [mine, foreign] = await Promise.all([createContact(t, acc), createContact(t, other)]);
    const linked = await create(acc, { contactId: mine.id });
    expect(linked.data.createInvoice.contact).toEqual({ id: mine.id, firstName: mine.firstName, lastName: mine.lastName });
    expectDetails(await create(acc, { contactId: foreign.id }), { contactId: ['Not found in this account'] });
    expectDetails(await create(acc, { contactId: 'abc' }), { contactId: ['Must be a UUID'] });
    // One answer names every failing field: the foreign contact beside a bad amount.
    expectDetails(await create(acc, { contactId: foreign.id, amount: -1 }), { contactId: ['Not found in this account'], amount: ['Must be from 0 to 9999999999.99'] });
  });

  test('an outsider is FORBIDDEN, a user with no account too, an anonymous caller is UNAUTHENTICATED', async () => {
    expectCode(await create(acc, { invoiceNumber: 'NOPE-1' }, acc.outsider), 'FORBIDDEN');
    expectCode(await create(acc, { invoiceNumber: 'NOPE-2' }, await createUser(t)), 'FORBIDDEN');
    expectCode(await create(acc, { invoiceNumber: 'NOPE-3' }, null), 'UNAUTHENTICATED');
    expect(await t.db.invoice.count({ where: { invoiceNumber: { startsWith: 'NOPE-' } } })).toBe(0);
  });

  test('validation comes before access, and access before the contact check', async () => {
    const foreign = await createContact(t, other);
    expectDetails(await create(acc, { amount: 1.234, currency: 'USD' }, acc.outsider), { amount: ['Must have at most 2 decimals in USD'] });
    // Without a currency, the decimals are the account's default currency's, which only a member may learn (docs/decisions.md §26).
    expectCode(await create(acc, { amount: 1.234 }, acc.outsider), 'FORBIDDEN');
    expectCode(await create(acc, { contactId: foreign.id }, acc.outsider), 'FORBIDDEN');
  });

  test('a failed create does not use up a number', async () => {
    const fresh = await createAccount(t);
    const foreign = await createContact(t, other);
    await create(fresh, { contactId: foreign.id });
    expect(numberOf(await create(fresh, {}))).toBe('INV-000001');
  });
});

describe('Query.invoices', () => {
  let listed: TestAccount;
  let ids: string[];
  let contactId: string;

  beforeAll(async () => {
    listed = await createAccount(t);
    contactId = (await createContact(t, listed)).id;
    const base = Date.UTC(2024, 0, 1);
    const statuses: InvoiceStatus[] = ['draft', 'paid', 'sent', 'paid', 'overdue'];
    ids = [];
    for (const [i, status] of statuses.entries()) {
      const row = await invoiceRow(listed, {
        status,
        amount: 10.5 + i,
        createdAt: new Date(base + i * 60_000),
        ...(i === 4 ? { contactId } : {}),
      });
      ids.push(row.id);
    }
    await invoiceRow(other);
  });

  const list = (vars: Record<string, unknown>, as: TestUser | null = listed.owner) =>
    t.gql(LIST, { accountId: listed.id, ...vars }, { as });
  const idsOf = (result: GqlResult) => result.data.invoices.nodes.map((i: { id: string }) => i.id);

  test('lists newest first with the true total; amounts are numbers and dates YYYY-MM-DD', async () => {
    const result = await list({});
    expect(result.errors).toBeUndefined();
    expect(result.data.invoices).toMatchObject({ total: 5, page: 1, pageSize: 25 });
    expect(idsOf(result)).toEqual([...ids].reverse());
    expect(result.data.invoices.nodes[0]).toMatchObject({ amount: 14.5, dueDate: '2025-01-31', contact: { id: contactId } });
    expect(result.data.invoices.nodes[1].contact).toBeNull();
  });

  test('pages are stable and a page past the end is empty with the true total', async () => {
    const pages = await Promise.all([1, 2, 3, 9].map((page) => list({ page, pageSize: 2 })));
    expect(pages.slice(0, 3).flatMap(idsOf)).toEqual([...ids].reverse());
    expect(pages[3]!.data.invoices).toMatchObject({ nodes: [], total: 5, page: 9 });
  });

  test('status filters the list and the total', async () => {
    const paid = await list({ status: 'paid' });
    expect(paid.data.invoices.total).toBe(2);
    expect(idsOf(paid)).toEqual([ids[3], ids[1]]);
    expect((await list({ status: 'refunded' })).data.invoices).toMatchObject({ total: 0, nodes: [] });
  });

  test('page and pageSize are bounded', async () => {
    expectDetails(await list({ page: 0 }), { page: ['Must be at least 1'] });
    expectDetails(await list({ pageSize: 101 }), { pageSize: ['Must be from 1 to 100'] });
  });

  test('a member lists invoices; an outsider is FORBIDDEN; an anonymous caller is UNAUTHENTICATED', async () => {
    expect((await list({}, listed.member)).data.invoices.total).toBe(5);
    expectCode(await list({}, listed.outsider), 'FORBIDDEN');
    expectCode(await list({}, null), 'UNAUTHENTICATED');
  });

  test('invoices allows 60 calls a minute per user', async () => {
    const fresh = await createAccount(t);
    const calls = await Promise.all(Array.from({ length: 60 }, () => t.gql(LIST, { accountId: fresh.id }, { as: fresh.member })));
    for (const call of calls) expect(call.errors).toBeUndefined();
    expectCode(await t.gql(LIST, { accountId: fresh.id }, { as: fresh.member }), 'RATE_LIMITED');
  });
});

describe('Mutation.setInvoiceStatus', () => {
  const setStatus = (id: string, status: string, as: TestUser | null = acc.owner) => t.gql(SET_STATUS, { id, status }, { as });

  const ALLOWED: [InvoiceStatus, InvoiceStatus][] = [
    ['draft', 'sent'], ['draft', 'cancelled'],
    ['sent', 'viewed'], ['sent', 'partial'], ['sent', 'paid'], ['sent', 'overdue'], ['sent', 'cancelled'],
    ['viewed', 'partial'], ['viewed', 'paid'], ['viewed', 'overdue'], ['viewed', 'cancelled'],
    ['partial', 'paid'], ['partial', 'overdue'], ['partial', 'refunded'],
    ['overdue', 'partial'], ['overdue', 'paid'], ['overdue', 'cancelled'],
    ['paid', 'refunded'],
  ];

  test.each(ALLOWED)('an invoice moves from %s to %s', async (from, to) => {
    const invoice = await invoiceRow(acc, { status: from });
    const result = await setStatus(invoice.id, to, acc.member);
    expect(result.errors).toBeUndefined();
    expect(result.data.setInvoiceStatus.status).toBe(to);
    expect(new Date(result.data.setInvoiceStatus.updatedAt).getTime()).toBeGreaterThan(invoice.updatedAt.getTime());
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).status).toBe(to);
  });

  test('a created invoice walks draft, sent, viewed, partial, overdue, partial, paid, refunded', async () => {
    const id = (await create(acc, {})).data.createInvoice.id;
    for (const status of ['sent', 'viewed', 'partial', 'overdue', 'partial', 'paid', 'refunded']) {
      expect((await setStatus(id, status)).data.setInvoiceStatus.status).toBe(status);
    }
  });

  test.each([
    ['cancelled', 'draft'],
    ['cancelled', 'sent'],
    ['refunded', 'paid'],
    ['paid', 'sent'],
    ['paid', 'cancelled'],
    ['draft', 'paid'],
    ['viewed', 'sent'],
    ['partial', 'cancelled'],
    ['draft', 'draft'],
    ['sent', 'sent'],
  ] as [InvoiceStatus, InvoiceStatus][])('moving an invoice from %s to %s is INVALID_TRANSITION and changes nothing', async (from, to) => {
    const invoice = await invoiceRow(acc, { status: from });
    const result = await setStatus(invoice.id, to);
    expectCode(result, 'INVALID_TRANSITION');
    expect(errorOf(result).message).toBe(`Cannot move an invoice from ${from} to ${to}`);
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).status).toBe(from);
  });

  test('an outsider is NOT_FOUND, as updateInvoice answers, and an invoice that does not exist looks the same', async () => {
    const invoice = await invoiceRow(acc);
    const outsider = await setStatus(invoice.id, 'sent', acc.outsider);
    const missing = await setStatus('00000000-0000-4000-8000-000000000003', 'sent');
    expectCode(outsider, 'NOT_FOUND');
    expectCode(missing, 'NOT_FOUND');
    expect(errorOf(outsider).message).toBe(errorOf(missing).message);
    expectCode(await setStatus(invoice.id, 'sent', other.owner), 'NOT_FOUND');
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).status).toBe('draft');
  });

  test('an Idempotency-Key replays the first answer: the retry moves nothing and records no second event', async () => {
    const invoice = await invoiceRow(acc);
    const headers = { 'idempotency-key': randomUUID() };
    const first = await t.gql(SET_STATUS, { id: invoice.id, status: 'sent' }, { as: acc.member, headers });
    expect(first.errors).toBeUndefined();
    const again = await t.gql(SET_STATUS, { id: invoice.id, status: 'sent' }, { as: acc.member, headers });
    expect(again.errors).toBeUndefined(); // without the key, sent -> sent is INVALID_TRANSITION
    expect(again.data).toEqual(first.data);
    expect(await t.db.event.count({ where: { accountId: acc.id, type: 'invoice.status_changed', subjectId: invoice.id } })).toBe(1);
  });

  test('an anonymous caller is UNAUTHENTICATED; an id that is not a UUID is BAD_USER_INPUT', async () => {
    const invoice = await invoiceRow(acc);
    expectCode(await setStatus(invoice.id, 'sent', null), 'UNAUTHENTICATED');
    expectDetails(await setStatus('nope', 'sent'), { id: ['Must be a UUID'] });
  });

  test('two concurrent moves from the same state cannot both apply', async () => {
    const invoice = await invoiceRow(acc, { status: 'sent' });
    // paid -> cancelled is refused, cancelled -> paid too: whichever lands first, the other must fail.
    const results = await Promise.all([setStatus(invoice.id, 'paid'), setStatus(invoice.id, 'cancelled', acc.member)]);
    expect(results.filter((r) => !r.errors)).toHaveLength(1);
    const loser = results.find((r) => r.errors)!;
    expectCode(loser, 'INVALID_TRANSITION');
    const final = await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } });
    expect(final.status).toBe(results.find((r) => !r.errors)!.data.setInvoiceStatus.status);
  });

  test('a move still allowed from the state a concurrent move left is applied after it', async () => {
    const invoice = await invoiceRow(acc, { status: 'sent' });
    // sent -> viewed and sent -> paid: if viewed lands first, viewed -> paid is still allowed.
    const results = await Promise.all([setStatus(invoice.id, 'viewed'), setStatus(invoice.id, 'paid')]);
    const final = await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } });
    expect(final.status).toBe('paid');
    for (const r of results.filter((r) => r.errors)) expectCode(r, 'INVALID_TRANSITION');
  });
});
