import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';
import { camelCase } from '../../src/names.js';

// docs/decisions.md §20 "Exact money" and "Payments move the invoice": every bad input is one 400
// naming every failing field, the same on REST and GraphQL (a line's field is lines.<index>.<REST
// name> in both; other fields by each transport's own name), and a payment on an invoice that takes
// none is a CONFLICT on both.

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMITS: 'off' } });
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const DUE = '2027-03-31';
type Json = Record<string, unknown>;

/** A REST body as GraphQL's input spells it (camelCase keys, lines' too). */
const asGraphql = (body: Json): Json =>
  Object.fromEntries(Object.entries(body).map(([k, v]) => [camelCase(k), Array.isArray(v) ? v.map((item) => (item && typeof item === 'object' ? asGraphql(item as Json) : item)) : v]));
/** REST's detail keys as GraphQL names them: the top-level field camelCased, a line's path as it is. */
const graphqlKeys = (details: Json): Json => Object.fromEntries(Object.entries(details).map(([k, v]) => [k.startsWith('lines.') ? k : camelCase(k), v]));

const CREATE = 'mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { id } }';
const UPDATE = 'mutation ($id: ID!, $input: UpdateInvoiceInput!) { updateInvoice(id: $id, input: $input) { id } }';
const PAY = 'mutation ($id: ID!, $input: RecordPaymentInput!) { recordPayment(invoiceId: $id, input: $input) { id } }';
const REFUND = 'mutation ($id: ID!, $amount: Float) { refundPayment(paymentId: $id, amount: $amount) { id } }';

/** The 400's details on REST and on GraphQL, each checked against `expected` (REST names). */
async function refusedAlike(rest: () => Promise<{ status: number; body: unknown; text: string }>, gql: () => Promise<any>, expected: Json) {
  const r = await rest();
  expect(r.status, r.text).toBe(400);
  expect((r.body as { details: unknown }).details).toEqual(expected);
  const g = errorOf(await gql());
  expect(g.extensions?.code).toBe('BAD_USER_INPUT');
  expect(g.extensions?.details).toEqual(graphqlKeys(expected));
}

const refusedCreate = (body: Json, expected: Json) =>
  refusedAlike(
    () => t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: DUE, ...body } }),
    () => t.gql(CREATE, { input: asGraphql({ account_id: acc.id, due_date: DUE, ...body }) }, { as: acc.owner }),
    expected,
  );

const line = (more: Json = {}) => ({ description: 'Work', unit_price: 10, ...more });
const lines = (n: number) => Array.from({ length: n }, () => line());

describe('creating an invoice: bad input, alike on REST and GraphQL', () => {
  test('more decimals than the currency has (USD 2, JPY 0, KWD 3)', async () => {
    await refusedCreate({ amount: 1.005 }, { amount: ['Must have at most 2 decimals in USD'] });
    await refusedCreate({ currency: 'JPY', amount: 1.5 }, { amount: ['Must have at most 0 decimals in JPY'] });
    await refusedCreate({ currency: 'KWD', lines: [line(), line({ unit_price: 1.2345 })] }, { 'lines.1.unit_price': ['Must have at most 3 decimals in KWD'] });
  });

  test('an unknown currency', async () => {
    await refusedCreate({ currency: 'ABC', amount: 1 }, { currency: ['Unknown ISO 4217 currency code: ABC'] });
  });

  test('0 or 101 lines; amount and lines both', async () => {
    await refusedCreate({ lines: [] }, { lines: ['Must have 1 to 100 lines'] });
    await refusedCreate({ lines: lines(101) }, { lines: ['Must have 1 to 100 lines'] });
    await refusedCreate({ amount: 5, lines: lines(1) }, { amount: ['Give amount or lines, not both'] });
  });

  test('negative and over-limit numbers', async () => {
    await refusedCreate({ amount: -0.01 }, { amount: ['Must be from 0 to 9999999999.99'] });
    await refusedCreate({ amount: 10_000_000_000 }, { amount: ['Must be from 0 to 9999999999.99'] });
    await refusedCreate(
      { lines: [line({ quantity: -1, unit_price: 10_000_000_000, discount_percent: -5, tax_rate: 100.001 })] },
      {
        'lines.0.quantity': ['Must be greater than 0 and at most 1000000'],
        'lines.0.unit_price': ['Must be from 0 to 9999999999.99'],
        'lines.0.discount_percent': ['Must be from 0 to 100'],
        'lines.0.tax_rate': ['Must be from 0 to 100'],
      },
    );
  });

  test("a line's money error and another field's error come in one 400", async () => {
    await refusedCreate(
      { currency: 'JPY', invoice_number: 'x'.repeat(51), lines: [line(), line(), line(), line({ unit_price: 0.5 })] },
      { invoice_number: ['Must be at most 50 characters'], 'lines.3.unit_price': ['Must have at most 0 decimals in JPY'] },
    );
  });
});

describe('updating a draft: one 400 naming every failing field, its money judged against the stored invoice', () => {
  test("a line's money error (against the stored currency) and another field's error come in one 400", async () => {
    const draft = await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: `BAD-${Date.now()}`, amount: 100, currency: 'JPY', dueDate: new Date(DUE) } });
    const body = { invoice_number: 'x'.repeat(51), lines: [line(), line(), line(), line({ unit_price: 0.5 })] };
    await refusedAlike(
      () => t.rest('PATCH', `/api/v1/invoices/${draft.id}`, { as: acc.owner, body }),
      () => t.gql(UPDATE, { id: draft.id, input: asGraphql(body) }, { as: acc.owner }),
      { invoice_number: ['Must be at most 50 characters'], 'lines.3.unit_price': ['Must have at most 0 decimals in JPY'] },
    );
    // Amount and lines both, beside a linked contact of another account: one 400 too.
    const other = await createAccount(t);
    const stranger = await t.db.contact.create({ data: { accountId: other.id, firstName: 'Elsewhere' } });
    const both = { amount: 5, lines: [line()], contact_id: stranger.id };
    await refusedAlike(
      () => t.rest('PATCH', `/api/v1/invoices/${draft.id}`, { as: acc.owner, body: both }),
      () => t.gql(UPDATE, { id: draft.id, input: asGraphql(both) }, { as: acc.owner }),
      { amount: ['Give amount or lines, not both'], contact_id: ['Not found in this account'] },
    );
    expect(await t.db.invoiceLine.count({ where: { invoiceId: draft.id } })).toBe(0);
  });
});

describe('lines that are not objects: a 400 naming each, never a 500 (found by the OpenAPI property test)', () => {
  test('PATCH and POST with lines [1], [null], ["x"] name lines.0', async () => {
    const draft = await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: `ODD-${Date.now()}`, amount: 100, dueDate: new Date(DUE) } });
    for (const odd of [1, null, 'x', 1e21]) {
      const patch = await t.rest('PATCH', `/api/v1/invoices/${draft.id}`, { as: acc.owner, body: { lines: [odd] } });
      expect([patch.status, Object.keys(patch.body.details ?? {})], patch.text).toEqual([400, ['lines.0']]);
      const post = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: DUE, lines: [odd] } });
      expect([post.status, Object.keys(post.body.details ?? {})], post.text).toEqual([400, ['lines.0']]);
    }
  });
});

describe('payments: bad input alike on REST and GraphQL', () => {
  const sent = (amount: number, currency = 'USD', status: 'sent' | 'draft' | 'cancelled' = 'sent') =>
    t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: `PAYBAD-${Math.random()}`, amount, currency, status, dueDate: new Date(DUE) } });
  const refusedPayment = (invoiceId: string, body: Json, expected: Json) =>
    refusedAlike(
      () => t.rest('POST', `/api/v1/invoices/${invoiceId}/payments`, { as: acc.owner, body: { method: 'card', ...body } }),
      () => t.gql(PAY, { id: invoiceId, input: asGraphql({ method: 'card', ...body }) }, { as: acc.owner }),
      expected,
    );

  test('an overpayment names what is due; too many decimals; 0 or less', async () => {
    const invoice = await sent(100);
    await t.gql(PAY, { id: invoice.id, input: { amount: 87.5, method: 'card' } }, { as: acc.owner });
    await refusedPayment(invoice.id, { amount: 12.51 }, { amount: ['Exceeds the amount due (12.50)'] });
    await refusedPayment(invoice.id, { amount: 0.001 }, { amount: ['Must have at most 2 decimals in USD'] });
    await refusedPayment(invoice.id, { amount: 0 }, { amount: ['Must be greater than 0'] });
    await refusedPayment(invoice.id, { amount: -1 }, { amount: ['Must be from 0 to 9999999999.99', 'Must be greater than 0'] });
    const yen = await sent(1000, 'JPY');
    await refusedPayment(yen.id, { amount: 0.5 }, { amount: ['Must have at most 0 decimals in JPY'] });
  });

  test('a refund beyond what is left of the payment names what is left', async () => {
    const invoice = await sent(100);
    const paid = await t.gql(PAY, { id: invoice.id, input: { amount: 40, method: 'card' } }, { as: acc.owner });
    const paymentId = paid.data.recordPayment.id;
    await t.gql(REFUND, { id: paymentId, amount: 15 }, { as: acc.owner });
    await refusedAlike(
      () => t.rest('POST', `/api/v1/payments/${paymentId}/refund`, { as: acc.owner, body: { amount: 25.01 } }),
      () => t.gql(REFUND, { id: paymentId, amount: 25.01 }, { as: acc.owner }),
      { amount: ['Exceeds what is left of the payment (25.00)'] },
    );
  });

  test('a payment on a draft or cancelled invoice is a CONFLICT (409) on both', async () => {
    for (const status of ['draft', 'cancelled'] as const) {
      const invoice = await sent(100, 'USD', status);
      const r = await t.rest('POST', `/api/v1/invoices/${invoice.id}/payments`, { as: acc.owner, body: { amount: 1, method: 'card' } });
      expect(r.status, r.text).toBe(409);
      expect(errorOf(await t.gql(PAY, { id: invoice.id, input: { amount: 1, method: 'card' } }, { as: acc.owner })).extensions?.code).toBe('CONFLICT');
    }
  });
});

describe('money cases (exact decimal arithmetic)', () => {
  const total = async (body: Json) => {
    const r = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: DUE, ...body } });
    expect(r.status, r.text).toBe(201);
    return (r.body as { data: Json }).data;
  };

  test('3 × 0.10 is 0.30; 7.25 % of 19.99 is 1.45; JPY whole yen; KWD three decimals, rounded half up', async () => {
    expect(await total({ lines: [line({ quantity: 3, unit_price: 0.1 })] })).toMatchObject({ subtotal: 0.3, total: 0.3 });
    expect(await total({ lines: [line({ unit_price: 19.99, tax_rate: 7.25 })] })).toMatchObject({ tax_total: 1.45, total: 21.44 });
    // 3 × 333 yen at 8 %: 999 + 79.92 → 80 yen of tax.
    expect(await total({ currency: 'JPY', lines: [line({ quantity: 3, unit_price: 333, tax_rate: 8 })] })).toMatchObject({ subtotal: 999, tax_total: 80, total: 1079 });
    // 1.5 × 0.333 KWD = 0.4995 → 0.500; 5 % of it 0.025.
    expect(await total({ currency: 'KWD', lines: [line({ quantity: 1.5, unit_price: 0.333, tax_rate: 5 })] })).toMatchObject({ subtotal: 0.5, tax_total: 0.025, total: 0.525 });
  });
});
