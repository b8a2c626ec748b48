import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type GqlResult, type TestApp } from '../helpers/app.js';

// docs/decisions.md §20 "Exact money": currency, lines, totals and their bounds, in GraphQL and REST.

const FIELDS = 'id amount currency subtotal discountTotal taxTotal total amountPaid amountDue memo status lines { position description quantity unitPrice discountPercent taxRate amount tax }';
const CREATE = `mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { ${FIELDS} } }`;
const UPDATE = `mutation ($id: ID!, $input: UpdateInvoiceInput!) { updateInvoice(id: $id, input: $input) { ${FIELDS} } }`;

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const DUE = '2027-03-31';
const create = (input: Record<string, unknown>) => t.gql(CREATE, { input: { accountId: acc.id, dueDate: DUE, ...input } }, { as: acc.owner });
const created = async (input: Record<string, unknown>) => {
  const r = await create(input);
  expect(r.errors).toBeUndefined();
  return r.data.createInvoice;
};
const details = (r: GqlResult) => {
  expect(errorOf(r).extensions?.code).toBe('BAD_USER_INPUT');
  return errorOf(r).extensions?.details;
};
const line = (more: Record<string, unknown> = {}) => ({ description: 'Consulting', unitPrice: 10, ...more });

describe('exact money on create', () => {
  test('3 × 0.10 is 0.30 exactly; USD by default; amountDue is the total', async () => {
    const invoice = await created({ lines: [line({ quantity: 3, unitPrice: 0.1 })], memo: 'Thanks' });
    expect(invoice).toMatchObject({ currency: 'USD', subtotal: 0.3, discountTotal: 0, taxTotal: 0, total: 0.3, amount: 0.3, amountPaid: 0, amountDue: 0.3, memo: 'Thanks' });
    expect(invoice.lines).toEqual([{ position: 0, description: 'Consulting', quantity: 3, unitPrice: 0.1, discountPercent: 0, taxRate: 0, amount: 0.3, tax: 0 }]);
  });

  test('19.99 at 7.25 % tax is 1.45; lines keep their order; discounts come off before tax', async () => {
    const invoice = await created({ lines: [line({ unitPrice: 19.99, taxRate: 7.25 }), line({ description: 'Second', unitPrice: 10.05, discountPercent: 15, taxRate: 10 })] });
    expect(invoice.lines.map((l: { description: string; tax: number }) => [l.description, l.tax])).toEqual([['Consulting', 1.45], ['Second', 0.85]]);
    expect(invoice).toMatchObject({ subtotal: 30.04, discountTotal: 1.51, taxTotal: 2.3, total: 30.83 });
  });

  test('an invoice from amount alone has no lines and subtotal = total = amount', async () => {
    expect(await created({ amount: 12.5 })).toMatchObject({ lines: [], subtotal: 12.5, total: 12.5, amountDue: 12.5, currency: 'USD' });
  });

  test('a lower-case currency is upper-cased; JPY has no decimals, KWD three', async () => {
    expect(await created({ currency: 'jpy', lines: [line({ quantity: 3, unitPrice: 333, taxRate: 10 })] })).toMatchObject({ currency: 'JPY', total: 1099 });
    expect(await created({ currency: 'KWD', amount: 1.234 })).toMatchObject({ currency: 'KWD', total: 1.234 });
  });
});

describe('bad input on create (one 400 naming every field, lines.<index>.<field> in REST names)', () => {
  test('an unknown currency is a 400 naming the code', async () => {
    expect(details(await create({ currency: 'xyz', amount: 1 }))).toEqual({ currency: ['Unknown ISO 4217 currency code: XYZ'] });
  });

  test('more decimals than the currency allows is a 400 naming the field', async () => {
    expect(details(await create({ amount: 1.234 }))).toEqual({ amount: ['Must have at most 2 decimals in USD'] });
    expect(details(await create({ currency: 'JPY', lines: [line(), line({ unitPrice: 1.5 })] }))).toEqual({ 'lines.1.unit_price': ['Must have at most 0 decimals in JPY'] });
  });

  test('amount and lines together, or neither, is a 400', async () => {
    expect(details(await create({ amount: 1, lines: [line()] }))).toEqual({ amount: ['Give amount or lines, not both'] });
    expect(details(await create({}))).toEqual({ amount: ['Required (or lines)'] });
  });

  test("every failing field of a line is named, 0-based, with REST's names", async () => {
    const bad = { description: ' ', quantity: 0, unitPrice: -1, discountPercent: 100.5, taxRate: 1.2345 };
    expect(details(await create({ lines: [line(), bad], memo: 'x'.repeat(2001) }))).toEqual({
      'lines.1.description': ['Required'],
      'lines.1.quantity': ['Must be greater than 0 and at most 1000000'],
      'lines.1.unit_price': ['Must be from 0 to 9999999999.99'],
      'lines.1.discount_percent': ['Must be from 0 to 100'],
      'lines.1.tax_rate': ['Must have at most 3 decimals'],
      memo: ['Must be at most 2000 characters'],
    });
  });

  test('bounds: 1 to 100 lines, description up to 500, quantity up to 1,000,000 with 4 decimals, total up to 9,999,999,999.99', async () => {
    expect(details(await create({ lines: [] }))).toEqual({ lines: ['Must have 1 to 100 lines'] });
    expect(details(await create({ lines: Array.from({ length: 101 }, () => line()) }))).toEqual({ lines: ['Must have 1 to 100 lines'] });
    expect(details(await create({ lines: [line({ description: 'x'.repeat(501) })] }))).toEqual({ 'lines.0.description': ['Must be at most 500 characters'] });
    expect(details(await create({ lines: [line({ quantity: 1_000_000.5 }), line({ quantity: 0.00001 })] }))).toEqual({
      'lines.0.quantity': ['Must be greater than 0 and at most 1000000'],
      'lines.1.quantity': ['Must have at most 4 decimals'],
    });
    expect(details(await create({ lines: [line({ unitPrice: 9_999_999_999.99 }), line({ unitPrice: 0.01 })] }))).toEqual({ lines: ['The total must be at most 9999999999.99'] });
  });

  test('a refused create writes nothing', async () => {
    const before = await t.db.invoice.count({ where: { accountId: acc.id } });
    await create({ lines: [line(), line({ unitPrice: -1 })] });
    expect(await t.db.invoice.count({ where: { accountId: acc.id } })).toBe(before);
  });
});

describe('drafts edit their money', () => {
  test('new lines replace every line; an amount replaces the lines; a new currency re-prices what is kept', async () => {
    const { id } = await created({ lines: [line(), line(), line()] });
    const update = (input: Record<string, unknown>) => t.gql(UPDATE, { id, input }, { as: acc.owner });
    const replaced = (await update({ lines: [line({ description: 'Only', unitPrice: 19.99, taxRate: 7.25 })] })).data.updateInvoice;
    expect(replaced).toMatchObject({ total: 21.44, lines: [{ position: 0, description: 'Only', tax: 1.45 }] });
    expect(details(await update({ currency: 'JPY' }))).toEqual({ 'lines.0.unit_price': ['Must have at most 0 decimals in JPY'] });
    expect((await update({ currency: 'kwd' })).data.updateInvoice).toMatchObject({ currency: 'KWD', total: 21.439 });
    expect(details(await update({ lines: null }))).toEqual({ lines: ['Required'] });
    expect((await update({ amount: 5 })).data.updateInvoice).toMatchObject({ lines: [], subtotal: 5, total: 5 });
    expect(await t.db.invoiceLine.count({ where: { invoiceId: id } })).toBe(0);
  });
});

describe('REST (docs/rest.md)', () => {
  test('POST /api/v1/invoices takes currency, lines in snake_case and memo; GET and the list show the money', async () => {
    const body = { account_id: acc.id, due_date: DUE, currency: 'eur', memo: 'Net 30', lines: [{ description: 'Design', quantity: 2, unit_price: 19.99, discount_percent: 10, tax_rate: 7.25 }] };
    const r = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body });
    expect(r.status).toBe(201);
    expect((r.body as { data: unknown }).data).toMatchObject({
      currency: 'EUR', memo: 'Net 30', subtotal: 39.98, discount_total: 4, tax_total: 2.61, total: 38.59, amount: 38.59, amount_paid: 0, amount_due: 38.59, paid_at: null,
      lines: [{ position: 0, description: 'Design', quantity: 2, unit_price: 19.99, discount_percent: 10, tax_rate: 7.25, amount: 35.98, tax: 2.61 }],
    });
    const id = (r.body as { data: { id: string } }).data.id;
    expect(((await t.rest('GET', `/api/v1/invoices/${id}`, { as: acc.owner })).body as { data: unknown }).data).toMatchObject({ total: 38.59, lines: [{ unit_price: 19.99 }] });
    const listed = (await t.rest('GET', `/api/v1/invoices?account_id=${acc.id}&page_size=100`, { as: acc.owner })).body as { data: { id: string }[] };
    expect(listed.data.find((item) => item.id === id)).toMatchObject({ currency: 'EUR', amount_due: 38.59 });
  });

  test("a line's problems are lines.<index>.<field> in REST too, every one in one 400", async () => {
    const body = { account_id: acc.id, due_date: DUE, currency: 'JPY', lines: [{ description: 'ok', unit_price: 1 }, { description: '', unit_price: 1.5, tax_rate: 101 }] };
    const r = await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body });
    expect(r.status).toBe(400);
    expect((r.body as { details: unknown }).details).toEqual({
      'lines.1.description': ['Required'],
      'lines.1.unit_price': ['Must have at most 0 decimals in JPY'],
      'lines.1.tax_rate': ['Must be from 0 to 100'],
    });
  });
});

// docs/decisions.md §26: an invoice created without a currency is in the account's defaultCurrency.
describe("the account's default currency", () => {
  const SET_DEFAULT = 'mutation ($id: ID!, $c: String!) { updateAccount(id: $id, input: { defaultCurrency: $c }) { defaultCurrency } }';

  test("an invoice created without a currency is in the account's defaultCurrency (USD until set), and judged in it", async () => {
    const own = await createAccount(t);
    const make = (input: Record<string, unknown>) => t.gql(CREATE, { input: { accountId: own.id, dueDate: DUE, ...input } }, { as: own.member });
    expect((await make({ amount: 10.5 })).data?.createInvoice).toMatchObject({ currency: 'USD', amount: 10.5 });
    expect((await t.gql(SET_DEFAULT, { id: own.id, c: 'jpy' }, { as: own.owner })).data?.updateAccount).toEqual({ defaultCurrency: 'JPY' });
    expect((await make({ amount: 1500 })).data?.createInvoice).toMatchObject({ currency: 'JPY', amount: 1500, total: 1500 });
    // Judged in yen: a fraction is a 400 naming amount, or the line's unit_price, beside the form's other problems.
    expect(details(await make({ amount: 10.5 }))).toEqual({ amount: ['Must have at most 0 decimals in JPY'] });
    expect(details(await make({ lines: [line({ unitPrice: 0.5 })], memo: 'x'.repeat(2001) }))).toEqual({
      'lines.0.unit_price': ['Must have at most 0 decimals in JPY'],
      memo: ['Must be at most 2000 characters'],
    });
    // A currency given is kept.
    expect((await make({ amount: 10.5, currency: 'EUR' })).data?.createInvoice).toMatchObject({ currency: 'EUR', amount: 10.5 });
  });
});
