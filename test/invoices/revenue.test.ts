import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createApiKey, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type GqlResult, type TestApp } from '../helpers/app.js';

// docs/decisions.md §20: Account.revenue and GET /api/v1/reports/revenue: payments by the UTC month
// of paidAt, less refunds by the month they were made, per currency (never summed across them).

const PAY = `mutation ($invoiceId: ID!, $input: RecordPaymentInput!) { recordPayment(invoiceId: $invoiceId, input: $input) { id } }`;
const REFUND = `mutation ($paymentId: ID!, $amount: Float) { refundPayment(paymentId: $paymentId, amount: $amount) { id } }`;
const REVENUE = `query ($id: ID!, $from: Date, $to: Date, $currency: String) { account(id: $id) { revenue(from: $from, to: $to, currency: $currency) { month currency count value } } }`;

let t: TestApp;
beforeAll(async () => void (t = await createTestApp({ env: { RATE_LIMITS: 'off' } })));
afterAll(() => t?.close());

let seeded = 0;
const invoice = (acc: TestAccount, amount: number, currency = 'USD') =>
  t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: `REV-${++seeded}`, amount, currency, status: 'sent', dueDate: new Date('2027-01-31') } });
const ok = (r: GqlResult) => {
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return Object.values(r.data)[0] as Record<string, any>;
};
const pay = async (acc: TestAccount, invoiceId: string, amount: number, paidAt: string) =>
  ok(await t.gql(PAY, { invoiceId, input: { amount, method: 'card', paidAt } }, { as: acc.owner })).id as string;
const refund = async (acc: TestAccount, paymentId: string, amount?: number) => ok(await t.gql(REFUND, { paymentId, amount }, { as: acc.owner }));
const revenue = async (acc: TestAccount, args: Record<string, unknown> = {}) => ok(await t.gql(REVENUE, { id: acc.id, ...args }, { as: acc.member })).revenue;

/** This month (UTC), when refunds made now are counted. */
const thisMonth = () => new Date().toISOString().slice(0, 7);

/** Payments in January and February 2026 in USD and EUR, refunds made now: the report's months and currencies. */
async function seededAccount() {
  const acc = await createAccount(t);
  const usd = await invoice(acc, 1000);
  const eur = await invoice(acc, 500, 'EUR');
  const jan = await pay(acc, usd.id, 100.1, '2026-01-31T23:59:59Z');
  await pay(acc, usd.id, 0.2, '2026-01-01T00:00:00Z');
  await pay(acc, usd.id, 50, '2026-02-01T00:00:00Z');
  const eurJan = await pay(acc, eur.id, 30, '2026-01-15T12:00:00Z');
  await refund(acc, jan, 10.05);
  await refund(acc, jan, 0.05);
  await refund(acc, eurJan);
  return acc;
}

describe('Account.revenue', () => {
  test('payments by the UTC month of paidAt less refunds by the month made, per currency; count is the payments', async () => {
    const acc = await seededAccount();
    expect(await revenue(acc)).toEqual([
      { month: '2026-01', currency: 'EUR', count: 1, value: 30 },
      { month: '2026-01', currency: 'USD', count: 2, value: 100.3 },
      { month: '2026-02', currency: 'USD', count: 1, value: 50 },
      // Refunds made today, in their own month: no payment there, so count 0 and a negative value.
      { month: thisMonth(), currency: 'EUR', count: 0, value: -30 },
      { month: thisMonth(), currency: 'USD', count: 0, value: -10.1 },
    ]);
  });

  test('from and to are UTC days, inclusive; currency narrows to one (lower case upper-cased)', async () => {
    const acc = await seededAccount();
    expect(await revenue(acc, { from: '2026-01-02', to: '2026-02-01' })).toEqual([
      { month: '2026-01', currency: 'EUR', count: 1, value: 30 },
      { month: '2026-01', currency: 'USD', count: 1, value: 100.1 },
      { month: '2026-02', currency: 'USD', count: 1, value: 50 },
    ]);
    expect(await revenue(acc, { currency: 'eur' })).toEqual([
      { month: '2026-01', currency: 'EUR', count: 1, value: 30 },
      { month: thisMonth(), currency: 'EUR', count: 0, value: -30 },
    ]);
    expect(await revenue(acc, { currency: 'JPY' })).toEqual([]);
  });

  test('equals plain SQL over the payments (refunds made now)', async () => {
    const acc = await seededAccount();
    const rows = await t.db.$queryRaw<{ month: string; currency: string; n: number; value: string }[]>`
      SELECT month, currency, sum(n)::int AS n, sum(value)::text AS value FROM (
        SELECT to_char(paid_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month, currency, 1 AS n, amount AS value FROM payments WHERE account_id = ${acc.id}::uuid
        UNION ALL
        SELECT to_char(refunded_at AT TIME ZONE 'UTC', 'YYYY-MM'), currency, 0, -refunded_amount FROM payments WHERE account_id = ${acc.id}::uuid AND refunded_amount <> 0
      ) AS e GROUP BY 1, 2 ORDER BY 1, 2`;
    expect(await revenue(acc)).toEqual(rows.map((r) => ({ month: r.month, currency: r.currency, count: r.n, value: Number(r.value) })));
  });

  test('from after to is a 400 on from; an unknown currency is a 400 naming it', async () => {
    const acc = await createAccount(t);
    expect(errorOf(await t.gql(REVENUE, { id: acc.id, from: '2026-02-01', to: '2026-01-01' }, { as: acc.member })).extensions?.details).toEqual({ from: ['Must not be after `to`'] });
    expect(errorOf(await t.gql(REVENUE, { id: acc.id, currency: 'XYZ' }, { as: acc.member })).extensions?.details).toEqual({ currency: ['Unknown ISO 4217 currency code: XYZ'] });
  });
});

describe('GET /api/v1/reports/revenue', () => {
  const get = (acc: TestAccount, query: Record<string, string> = {}, as: unknown = acc.member) =>
    t.rest('GET', `/api/v1/reports/revenue?${new URLSearchParams({ account_id: acc.id, ...query })}`, { as: as as never });

  test('answers {data: [{month, currency, count, value}]}, as Account.revenue; from, to and currency as query parameters', async () => {
    const acc = await seededAccount();
    const all = await get(acc);
    expect(all.status, all.text).toBe(200);
    expect(all.body).toEqual({ data: await revenue(acc) });
    const narrowed = await get(acc, { from: '2026-02-01', to: '2026-02-28', currency: 'usd' });
    expect(narrowed.body).toEqual({ data: [{ month: '2026-02', currency: 'USD', count: 1, value: 50 }] });
    const bad = await get(acc, { currency: 'XYZ' });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual({ currency: ['Unknown ISO 4217 currency code: XYZ'] });
  });

  test('an API key needs invoices:read', async () => {
    const acc = await createAccount(t);
    expect((await get(acc, {}, await createApiKey(t, acc, ['DEALS_READ']))).status).toBe(403);
    const withScope = await get(acc, {}, await createApiKey(t, acc, ['INVOICES_READ']));
    expect(withScope.status, withScope.text).toBe(200);
    expect(withScope.body).toEqual({ data: [] });
  });
});
