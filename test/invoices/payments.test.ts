import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { InvoiceStatus } from '../../src/generated/prisma/enums.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type GqlResult, type TestApp } from '../helpers/app.js';
import { inTransaction } from '../../src/events/emit.js';
import { SYSTEM } from '../../src/events/types.js';
import { serializeRecord } from '../../src/events/serialize.js';
import { recordPayment } from '../../src/invoices/payment.service.js';
import { markOverdueInvoices } from '../../src/invoices/overdue.js';

// docs/decisions.md §20 "Payments move the invoice": recordPayment, refundPayment, a manual move to paid.

const PAY = `mutation ($invoiceId: ID!, $input: RecordPaymentInput!) { recordPayment(invoiceId: $invoiceId, input: $input) { id amount currency method refundedAmount invoice { status amountPaid amountDue paidAt } } }`;
const REFUND = `mutation ($paymentId: ID!, $amount: Float) { refundPayment(paymentId: $paymentId, amount: $amount) { id refundedAmount invoice { status amountPaid amountDue paidAt } } }`;
const SET_STATUS = `mutation ($id: ID!, $status: InvoiceStatus!) { setInvoiceStatus(id: $id, status: $status) { status amountPaid amountDue payments(orderBy: { field: CREATED_AT, direction: ASC }) { nodes { amount method } } } }`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

let seeded = 0;
const invoice = (acc: TestAccount, data: { status?: InvoiceStatus; amount?: number; currency?: string; dueDate?: Date; memo?: string; externalId?: string } = {}) =>
  t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: `PAY-${++seeded}`, amount: 100, status: 'sent', dueDate: new Date('2027-01-31'), ...data } });
const pay = (acc: TestAccount, invoiceId: string, input: Record<string, unknown>) => t.gql(PAY, { invoiceId, input: { method: 'card', ...input } }, { as: acc.owner });
const ok = (r: GqlResult) => {
  expect(r.errors).toBeUndefined();
  return Object.values(r.data)[0] as Record<string, any>;
};
const codeOf = (r: GqlResult) => errorOf(r).extensions?.code;
const eventsOf = (acc: TestAccount, type: string) => t.db.event.findMany({ where: { accountId: acc.id, type }, orderBy: { id: 'asc' } });

describe('recordPayment', () => {
  test('a part payment makes the invoice partial; paying the rest makes it paid with paidAt', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    const first = ok(await pay(acc, id, { amount: 87.5, reference: 'tx-1' }));
    expect(first).toMatchObject({ amount: 87.5, currency: 'USD', method: 'card', refundedAmount: 0, invoice: { status: 'partial', amountPaid: 87.5, amountDue: 12.5, paidAt: null } });
    expect(errorOf(await pay(acc, id, { amount: 12.51 })).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { amount: ['Exceeds the amount due (12.50)'] } });
    const second = ok(await pay(acc, id, { amount: 12.5, method: 'bank_transfer' }));
    expect(second.invoice).toMatchObject({ status: 'paid', amountPaid: 100, amountDue: 0 });
    expect(second.invoice.paidAt).toEqual(expect.any(String));
    expect((await eventsOf(acc, 'payment.created')).length).toBe(2);
    expect((await eventsOf(acc, 'invoice.status_changed')).map((e) => (e.data as any).object.status)).toEqual(['partial', 'paid']);
  });

  test('a payment on a draft, paid, cancelled or refunded invoice is CONFLICT', async () => {
    const acc = await createAccount(t);
    for (const status of ['draft', 'paid', 'cancelled', 'refunded'] as const) {
      const { id } = await invoice(acc, { status });
      expect(codeOf(await pay(acc, id, { amount: 1 }))).toBe('CONFLICT');
    }
    expect(await t.db.payment.count({ where: { accountId: acc.id } })).toBe(0);
  });

  test("an amount of 0, or with more decimals than the invoice's currency, is a 400 on amount", async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { currency: 'JPY', amount: 1000 });
    expect(errorOf(await pay(acc, id, { amount: 0 })).extensions?.details).toEqual({ amount: ['Must be greater than 0'] });
    expect(errorOf(await pay(acc, id, { amount: 1.5 })).extensions?.details).toEqual({ amount: ['Must have at most 0 decimals in JPY'] });
  });

  test('paidAt lies between 2000-01-01 and one day after now: outside, a 400 naming paidAt (paid_at on REST) that records nothing', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    const message = ['Must be between 2000-01-01T00:00:00Z and one day after now'];
    const tooLate = new Date(Date.now() + 25 * 60 * 60 * 1000).toISOString();
    for (const paidAt of ['1999-12-31T23:59:59.999Z', '1900-01-01T00:00:00.000Z', '9999-12-31T00:00:00.000Z', tooLate]) {
      expect(errorOf(await pay(acc, id, { amount: 1, paidAt })).extensions, paidAt).toMatchObject({ code: 'BAD_USER_INPUT', details: { paidAt: message } });
      const rest = await t.rest('POST', `/api/v1/invoices/${id}/payments`, { as: acc.owner, body: { amount: 1, method: 'card', paid_at: paidAt } });
      expect([rest.status, rest.body.details], paidAt).toEqual([400, { paid_at: message }]);
    }
    expect(await t.db.payment.count({ where: { invoiceId: id } })).toBe(0);
    const soon = new Date(Date.now() + 23 * 60 * 60 * 1000).toISOString();
    for (const paidAt of ['2000-01-01T00:00:00.000Z', soon]) ok(await pay(acc, id, { amount: 1, paidAt }));
    expect(await t.db.payment.count({ where: { invoiceId: id } })).toBe(2);
  });

  test('20 concurrent payments never take more than is due', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    const results = await Promise.all(Array.from({ length: 20 }, () => pay(acc, id, { amount: 10 })));
    expect(results.filter((r) => !r.errors).length).toBe(10);
    for (const refused of results.filter((r) => r.errors)) expect(['CONFLICT', 'BAD_USER_INPUT']).toContain(codeOf(refused));
    const row = await t.db.invoice.findUniqueOrThrow({ where: { id } });
    expect([row.amountPaid.toFixed(2), row.status]).toEqual(['100.00', 'paid']);
    const sum = await t.db.payment.aggregate({ where: { invoiceId: id }, _sum: { amount: true } });
    expect(sum._sum.amount?.toFixed(2)).toBe('100.00');
  });
  test('payment.created and invoice.status_changed show the payment and the invoice as every event shows its record', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100.25, memo: 'Ten hours', externalId: `ext-${seeded}` });
    ok(await pay(acc, id, { amount: 0.25, reference: 'tx-1', paidAt: '2026-11-02T10:11:12.345Z' }));
    const last = ok(await pay(acc, id, { amount: 100, method: 'bank_transfer' }));
    const payment = await t.db.payment.findUniqueOrThrow({ where: { id: last.id } });
    const [, created] = await eventsOf(acc, 'payment.created');
    expect(created!.data).toEqual({ object: serializeRecord('payment', payment) });
    expect(created).toMatchObject({ subjectId: payment.id, contactId: null, actorType: 'user', actorId: acc.owner.id });
    const row = await t.db.invoice.findUniqueOrThrow({ where: { id } });
    const moves = await eventsOf(acc, 'invoice.status_changed');
    expect(moves.map((e) => (e.data as any).previous)).toEqual([{ status: 'sent' }, { status: 'partial' }]);
    expect((moves[1]!.data as any).object).toEqual(serializeRecord('invoice', row));
    expect(created!.id < moves[1]!.id).toBe(true);
  });

  test('20 concurrent payments in as many transactions (as from many instances) never take more than is due', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    const one = () => inTransaction(t.db, (tx) => recordPayment(tx, id, { amount: 10, method: 'cash', reference: null, paidAt: null }, SYSTEM)).then(() => true, () => false);
    const results = await Promise.all(Array.from({ length: 20 }, one));
    expect(results.filter(Boolean).length).toBe(10);
    const sum = await t.db.payment.aggregate({ where: { invoiceId: id }, _sum: { amount: true } });
    const row = await t.db.invoice.findUniqueOrThrow({ where: { id } });
    expect([sum._sum.amount?.toFixed(2), row.amountPaid.toFixed(2), row.status]).toEqual(['100.00', '100.00', 'paid']);
  });

  test('20 concurrent payments as 20 statements on their own, outside any transaction and line, never take more than is due', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    const one = () => recordPayment(t.db, id, { amount: 10, method: 'cash', reference: null, paidAt: null }, SYSTEM).then(() => true, () => false);
    const results = await Promise.all(Array.from({ length: 20 }, one));
    expect(results.filter(Boolean).length).toBe(10);
    const sum = await t.db.payment.aggregate({ where: { invoiceId: id }, _sum: { amount: true } });
    const row = await t.db.invoice.findUniqueOrThrow({ where: { id } });
    expect([sum._sum.amount?.toFixed(2), row.amountPaid.toFixed(2), row.status]).toEqual(['100.00', '100.00', 'paid']);
    expect((await eventsOf(acc, 'payment.created')).length).toBe(10);
  });
});

describe('refundPayment', () => {
  test('a partial refund moves paid to partial; refunding what stays paid moves it to refunded', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 50 });
    const payment = ok(await pay(acc, id, { amount: 50 }));
    const part = ok(await t.gql(REFUND, { paymentId: payment.id, amount: 20 }, { as: acc.owner }));
    expect(part).toMatchObject({ refundedAmount: 20, invoice: { status: 'partial', amountPaid: 30, amountDue: 20, paidAt: null } });
    expect(errorOf(await t.gql(REFUND, { paymentId: payment.id, amount: 30.01 }, { as: acc.owner })).extensions?.details).toEqual({ amount: ['Exceeds what is left of the payment (30.00)'] });
    const rest = ok(await t.gql(REFUND, { paymentId: payment.id }, { as: acc.owner }));
    expect(rest).toMatchObject({ refundedAmount: 50, invoice: { status: 'refunded', amountPaid: 0 } });
    expect(codeOf(await t.gql(REFUND, { paymentId: payment.id }, { as: acc.owner }))).toBe('CONFLICT');
    expect((await eventsOf(acc, 'payment.refunded')).length).toBe(2);
  });

  test("another account's payment is NOT_FOUND", async () => {
    const [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
    const { id } = await invoice(acc);
    const payment = ok(await pay(acc, id, { amount: 1 }));
    expect(codeOf(await t.gql(REFUND, { paymentId: payment.id }, { as: other.owner }))).toBe('NOT_FOUND');
    expect(codeOf(await pay(other, id, { amount: 1 }))).toBe('NOT_FOUND');
  });
});

describe('the overdue job (§19) and payments', () => {
  test('a partly paid invoice past due becomes overdue keeping what was paid; paying the rest makes it paid', async () => {
    const acc = await createAccount(t);
    const yesterday = new Date(Date.now() - 86_400_000);
    const { id } = await invoice(acc, { amount: 100, dueDate: new Date(yesterday.toISOString().slice(0, 10)) });
    expect(ok(await pay(acc, id, { amount: 30 })).invoice).toMatchObject({ status: 'partial', amountDue: 70 });
    await markOverdueInvoices(t.db, { batchSize: 500, asOf: new Date() });
    expect(await t.db.invoice.findUniqueOrThrow({ where: { id }, select: { status: true, amountPaid: true } })).toMatchObject({ status: 'overdue' });
    const events = await eventsOf(acc, 'invoice.status_changed');
    expect(events.at(-1)).toMatchObject({ actorType: 'system', data: { object: { id, status: 'overdue', amount_paid: 30 }, previous: { status: 'partial' } } });
    expect(ok(await pay(acc, id, { amount: 70 })).invoice).toMatchObject({ status: 'paid', amountPaid: 100, amountDue: 0 });
  });
});

describe('a manual move to paid', () => {
  test('records the balancing payment (method other), so a paid invoice owes nothing', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    ok(await pay(acc, id, { amount: 40 }));
    const moved = ok(await t.gql(SET_STATUS, { id, status: 'paid' }, { as: acc.owner }));
    expect(moved).toMatchObject({ status: 'paid', amountPaid: 100, amountDue: 0, payments: { nodes: [{ amount: 40, method: 'card' }, { amount: 60, method: 'other' }] } });
  });
});

// docs/decisions.md §26: a refunded or cancelled invoice owes nothing; a manual refund gives every payment back.
describe('a manual move to refunded', () => {
  const REVENUE = 'query ($id: ID!) { account(id: $id) { revenue { currency count value } } }';

  test('gives back what remains of every payment, so amountPaid and amountDue are 0 and revenue no longer counts it', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    const first = ok(await pay(acc, id, { amount: 40 }));
    ok(await t.gql(REFUND, { paymentId: first.id, amount: 15 }, { as: acc.owner }));
    ok(await pay(acc, id, { amount: 75 }));
    const revenue = async () => ok(await t.gql(REVENUE, { id: acc.id }, { as: acc.owner })).revenue;
    expect(await revenue()).toEqual([{ currency: 'USD', count: 2, value: 100 }]);
    const moved = ok(await t.gql(SET_STATUS.replace('amount method', 'amount method refundedAmount'), { id, status: 'refunded' }, { as: acc.owner }));
    expect(moved).toMatchObject({ status: 'refunded', amountPaid: 0, amountDue: 0, payments: { nodes: [{ amount: 40, refundedAmount: 40 }, { amount: 75, refundedAmount: 75 }] } });
    expect(await revenue()).toEqual([{ currency: 'USD', count: 2, value: 0 }]);
    // Each payment's refund is its own event, with what it had given back before.
    expect((await eventsOf(acc, 'payment.refunded')).map((e) => [(e.data as any).object.refunded_amount, (e.data as any).previous.refunded_amount])).toEqual([[15, 0], [40, 15], [75, 0]]);
    expect((await eventsOf(acc, 'invoice.status_changed')).at(-1)).toMatchObject({ data: { object: { id, status: 'refunded', amount_paid: 0 }, previous: { status: 'paid' } } });
  });

  test('amountDue is 0 for a refunded or a cancelled invoice, whatever was paid', async () => {
    const acc = await createAccount(t);
    const AMOUNTS = 'query ($id: ID!) { invoice(id: $id) { status amountPaid amountDue } }';
    for (const status of ['cancelled', 'refunded'] as const) {
      const { id } = await invoice(acc, { amount: 100, status });
      expect(ok(await t.gql(AMOUNTS, { id }, { as: acc.owner }))).toEqual({ status, amountPaid: 0, amountDue: 0 });
    }
    const { id } = await invoice(acc, { amount: 100 });
    ok(await t.gql(SET_STATUS, { id, status: 'cancelled' }, { as: acc.owner }));
    expect(((await t.rest('GET', `/api/v1/invoices/${id}`, { as: acc.owner })).body as { data: unknown }).data).toMatchObject({ status: 'cancelled', amount_due: 0 });
  });
});

describe('REST: /api/v1/invoices/{id}/payments and /api/v1/payments/{id}/refund', () => {
  test('POST records a payment (201), GET lists them, POST refund gives money back; the invoice shows amount_paid and amount_due', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    const paid = await t.rest('POST', `/api/v1/invoices/${id}/payments`, { as: acc.owner, body: { amount: 60, method: 'bank_transfer', reference: 'SEPA-1' } });
    expect(paid.status).toBe(201);
    const payment = (paid.body as { data: Record<string, unknown> }).data;
    expect(payment).toMatchObject({ invoice_id: id, amount: 60, currency: 'USD', method: 'bank_transfer', reference: 'SEPA-1', refunded_amount: 0 });
    const over = await t.rest('POST', `/api/v1/invoices/${id}/payments`, { as: acc.owner, body: { amount: 40.01, method: 'card' } });
    expect([over.status, (over.body as { details: unknown }).details]).toEqual([400, { amount: ['Exceeds the amount due (40.00)'] }]);
    const refund = await t.rest('POST', `/api/v1/payments/${payment.id}/refund`, { as: acc.owner, body: { amount: 10 } });
    expect([refund.status, (refund.body as { data: Record<string, unknown> }).data.refunded_amount]).toEqual([200, 10]);
    const listed = await t.rest('GET', `/api/v1/invoices/${id}/payments`, { as: acc.owner });
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ data: [{ id: payment.id, invoice_id: id, refunded_amount: 10 }], total: 1, page: 1, page_size: 25, next_cursor: null });
    expect(((await t.rest('GET', `/api/v1/invoices/${id}`, { as: acc.owner })).body as { data: unknown }).data).toMatchObject({ status: 'partial', amount_paid: 50, amount_due: 50 });
  });

  test('a draft takes no payment (409); an unknown invoice or payment is 404', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { status: 'draft' });
    expect((await t.rest('POST', `/api/v1/invoices/${id}/payments`, { as: acc.owner, body: { amount: 1, method: 'cash' } })).status).toBe(409);
    const unknown = '0190a0a0-0000-7000-8000-000000000000';
    expect((await t.rest('POST', `/api/v1/invoices/${unknown}/payments`, { as: acc.owner, body: { amount: 1, method: 'cash' } })).status).toBe(404);
    expect((await t.rest('GET', `/api/v1/invoices/${unknown}/payments`, { as: acc.owner })).status).toBe(404);
    expect((await t.rest('POST', `/api/v1/payments/${unknown}/refund`, { as: acc.owner, body: {} })).status).toBe(404);
  });

  test("GET answers the list envelope of every list (docs/decisions.md §26): {data, total, page, page_size, next_cursor}, newest first, by page or by cursor, order=asc for oldest first", async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    const ids: string[] = [];
    for (const amount of [1, 2, 3, 4, 5]) ids.push(ok(await pay(acc, id, { amount })).id);
    // Another invoice's payment never shows.
    const other = await invoice(acc, { amount: 100 });
    await pay(acc, other.id, { amount: 1 });
    const newest = [...ids].reverse();
    const whole = await t.rest('GET', `/api/v1/invoices/${id}/payments`, { as: acc.member });
    expect(whole.status, whole.text).toBe(200);
    expect(Object.keys(whole.body).sort()).toEqual(['data', 'next_cursor', 'page', 'page_size', 'total']);
    expect([whole.body.data.map((p: { id: string }) => p.id), whole.body.total, whole.body.page, whole.body.page_size, whole.body.next_cursor]).toEqual([newest, 5, 1, 25, null]);
    const second = await t.rest('GET', `/api/v1/invoices/${id}/payments?page=2&page_size=2`, { as: acc.owner });
    expect([second.body.data.map((p: { id: string }) => p.id), second.body.total, second.body.page, second.body.page_size]).toEqual([newest.slice(2, 4), 5, 2, 2]);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 3; page++) {
      const r = await t.rest('GET', `/api/v1/invoices/${id}/payments?order=asc&page_size=2${cursor ? `&cursor=${cursor}` : ''}`, { as: acc.owner });
      expect(r.status, r.text).toBe(200);
      expect(r.body.total).toBe(5);
      expect('page' in r.body).toBe(cursor === null);
      seen.push(...r.body.data.map((p: { id: string }) => p.id));
      cursor = r.body.next_cursor;
      expect(cursor === null).toBe(page === 2);
    }
    expect(seen).toEqual(ids);
  });

  test('GET /api/v1/invoices/{id}/payments: page_size is 1-100 and a bad cursor a 400, each by its REST name; an unknown or foreign invoice is a 404', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    for (const size of [0, 101]) {
      const r = await t.rest('GET', `/api/v1/invoices/${id}/payments?page_size=${size}`, { as: acc.owner });
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { page_size: ['Must be from 1 to 100'] } }]);
    }
    const bad = await t.rest('GET', `/api/v1/invoices/${id}/payments?cursor=nonsense`, { as: acc.owner });
    expect([bad.status, Object.keys(bad.body.details)]).toEqual([400, ['cursor']]);
    const foreign = await createAccount(t);
    expect((await t.rest('GET', `/api/v1/invoices/${id}/payments`, { as: foreign.owner })).status).toBe(404);
    expect((await t.rest('GET', `/api/v1/invoices/0190a0a0-0000-7000-8000-000000000000/payments`, { as: acc.owner })).status).toBe(404);
  });
});

describe('Invoice.payments', () => {
  test('a connection: newest first by default, first/after pages, totalCount exact; orderBy CREATED_AT ASC for oldest first', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, { amount: 100 });
    const ids: string[] = [];
    for (const amount of [1, 2, 3]) ids.push(ok(await pay(acc, id, { amount })).id);
    const PAGE = `query ($id: ID!, $after: String, $order: PaymentOrder) { invoice(id: $id) { payments(first: 2, after: $after, orderBy: $order) { totalCount nodes { id } pageInfo { hasNextPage endCursor } } } }`;
    const first = ok(await t.gql(PAGE, { id }, { as: acc.member })).payments;
    expect(first.totalCount).toBe(3);
    expect(first.nodes.map((n: { id: string }) => n.id)).toEqual([ids[2], ids[1]]);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = ok(await t.gql(PAGE, { id, after: first.pageInfo.endCursor }, { as: acc.member })).payments;
    expect(second.nodes.map((n: { id: string }) => n.id)).toEqual([ids[0]]);
    expect(second.pageInfo.hasNextPage).toBe(false);
    const oldest = ok(await t.gql(PAGE, { id, order: { field: 'CREATED_AT', direction: 'ASC' } }, { as: acc.member })).payments;
    expect(oldest.nodes.map((n: { id: string }) => n.id)).toEqual([ids[0], ids[1]]);
    expect(codeOf(await t.gql(PAGE.replace('first: 2', 'first: 101'), { id }, { as: acc.member }))).toBe('BAD_USER_INPUT');
  });
});

describe('reports', () => {
  test('receivables sum what is still due: a part payment lowers them, a refund raises them again', async () => {
    const acc = await createAccount(t);
    const total = async () => ((await t.rest('GET', `/api/v1/reports/receivables?account_id=${acc.id}`, { as: acc.owner })).body as { data: { total: number; count: number } }).data;
    const { id } = await invoice(acc, { amount: 100 });
    expect(await total()).toMatchObject({ total: 100, count: 1 });
    const payment = ok(await pay(acc, id, { amount: 30.25 }));
    expect(await total()).toMatchObject({ total: 69.75, count: 1 });
    ok(await t.gql(REFUND, { paymentId: payment.id, amount: 0.25 }, { as: acc.owner }));
    expect(await total()).toMatchObject({ total: 70, count: 1 });
    ok(await pay(acc, id, { amount: 70 }));
    expect(await total()).toMatchObject({ total: 0, count: 0 });
  });
});
