import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createMember } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §4 and §20: a create without a number takes the account's next one in the same
// statement that writes the invoice, its lines and its event (src/invoices/invoice-create.ts).

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const LINES = [
  { description: 'Design', quantity: 3, unit_price: 0.1, tax_rate: 7.25 },
  { description: 'Build', quantity: 1.5, unit_price: 19.99, discount_percent: 10, tax_rate: 7.25 },
];
const numbered = (n: number) => `INV-${String(n).padStart(6, '0')}`;

describe('POST /api/v1/invoices numbering', () => {
  it('20 concurrent creates with lines in one account get INV-000001 to INV-000020: distinct, no gap, each event with its number', async () => {
    const acc = await createAccount(t);
    const users = [acc.owner, acc.member, await createMember(t, acc.id), await createMember(t, acc.id)];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.rest('POST', '/api/v1/invoices', { as: users[i % users.length], body: { account_id: acc.id, due_date: '2030-01-31', lines: LINES } })),
    );
    expect(answers.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.text}`)).toEqual([]);
    const numbers = answers.map((r) => r.body.data.invoice_number as string);
    expect([...numbers].sort()).toEqual(Array.from({ length: 20 }, (_, i) => numbered(i + 1)));
    expect((await t.db.account.findUniqueOrThrow({ where: { id: acc.id } })).nextInvoiceNumber).toBe(21);
    const events = await t.db.event.findMany({ where: { accountId: acc.id, type: 'invoice.created' } });
    expect(events).toHaveLength(20);
    const numberOf = new Map(answers.map((r) => [r.body.data.id as string, r.body.data.invoice_number as string]));
    for (const event of events) expect((event.data as { object: { invoice_number: string } }).object.invoice_number).toBe(numberOf.get(event.subjectId!));
    expect(await t.db.invoiceLine.count({ where: { accountId: acc.id } })).toBe(40);
  });

  it('the answer, made from the rows written, is what a read of the invoice answers; the event shows the same record', async () => {
    const acc = await createAccount(t);
    const created = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: '2030-01-31', memo: 'Thanks', external_id: 'erp-1', lines: LINES } });
    expect(created.status).toBe(201);
    const read = await t.rest('GET', `/api/v1/invoices/${created.body.data.id}`, { as: acc.owner });
    expect(created.body.data).toEqual(read.body.data);
    expect(created.body.data).toMatchObject({ invoice_number: 'INV-000001', subtotal: 30.29, discount_total: 3, tax_total: 1.98, total: 29.27, amount: 29.27, contacts: null });
    expect(created.body.data.lines.map((l: { position: number }) => l.position)).toEqual([0, 1]);
    const [event] = await t.db.event.findMany({ where: { accountId: acc.id, type: 'invoice.created' } });
    const { object } = event!.data as { object: Record<string, unknown> };
    expect(object).toMatchObject({ id: created.body.data.id, invoice_number: 'INV-000001', amount: 29.27, subtotal: 30.29, status: 'draft', due_date: '2030-01-31', memo: 'Thanks', external_id: 'erp-1', amount_paid: 0, contact_id: null });
    expect(object.created_at).toBe(created.body.data.created_at);
  });

  it('a taken external id is a 400 on external_id and uses no number; the next create gets the next one', async () => {
    const acc = await createAccount(t);
    const body = { account_id: acc.id, due_date: '2030-01-31', external_id: 'erp-7', amount: 10 };
    expect((await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body })).status).toBe(201);
    const again = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body });
    expect(again.status, again.text).toBe(400);
    expect(again.body.details, again.text).toEqual({ external_id: ['Already used in this account'] });
    const next = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { ...body, external_id: 'erp-8' } });
    expect(next.body.data.invoice_number).toBe('INV-000002');
  });

  it('a next number taken by hand is stepped over; numbers past INV-999999 keep every digit', async () => {
    const acc = await createAccount(t);
    await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: '2030-01-31', amount: 1, invoice_number: 'INV-000001' } });
    const first = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: '2030-01-31', amount: 1 } });
    expect(first.body.data.invoice_number).toBe('INV-000002');
    await t.db.account.update({ where: { id: acc.id }, data: { nextInvoiceNumber: 1_000_000 } });
    const long = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: '2030-01-31', amount: 1 } });
    expect(long.body.data.invoice_number).toBe('INV-1000000');
  });

  it('an Idempotency-Key retry of a create answers the first invoice and takes no second number', async () => {
    const acc = await createAccount(t);
    const send = () => t.rest('POST', '/api/v1/invoices', { as: acc.owner, headers: { 'idempotency-key': 'create-once' }, body: { account_id: acc.id, due_date: '2030-01-31', lines: LINES } });
    const first = await send();
    const retry = await send();
    expect(first.status).toBe(201);
    expect(retry.body.data).toEqual(first.body.data);
    expect(await t.db.invoice.count({ where: { accountId: acc.id } })).toBe(1);
    expect((await t.db.account.findUniqueOrThrow({ where: { id: acc.id } })).nextInvoiceNumber).toBe(2);
  });
});
