import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, createMember, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { restResource } from '../helpers/rest.js';

// REST contract: GET /api/v1/invoices (docs/rest.md; docs/decisions.md §2, §3).
// Who may call each endpoint (owner, member, outsider, anonymous, an unknown account) and that a
// refused call writes nothing: test/security/access-matrix.test.ts.

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LIST_ITEM_KEYS = ['amount', 'amount_due', 'contacts', 'created_at', 'currency', 'custom_fields', 'due_date', 'external_id', 'id', 'invoice_number', 'status', 'updated_at'];
// GET by id and create answer the list item's keys and these (docs/decisions.md §20).
const RECORD_KEYS = ['lines', 'subtotal', 'discount_total', 'tax_total', 'total', 'amount_paid', 'memo', 'issued_at', 'paid_at', 'hosted_url'];
const STATES = ['draft', 'sent', 'viewed', 'partial', 'paid', 'overdue', 'cancelled', 'refunded'] as const;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const { list } = restResource(() => t, '/api/v1/invoices');

let numbers = 0;
const invoice = (accountId: string, data: Record<string, unknown> = {}) =>
  t.db.invoice.create({
    data: { accountId, invoiceNumber: `T-${++numbers}`, amount: 100, dueDate: new Date(Date.UTC(2027, 0, 31)), ...data },
  });

describe('GET /api/v1/invoices', () => {
  let acc: TestAccount;
  let contact: { id: string };
  let billed: { id: string; createdAt: Date };
  beforeAll(async () => {
    acc = await createAccount(t);
    contact = await createContact(t, acc, { firstName: 'Katherine', lastName: 'Johnson' });
    await invoice(acc.id, { invoiceNumber: 'INV-000001', amount: 0.1, createdAt: new Date(Date.UTC(2024, 0, 1)) });
    billed = await invoice(acc.id, {
      invoiceNumber: 'INV-000002', amount: 1234.5, status: 'sent', contactId: contact.id,
      dueDate: new Date(Date.UTC(2024, 1, 29)), createdAt: new Date(Date.UTC(2024, 0, 2)),
    });
  });

  it('answers 200 with the list envelope {data, total, page, page_size, next_cursor}, page 1 and page_size 25 by default', async () => {
    const r = await list(acc.id, acc.owner);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'next_cursor', 'page', 'page_size', 'total']);
    expect(r.body).toMatchObject({ total: 2, page: 1, page_size: 25 });
  });

  it('each item has exactly id, invoice_number, amount, status, due_date, external_id, contacts, custom_fields, created_at, updated_at', async () => {
    for (const item of (await list(acc.id, acc.owner)).body.data) expect(Object.keys(item).sort()).toEqual(LIST_ITEM_KEYS);
  });

  it('amount is a JSON number, due_date YYYY-MM-DD, created_at ISO 8601 UTC with Z, contacts {id, first_name, last_name}', async () => {
    const r = await list(acc.id, acc.owner);
    expect(r.body.data[0]).toEqual({
      id: billed.id,
      custom_fields: {},
      invoice_number: 'INV-000002',
      amount: 1234.5,
      currency: 'USD',
      amount_due: 1234.5,
      status: 'sent',
      due_date: '2024-02-29',
      external_id: null,
      contacts: { id: contact.id, first_name: 'Katherine', last_name: 'Johnson' },
      created_at: billed.createdAt.toISOString(),
      updated_at: expect.stringMatching(ISO_Z),
    });
    expect(r.body.data[0].created_at).toMatch(ISO_Z);
    expect(r.text).toContain('"amount":1234.5');
  });

  it('contacts is null when the invoice has no contact', async () => {
    const [, item] = (await list(acc.id, acc.owner)).body.data;
    expect(item).toMatchObject({ invoice_number: 'INV-000001', amount: 0.1, status: 'draft', contacts: null });
  });

  it("never lists another account's invoices", async () => {
    const other = await createAccount(t);
    await invoice(other.id, { invoiceNumber: 'INV-000001' });
    const numbersSeen = (await list(acc.id, acc.owner)).body.data.map((i: { invoice_number: string }) => i.invoice_number);
    expect(numbersSeen).toEqual(['INV-000002', 'INV-000001']);
  });

  describe('account_id', () => {
    it('an account_id that is not a UUID is a 400 on account_id; a missing one is Required', async () => {
      const r = await list('00000000-0000-0000-0000', acc.owner);
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { account_id: ['Must be a UUID'] } }]);
      const missing = await t.rest('GET', '/api/v1/invoices?page=1', { as: acc.owner });
      expect([missing.status, missing.body]).toEqual([400, { error: 'Invalid query', details: { account_id: ['Required'] } }]);
    });
  });

  describe('paging and order', () => {
    let paged: TestAccount;
    let expected: string[];
    beforeAll(async () => {
      paged = await createAccount(t);
      const base = Date.UTC(2024, 5, 1);
      for (const offset of [0, 500, 500, 500, 900]) await invoice(paged.id, { createdAt: new Date(base + offset) });
      const rows = await t.db.invoice.findMany({ where: { accountId: paged.id } });
      expected = rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((i) => i.id);
    });

    it('is newest first (created_at desc, then id desc), stable across first, middle and last pages', async () => {
      const ids: string[] = [];
      for (const page of [1, 2, 3]) {
        const r = await list(paged.id, paged.owner, { page, page_size: 2 });
        expect(r.body).toMatchObject({ total: 5, page, page_size: 2 });
        ids.push(...r.body.data.map((i: { id: string }) => i.id));
      }
      expect(ids).toEqual(expected);
    });

    it('a page past the end is 200 with data [] and the true total', async () => {
      const r = await list(paged.id, paged.owner, { page: 50, page_size: 100 });
      expect([r.status, r.body]).toEqual([200, { data: [], total: 5, page: 50, page_size: 100, next_cursor: null }]);
    });

    it.each([
      ['page', '0', 'Must be at least 1'],
      ['page', 'abc', 'Must be an integer'],
      ['page', '2.5', 'Must be an integer'],
      ['page_size', '0', 'Must be from 1 to 100'],
      ['page_size', '101', 'Must be from 1 to 100'],
      ['page_size', 'abc', 'Must be an integer'],
      ['page_size', '2.5', 'Must be an integer'],
    ])('%s %s is a 400 "Invalid query" on %s', async (param, value, message) => {
      const r = await list(paged.id, await createMember(t, paged.id), { [param]: value });
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { [param]: [message] } }]);
    });
  });

  describe('status filter', () => {
    let filtered: TestAccount;
    beforeAll(async () => {
      filtered = await createAccount(t);
      for (const status of [...STATES, 'paid'] as const) await invoice(filtered.id, { status });
    });

    it.each(STATES)('status=%s lists only invoices in that state', async (status) => {
      const r = await list(filtered.id, await createMember(t, filtered.id), { status });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(status === 'paid' ? 2 : 1);
      for (const item of r.body.data) expect(item.status).toBe(status);
    });

    it('an invalid status is a 400 "Invalid query" naming status', async () => {
      const r = await list(filtered.id, filtered.owner, { status: 'unpaid' });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Invalid query');
      expect(Object.keys(r.body.details)).toEqual(['status']);
      for (const value of STATES) expect(r.body.details.status[0]).toContain(value);
    });

    it('unknown query parameters are ignored', async () => {
      const r = await list(filtered.id, filtered.owner, { type: 'x', q: 'INV', sort_by: '-amount' });
      expect([r.status, r.body.total]).toEqual([200, 9]);
    });
  });
});

// docs/decisions.md §18: invoices are written on REST too, each route onto its GraphQL operation.
describe('POST /api/v1/invoices', () => {
  it('creates a draft with its assigned number: 201 {data: the invoice as GET by id shows it}', async () => {
    const acc = await createAccount(t);
    const contact = await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace' });
    const r = await t.rest('POST', '/api/v1/invoices', {
      as: acc.member,
      body: { account_id: acc.id, amount: 250.5, due_date: '2030-06-30', contact_id: contact.id, external_id: 'bill-1' },
    });
    expect(r.status, r.text).toBe(201);
    expect(Object.keys(r.body.data).sort()).toEqual([...LIST_ITEM_KEYS, ...RECORD_KEYS].sort());
    expect(r.body.data).toMatchObject({
      invoice_number: 'INV-000001', amount: 250.5, status: 'draft', due_date: '2030-06-30', external_id: 'bill-1',
      contacts: { id: contact.id, first_name: 'Ada', last_name: 'Lovelace' },
    });
    const byId = await t.rest('GET', `/api/v1/invoices/${r.body.data.id}`, { as: acc.member });
    expect(byId.body.data).toEqual(r.body.data);
  });

  it('a create that names another status than draft is a 400 on status, and nothing is written', async () => {
    const acc = await createAccount(t);
    const r = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, amount: 1, due_date: '2030-01-01', status: 'paid' } });
    expect([r.status, r.body.error, Object.keys(r.body.details ?? {})]).toEqual([400, 'Invalid payload', ['status']]);
    expect(await t.db.invoice.count({ where: { accountId: acc.id } })).toBe(0);
  });
});

describe('PATCH and DELETE /api/v1/invoices/{id}: drafts only', () => {
  it('a draft changes and answers the invoice with its new ETag; a sent invoice is a 409 and stays as it was', async () => {
    const acc = await createAccount(t);
    const draft = await invoice(acc.id);
    const r = await t.rest('PATCH', `/api/v1/invoices/${draft.id}`, { as: acc.member, body: { amount: 75 } });
    expect([r.status, r.body.data.amount]).toEqual([200, 75]);
    expect(r.headers.get('etag')).toBe(`"${r.body.data.updated_at}"`);

    const sent = await invoice(acc.id, { status: 'sent' });
    const refused = await t.rest('PATCH', `/api/v1/invoices/${sent.id}`, { as: acc.member, body: { amount: 75 } });
    expect(refused.status).toBe(409);
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: sent.id } })).amount.toString()).toBe('100');
    expect((await t.rest('DELETE', `/api/v1/invoices/${sent.id}`, { as: acc.member })).status).toBe(409);
  });

  it('a draft is deleted with 204; a second delete is 404', async () => {
    const acc = await createAccount(t);
    const draft = await invoice(acc.id);
    expect((await t.rest('DELETE', `/api/v1/invoices/${draft.id}`, { as: acc.member })).status).toBe(204);
    expect([(await t.rest('DELETE', `/api/v1/invoices/${draft.id}`, { as: acc.member })).status]).toEqual([404]);
  });
});

describe('POST /api/v1/invoices/{id}/status', () => {
  it('moves the invoice along the §8 machine: 200 {data: the invoice as GET by id shows it}, with its event', async () => {
    const acc = await createAccount(t);
    const draft = await invoice(acc.id);
    const r = await t.rest('POST', `/api/v1/invoices/${draft.id}/status`, { as: acc.member, body: { status: 'sent' } });
    expect([r.status, r.body.data.status]).toEqual([200, 'sent']);
    expect(r.body.data).toEqual((await t.rest('GET', `/api/v1/invoices/${draft.id}`, { as: acc.member })).body.data);
    expect(await t.db.event.count({ where: { accountId: acc.id, type: 'invoice.status_changed', subjectId: draft.id } })).toBe(1);
  });

  it('a move the machine refuses is a 409 {"error":"Invalid transition","details":{"status":[...]}} and changes nothing', async () => {
    const acc = await createAccount(t);
    const paid = await invoice(acc.id, { status: 'paid' });
    const r = await t.rest('POST', `/api/v1/invoices/${paid.id}/status`, { as: acc.member, body: { status: 'draft' } });
    expect([r.status, r.body]).toEqual([409, { error: 'Invalid transition', details: { status: ['Cannot move from paid to draft'] } }]);
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: paid.id } })).status).toBe('paid');
  });

  it("another account's invoice and an unknown id are the same 404", async () => {
    const acc = await createAccount(t);
    const other = await createAccount(t);
    const theirs = await invoice(other.id);
    const foreign = await t.rest('POST', `/api/v1/invoices/${theirs.id}/status`, { as: acc.owner, body: { status: 'sent' } });
    const unknown = await t.rest('POST', `/api/v1/invoices/${randomUUID()}/status`, { as: acc.owner, body: { status: 'sent' } });
    expect([foreign.status, foreign.body]).toEqual([404, { error: 'Not found' }]);
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'Not found' }]);
  });
});
