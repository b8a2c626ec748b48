// docs/decisions.md §20 "The client's page": GET /i/{token} and /i/{token}/pdf over HTTP (the page in
// a real browser is test/e2e/invoice-page.test.ts).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { InvoiceStatus } from '../../src/generated/prisma/enums.js';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { LINK_PREVIEW_AGENTS } from '../../src/invoices/invoice-page.service.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

let seeded = 0;
/** An invoice with a page token, as sendInvoice leaves it. */
async function withPage(acc: TestAccount, data: { status?: InvoiceStatus; contactId?: string } = {}) {
  const token = randomBytes(24).toString('base64url');
  const invoice = await t.db.invoice.create({
    data: { accountId: acc.id, invoiceNumber: `PAGE-${++seeded}`, amount: 120, subtotal: 120, status: 'sent', dueDate: new Date('2027-01-31'), issuedAt: new Date(), pageToken: token, ...data },
  });
  return { id: invoice.id, token, number: invoice.invoiceNumber };
}

let address = 0;
/** Each call from its own client address unless one is given (the page allows 60 views a minute per address). */
const view = (path: string, clientIp = `203.0.113.${++address % 250}`, method = 'GET', headers: Record<string, string> = {}) =>
  fetch(`${t.baseUrl}${path}`, { method, headers: { 'x-forwarded-for': clientIp, ...headers } });
const eventsOf = (acc: TestAccount, type: string) => t.db.event.findMany({ where: { accountId: acc.id, type }, orderBy: { id: 'asc' } });

describe('GET /i/{token}', () => {
  test('the first view of a sent invoice moves it to viewed with invoice.viewed and invoice.status_changed by a visitor; a later view changes nothing', async () => {
    const acc = await createAccount(t, 'Page Account');
    const { id, token, number } = await withPage(acc);
    const first = await view(`/i/${token}`);
    expect(first.status).toBe(200);
    const html = await first.text();
    expect(html).toContain(`<h1>Invoice ${number}</h1>`);
    expect(html).toContain('Page Account');
    expect(html).toContain(`href="/i/${token}/pdf"`);
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id } })).status).toBe('viewed');
    const [viewed] = await eventsOf(acc, 'invoice.viewed');
    expect(viewed).toMatchObject({ actorType: 'visitor', actorId: null, subjectId: id });
    expect((viewed!.data as { object: { status: string } }).object.status).toBe('viewed');
    const changed = await eventsOf(acc, 'invoice.status_changed');
    expect(changed.map((e) => [e.actorType, (e.data as any).object.status, (e.data as any).previous.status])).toEqual([['visitor', 'viewed', 'sent']]);

    expect((await view(`/i/${token}`)).status).toBe(200);
    expect((await view(`/i/${token}/pdf`)).status).toBe(200);
    expect(await eventsOf(acc, 'invoice.viewed')).toHaveLength(1);
    expect(await eventsOf(acc, 'invoice.status_changed')).toHaveLength(1);
  });

  test('a HEAD request (a link scanner) answers 200 with no body and never marks the invoice viewed; a GET then does', async () => {
    const acc = await createAccount(t);
    const { id, token } = await withPage(acc);
    for (const path of [`/i/${token}`, `/i/${token}/pdf`]) {
      const head = await view(path, undefined, 'HEAD');
      expect(head.status, path).toBe(200);
      expect(await head.text()).toBe('');
    }
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id } })).status).toBe('sent');
    expect(await t.db.event.count({ where: { accountId: acc.id } })).toBe(0);
    expect((await view(`/i/${token}`)).status).toBe(200);
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id } })).status).toBe('viewed');
  });

  // The User-Agents these services send (each with the token of LINK_PREVIEW_AGENTS it carries).
  const PREVIEWS = [
    'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
    'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
    'Twitterbot/1.0',
    'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
    'WhatsApp/2.23.20.0 A',
    'TelegramBot (like TwitterBot)',
    'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)',
    'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) BingPreview/1.0b',
  ];

  test('a link preview agent (Slackbot, facebookexternalhit, Twitterbot, LinkedInBot, WhatsApp, TelegramBot, Discordbot, Googlebot, bingbot, SkypeUriPreview, Applebot, BingPreview) sees the page and never marks it viewed', async () => {
    const acc = await createAccount(t);
    const { id, token } = await withPage(acc);
    for (const agent of PREVIEWS) {
      expect(LINK_PREVIEW_AGENTS.some((token) => agent.toLowerCase().includes(token.toLowerCase())), agent).toBe(true);
      const r = await view(`/i/${token}`, undefined, 'GET', { 'user-agent': agent });
      expect(r.status, agent).toBe(200);
      expect(await r.text(), agent).toContain('<h1>Invoice ');
      expect((await view(`/i/${token}/pdf`, undefined, 'GET', { 'user-agent': agent })).status, agent).toBe(200);
    }
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id } })).status).toBe('sent');
    expect(await t.db.event.count({ where: { accountId: acc.id } })).toBe(0);
    const browser = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
    expect((await view(`/i/${token}`, undefined, 'GET', { 'user-agent': browser })).status).toBe(200);
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id } })).status).toBe('viewed');
  });

  test('viewInvoicePage over GraphQL follows the same rule: a preview agent reads, a reader marks viewed', async () => {
    const acc = await createAccount(t);
    const { id, token } = await withPage(acc);
    const call = (agent: string) =>
      fetch(`${t.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': agent, 'x-forwarded-for': `198.51.100.${++address % 250}` },
        body: JSON.stringify({ query: 'mutation ($token: String!) { viewInvoicePage(token: $token) { status } }', variables: { token } }),
      }).then((r) => r.json() as Promise<{ data?: { viewInvoicePage: { status: string } | null }; errors?: unknown }>);
    const preview = await call('Discordbot/2.0');
    expect(preview.errors).toBeUndefined();
    expect(preview.data!.viewInvoicePage!.status).toBe('sent');
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id } })).status).toBe('sent');
    expect((await call('Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0')).data!.viewInvoicePage!.status).toBe('viewed');
  });

  test("the lines' Amount column (quantity × unit price) adds up to the subtotal and their Discount column (money) to the discount, in any currency's decimals", async () => {
    const acc = await createAccount(t);
    const cases = [
      { currency: 'EUR', lines: [{ q: 3, p: 0.1, d: 0 }, { q: 2, p: 1250, d: 10 }, { q: 1.5, p: 19.99, d: 7.25 }, { q: 0.3333, p: 3.33, d: 33.333 }] },
      { currency: 'JPY', lines: [{ q: 7, p: 1999, d: 15 }, { q: 1, p: 187000, d: 2.5 }] },
      { currency: 'KWD', lines: [{ q: 2.25, p: 127.524, d: 12.5 }, { q: 1, p: 0.001, d: 50 }] },
    ];
    /** Minor units of a displayed amount ("-1,250.00" -> -125000n): every amount shows its currency's decimals. */
    const units = (text: string) => BigInt(text.replace(/,/g, '').replace('.', ''));
    for (const { currency, lines } of cases) {
      const input = {
        accountId: acc.id, dueDate: '2027-01-31', currency,
        lines: lines.map((l, i) => ({ description: `Line ${i}`, quantity: l.q, unitPrice: l.p, discountPercent: l.d, taxRate: 19 })),
      };
      const created = await t.gql('mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { id subtotal discountTotal } }', { input }, { as: acc.owner });
      expect(created.errors, currency).toBeUndefined();
      const { id } = created.data.createInvoice as { id: string };
      const token = randomBytes(24).toString('base64url');
      await t.db.invoice.update({ where: { id }, data: { status: 'viewed', issuedAt: new Date(), pageToken: token } });
      const html = await (await view(`/i/${token}`)).text();
      const column = (label: string) => [...html.matchAll(new RegExp(`data-label="${label}"><span>(-?[0-9,.]+) ${currency}`, 'g'))].map((m) => m[1]!);
      const total = (label: string) => new RegExp(`<th scope="row">${label}</th><td>(-?[0-9,.]+) ${currency}</td>`).exec(html)![1]!;
      const sum = (values: string[]) => values.reduce((a, v) => a + units(v), 0n);
      expect(column('Amount'), currency).toHaveLength(lines.length);
      expect(sum(column('Amount')), currency).toBe(units(total('Subtotal')));
      expect(sum(column('Discount')), currency).toBe(units(total('Discount')));
      // Each amount is the line's quantity × unit price (rounded half up), before its discount.
      expect(column('Amount')[0], currency).toBe(currency === 'EUR' ? '0.30' : currency === 'JPY' ? '13,993' : '286.929');
    }
  });

  test('concurrent first views move the invoice once: one invoice.viewed', async () => {
    const acc = await createAccount(t);
    const { token } = await withPage(acc);
    const answers = await Promise.all(Array.from({ length: 12 }, () => view(`/i/${token}`)));
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(await eventsOf(acc, 'invoice.viewed')).toHaveLength(1);
    expect(await eventsOf(acc, 'invoice.status_changed')).toHaveLength(1);
  });

  test('a view of a partial, paid or overdue invoice shows it and changes nothing', async () => {
    const acc = await createAccount(t);
    for (const status of ['partial', 'paid', 'overdue', 'refunded'] as const) {
      const { id, token } = await withPage(acc, { status });
      const r = await view(`/i/${token}`);
      expect(r.status).toBe(200);
      expect((await t.db.invoice.findUniqueOrThrow({ where: { id } })).status).toBe(status);
    }
    expect(await t.db.event.count({ where: { accountId: acc.id } })).toBe(0);
  });

  test('an unknown token, a draft and a cancelled invoice are the same 404 page, for the page and its PDF', async () => {
    const acc = await createAccount(t);
    const draft = await withPage(acc, { status: 'draft' });
    const cancelled = await withPage(acc, { status: 'cancelled' });
    for (const token of [randomBytes(24).toString('base64url'), draft.token, cancelled.token, 'x'.repeat(200), '%E0%A4%A']) {
      for (const path of [`/i/${token}`, `/i/${token}/pdf`]) {
        const r = await view(path);
        expect(r.status, path).toBe(404);
        expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
        expect(r.headers.get('x-robots-tag')).toBe('noindex, nofollow');
        expect(await r.text()).toContain('<h1>Invoice not found</h1>');
      }
    }
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: draft.id } })).status).toBe('draft');
  });

  test('every answer is noindex, uncached, sends no referrer, and allows only its own nonce-bearing style', async () => {
    const acc = await createAccount(t);
    const { token } = await withPage(acc);
    const r = await view(`/i/${token}`);
    const html = await r.text();
    const csp = r.headers.get('content-security-policy')!;
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)![1];
    expect(csp).toBe(`default-src 'none'; style-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`);
    expect(html).toContain(`<style nonce="${nonce}">`);
    expect(html).not.toMatch(/<script|<link|src=|https?:\/\//i);
    expect(html).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(html).toMatch(/^<!doctype html>\n<html lang="en">/);
    expect(r.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect((await view(`/i/${token}`, undefined, 'POST')).status).toBe(405);
  });

  test('GET /i/{token}/pdf is the PDF as an attachment named invoice-<number>.pdf', async () => {
    const acc = await createAccount(t);
    const { token, number } = await withPage(acc);
    const r = await view(`/i/${token}/pdf`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/pdf');
    expect(r.headers.get('content-disposition')).toBe(`attachment; filename="invoice-${number}.pdf"`);
    expect(r.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(Buffer.from(await r.arrayBuffer()).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  test("an erased contact's name does not show on the page", async () => {
    const acc = await createAccount(t);
    const contact = await createContact(t, acc, { firstName: 'Hedy', lastName: 'Lamarr' });
    const { token } = await withPage(acc, { contactId: contact.id });
    expect(await (await view(`/i/${token}`)).text()).toContain('Hedy Lamarr');
    const erased = await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id: contact.id }, { as: acc.owner });
    expect(erased.errors).toBeUndefined();
    const html = await (await view(`/i/${token}`)).text();
    expect(html).not.toContain('Hedy');
    expect(html).not.toContain('Bill to');
  });

  test('60 views a minute per client address: the 61st is a 429 page with Retry-After; another address still sees it', async () => {
    const acc = await createAccount(t);
    const { token } = await withPage(acc, { status: 'viewed' });
    const ip = '192.0.2.61';
    for (let i = 1; i <= 60; i++) {
      const r = await view(i % 2 ? `/i/${token}` : `/i/${token}/pdf`, ip); // the page and its PDF share the budget
      expect(r.status, `view ${i}`).toBe(200);
      await r.arrayBuffer();
    }
    const limited = await view(`/i/${token}`, ip);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-limit')).toBe('60');
    expect(await limited.text()).toContain('<h1>Too many requests</h1>');
    expect((await view(`/i/${token}`, '192.0.2.62')).status).toBe(200);
  });
});
