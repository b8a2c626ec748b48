// docs/decisions.md §24: an upload is judged from its headers before its body is read (401, 403,
// 429, 413), holds one of its caller's 2 and its account's 3 places for uploads under way, and an
// import needs the object's write scope as well as `imports` (docs/imports.md#intake, #bounds).
import { request, type ClientRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MESSAGES } from '../../src/errors.js';
import { createAccount, createApiKey, createContact, createMember, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp, type TestUser } from '../helpers/app.js';
import { uploadCounters } from '../../src/ratelimit/upload-slots.js';
import { importCsv } from './helpers.js';

vi.setConfig({ testTimeout: 60_000 });

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

type Answer = { status: number; retryAfter: string | undefined; body: any };

/**
 * An upload whose headers and `first` bytes are sent, and whose body is then held (never ended):
 * `answer` settles only if the service answers without the rest.
 */
function heldUpload(as: TestUser, accountId: string, first: string, contentLength?: number) {
  const url = new URL(`${t.baseUrl}/api/v1/imports?account_id=${accountId}&object=contacts`);
  const req: ClientRequest = request(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${as.token}`,
      'content-type': 'text/csv',
      'x-forwarded-for': '198.51.100.77',
      ...(contentLength ? { 'content-length': String(contentLength) } : { 'transfer-encoding': 'chunked' }),
    },
  });
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body: JSON.parse(text || 'null') }));
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined); // an upload the test aborts
  req.write(first);
  return { req, answer };
}

const importsOf = (accountId: string) => t.db.import.count({ where: { accountId } });

describe('POST /api/v1/imports: judged from its headers (docs/decisions.md §24)', () => {
  it("an outsider's 50 MB upload is a 403 with its body held unsent: nothing of it is read", async () => {
    const acc = await createAccount(t);
    // Half a header line, then nothing: a service that read the body before judging would still be waiting.
    const upload = heldUpload(acc.outsider, acc.id, 'first_na', 50 * 1024 * 1024);
    expect(await upload.answer).toMatchObject({ status: 403, body: { error: MESSAGES.noAccess } });
    upload.req.destroy();
    expect(await importsOf(acc.id)).toBe(0);
  });

  it('a key without the imports scope, or without the object write scope, is a 403 with its body held unsent', async () => {
    const acc = await createAccount(t);
    for (const [scopes, missing] of [[['CONTACTS_WRITE'], 'imports'], [['IMPORTS'], 'contacts:write']] as const) {
      const upload = heldUpload(await createApiKey(t, acc, [...scopes]), acc.id, 'first_na', 50 * 1024 * 1024);
      expect(await upload.answer).toMatchObject({ status: 403, body: { error: `Forbidden: this API key lacks the scope ${missing}` } });
      upload.req.destroy();
    }
  });
});

describe('uploads under way: 2 per caller, 3 per account (docs/decisions.md §24)', () => {
  it("the caller's third upload and the account's fourth are 429 with Retry-After; an aborted upload gives its place back", async () => {
    const acc = await createAccount(t);
    const second = await createMember(t, acc.id);
    const third = await createMember(t, acc.id);
    // Held uploads are admitted from their headers; until both are, a probe may pass (and end, giving its place back).
    const probe = async (as: TestUser) => importCsv(t, as, acc.id, 'first_name\r\nProbe\r\n');
    const held = [heldUpload(acc.member, acc.id, 'first_name\r\nA\r\n'), heldUpload(acc.member, acc.id, 'first_name\r\nB\r\n')];
    let callerFull: Awaited<ReturnType<typeof probe>> | undefined;
    await expect.poll(async () => (callerFull = await probe(acc.member)).status, { timeout: 30_000, interval: 500 }).toBe(429);
    expect(callerFull!.body).toEqual({ error: MESSAGES.rateLimited });
    expect(Number(callerFull!.headers.get('retry-after'))).toBeGreaterThan(0);

    held.push(heldUpload(second, acc.id, 'first_name\r\nD\r\n'));
    let accountFull: Awaited<ReturnType<typeof probe>> | undefined;
    await expect.poll(async () => (accountFull = await probe(third)).status, { timeout: 30_000, interval: 500 }).toBe(429);
    expect(accountFull!.headers.get('retry-after')).not.toBeNull();

    held[0]!.req.destroy(); // a client that gives up: its place is free again once its upload ends
    // Asked of the count itself: probes would spend the account's 20 imports an hour.
    const placeFree = async () => {
      const places = await t.deps.uploads!.take(uploadCounters(third.id, acc.id));
      await places?.release();
      return places !== null;
    };
    await expect.poll(placeFree, { timeout: 30_000, interval: 200 }).toBe(true);
    for (const upload of held) upload.req.destroy();
  });

  it('an upload that ends with its answer gives its place back: a caller sends uploads one after another', async () => {
    const acc = await createAccount(t);
    for (let i = 0; i < 4; i++) expect((await importCsv(t, acc.member, acc.id, `first_name\r\nP${i}\r\n`)).status).toBe(202);
    expect((await importCsv(t, acc.member, acc.id, 'first_name\r\n')).status).toBe(400); // refused: its place goes back too
    expect((await importCsv(t, acc.member, acc.id, 'first_name\r\nLast\r\n')).status).toBe(202);
  });
});

describe('an import needs the object write scope as well as imports (docs/decisions.md §24)', () => {
  let acc: TestAccount;
  let importsOnly: TestUser;
  beforeAll(async () => {
    acc = await createAccount(t);
    importsOnly = await createApiKey(t, acc, ['IMPORTS']);
  });

  it('REST: an imports-only key cannot overwrite contacts with match_on=email (403 naming contacts:write); deals need deals:write', async () => {
    const contact = await createContact(t, acc, { firstName: 'Kept', email: 'kept@example.com' });
    const r = await importCsv(t, importsOnly, acc.id, 'first_name,email\r\nOverwritten,kept@example.com\r\n', { match_on: 'email' });
    expect([r.status, r.body]).toEqual([403, { error: 'Forbidden: this API key lacks the scope contacts:write' }]);
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: contact.id } })).firstName).toBe('Kept');
    const contactsKey = await createApiKey(t, acc, ['IMPORTS', 'CONTACTS_WRITE']);
    const deals = await importCsv(t, contactsKey, acc.id, 'title\r\nDeal\r\n', { object: 'deals' });
    expect([deals.status, deals.body]).toEqual([403, { error: 'Forbidden: this API key lacks the scope deals:write' }]);
    expect((await importCsv(t, contactsKey, acc.id, 'first_name,email\r\nUpdated,kept@example.com\r\n', { match_on: 'email' })).status).toBe(202);
  });

  it('GraphQL: startImport and admitImport refuse an imports-only key, naming CONTACTS_WRITE', async () => {
    const before = await importsOf(acc.id);
    const start = await t.gql(
      'mutation ($a: ID!) { startImport(accountId: $a, object: CONTACTS, matchOn: EMAIL, columns: ["first_name", "email"]) { id } }',
      { a: acc.id },
      { as: importsOnly },
    );
    expect(errorOf(start)).toMatchObject({ message: 'Forbidden: this API key lacks the scope contacts:write', extensions: { code: 'FORBIDDEN' } });
    const admit = await t.gql('mutation ($a: ID!) { admitImport(accountId: $a, object: CONTACTS) }', { a: acc.id }, { as: importsOnly });
    expect(errorOf(admit).extensions?.code).toBe('FORBIDDEN');
    expect(await importsOf(acc.id)).toBe(before);
  });
});
