// The client's invoice page (docs/decisions.md §20) in a real browser (Debian's Chromium through
// playwright-core) against the harness's real HTTP server: what a client sees, reads with a screen
// reader, prints and downloads. Without Chromium it skips locally and fails in CI (.ci/run installs it).
import { existsSync, mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { skipIfMissing } from '../helpers/prerequisites.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
/** Where the screenshots go, for a person to look at (not compared: fonts differ between machines); test-results/ is gitignored. */
const SHOTS = process.env.SCREENSHOT_DIR ?? 'test-results/invoice-page';
const CREATE = `mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { id invoiceNumber } }`;

let t: TestApp;
let acc: TestAccount;
let browser: Browser;
let page: Page;
const errors: string[] = [];

/** A sent invoice with lines, its page token set as sendInvoice sets it. */
async function sentInvoice() {
  const contact = await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace' });
  const input = {
    accountId: acc.id, contactId: contact.id, dueDate: '2027-01-31', currency: 'EUR', memo: 'Thank you for your business.',
    lines: [
      { description: 'Logo design <draft & final>', quantity: 3, unitPrice: 0.1 },
      { description: 'Brand book', quantity: 2, unitPrice: 1250, discountPercent: 10, taxRate: 20 },
    ],
  };
  const r = await t.gql(CREATE, { input }, { as: acc.owner });
  expect(r.errors).toBeUndefined();
  const { id, invoiceNumber } = r.data.createInvoice as { id: string; invoiceNumber: string };
  const token = randomBytes(24).toString('base64url');
  await t.db.invoice.update({ where: { id }, data: { status: 'sent', issuedAt: new Date('2026-11-26T09:00:00Z'), pageToken: token } });
  return { id, invoiceNumber, token };
}

describe.skipIf(skipIfMissing(existsSync(CHROMIUM) ? null : `Chromium at ${CHROMIUM}`))(`the client's invoice page in Chromium (${CHROMIUM})`, () => {
  beforeAll(async () => {
    t = await createTestApp();
    acc = await createAccount(t, 'Northwind Studio');
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 60_000 });
    page = await browser.newPage({ acceptDownloads: true });
    page.setDefaultTimeout(10_000);
    // A Content-Security-Policy violation is reported on the console as an error: the page must have none.
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
    page.on('pageerror', (error) => errors.push(error.message));
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the invoice with its headings, table headers and totals; the first view fires invoice.viewed once', async () => {
    const { id, invoiceNumber, token } = await sentInvoice();
    const response = await page.goto(`${t.baseUrl}/i/${token}`);
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toMatch(/^default-src 'none'; style-src 'nonce-/);
    expect(await page.title()).toBe(`Invoice ${invoiceNumber} from Northwind Studio`);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await page.screenshot({ path: `${SHOTS}/invoice-page.png`, fullPage: true });

    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Invoice ${invoiceNumber}`);
    expect(await page.getByRole('heading', { level: 2 }).allTextContents()).toEqual(['Details', 'Lines', 'Totals', 'Memo']);
    const lines = page.getByRole('table', { name: 'Lines' });
    expect(await lines.getByRole('columnheader').allTextContents()).toEqual(['Description', 'Quantity', 'Unit price', 'Discount', 'Tax rate', 'Amount']);
    expect(await lines.getByRole('rowheader').allTextContents()).toEqual(['Logo design <draft & final>', 'Brand book']);
    expect(await lines.locator('caption').textContent()).toBe(`What invoice ${invoiceNumber} bills, in EUR: each amount is quantity × unit price, before discount and tax`);
    // Amount is quantity × unit price: the column adds up to the subtotal; the discount is money in its own column.
    const cells = async (name: string) => (await lines.getByRole('row', { name: new RegExp(`^${name}`) }).getByRole('cell').allTextContents());
    expect(await cells('Brand book')).toEqual(['2', '1,250.00 EUR', '-250.00 EUR (10 %)', '20 %', '2,500.00 EUR']);
    expect(await cells('Logo design')).toEqual(['3', '0.10 EUR', '0.00 EUR', '0 %', '0.30 EUR']);
    const row = (name: string) => page.getByRole('table', { name: 'Totals' }).getByRole('row', { name: new RegExp(`^${name}`) }).getByRole('cell');
    expect(await row('Subtotal').textContent()).toBe('2,500.30 EUR');
    expect(await row('Discount').textContent()).toBe('-250.00 EUR');
    expect(await row('Total').textContent()).toBe('2,700.30 EUR');
    expect(await row('Paid').textContent()).toBe('0.00 EUR');
    expect(await row('Amount due').textContent()).toBe('2,700.30 EUR');
    expect(await page.getByText('Ada Lovelace').isVisible()).toBe(true);
    // Whatever the owner wrote is text, never markup.
    expect(await page.locator('script, img, iframe, link[rel=stylesheet]').count()).toBe(0);

    await page.reload();
    const events = await t.db.event.findMany({ where: { accountId: acc.id, subjectId: id, type: { in: ['invoice.viewed', 'invoice.status_changed'] } } });
    expect(events.map((e) => [e.type, e.actorType]).sort()).toEqual([['invoice.status_changed', 'visitor'], ['invoice.viewed', 'visitor']]);
    expect(await page.locator('.status').textContent()).toBe('Status: Open');
    expect(errors).toEqual([]);
  });

  it('at 320 px the page has no sideways scroll: the lines reflow, a 500-character word wraps, every line keeps its labelled values', async () => {
    const contact = await createContact(t, acc, { firstName: 'Zoë', lastName: `Ångström-${'x'.repeat(80)}` });
    const word = 'Supercalifragilistic'.repeat(25); // 500 characters, no space
    const input = {
      accountId: acc.id, contactId: contact.id, dueDate: '2027-01-31', currency: 'EUR', memo: `Pay to IBAN ${'DE89370400440532013000'.repeat(8)}`,
      lines: [
        { description: word, quantity: 1, unitPrice: 9_999_999.99 },
        { description: '山田太郎のロゴ制作', quantity: 2.5, unitPrice: 1250, discountPercent: 12.5, taxRate: 19 },
        { description: 'تصميم الشعار لمحمد العلي', quantity: 3, unitPrice: 0.1 },
      ],
    };
    const r = await t.gql(CREATE, { input }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    const { id } = r.data.createInvoice as { id: string };
    const token = randomBytes(24).toString('base64url');
    await t.db.invoice.update({ where: { id }, data: { status: 'viewed', issuedAt: new Date('2026-11-26T09:00:00Z'), pageToken: token } });
    const narrow = await browser.newPage({ viewport: { width: 320, height: 640 } });
    try {
      narrow.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
      await narrow.goto(`${t.baseUrl}/i/${token}`);
      await narrow.screenshot({ path: `${SHOTS}/invoice-page-320.png`, fullPage: true });
      expect(await narrow.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(320);
      // Nothing inside sticks out of the card either (an overflow the body hides would still be cut off).
      const main = await narrow.evaluate(() => {
        const card = document.querySelector('main')!.getBoundingClientRect();
        return [...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > card.right + 0.5).map((e) => e.tagName);
      });
      expect(main).toEqual([]);
      const table = narrow.getByRole('table', { name: 'Lines' });
      expect(await table.getByRole('rowheader').allTextContents()).toEqual([word, '山田太郎のロゴ制作', 'تصميم الشعار لمحمد العلي']);
      expect(await table.getByRole('row', { name: /^山田/ }).getByRole('cell').allTextContents()).toEqual(['2.5', '1,250.00 EUR', '-390.63 EUR (12.5 %)', '19 %', '3,125.00 EUR']);
      // Each value shows its column's name beside it.
      const label = await table.getByRole('row', { name: /^山田/ }).getByRole('cell').last().evaluate((cell) => getComputedStyle(cell, '::before').content);
      expect(label).toBe('"Amount"');
    } finally {
      await narrow.close();
    }
    expect(errors).toEqual([]);
  });

  it('printed, it shows the invoice without the screen-only download button', async () => {
    const { token } = await sentInvoice();
    await page.goto(`${t.baseUrl}/i/${token}`);
    const button = page.getByRole('link', { name: /Download PDF/ });
    expect(await button.isVisible()).toBe(true);
    await page.emulateMedia({ media: 'print' });
    try {
      await page.screenshot({ path: `${SHOTS}/invoice-page-print.png`, fullPage: true });
      expect(await button.isVisible()).toBe(false);
      expect(await page.getByRole('table', { name: 'Lines' }).isVisible()).toBe(true);
      expect(await page.getByRole('table', { name: 'Totals' }).isVisible()).toBe(true);
      expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(255, 255, 255)');
    } finally {
      await page.emulateMedia({ media: 'screen' });
    }
    expect(errors).toEqual([]);
  });

  it('printed on A4, a short invoice (4 lines and a memo with payment details) is one page', async () => {
    const contact = await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace' });
    const input = {
      accountId: acc.id, contactId: contact.id, dueDate: '2027-01-31', currency: 'EUR',
      memo: 'Please pay by bank transfer within 30 days.\nIBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX\nReference: the invoice number.\nThank you for your business.',
      lines: [
        { description: 'Logo design: three concepts, two rounds of revisions and the final files', quantity: 1, unitPrice: 1800, taxRate: 19 },
        { description: 'Brand book', quantity: 2, unitPrice: 1250, discountPercent: 10, taxRate: 19 },
        { description: 'Business cards (500)', quantity: 500, unitPrice: 0.12, taxRate: 19 },
        { description: 'Consulting hours', quantity: 6.5, unitPrice: 95, taxRate: 19 },
      ],
    };
    const r = await t.gql(CREATE, { input }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    const { id } = r.data.createInvoice as { id: string };
    const token = randomBytes(24).toString('base64url');
    await t.db.invoice.update({ where: { id }, data: { status: 'viewed', issuedAt: new Date('2026-11-26T09:00:00Z'), pageToken: token } });
    await page.goto(`${t.baseUrl}/i/${token}`);
    await page.emulateMedia({ media: 'print' });
    try {
      const printed = await page.pdf({ format: 'A4', path: `${SHOTS}/invoice-page-print-a4.pdf` });
      // Each page is one /Type /Page object (Chromium writes them uncompressed).
      expect(printed.toString('latin1').match(/\/Type\s*\/Page(?!s)/g)).toHaveLength(1);
    } finally {
      await page.emulateMedia({ media: 'screen' });
    }
    expect(errors).toEqual([]);
  });

  it('its link downloads the PDF as invoice-<number>.pdf', async () => {
    const { invoiceNumber, token } = await sentInvoice();
    await page.goto(`${t.baseUrl}/i/${token}`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /Download PDF/ }).click()]);
    expect(download.suggestedFilename()).toBe(`invoice-${invoiceNumber}.pdf`);
    expect(await download.failure()).toBeNull();
    expect(errors).toEqual([]);
  });

  it('an unknown token is a 404 page that says so', async () => {
    const response = await page.goto(`${t.baseUrl}/i/${randomBytes(24).toString('base64url')}`);
    expect(response!.status()).toBe(404);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Invoice not found');
    expect(await page.locator('meta[name=robots]').getAttribute('content')).toBe('noindex, nofollow');
    // Chromium logs the 404 itself; nothing else may be logged.
    expect(errors.filter((e) => !e.includes('404'))).toEqual([]);
  });
});
