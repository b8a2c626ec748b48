/**
 * GET /api/v1/reports/{pipeline,deals,receivables,contacts} (docs/decisions.md §19, Reports): the
 * GraphQL reports in snake_case under `data`, with the *_READ scope of what each sums, and the core's
 * rules (from after to: 400 on `from`; another account: the one 403 body).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createApiKey, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { reportsBySql } from '../helpers/reports.js';

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

const ROUTES = { pipeline: 'DEALS_READ', deals: 'DEALS_READ', receivables: 'INVOICES_READ', contacts: 'CONTACTS_READ' } as const;
type Report = keyof typeof ROUTES;

const get = (acc: TestAccount, report: Report, query: Record<string, string> = {}, as = acc.member) =>
  t.rest('GET', `/api/v1/reports/${report}?${new URLSearchParams({ account_id: acc.id, ...query })}`, { as });

async function seeded(): Promise<TestAccount & { stageId: string }> {
  const acc = await createAccount(t);
  const stage = await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'Won soon', position: 1 } });
  await t.db.deal.create({ data: { accountId: acc.id, title: unique('D'), value: 100.5, probability: 40, stageId: stage.id } });
  await t.db.deal.create({ data: { accountId: acc.id, title: unique('D'), value: 10, probability: 25 } });
  await t.db.deal.create({ data: { accountId: acc.id, title: unique('D'), value: 7, status: 'won', closedAt: new Date('2026-03-04T05:06:07Z'), createdAt: new Date('2026-03-01T00:00:00Z') } });
  await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: unique('INV'), amount: 19.99, status: 'sent', dueDate: new Date('2026-01-01') } });
  await t.db.contact.create({ data: { accountId: acc.id, firstName: 'Ada', contactType: 'client', source: 'referral' } });
  return { ...acc, stageId: stage.id };
}

describe('the four routes', () => {
  test('each answers {data: <the GraphQL report in snake_case>}, equal to plain SQL over the tables', async () => {
    const acc = await seeded();
    const sql = await reportsBySql(t.db, acc.id, { from: '2026-03-01', to: '2026-03-31', asOf: '2026-02-15' });

    const pipeline = await get(acc, 'pipeline');
    expect(pipeline.status, pipeline.text).toBe(200);
    expect(pipeline.body).toEqual({
      data: [
        { stage: { id: acc.stageId, name: 'Won soon', position: 1 }, count: 1, value: 100.5, weighted_value: 40.2 },
        { stage: null, count: 1, value: 10, weighted_value: 2.5 },
      ],
    });
    expect(pipeline.body.data.map((s: any) => ({ count: s.count, value: s.value, weightedValue: s.weighted_value }))).toEqual(
      sql.pipeline.map(({ stage: _stage, ...sums }) => sums),
    );

    const deals = await get(acc, 'deals', { from: '2026-03-01', to: '2026-03-31' });
    expect(deals.status, deals.text).toBe(200);
    expect(deals.body).toEqual({ data: { by_status: sql.dealSummary.byStatus, won_by_month: [{ month: '2026-03', count: 1, value: 7 }] } });

    const receivables = await get(acc, 'receivables', { as_of: '2026-02-15' });
    expect(receivables.status, receivables.text).toBe(200);
    // One currency's (the account's default, USD), and every currency apart: here USD alone (docs/decisions.md §26).
    expect(receivables.body).toEqual({ data: { ...sql.receivables, by_currency: [sql.receivables] } });
    expect(receivables.body.data.buckets.map((b: any) => b.label)).toEqual(['current', '1-30', '31-60', '61-90', 'over-90']);
    expect(receivables.body.data.buckets[2]).toEqual({ label: '31-60', count: 1, amount: 19.99 });

    const contacts = await get(acc, 'contacts');
    expect(contacts.status, contacts.text).toBe(200);
    expect(contacts.body).toEqual({ data: { by_type: sql.contactBreakdown.byType, by_source: sql.contactBreakdown.bySource } });
  });

  test("receivables never adds currencies: ?currency= picks the one reported, by_currency lists each apart", async () => {
    const acc = await createAccount(t);
    for (const [amount, currency] of [[187000, 'JPY'], [127.524, 'KWD'], [7557.78, 'EUR']] as const) {
      await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: unique('INV'), amount, currency, status: 'sent', dueDate: new Date('2026-01-01') } });
    }
    const usd = await get(acc, 'receivables', { as_of: '2026-01-01' });
    expect(usd.status, usd.text).toBe(200);
    expect(usd.body.data).toMatchObject({ currency: 'USD', total: 0, count: 0 });
    expect(usd.body.data.by_currency.map((r: any) => [r.currency, r.total, r.count, r.buckets[0].amount])).toEqual([['EUR', 7557.78, 1, 7557.78], ['JPY', 187000, 1, 187000], ['KWD', 127.524, 1, 127.524]]);
    const kwd = await get(acc, 'receivables', { as_of: '2026-01-01', currency: 'kwd' });
    expect(kwd.body.data).toMatchObject({ currency: 'KWD', total: 127.524, count: 1 });
    const unknown = await get(acc, 'receivables', { currency: 'XYZ' });
    expect([unknown.status, Object.keys(unknown.body.details)]).toEqual([400, ['currency']]);
  });

  test('from after to is a 400 Invalid query naming from', async () => {
    const acc = await createAccount(t);
    const r = await get(acc, 'deals', { from: '2026-02-02', to: '2026-02-01' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid query', details: { from: ['Must not be after `to`'] } });
  });

  test('a date that is not a real YYYY-MM-DD is a 400 on its own name (as_of, to)', async () => {
    const acc = await createAccount(t);
    const asOf = await get(acc, 'receivables', { as_of: '2026-02-30' });
    expect(asOf.status).toBe(400);
    expect(Object.keys(asOf.body.details)).toEqual(['as_of']);
    const to = await get(acc, 'deals', { to: 'tomorrow' });
    expect(to.status).toBe(400);
    expect(Object.keys(to.body.details)).toEqual(['to']);
  });
});

describe('access', () => {
  test("another account's id answers the same 403 body as any other route of an account the caller cannot see", async () => {
    const acc = await createAccount(t);
    const contactsList = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.outsider });
    expect(contactsList.status).toBe(403);
    for (const report of Object.keys(ROUTES) as Report[]) {
      const r = await get(acc, report, {}, acc.outsider);
      expect(r.status, report).toBe(403);
      expect(r.body, report).toEqual(contactsList.body);
    }
  });

  test('an API key needs the read scope of what the report sums: without it 403 naming the scope, with it 200', async () => {
    const acc = await seeded();
    for (const [report, scope] of Object.entries(ROUTES) as [Report, string][]) {
      const others = [...new Set(Object.values(ROUTES))].filter((s) => s !== scope);
      const without = await get(acc, report, {}, await createApiKey(t, acc, others));
      expect(without.status, report).toBe(403);
      expect(without.body.error, report).toContain(scope.toLowerCase().replace('_', ':'));
      const withScope = await get(acc, report, {}, await createApiKey(t, acc, [scope]));
      expect(withScope.status, `${report}: ${withScope.text}`).toBe(200);
      expect(withScope.body).toEqual((await get(acc, report)).body);
    }
  });
});
