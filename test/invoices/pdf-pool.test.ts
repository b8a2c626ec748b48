// docs/decisions.md §26 "Anonymous work never starves the service": an invoice's PDF (the client's
// page /i/{token}/pdf, REST GET /api/v1/invoices/{id}/pdf) is drawn in a bounded pool of worker
// threads (src/invoices/pdf-pool.ts), kept per version (src/invoices/invoice-pdf-cache.ts), and past
// the pool's queue the answer is 503 with Retry-After. The §24 erasure reaches the kept PDFs too.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startPdfPool } from '../../src/invoices/pdf-pool.js';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const CREATE = `mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { id } }`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

type Pool = ReturnType<typeof startPdfPool>;
const pool = () => t.deps.pdfs as Pool;

/** An invoice with `lines` lines, sent (its page token set as sendInvoice sets it) unless `draft`. */
async function invoice(acc: TestAccount, input: Record<string, unknown> = {}, { lines = 3, draft = false } = {}) {
  const r = await t.gql(CREATE, {
    input: {
      accountId: acc.id, dueDate: '2027-01-31', currency: 'EUR', memo: 'Payable within 30 days.',
      lines: Array.from({ length: lines }, (_, i) => ({ description: `Consulting hour ${i + 1}`, quantity: 1, unitPrice: 95 })),
      ...input,
    },
  }, { as: acc.owner });
  expect(r.errors).toBeUndefined();
  const id = (r.data.createInvoice as { id: string }).id;
  const token = randomBytes(24).toString('base64url');
  if (!draft) await t.db.invoice.update({ where: { id }, data: { status: 'sent', issuedAt: new Date('2026-11-26T10:00:00Z'), pageToken: token } });
  return { id, token };
}

const fromPage = async (token: string, ip = '198.51.100.30') => {
  const response = await fetch(`${t.baseUrl}/i/${token}/pdf`, { headers: { 'x-forwarded-for': ip } });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
};
const fromRest = async (acc: TestAccount, id: string) => {
  const response = await fetch(`${t.baseUrl}/api/v1/invoices/${id}/pdf`, { headers: { authorization: `Bearer ${acc.owner.token}`, 'x-forwarded-for': '198.51.100.31' } });
  return { response, bytes: Buffer.from(await response.arrayBuffer()) };
};
const kept = (invoiceId: string) => t.db.invoicePdf.findMany({ where: { invoiceId }, select: { accountId: true, hash: true, contactId: true } });

describe('invoice PDFs in the pool of threads', () => {
  test('a PDF is drawn in a thread of the pool: the pool counts the drawing, and the bytes are a PDF', async () => {
    const acc = await createAccount(t);
    const { token } = await invoice(acc);
    const before = pool().completed;
    const { response, bytes } = await fromPage(token);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pdf');
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pool().completed).toBe(before + 1);
  });

  test('a second download of the same version draws nothing: the page and REST answer the kept bytes', async () => {
    const acc = await createAccount(t);
    const { id, token } = await invoice(acc, {}, { lines: 100 });
    const first = await fromPage(token);
    expect(first.response.status).toBe(200);
    const drawn = pool().completed;
    const again = await fromPage(token);
    const rest = await fromRest(acc, id);
    expect(again.response.status).toBe(200);
    expect(rest.response.status).toBe(200);
    expect(rest.response.headers.get('content-disposition')).toMatch(/^attachment; filename="invoice-.+\.pdf"$/);
    expect(pool().completed).toBe(drawn);
    expect(again.bytes.equals(first.bytes)).toBe(true);
    expect(rest.bytes.equals(first.bytes)).toBe(true);
    expect(await kept(id)).toEqual([{ accountId: acc.id, hash: expect.stringMatching(/^[0-9a-f]{64}$/), contactId: null }]);
  });

  test('concurrent downloads of one version draw it once', async () => {
    const acc = await createAccount(t);
    const { token } = await invoice(acc, {}, { lines: 50 });
    const before = pool().completed;
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => fromPage(token, `198.51.100.${40 + i}`)));
    expect(answers.map((a) => a.response.status)).toEqual([200, 200, 200, 200]);
    expect(pool().completed).toBe(before + 1);
  });

  test('a changed invoice is a new version: drawn again, and kept in place of the old one', async () => {
    const acc = await createAccount(t);
    const { id, token } = await invoice(acc);
    const first = await fromPage(token);
    const [old] = await kept(id);
    await t.db.invoice.update({ where: { id }, data: { memo: 'Now payable within 14 days.' } });
    const drawn = pool().completed;
    const changed = await fromPage(token);
    expect(changed.response.status).toBe(200);
    expect(pool().completed).toBe(drawn + 1);
    expect(changed.bytes.equals(first.bytes)).toBe(false);
    const now = await kept(id);
    expect(now).toHaveLength(1);
    expect(now[0]!.hash).not.toBe(old!.hash);
  });

  test("erasing the contact removes the kept PDFs that show the person's name", async () => {
    const acc = await createAccount(t);
    const contact = await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace' });
    const { id, token } = await invoice(acc, { contactId: contact.id });
    expect((await fromPage(token)).response.status).toBe(200);
    expect(await kept(id)).toEqual([{ accountId: acc.id, hash: expect.any(String), contactId: contact.id }]);
    const r = await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { invoicesUnlinked } }', { id: contact.id }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    expect(await kept(id)).toEqual([]);
    // The next download draws the invoice as it is now, without the name.
    expect((await fromPage(token)).response.status).toBe(200);
    expect(await kept(id)).toEqual([{ accountId: acc.id, hash: expect.any(String), contactId: null }]);
  });

  test('deleting an invoice removes its kept PDF', async () => {
    const acc = await createAccount(t);
    const { id } = await invoice(acc, {}, { draft: true });
    expect((await fromRest(acc, id)).response.status).toBe(200);
    expect(await kept(id)).toHaveLength(1);
    const r = await t.gql('mutation ($id: ID!) { deleteInvoice(id: $id) { id } }', { id }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    expect(await kept(id)).toEqual([]);
  });
});

describe('past the pool’s queue', () => {
  test('a download is a 503 with Retry-After, on the page and in REST; those in the pool are answered once it frees', async () => {
    // One thread, one place in the queue, and the thread held before it draws (PDF_THREADS=1, PDF_QUEUE=1).
    const gate = new SharedArrayBuffer(4);
    const held = new Int32Array(gate);
    const tiny = startPdfPool(loadConfig({ PDF_THREADS: '1', PDF_QUEUE: '1' }).pdf, { gate });
    const usual = t.deps.pdfs;
    t.deps.pdfs = tiny;
    try {
      const acc = await createAccount(t);
      const [a, b, c] = [await invoice(acc), await invoice(acc), await invoice(acc)];
      expect((await fromPage(a.token)).response.status).toBe(200); // the thread started, idle
      // Versions not drawn yet: the memo changes each one.
      for (const { id } of [a, b, c]) await t.db.invoice.update({ where: { id }, data: { memo: 'Second version' } });
      Atomics.store(held, 0, 1);
      const running = fromPage(a.token, '198.51.100.50');
      const waiting = fromRest(acc, b.id);
      await expect.poll(() => tiny.queued).toBe(1); // one drawing held in the thread, one in the queue

      const page = await fromPage(c.token, '198.51.100.51');
      expect(page.response.status).toBe(503);
      expect(page.response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(page.response.headers.get('content-type')).toMatch(/^text\/html/);
      const rest = await t.rest('GET', `/api/v1/invoices/${c.id}/pdf`, { as: acc.owner });
      expect(rest.status).toBe(503);
      expect(rest.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(rest.body).toEqual({ error: 'Service unavailable' });

      Atomics.store(held, 0, 0);
      Atomics.notify(held, 0);
      expect((await running).response.status).toBe(200);
      expect((await waiting).response.status).toBe(200);
      expect((await fromPage(c.token, '198.51.100.51')).response.status).toBe(200);
    } finally {
      Atomics.store(held, 0, 0);
      Atomics.notify(held, 0);
      t.deps.pdfs = usual;
      await tiny.close();
    }
  });

  test('the pool starts no thread before the first PDF, and close() ends its threads', async () => {
    const own = startPdfPool({ threads: 2, queue: 4 });
    expect(own.completed).toBe(0);
    const acc = await createAccount(t);
    const { token } = await invoice(acc);
    const usual = t.deps.pdfs;
    t.deps.pdfs = own;
    try {
      expect((await fromPage(token)).response.status).toBe(200);
      expect(own.completed).toBe(1);
    } finally {
      t.deps.pdfs = usual;
    }
    await own.close();
    await expect(own.draw({})).rejects.toThrow();
  });
});
