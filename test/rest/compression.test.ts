// docs/rest.md#compression: answers coded as Accept-Encoding asks, over a real connection (raw bytes:
// fetch would decode them and hide what was sent).
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIN_COMPRESS_BYTES } from '../../src/http/compression.js';
import { OPENAPI_PATH } from '../../src/rest/docs.js';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer };

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  for (let i = 0; i < 30; i++) await createContact(t, acc); // a page well over MIN_COMPRESS_BYTES
});
afterAll(() => t?.close());

/** One request; the bytes as they came over the wire. */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${t.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${acc.owner.token}`, 'x-forwarded-for': '198.51.100.3', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const decode = (r: Raw): Buffer => {
  const coding = r.headers['content-encoding'];
  if (coding === 'gzip') return gunzipSync(r.bytes);
  if (coding === 'br') return brotliDecompressSync(r.bytes);
  expect(coding).toBeUndefined();
  return r.bytes;
};

const LIST = () => `/api/v1/contacts?account_id=${acc.id}&page_size=30`;

describe('answers coded as Accept-Encoding asks', () => {
  it('gzip and br bodies decode to the same bytes as the answer sent as it is', async () => {
    const plain = await raw('GET', LIST());
    expect(plain.bytes.length).toBeGreaterThan(MIN_COMPRESS_BYTES);
    const gzip = await raw('GET', LIST(), { 'accept-encoding': 'gzip' });
    const br = await raw('GET', LIST(), { 'accept-encoding': 'br' });
    expect([gzip.headers['content-encoding'], br.headers['content-encoding']]).toEqual(['gzip', 'br']);
    // The rows' own data is the same; only the list's timing-free bytes are compared.
    expect(decode(gzip).toString()).toBe(plain.bytes.toString());
    expect(decode(br).toString()).toBe(plain.bytes.toString());
    expect(gzip.bytes.length).toBeLessThan(plain.bytes.length / 2);
    expect(Number(gzip.headers['content-length'])).toBe(gzip.bytes.length); // still sent whole
  });

  it('a compressible answer says Vary: Accept-Encoding, coded or not', async () => {
    for (const headers of [{}, { 'accept-encoding': 'gzip' }] as Record<string, string>[]) {
      const r = await raw('GET', LIST(), headers);
      expect(String(r.headers.vary).split(/,\s*/)).toContain('Accept-Encoding');
    }
  });

  it('without Accept-Encoding, or with identity only, the answer goes as it is', async () => {
    for (const headers of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'gzip;q=0, br;q=0' }] as Record<string, string>[]) {
      const r = await raw('GET', LIST(), headers);
      expect(r.headers['content-encoding'], JSON.stringify(headers)).toBeUndefined();
    }
  });

  it('below MIN_COMPRESS_BYTES the answer goes as it is', async () => {
    const r = await raw('GET', '/api/v1/nope', { 'accept-encoding': 'gzip, br' });
    expect(r.bytes.length).toBeLessThan(MIN_COMPRESS_BYTES);
    expect([r.status, r.headers['content-encoding']]).toEqual([404, undefined]);
  });

  it('the highest q-value wins: gzip;q=0.5, br;q=0.9 is br; br;q=0.1, gzip is gzip', async () => {
    expect((await raw('GET', LIST(), { 'accept-encoding': 'gzip;q=0.5, br;q=0.9' })).headers['content-encoding']).toBe('br');
    expect((await raw('GET', LIST(), { 'accept-encoding': 'br;q=0.1, gzip' })).headers['content-encoding']).toBe('gzip');
    expect((await raw('GET', LIST(), { 'accept-encoding': 'identity, gzip;q=0.5' })).headers['content-encoding']).toBeUndefined();
  });

  it("a coded record's ETag is weak, and If-Match takes it back", async () => {
    const contact = await createContact(t, acc);
    const note = await t.db.note.create({ data: { accountId: acc.id, contactId: contact.id, body: 'n'.repeat(2 * MIN_COMPRESS_BYTES) } });
    const path = `/api/v1/notes/${note.id}`;
    const plain = await raw('GET', path);
    const coded = await raw('GET', path, { 'accept-encoding': 'gzip' });
    expect(coded.headers['content-encoding']).toBe('gzip');
    expect(coded.headers.etag).toBe(`W/${plain.headers.etag as string}`);
    const patched = await raw('PATCH', path, { 'content-type': 'application/json', 'if-match': coded.headers.etag as string }, JSON.stringify({ pinned: true }));
    expect(patched.status).toBe(200);
  });

  it('an export streams coded and decodes to the same CSV', async () => {
    const path = `/api/v1/contacts/export?account_id=${acc.id}`;
    const plain = await raw('GET', path);
    const gzip = await raw('GET', path, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    // Its rows are in one order each time; the file's name carries a time, its bytes do not.
    expect(decode(gzip).toString()).toBe(plain.bytes.toString());
  });

  it('the OpenAPI document is coded once: GET and HEAD carry the same coding and length', async () => {
    const plain = await raw('GET', OPENAPI_PATH);
    const first = await raw('GET', OPENAPI_PATH, { 'accept-encoding': 'gzip, br' });
    const again = await raw('GET', OPENAPI_PATH, { 'accept-encoding': 'gzip, br' });
    const head = await raw('HEAD', OPENAPI_PATH, { 'accept-encoding': 'gzip, br' });
    expect(first.headers['content-encoding']).toBe('br'); // kept documents prefer Brotli
    expect(again.bytes.equals(first.bytes)).toBe(true);
    expect(decode(first).toString()).toBe(plain.bytes.toString());
    expect([head.status, head.headers['content-encoding'], head.headers['content-length'], head.bytes.length]).toEqual([200, 'br', String(first.bytes.length), 0]);
    expect(first.bytes.length).toBeLessThan(plain.bytes.length / 10);
  });

  it('a PDF is not coded again', async () => {
    const contact = await createContact(t, acc);
    const created = await t.gql('mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { id } }', {
      input: { accountId: acc.id, contactId: contact.id, dueDate: '2027-01-31', amount: 10 },
    }, { as: acc.owner });
    expect(created.errors).toBeUndefined();
    const r = await raw('GET', `/api/v1/invoices/${created.data.createInvoice.id}/pdf`, { 'accept-encoding': 'gzip, br' });
    expect([r.status, r.headers['content-type'], r.headers['content-encoding']]).toEqual([200, 'application/pdf', undefined]);
    expect(r.bytes.subarray(0, 5).toString()).toBe('%PDF-');
  });
});
