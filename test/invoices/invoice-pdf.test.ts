// docs/decisions.md §20 "PDF": GET /api/v1/invoices/{id}/pdf answers the invoice as a PDF whose
// text is real (read back here with Debian's pdftotext, poppler-utils; .ci/run installs it).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { skipIfMissing } from '../helpers/prerequisites.js';

const PDFTOTEXT = spawnSync('pdftotext', ['-v']).error ? null : 'pdftotext';

const CREATE = `mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { id invoiceNumber } }`;
const ERASE = `mutation ($id: ID!) { eraseContact(id: $id) { contactId } }`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

/** A sent invoice with lines (the page token set as sendInvoice sets it). */
async function sentInvoice(acc: TestAccount, input: Record<string, unknown>) {
  const r = await t.gql(CREATE, { input: { accountId: acc.id, dueDate: '2027-01-31', ...input } }, { as: acc.owner });
  expect(r.errors).toBeUndefined();
  const { id, invoiceNumber } = r.data.createInvoice as { id: string; invoiceNumber: string };
  await t.db.invoice.update({ where: { id }, data: { status: 'sent', issuedAt: new Date('2026-11-26T10:00:00Z'), pageToken: randomBytes(24).toString('base64url') } });
  return { id, invoiceNumber };
}

async function pdfOf(as: TestUser, id: string) {
  const response = await fetch(`${t.baseUrl}/api/v1/invoices/${id}/pdf`, { headers: { authorization: `Bearer ${as.token}`, 'x-forwarded-for': '198.51.100.7' } });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
}

const textOf = (pdf: Buffer): string => {
  const run = spawnSync(PDFTOTEXT!, ['-layout', '-', '-'], { input: pdf, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout;
};

describe.skipIf(skipIfMissing(PDFTOTEXT ? null : 'pdftotext (Debian poppler-utils)'))('GET /api/v1/invoices/{id}/pdf', () => {
  test('answers an attachment named invoice-<number>.pdf whose text has the account, number, dates, contact, lines, totals, paid, due, status and memo', async () => {
    const acc = await createAccount(t, 'Łódź Design Studio');
    const contact = await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace' });
    const { id, invoiceNumber } = await sentInvoice(acc, {
      contactId: contact.id,
      currency: 'EUR',
      memo: 'Payable within 30 days.',
      lines: [
        { description: 'Logo design', quantity: 3, unitPrice: 0.1 },
        { description: 'Brand book (Σοφία edition)', quantity: 2, unitPrice: 1250, discountPercent: 10, taxRate: 20 },
      ],
    });
    await t.db.invoice.update({ where: { id }, data: { amountPaid: '500', status: 'partial' } });

    const { response, bytes } = await pdfOf(acc.owner, id);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="invoice-${invoiceNumber}.pdf"`);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');

    const text = textOf(bytes);
    for (const shown of [
      'Łódź Design Studio', `Invoice ${invoiceNumber}`, 'Status: Partially paid', 'Bill to', 'Ada Lovelace',
      'Issued', '26 Nov 2026', 'Due', '31 Jan 2027', 'Logo design', 'Brand book (Σοφία edition)',
      'Payable within 30 days.',
    ]) expect(text).toContain(shown);
    // 3 × 0.10 is exactly 0.30; 2 × 1250 less 10 % is 2250, taxed 20 % is 450: total 2,700.30, 500 paid.
    expect(text).toMatch(/Subtotal\s+2,500\.30 EUR/);
    expect(text).toMatch(/Discount\s+-250\.00 EUR/);
    expect(text).toMatch(/Tax\s+450\.00 EUR/);
    expect(text).toMatch(/Total\s+2,700\.30 EUR/);
    expect(text).toMatch(/Paid\s+500\.00 EUR/);
    expect(text).toMatch(/Amount due\s+2,200\.30 EUR/);
    // As on the page: Amount is quantity × unit price (0.30 + 2,500.00 is the subtotal), the discount money in its own column.
    expect(text).toMatch(/Logo design\s+3\s+0\.10 EUR\s+0\.00 EUR\s+0\s+0\.30 EUR/);
    expect(text).toMatch(/2\s+1,250\.00 EUR\s+-250\.00 EUR\s+20\s+2,500\.00 EUR/);
  });

  test("another account's invoice is a 404, as an unknown one", async () => {
    const acc = await createAccount(t);
    const other = await createAccount(t);
    const { id } = await sentInvoice(acc, { amount: 10 });
    const r = await t.rest('GET', `/api/v1/invoices/${id}/pdf`, { as: other.owner });
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await t.rest('GET', `/api/v1/invoices/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/pdf`, { as: acc.owner })).status).toBe(404);
  });

  test("an erased contact's name is not in the PDF", async () => {
    const acc = await createAccount(t);
    const contact = await createContact(t, acc, { firstName: 'Grace', lastName: 'Hopper' });
    const { id } = await sentInvoice(acc, { contactId: contact.id, amount: 99 });
    expect(textOf((await pdfOf(acc.owner, id)).bytes)).toContain('Grace Hopper');
    expect((await t.gql(ERASE, { id: contact.id }, { as: acc.owner })).errors).toBeUndefined();
    const text = textOf((await pdfOf(acc.owner, id)).bytes);
    expect(text).not.toContain('Grace');
    expect(text).not.toContain('Bill to');
    expect(text).toMatch(/Total\s+99\.00 USD/); // an invoice made from amount alone: subtotal = total
    expect(text).toMatch(/Subtotal\s+99\.00 USD/);
  });

  test('a 100-line invoice runs onto further pages with every line and the header row on each', async () => {
    const acc = await createAccount(t);
    const lines = Array.from({ length: 100 }, (_, i) => ({ description: `Line number ${i + 1} of the long invoice`, quantity: 1, unitPrice: 1.01 }));
    const { id } = await sentInvoice(acc, { lines });
    const text = textOf((await pdfOf(acc.owner, id)).bytes);
    for (let i = 1; i <= 100; i++) expect(text).toContain(`Line number ${i} of the long invoice`);
    const pages = text.split('\f').filter((page) => page.trim());
    expect(pages.length).toBeGreaterThan(1);
    for (const page of pages.slice(0, -1)) expect(page).toMatch(/Description\s+Qty\s+Unit price/);
    expect(text).toMatch(/Total\s+101\.00 USD/);
  });
});
