/**
 * docs/decisions.md §19, Reports: Account.pipeline, dealSummary, receivables and contactBreakdown
 * are read from sums triggers keep (report_sums, record_counts), and must equal what plain SQL over
 * the tables computes, however the writes interleave.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEAL_TRANSITIONS, INVOICE_TRANSITIONS } from '../../src/state-machines.js';
import type { DealStatus, InvoiceStatus } from '../../src/generated/prisma/client.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp, type TestUser } from '../helpers/app.js';
import { ACCOUNT_REPORTS, reportsBySql, type ReportArgs } from '../helpers/reports.js';

let t: TestApp;
// Thousands of writes by a few callers: the per-user limits are not what this file is about.
beforeAll(async () => void (t = await createTestApp({ env: { RATE_LIMITS: 'off' } })));
afterAll(() => t?.close());

const today = () => new Date().toISOString().slice(0, 10);
const daysFrom = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

async function gql(as: TestUser, doc: string, vars: Record<string, unknown> = {}) {
  const r = await t.gql(doc, vars, { as });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return Object.values(r.data)[0] as any;
}

const reports = (acc: TestAccount, args: ReportArgs = {}) => gql(acc.member, ACCOUNT_REPORTS, { id: acc.id, ...args });

async function expectReportsExact(acc: TestAccount, args: ReportArgs = {}) {
  expect(await reports(acc, args)).toEqual(await reportsBySql(t.db, acc.id, args));
}

const createStage = (acc: TestAccount, name: string, position: number) =>
  gql(acc.owner, 'mutation ($i: CreatePipelineStageInput!) { createPipelineStage(input: $i) { id } }', { i: { accountId: acc.id, name, position } });
const createDeal = (acc: TestAccount, input: Record<string, unknown>) =>
  gql(acc.member, 'mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId: acc.id, title: unique('Deal'), ...input } });
const createInvoice = (acc: TestAccount, amount: number, dueDate: string, currency?: string) =>
  gql(acc.member, 'mutation ($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }', { i: { accountId: acc.id, amount, dueDate, currency } });
const setInvoiceStatus = (acc: TestAccount, id: string, status: string) =>
  gql(acc.member, 'mutation ($id: ID!, $s: InvoiceStatus!) { setInvoiceStatus(id: $id, status: $s) { id } }', { id, s: status });

describe('pipeline', () => {
  test('open deals per stage in pipeline order with zeros, weighted by probability; deals without a stage under stage null', async () => {
    const acc = await createAccount(t);
    const later = await createStage(acc, 'Proposal', 2);
    const first = await createStage(acc, 'Lead', 1);
    await createStage(acc, 'Empty', 3);
    await createDeal(acc, { stageId: first.id, value: 1000.1, probability: 33.3 });
    await createDeal(acc, { stageId: first.id, value: 0.05, probability: 50 });
    await createDeal(acc, { stageId: later.id, value: 250, probability: 100 });
    const won = await createDeal(acc, { stageId: later.id, value: 999, probability: 10 });
    await gql(acc.member, 'mutation ($id: ID!) { setDealStatus(id: $id, status: won) { id } }', { id: won.id });
    await createDeal(acc, { value: 12.34, probability: 20 });

    const { pipeline } = await reports(acc);
    expect(pipeline).toEqual([
      { stage: { id: first.id }, count: 2, value: 1000.15, weightedValue: 333.0583 },
      { stage: { id: later.id }, count: 1, value: 250, weightedValue: 250 },
      { stage: expect.objectContaining({}), count: 0, value: 0, weightedValue: 0 },
      { stage: null, count: 1, value: 12.34, weightedValue: 2.468 },
    ]);
    await expectReportsExact(acc);
  });

  test('an account whose open deals all have a stage lists no stage-null entry; one without stages or deals lists nothing', async () => {
    const acc = await createAccount(t);
    expect((await reports(acc)).pipeline).toEqual([]);
    const stage = await createStage(acc, 'Only', 1);
    await createDeal(acc, { stageId: stage.id, value: 5 });
    expect((await reports(acc)).pipeline).toEqual([{ stage: { id: stage.id }, count: 1, value: 5, weightedValue: 2.5 }]);
  });

  test('deleting a stage moves its deals: the pipeline follows', async () => {
    const acc = await createAccount(t);
    const [a, b] = [await createStage(acc, 'A', 1), await createStage(acc, 'B', 2)];
    await createDeal(acc, { stageId: a.id, value: 10 });
    await createDeal(acc, { stageId: a.id, value: 20 });
    await gql(acc.owner, 'mutation ($id: ID!, $to: ID) { deletePipelineStage(id: $id, moveDealsTo: $to) { id } }', { id: a.id, to: b.id });
    expect((await reports(acc)).pipeline).toEqual([{ stage: { id: b.id }, count: 2, value: 30, weightedValue: 15 }]);
    await expectReportsExact(acc);
  });
});

describe('dealSummary', () => {
  test('byStatus counts every status of the deals created in [from, to] (UTC days); wonByMonth the won deals by the month of closedAt in [from, to]', async () => {
    const acc = await createAccount(t);
    const made = async (createdAt: string, status: DealStatus, value: number, closedAt?: string) =>
      t.db.deal.create({ data: { accountId: acc.id, title: unique('D'), value, status, createdAt: new Date(createdAt), closedAt: closedAt ? new Date(closedAt) : null } });
    await made('2026-01-01T00:00:00Z', 'open', 1);
    await made('2026-01-31T23:59:59.999Z', 'won', 2, '2026-02-01T00:00:00Z');
    await made('2026-02-15T12:00:00Z', 'won', 4, '2026-03-31T23:59:59.999Z');
    await made('2026-03-01T00:00:00Z', 'lost', 8, '2026-03-02T00:00:00Z');
    await made('2025-12-31T23:59:59.999Z', 'abandoned', 16, '2026-01-05T00:00:00Z');

    const summary = async (from?: string, to?: string) => (await reports(acc, { from, to })).dealSummary;
    expect(await summary()).toEqual({
      byStatus: [
        { key: 'open', count: 1, value: 1 },
        { key: 'won', count: 2, value: 6 },
        { key: 'lost', count: 1, value: 8 },
        { key: 'abandoned', count: 1, value: 16 },
      ],
      wonByMonth: [
        { month: '2026-02', count: 1, value: 2 },
        { month: '2026-03', count: 1, value: 4 },
      ],
    });
    expect(await summary('2026-01-01', '2026-01-31')).toEqual({
      byStatus: [
        { key: 'open', count: 1, value: 1 },
        { key: 'won', count: 1, value: 2 },
        { key: 'lost', count: 0, value: 0 },
        { key: 'abandoned', count: 0, value: 0 },
      ],
      wonByMonth: [],
    });
    expect((await summary('2026-03-31', '2026-03-31')).wonByMonth).toEqual([{ month: '2026-03', count: 1, value: 4 }]);
    expect((await summary('2026-02-02')).wonByMonth).toEqual([{ month: '2026-03', count: 1, value: 4 }]);
    for (const [from, to] of [[undefined, '2026-02-01'], ['2026-01-31', '2026-03-01'], ['2026-01-01', '2026-01-01']]) await expectReportsExact(acc, { from, to });
  });

  test('reopening a won deal takes it out of wonByMonth; winning it again counts it in the month of its new closedAt', async () => {
    const acc = await createAccount(t);
    const deal = await createDeal(acc, { value: 7.5 });
    const move = (status: string) => gql(acc.member, 'mutation ($id: ID!, $s: DealStatus!) { setDealStatus(id: $id, status: $s) { id } }', { id: deal.id, s: status });
    await move('won');
    expect((await reports(acc)).dealSummary.wonByMonth).toEqual([{ month: today().slice(0, 7), count: 1, value: 7.5 }]);
    await move('open');
    expect((await reports(acc)).dealSummary.wonByMonth).toEqual([]);
    await move('won');
    await expectReportsExact(acc);
  });

  test('from after to is BAD_USER_INPUT naming from; from equal to to is one day', async () => {
    const acc = await createAccount(t);
    const r = await t.gql(ACCOUNT_REPORTS, { id: acc.id, from: '2026-02-02', to: '2026-02-01' }, { as: acc.member });
    expect(errorOf(r).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { from: ['Must not be after `to`'] } });
    expect((await reports(acc, { from: '2026-02-01', to: '2026-02-01' })).dealSummary.byStatus).toHaveLength(4);
  });
});

describe('receivables', () => {
  test('bucket edges: due today and later are current; 1, 30 | 31, 60 | 61, 90 | 91 days past due start and end their buckets', async () => {
    const acc = await createAccount(t);
    const asOf = '2026-06-15';
    const pastDue = [-10, 0, 1, 30, 31, 60, 61, 90, 91, 400];
    for (const [i, days] of pastDue.entries()) {
      const invoice = await createInvoice(acc, 2 ** i, daysFrom(asOf, -days));
      await setInvoiceStatus(acc, invoice.id, 'sent');
    }
    const { receivables } = await reports(acc, { asOf });
    expect(receivables).toEqual({
      currency: 'USD',
      total: 1023,
      count: 10,
      buckets: [
        { label: 'current', count: 2, amount: 1 + 2 },
        { label: '1-30', count: 2, amount: 4 + 8 },
        { label: '31-60', count: 2, amount: 16 + 32 },
        { label: '61-90', count: 2, amount: 64 + 128 },
        { label: 'over-90', count: 2, amount: 256 + 512 },
      ],
    });
    await expectReportsExact(acc, { asOf });
    await expectReportsExact(acc, { asOf: daysFrom(asOf, 1) });
  });

  test('outstanding is sent, viewed, partial and overdue: drafts, paid, cancelled and refunded invoices are not owed', async () => {
    const acc = await createAccount(t);
    const due = daysFrom(today(), -45);
    const moves: Record<string, string[]> = {
      draft: [], sent: ['sent'], viewed: ['sent', 'viewed'], partial: ['sent', 'partial'], overdue: ['sent', 'overdue'],
      paid: ['sent', 'paid'], cancelled: ['cancelled'], refunded: ['sent', 'paid', 'refunded'],
    };
    for (const path of Object.values(moves)) {
      const invoice = await createInvoice(acc, 100.01, due);
      for (const status of path) await setInvoiceStatus(acc, invoice.id, status);
    }
    const { receivables } = await reports(acc);
    expect(receivables.count).toBe(4);
    expect(receivables.total).toBe(400.04);
    expect(receivables.buckets[2]).toEqual({ label: '31-60', count: 4, amount: 400.04 });
    await expectReportsExact(acc);
  });

  test("reports never add currencies: receivables is one currency's (the account's default unless asked), receivablesByCurrency lists each apart", async () => {
    const acc = await createAccount(t);
    const asOf = '2026-06-15';
    for (const [amount, currency, days] of [[187000, 'JPY', 10], [127.524, 'KWD', 40], [7557.78, 'EUR', 0], [0.1, 'EUR', 100], [5, 'USD', 0]] as const) {
      const invoice = await createInvoice(acc, amount, daysFrom(asOf, -days), currency);
      await setInvoiceStatus(acc, invoice.id, 'sent');
    }
    const BY_CURRENCY = `query ($id: ID!, $asOf: Date, $currency: String) { account(id: $id) {
      receivables(asOf: $asOf, currency: $currency) { currency total count }
      receivablesByCurrency(asOf: $asOf) { currency total count buckets { label count amount } } } }`;
    const read = (currency?: string) => gql(acc.member, BY_CURRENCY, { id: acc.id, asOf, currency });
    const all = await read();
    expect(all.receivables).toEqual({ currency: 'USD', total: 5, count: 1 });
    expect((await read('kwd')).receivables).toEqual({ currency: 'KWD', total: 127.524, count: 1 });
    expect((await read('GBP')).receivables).toEqual({ currency: 'GBP', total: 0, count: 0 });
    const zeros = (label: string) => ({ label, count: 0, amount: 0 });
    expect(all.receivablesByCurrency).toEqual([
      { currency: 'EUR', total: 7557.88, count: 2, buckets: [{ label: 'current', count: 1, amount: 7557.78 }, zeros('1-30'), zeros('31-60'), zeros('61-90'), { label: 'over-90', count: 1, amount: 0.1 }] },
      { currency: 'JPY', total: 187000, count: 1, buckets: [zeros('current'), { label: '1-30', count: 1, amount: 187000 }, zeros('31-60'), zeros('61-90'), zeros('over-90')] },
      { currency: 'KWD', total: 127.524, count: 1, buckets: [zeros('current'), zeros('1-30'), { label: '31-60', count: 1, amount: 127.524 }, zeros('61-90'), zeros('over-90')] },
      { currency: 'USD', total: 5, count: 1, buckets: [{ label: 'current', count: 1, amount: 5 }, zeros('1-30'), zeros('31-60'), zeros('61-90'), zeros('over-90')] },
    ]);
    for (const currency of ['EUR', 'JPY', 'KWD']) await expectReportsExact(acc, { asOf, currency });
    // The account's default currency is what receivables reports when none is asked.
    await gql(acc.owner, 'mutation ($id: ID!) { updateAccount(id: $id, input: { defaultCurrency: "jpy" }) { defaultCurrency } }', { id: acc.id });
    expect((await read()).receivables).toEqual({ currency: 'JPY', total: 187000, count: 1 });
    const unknown = await t.gql(BY_CURRENCY, { id: acc.id, currency: 'XYZ' }, { as: acc.member });
    expect(errorOf(unknown).extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  test('an account with nothing owed still answers the five buckets, in order, at zero', async () => {
    const acc = await createAccount(t);
    expect((await reports(acc)).receivables).toEqual({
      currency: 'USD',
      total: 0,
      count: 0,
      buckets: ['current', '1-30', '31-60', '61-90', 'over-90'].map((label) => ({ label, count: 0, amount: 0 })),
    });
  });
});

describe('contactBreakdown', () => {
  test('every contact type and every source, zeros included, in the order of their enums', async () => {
    const acc = await createAccount(t);
    for (const [contactType, source] of [['client', 'referral'], ['client', 'website'], ['vendor', 'referral']] as const) {
      await t.db.contact.create({ data: { accountId: acc.id, firstName: unique('C'), contactType, source } });
    }
    const { contactBreakdown } = await reports(acc);
    expect(contactBreakdown.byType).toEqual([
      { key: 'lead', count: 0 }, { key: 'client', count: 2 }, { key: 'past_client', count: 0 }, { key: 'vendor', count: 1 }, { key: 'other', count: 0 },
    ]);
    expect(contactBreakdown.bySource.find((s: { key: string }) => s.key === 'referral')).toEqual({ key: 'referral', count: 2 });
    expect(contactBreakdown.bySource).toHaveLength(7);
    await expectReportsExact(acc);
  });
});

describe('access', () => {
  test("another account's reports: the same FORBIDDEN as any other field of an account the caller cannot see", async () => {
    const acc = await createAccount(t);
    const reportsAnswer = await t.gql(ACCOUNT_REPORTS, { id: acc.id }, { as: acc.outsider });
    const nameAnswer = await t.gql('query ($id: ID!) { account(id: $id) { name } }', { id: acc.id }, { as: acc.outsider });
    expect(reportsAnswer.data).toEqual(nameAnswer.data);
    const { locations: _a, ...reportsError } = errorOf(reportsAnswer) as { locations?: unknown };
    const { locations: _b, ...nameError } = errorOf(nameAnswer) as { locations?: unknown };
    expect(reportsError).toEqual(nameError);
    expect(errorOf(reportsAnswer).extensions?.code).toBe('FORBIDDEN');
  });
});

// ---- under concurrency ------------------------------------------------------------------------

const CALLERS = 12;
const OPS_PER_CALLER = 180; // 12 × 180 = 2,160 changes
const OPS = ['createDeal', 'createDeal', 'updateDeal', 'updateDeal', 'moveDeal', 'deleteDeal', 'createInvoice', 'moveInvoice', 'moveInvoice', 'createContact', 'updateContact', 'deleteContact', 'bulkSql'] as const;

type Caller = { acc: TestAccount; stages: (string | null)[]; deals: Map<string, DealStatus>; invoices: Map<string, InvoiceStatus>; contacts: string[] };

/** Deterministic per caller and step, so a failure replays the same way. */
const rand = (seed: number) => {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
};

async function change(c: Caller, op: (typeof OPS)[number], r: () => number) {
  const { acc } = c;
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)]!;
  const cents = () => Math.round(r() * 10_000_000) / 100;
  const dealId = () => (c.deals.size ? pick([...c.deals.keys()]) : null);
  switch (op) {
    case 'createDeal': {
      const deal = await createDeal(acc, { value: cents(), probability: pick([0, 10, 33.3, 50, 99.9, 100]), stageId: pick(c.stages) });
      c.deals.set(deal.id, 'open');
      return;
    }
    case 'updateDeal': {
      const id = dealId();
      if (!id) return;
      const input = pick([{ value: cents() }, { probability: pick([5, 66.6, 75]) }, { stageId: pick(c.stages) }, { value: cents(), stageId: pick(c.stages), probability: 12.5 }]);
      await gql(acc.member, 'mutation ($id: ID!, $i: UpdateDealInput!) { updateDeal(id: $id, input: $i) { id } }', { id, i: input });
      return;
    }
    case 'moveDeal': {
      const id = dealId();
      if (!id) return;
      const to = pick(DEAL_TRANSITIONS[c.deals.get(id)!]);
      await gql(acc.member, 'mutation ($id: ID!, $s: DealStatus!) { setDealStatus(id: $id, status: $s) { id } }', { id, s: to });
      c.deals.set(id, to);
      return;
    }
    case 'deleteDeal': {
      const id = dealId();
      if (!id) return;
      c.deals.delete(id);
      await gql(acc.member, 'mutation ($id: ID!) { deleteDeal(id: $id) { id } }', { id });
      return;
    }
    case 'createInvoice': {
      const invoice = await createInvoice(acc, cents(), daysFrom(today(), Math.floor(r() * 240) - 150));
      c.invoices.set(invoice.id, 'draft');
      return;
    }
    case 'moveInvoice': {
      const movable = [...c.invoices].filter(([, s]) => INVOICE_TRANSITIONS[s].length > 0);
      if (!movable.length) return;
      const [id, from] = pick(movable);
      const to = pick(INVOICE_TRANSITIONS[from]);
      await setInvoiceStatus(acc, id, to);
      c.invoices.set(id, to);
      return;
    }
    case 'createContact': {
      const input = { accountId: acc.id, firstName: unique('C'), contactType: pick(['lead', 'client', 'vendor']), source: pick(['website', 'referral', 'other']) };
      c.contacts.push((await gql(acc.member, 'mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: input })).id);
      return;
    }
    case 'updateContact': {
      if (!c.contacts.length) return;
      const input = pick([{ source: pick(['social_media', 'website']) }, { contactType: 'past_client' }, { lastName: 'Unrelated' }]);
      await gql(acc.member, 'mutation ($id: ID!, $i: UpdateContactInput!) { updateContact(id: $id, input: $i) { id } }', { id: pick(c.contacts), i: input });
      return;
    }
    case 'deleteContact': {
      if (!c.contacts.length) return;
      const id = c.contacts.splice(Math.floor(r() * c.contacts.length), 1)[0]!;
      await gql(acc.member, 'mutation ($id: ID!) { deleteContact(id: $id) { id } }', { id });
      return;
    }
    case 'bulkSql': {
      // Statements of many rows (as the CLI, erasure or a migration write): one trigger call each.
      const ids = [...c.invoices.keys()].filter(() => r() < 0.3);
      if (ids.length) await t.db.$executeRaw`UPDATE invoices SET amount = amount + 0.01, due_date = due_date - 7 WHERE id = ANY (${ids}::uuid[])`;
      const gone = [...c.deals.keys()].filter(() => r() < 0.05);
      for (const id of gone) c.deals.delete(id);
      if (gone.length) await t.db.$executeRaw`DELETE FROM deals WHERE id = ANY (${gone}::uuid[])`;
      return;
    }
  }
}

describe('under concurrency', () => {
  test('after 2,160 concurrent creates, updates of value, probability, stage and status, and deletes, on two accounts, every report equals plain SQL', { timeout: 600_000 }, async () => {
    const accounts = [await createAccount(t), await createAccount(t)];
    const stagesOf = new Map<string, (string | null)[]>();
    for (const acc of accounts) stagesOf.set(acc.id, [null, (await createStage(acc, 'S1', 1)).id, (await createStage(acc, 'S2', 2)).id]);
    const callers: Caller[] = Array.from({ length: CALLERS }, (_, i) => ({
      acc: accounts[i % accounts.length]!, stages: stagesOf.get(accounts[i % accounts.length]!.id)!, deals: new Map(), invoices: new Map(), contacts: [],
    }));
    await Promise.all(
      callers.map(async (caller, i) => {
        const r = rand(i + 1);
        for (let step = 0; step < OPS_PER_CALLER; step++) await change(caller, OPS[Math.floor(r() * OPS.length)]!, r);
      }),
    );
    for (const acc of accounts) {
      const sql = await reportsBySql(t.db, acc.id, {});
      expect(sql.pipeline.reduce((n, s) => n + s.count, 0)).toBeGreaterThan(0);
      expect(sql.receivables.count).toBeGreaterThan(0);
      await expectReportsExact(acc);
      const month = today().slice(0, 8);
      await expectReportsExact(acc, { from: `${month}01`, to: today(), asOf: daysFrom(today(), 45) });
    }
  });
});
