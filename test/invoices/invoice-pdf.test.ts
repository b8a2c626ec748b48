// docs/decisions.md §20 "PDF": GET /api/v1/invoices/{id}/pdf answers the invoice as a PDF whose
// text is real (read back here with Debian's pdftotext, poppler-utils; .ci/run installs it).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

/** A poppler-utils tool's output for the PDF (pdfinfo -struct: its structure tree; pdffonts: its embedded fonts). */
const poppler = (tool: string, args: string[], pdf: Buffer): string => {
  const dir = mkdtempSync(path.join(tmpdir(), 'invoice-pdf-'));
  try {
    writeFileSync(path.join(dir, 'invoice.pdf'), pdf);
    const run = spawnSync(tool, [...args, path.join(dir, 'invoice.pdf')], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    return run.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

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

  test('pages after the first repeat the invoice number and say "Page n of m"; the first carries no number', async () => {
    const acc = await createAccount(t);
    const lines = Array.from({ length: 100 }, (_, i) => ({ description: `Line ${i + 1}`, quantity: 1, unitPrice: 2 }));
    const { id, invoiceNumber } = await sentInvoice(acc, { lines, memo: 'Thank you.' });
    const pages = textOf((await pdfOf(acc.owner, id)).bytes).split('\f').filter((page) => page.trim());
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages[0]).not.toMatch(/Page \d+ of/);
    pages.slice(1).forEach((page, i) => expect(page).toContain(`Invoice ${invoiceNumber} · Page ${i + 2} of ${pages.length}`));
  });

  test('a short invoice (4 lines and a memo with payment details) is one page', async () => {
    const acc = await createAccount(t, 'Northwind Studio');
    const contact = await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace' });
    const { id } = await sentInvoice(acc, {
      contactId: contact.id, currency: 'EUR',
      memo: 'Please pay by bank transfer within 30 days.\nIBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX\nReference: the invoice number.\nThank you for your business.',
      lines: [
        { description: 'Logo design: three concepts, two rounds of revisions and the final files', quantity: 1, unitPrice: 1800, taxRate: 19 },
        { description: 'Brand book', quantity: 2, unitPrice: 1250, discountPercent: 10, taxRate: 19 },
        { description: 'Business cards (500)', quantity: 500, unitPrice: 0.12, taxRate: 19 },
        { description: 'Consulting hours', quantity: 6.5, unitPrice: 95, taxRate: 19 },
      ],
    });
    const { bytes } = await pdfOf(acc.owner, id);
    expect(poppler('pdfinfo', [], bytes)).toMatch(/^Pages:\s+1$/m);
    expect(textOf(bytes)).toContain('Thank you for your business.');
  });

  test('every script comes out as real text: Japanese, Chinese, Korean, Arabic and Hebrew (shaped, with their spaces), Devanagari, Thai, Greek, Cyrillic, Latin with diacritics; each name and line is found', async () => {
    const acc = await createAccount(t, 'Studio Ωmega');
    const lines = [
      { description: '山田太郎様 ロゴ制作', quantity: 1, unitPrice: 100 },
      { description: 'تصميم الشعار لمحمد العلي', quantity: 1, unitPrice: 100 },
      { description: 'עיצוב לוגו לדוד כהן', quantity: 1, unitPrice: 100 },
      { description: 'Brand book for Zoë Ångström (Łódź, Ærø)', quantity: 1, unitPrice: 100 },
      { description: '김민준 웹사이트 디자인', quantity: 1, unitPrice: 100 },
      { description: '网站设计费用 王小明', quantity: 1, unitPrice: 100 },
      { description: 'Σοφία Παπαδοπούλου, Юлия Иванова', quantity: 1, unitPrice: 100 },
      { description: 'राहुल शर्मा के लिए वेबसाइट डिज़ाइन', quantity: 1, unitPrice: 100 },
      { description: 'ออกแบบโลโก้ให้สมชาย ใจดี', quantity: 1, unitPrice: 100 },
      { description: 'Invoice for सुनीता and สมหญิง', quantity: 1, unitPrice: 100 },
    ];
    // A line that changes direction midway: pdftotext moves the space at each change of direction to
    // the other side of it, so its parts are looked for one by one.
    const mixed = { description: 'Translation for محمد العلي and 山田太郎', quantity: 1, unitPrice: 100 };
    // A number inside Arabic text stands where the Arabic puts it, its digits left to right.
    const numbered = { description: 'فاتورة رقم 2026 لمحمد العلي', quantity: 1, unitPrice: 100 };
    for (const [firstName, lastName] of [['太郎', '山田'], ['محمد', 'العلي'], ['דוד', 'כהן'], ['Zoë', 'Ångström']] as const) {
      const contact = await createContact(t, acc, { firstName, lastName });
      const { id } = await sentInvoice(acc, { contactId: contact.id, currency: 'JPY', lines: [...lines, mixed, numbered], memo: `ありがとうございます — شكرا لك — תודה רבה — Merci, ${firstName}` });
      const { bytes } = await pdfOf(acc.owner, id);
      // Non-layout order: each line as the reader reads it.
      const run = spawnSync(PDFTOTEXT!, ['-', '-'], { input: bytes, encoding: 'utf8' });
      // A description wrapped in its cell reads with a space where it broke; pdftotext marks right-to-left runs (U+202A–U+202E).
      const text = run.stdout.replace(/[\u202A-\u202E]/g, '').replace(/\s+/g, ' ');
      expect(text, firstName).toContain(`${firstName} ${lastName}`);
      for (const line of lines) expect(text, line.description).toContain(line.description);
      for (const part of ['Translation for', 'محمد العلي', 'and 山田太郎', 'فاتورة رقم', '2026', 'لمحمد العلي']) expect(text, part).toContain(part);
      expect(text).not.toContain('6202');
      for (const memo of ['ありがとうございます', 'شكرا لك', 'תודה רבה', `Merci, ${firstName}`]) expect(text, memo).toContain(memo);
      // Fonts from the npm packages, embedded as subsets.
      const fonts = poppler('pdffonts', [], bytes);
      for (const family of ['DejaVuSans', 'NotoSansJP', 'NotoNaskhArabic', 'NotoSansHebrew', 'NotoSansKR', 'NotoSansHans', 'NotoSansDevanagari', 'NotoSansThai']) expect(fonts, family).toContain(family);
      expect(fonts).not.toMatch(/ no +no /); // every font embedded and subset
    }
  });

  test('a Latin-only invoice embeds DejaVu alone: no fallback font is loaded into it', async () => {
    const acc = await createAccount(t, 'Łódź Design Studio');
    const contact = await createContact(t, acc, { firstName: 'Zoë', lastName: 'Ångström' });
    const { id } = await sentInvoice(acc, { contactId: contact.id, currency: 'EUR', lines: [{ description: 'Café crème — 10 × “Über” façades', quantity: 1, unitPrice: 10 }] });
    const fonts = poppler('pdffonts', [], (await pdfOf(acc.owner, id)).bytes);
    const families = fonts.split('\n').slice(2).filter(Boolean).map((line) => line.split(/\s+/)[0]!.replace(/^[A-Z]{6}\+/, ''));
    expect(families.sort()).toEqual(['DejaVuSans', 'DejaVuSans-Bold']);
  });

  test('the PDF is tagged: a document with its H1, the lines as a Table of THead and TBody rows (TH per column, TH for each line, TD for its values), the totals as a table, in reading order', async () => {
    const acc = await createAccount(t, 'Northwind Studio');
    const { id, invoiceNumber } = await sentInvoice(acc, {
      currency: 'EUR', memo: 'Thank you.',
      lines: [{ description: 'Logo design', quantity: 1, unitPrice: 10 }, { description: 'Brand book', quantity: 2, unitPrice: 20 }],
    });
    const { bytes } = await pdfOf(acc.owner, id);
    const info = poppler('pdfinfo', [], bytes);
    expect(info).toMatch(/^Tagged:\s+yes$/m);
    expect(info).toMatch(/^Title:\s+Invoice /m);
    const struct = poppler('pdfinfo', ['-struct'], bytes).split('\n').filter((l) => /^\s*[A-Z][A-Za-z0-9]*( \(block\))?:?$/.test(l)).map((l) => l.replace(/ \(block\)|:/g, '').trimEnd());
    const row = (indent: string, first: string, rest: string) => [`${indent}TR`, `${indent}  ${first}`, ...Array(5).fill(`${indent}  ${rest}`)];
    expect(struct).toEqual([
      'Document',
      '  P', '  H1', '  P', // the account, "Invoice <number>", the status
      '  P', '  P', '  P', // issued, due, currency
      '  Table',
      '    THead', ...row('      ', 'TH', 'TH'),
      '    TBody', ...row('      ', 'TH', 'TD'), ...row('      ', 'TH', 'TD'),
      '  Table', ...Array.from({ length: 6 }, () => ['    TR', '      TH', '      TD']).flat(),
      '  H2', '  P', // the memo
    ]);
    // The structure's text, in order: what a screen reader reads.
    const text = textOf(bytes);
    expect(text.indexOf(`Invoice ${invoiceNumber}`)).toBeLessThan(text.indexOf('Logo design'));
  });
});
