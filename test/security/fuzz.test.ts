/**
 * Hostile input (OWASP API3, API4, API8): random and adversarial query strings, JSON bodies, raw
 * bytes, headers and tokens at every endpoint. Whatever arrives, the answer is never a 5xx, always
 * the documented shape (`{error}` plus optional `details` of string lists, or the endpoint's own
 * success shape), and a refused request writes nothing (every account-scoped row is compared before
 * and after). fast-check runs are seeded and bounded, so a failure reproduces and the suite stays fast;
 * FUZZ_RUNS and FUZZ_SEED override them for a longer local hunt.
 *
 * Rate limits are lifted here (an always-allowing store) so the runs reach validation instead of the
 * 429; the limits have their own tests (test/graphql/rate-limits.test.ts).
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Unlimited } from '../helpers/unlimited-store.js';
import { routes } from '../../src/rest/routes.js';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_ORIGIN, TEST_SECRET, type TestApp, type TestUser } from '../helpers/app.js';
import { accountSnapshot, accountSnapshots } from './snapshot.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20230605);
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const property = { seed: SEED, numRuns: RUNS };
const FUZZ_TIMEOUT = 300_000;

let t: TestApp;
let acc: TestAccount;
let other: TestAccount;
let formId: string;
let inactiveFormId: string;
let prototypeKeys: string[];

beforeAll(async () => {
  prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
  t = await createTestApp({ store: new Unlimited() });
  acc = await createAccount(t);
  other = await createAccount(t);
  await createContact(t, acc);
  await createContact(t, other);
  const form = await t.db.leadForm.create({
    data: {
      accountId: acc.id,
      name: 'Fuzz form',
      honeypotField: 'website',
      fields: {
        create: [
          { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 },
          { key: 'first', label: 'First name', type: 'text', mapsTo: 'first_name', maxLength: 100, position: 1 },
          { key: 'size', label: 'Size', type: 'select', options: ['s', 'm', 'l'], position: 2 },
          { key: 'agree', label: 'Agree', type: 'checkbox', position: 3 },
          { key: 'note', label: 'Note', type: 'textarea', maxLength: 50, position: 4 },
          { key: 'constructor', label: 'Trap', type: 'text', position: 5 },
        ],
      },
    },
  });
  formId = form.id;
  inactiveFormId = (await t.db.leadForm.create({ data: { accountId: acc.id, name: 'Off', active: false } })).id;
});

afterAll(async () => {
  await t?.close();
});

// ---------------------------------------------------------------------------------------------
// What every answer must look like.

const KNOWN_ERRORS = new Set([
  'Invalid payload',
  'Invalid query',
  'Unauthorized',
  'Forbidden: no access to this account',
  'Forbidden: only the account owner can export account data',
  'Forbidden: only the account owner can do this',
  'Forbidden: cross-site request',
  'Form not found or inactive',
  'Rate limit exceeded',
  'Payload too large',
  'Unsupported media type',
  'Not found',
  'Method not allowed',
  'Idempotency key reused with a different payload',
  'A request with this idempotency key is still in progress',
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const nullableString = (v: unknown) => v === null || typeof v === 'string';

type Answer = { status: number; headers: Headers; text: string };

/** The documented error body: `{error}` from the contract's list, plus optional `details` of string lists. */
function expectErrorShape(a: Answer) {
  expect(a.headers.get('content-type'), a.text).toMatch(/^application\/json/);
  const body = JSON.parse(a.text) as Record<string, unknown>;
  expect(Object.keys(body).filter((k) => k !== 'error' && k !== 'details'), a.text).toEqual([]);
  expect(KNOWN_ERRORS.has(body.error as string), a.text).toBe(true);
  if (body.details !== undefined) {
    expect(body.error).toMatch(/^Invalid (payload|query)$/);
    const details = body.details as Record<string, unknown>;
    expect(typeof details).toBe('object');
    expect(Object.keys(details).length).toBeGreaterThan(0);
    for (const messages of Object.values(details)) {
      expect(Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === 'string' && m.length > 0), a.text).toBe(true);
    }
  }
}

const SUCCESS: Record<string, (a: Answer) => void> = {
  list: (a) => {
    const body = JSON.parse(a.text);
    // A page read by cursor has no `page` (docs/decisions.md §18).
    const byCursor = !('page' in body);
    expect(Object.keys(body).sort()).toEqual(byCursor ? ['data', 'next_cursor', 'page_size', 'total'] : ['data', 'next_cursor', 'page', 'page_size', 'total']);
    expect(Array.isArray(body.data)).toBe(true);
    expect(Number.isInteger(body.total) && body.total >= 0).toBe(true);
    expect(byCursor || (Number.isInteger(body.page) && body.page >= 1)).toBe(true);
    expect(body.next_cursor === null || typeof body.next_cursor === 'string').toBe(true);
    expect(body.page_size >= 1 && body.page_size <= 100).toBe(true);
  },
  contact: (a) => {
    const { data, ...rest } = JSON.parse(a.text);
    expect(rest).toEqual({});
    expect(Object.keys(data).sort()).toEqual(['contact_type', 'created_at', 'custom_fields', 'email', 'external_id', 'first_name', 'id', 'last_name', 'source']);
    expect(data.id).toMatch(UUID);
    expect(typeof data.first_name === 'string' && nullableString(data.last_name) && nullableString(data.email)).toBe(true);
    expect(data.created_at).toMatch(ISO);
  },
  deal: (a) => {
    const { data, ...rest } = JSON.parse(a.text);
    expect(rest).toEqual({});
    expect(Object.keys(data).sort()).toEqual(['created_at', 'id', 'probability', 'status', 'title', 'value']);
    expect(data.status).toBe('open');
    expect(Number.isFinite(data.value) && data.value >= 0 && data.value <= 9_999_999_999.99).toBe(true);
    expect(data.probability >= 0 && data.probability <= 100).toBe(true);
  },
  submit: (a) => {
    const body = JSON.parse(a.text);
    expect(Object.keys(body).sort()).toEqual(['contact_id', 'redirectUrl', 'success', 'successMessage']);
    expect(body.success).toBe(true);
    expect(body.contact_id).toMatch(UUID);
  },
  csv: (a) => {
    expect(a.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(a.text.split('\r\n')[0]).toMatch(/^"?First Name"?,"?Last Name"?,"?Email"?/);
  },
  /** The events feed: `{data, page_size, next_cursor}`, by cursor only (docs/decisions.md §18). */
  feed: (a) => {
    const body = JSON.parse(a.text);
    expect(Object.keys(body).sort()).toEqual(['data', 'next_cursor', 'page_size']);
    expect(Array.isArray(body.data)).toBe(true);
  },
  /** A record by id: `{data: {...}}`. */
  record: (a) => {
    const body = JSON.parse(a.text);
    expect(Object.keys(body)).toEqual(['data']);
    expect(body.data.id).toMatch(UUID);
  },
  /** An extension's whole list (imports, webhook endpoints): `{data: [...]}`, no paging. */
  whole: (a) => {
    const { data, ...rest } = JSON.parse(a.text);
    expect(rest).toEqual({});
    expect(Array.isArray(data)).toBe(true);
  },
  /** A dashboard report (docs/decisions.md §19): `{data: <report>}`, a list or an object. */
  report: (a) => {
    const { data, ...rest } = JSON.parse(a.text);
    expect(rest).toEqual({});
    expect(typeof data).toBe('object');
    expect(data).not.toBeNull();
  },
  document: (a) => {
    expect(a.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(a.text).export_metadata.format_version).toBe('1.0');
  },
};

const KIND: Record<string, keyof typeof SUCCESS> = {
  'GET /api/v1/contacts': 'list',
  'POST /api/v1/contacts': 'contact',
  'GET /api/v1/contacts/export': 'csv',
  'GET /api/v1/deals': 'list',
  'POST /api/v1/deals': 'deal',
  'GET /api/v1/invoices': 'list',
  'GET /api/v1/companies': 'list',
  'GET /api/v1/contacts/duplicates': 'whole',
  'GET /api/v1/companies/duplicates': 'whole',
  'POST /api/v1/companies': 'record',
  'GET /api/v1/notes': 'list',
  'POST /api/v1/notes': 'record',
  'GET /api/v1/tasks': 'list',
  'POST /api/v1/tasks': 'record',
  'POST /api/v1/forms/:form_id/submit': 'submit',
  'GET /api/v1/account/export': 'document',
  'GET /api/v1/imports': 'whole',
  'GET /api/v1/webhook_endpoints': 'whole',
  'GET /api/v1/custom_fields': 'whole',
  'GET /api/v1/workflows': 'list',
  'POST /api/v1/workflows': 'record',
  'GET /api/v1/events': 'feed',
  'GET /api/v1/events/:id': 'record',
  'GET /api/v1/reports/pipeline': 'report',
  'GET /api/v1/reports/deals': 'report',
  'GET /api/v1/reports/receivables': 'report',
  'GET /api/v1/reports/contacts': 'report',
  'GET /api/v1/reports/revenue': 'report',
};

/** Sends one request and checks the promises of this file; returns the answer for more checks. */
/** Both accounts' rows, read in one statement (./snapshot.ts). */
const snapshots = () => accountSnapshots(t, [acc.id, other.id]);
/**
 * The snapshot a refused probe took after its request: a refusal writes nothing, so it is what the
 * next probe starts from, and that probe need not read it again (the reads were three quarters of
 * this file's time). Were anything written in between, the next refusal's check would see it: the
 * check is as strict as a fresh read, or stricter. Forgotten after a success and at each test's start.
 */
let unchanged: string[] | undefined;
beforeEach(() => void (unchanged = undefined));

async function probe(route: string, path: string, init: { method: string; headers?: Record<string, string>; body?: string | Uint8Array<ArrayBuffer> }): Promise<Answer> {
  const before = unchanged ?? (await snapshots());
  unchanged = undefined;
  const response = await fetch(`${t.baseUrl}${path}`, {
    method: init.method,
    headers: { 'x-forwarded-for': randomIp(), ...init.headers },
    body: init.body,
  });
  const answer: Answer = { status: response.status, headers: response.headers, text: await response.text() };
  const where = `${init.method} ${path.slice(0, 200)} -> ${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, where).toBeLessThan(500);
  expect(answer.headers.get('x-content-type-options'), where).toBe('nosniff');
  if (answer.status >= 400) {
    expectErrorShape(answer);
    const after = await snapshots();
    expect(after, `a refused request wrote: ${where}`).toEqual(before);
    unchanged = after;
  } else {
    expect(answer.status, where).toBe(init.method === 'POST' && route !== 'POST /api/v1/forms/:form_id/submit' ? 201 : 200);
    // A by-id route probed with its literal `:id` never succeeds; every other route says what success looks like.
    expect(KIND[route], `${route} has a success check here`).toBeDefined();
    SUCCESS[KIND[route]!]!(answer);
  }
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
  return answer;
}

let ipSeq = 0;
const randomIp = () => `100.${64 + (++ipSeq % 60)}.${Math.floor(ipSeq / 250) % 250}.${(ipSeq % 250) + 1}`;

// ---------------------------------------------------------------------------------------------
// Hostile values.

const NASTY = [
  '', ' ', 'NaN', '-NaN', 'Infinity', '-Infinity', 'null', 'undefined', 'true', '0', '-0', '-1', '1e309', '1e-400', '0x1F',
  '0b11', '1_000', ' 7 ', '+1', '1.5', '2147483648', '-2147483649', '9'.repeat(400), '%', '_', '%%', '%_%', '\\', '\\%', '\\_',
  "' OR '1'='1", "'; DROP TABLE contacts; --", '" OR ""="', '1; SELECT pg_sleep(10)', '$1', '{}', '[]', '{"$ne":null}',
  '__proto__', 'constructor', 'prototype', '\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\uffff', '\u202e', '\u{1F600}', 'İ',
  '<script>alert(1)</script>', '=cmd|" /C calc"!A0', '../../etc/passwd', 'a'.repeat(1000), '\r\n', '\t', 'lead', 'open',
  'paid', '2030-02-30', '2030-02-28', '9999-12-31', '0000-00-00', 'a@b.co', 'A@B.CO', 'not-an-email', '@', 'a@b',
];
const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom(randomUUID(), '00000000-0000-0000-0000-000000000000') },
  { weight: 1, arbitrary: fc.constant('ID_OF_ACCOUNT') },
  { weight: 1, arbitrary: fc.constant('ID_OF_OTHER') },
);
/** Placeholders stand for ids only known once the fixtures exist. */
const fill = (s: string) => s.replaceAll('ID_OF_ACCOUNT', acc.id).replaceAll('ID_OF_OTHER', other.id);

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
/** A JSON value as raw text, so it can also be what JSON.stringify never writes (1e999, duplicates). */
const rawJson: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: nastyString.map((s) => JSON.stringify(s)) },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })).map((n) => JSON.stringify(n)) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('1e999', '-1e999', '-0', '1E400', '5e-324', '9007199254740993', '1' + '0'.repeat(400), '0.1', '12.345', '100.0000001', '101', '-5'),
  },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null', '{}', '[]', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}') },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.integer({ min: 30, max: 20_000 }).map(deep) },
);

/** An object body as raw JSON: known fields, dangerous keys and junk, duplicates allowed. */
const rawObject = (fields: string[]) =>
  fc
    .tuple(
      fc.boolean(),
      fc.array(
        fc.tuple(
          fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom(...fields) },
            { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'created_at', 'accountId', 'status') },
            { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
          ),
          rawJson,
        ),
        { maxLength: 8 },
      ),
    )
    .map(([withAccount, entries]) => {
      const all = withAccount ? [['account_id', JSON.stringify('ID_OF_ACCOUNT')] as const, ...entries] : entries;
      return `{${all.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
    });

type Who = 'owner' | 'member' | 'outsider' | 'anonymous';
const who = fc.constantFrom<Who>('owner', 'member', 'outsider', 'anonymous');
const userOf = (w: Who): TestUser | null => (w === 'anonymous' ? null : acc[w]);
const authHeader = (w: Who): Record<string, string> => (w === 'anonymous' ? {} : { authorization: `Bearer ${userOf(w)!.token}` });

const CONTACT_FIELDS = ['account_id', 'first_name', 'last_name', 'email', 'phone', 'company', 'contact_type', 'source'];
const DEAL_FIELDS = ['account_id', 'title', 'contact_id', 'stage_id', 'value', 'probability', 'expected_close_date'];
const QUERY_PARAMS = ['account_id', 'page', 'page_size', 'search', 'type', 'status'];
const GET_ROUTES = routes.filter((r) => r.method === 'GET').map((r) => r.path);
const POST_PATHS = () => ['/api/v1/contacts', '/api/v1/deals', `/api/v1/forms/${formId}/submit`];
const routeOf = (method: string, path: string) =>
  `${method} ${path.split('?')[0]!.replace(/^\/api\/v1\/forms\/[^/]+\/submit$/, '/api/v1/forms/:form_id/submit')}`;

// ---------------------------------------------------------------------------------------------

describe('random and adversarial input never gives a 5xx, always the documented shape, and a refusal writes nothing', () => {
  it('query strings at every GET endpoint', async () => {
    const params = fc.array(
      fc.tuple(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...QUERY_PARAMS) }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) }), nastyString),
      { maxLength: 6 },
    );
    const rawTail = fc.constantFrom('', '&%', '&search=%E0%A4%A', '&page=%ZZ', '&&&', '&=x', '&search', '&account_id[]=1', '&page=1&page=2');
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...GET_ROUTES), fc.boolean(), params, rawTail, who, async (path, withAccount, list, tail, caller) => {
        const search = new URLSearchParams();
        if (withAccount) search.append('account_id', acc.id);
        for (const [k, v] of list) search.append(k, fill(v));
        const url = `${path}?${search.toString()}${tail}`;
        await probe(`GET ${path}`, url, { method: 'GET', headers: authHeader(caller) });
      }),
      property,
    );
  }, FUZZ_TIMEOUT);

  it.each([
    ['/api/v1/contacts', CONTACT_FIELDS],
    ['/api/v1/deals', DEAL_FIELDS],
  ])('JSON bodies at POST %s', async (path, fields) => {
    const body = fc.oneof({ weight: 9, arbitrary: rawObject(fields) }, { weight: 1, arbitrary: rawJson });
    await fc.assert(
      fc.asyncProperty(body, who, async (raw, caller) => {
        await probe(`POST ${path}`, path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...authHeader(caller) },
          body: fill(raw),
        });
      }),
      property,
    );
  }, FUZZ_TIMEOUT);

  it('JSON bodies at POST /api/v1/forms/{form_id}/submit, to active, inactive, unknown and malformed form ids', async () => {
    const formData = rawObject(['email', 'first', 'size', 'agree', 'note', 'constructor', 'website', 'toString', 'hasOwnProperty']);
    const metadata = fc.oneof(rawObject(['referrer', 'page']), rawJson);
    const body = fc.oneof(
      { weight: 8, arbitrary: fc.tuple(formData, fc.option(metadata, { nil: undefined })).map(([d, m]) => `{"data":${d}${m ? `,"metadata":${m}` : ''}}`) },
      { weight: 1, arbitrary: rawObject(['data', 'metadata', 'form_id', 'account_id']) },
      { weight: 1, arbitrary: rawJson },
    );
    const target = fc.oneof(
      { weight: 8, arbitrary: fc.constant('ACTIVE') },
      { weight: 1, arbitrary: fc.constantFrom('INACTIVE', randomUUID(), 'not-a-uuid', '%ZZ', '..%2F..%2Fcontacts', '%00', `ACTIVE%20`) },
    );
    const key = fc.option(fc.constantFrom('k1', 'k2', unique('k'), ' ', 'x'.repeat(300)), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(body, target, key, who, async (raw, id, idempotencyKey, caller) => {
        const path = `/api/v1/forms/${id.replace('INACTIVE', inactiveFormId).replace('ACTIVE', formId)}/submit`;
        await probe('POST /api/v1/forms/:form_id/submit', path, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...authHeader(caller),
            ...(idempotencyKey !== undefined ? { 'idempotency-key': idempotencyKey } : {}),
          },
          body: fill(raw),
        });
      }),
      property,
    );
  }, FUZZ_TIMEOUT);

  it('headers: Authorization, Cookie, Content-Type, Idempotency-Key, X-Request-Id, X-Forwarded-For and Origin at every endpoint', async () => {
    // Header values a client can send: visible ASCII, space and tab.
    const headerText = fc.oneof(
      fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
      fc.constantFrom('', ' ', 'Bearer', 'Bearer ', 'Bearer a.b.c', 'bearer x', 'Basic dXNlcjpwYXNz', `Bearer ${'a'.repeat(4000)}`, 'null',
        "' OR 1=1 --", 'session=', 'session=a.b.c', 'session="x"; session=y', 'session=%ZZ', 'application/json', 'application/x-json+json',
        'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1',
        '1.2.3.4, 5.6.7.8', 'unknown', '::1', TEST_ORIGIN, 'https://evil.example', 'null'),
    );
    const headers = fc.record(
      {
        authorization: headerText,
        cookie: headerText,
        'content-type': headerText,
        'idempotency-key': headerText,
        'x-request-id': headerText,
        'x-forwarded-for': headerText,
        origin: headerText,
      },
      { requiredKeys: [] },
    );
    const endpoint = fc.constantFrom<{ method: string; path: string; body?: string }>(
      ...GET_ROUTES.map((p) => ({ method: 'GET', path: `${p}?account_id=ID_OF_ACCOUNT` })),
      { method: 'POST', path: '/api/v1/contacts', body: '{"account_id":"ID_OF_ACCOUNT","first_name":"Header"}' },
      { method: 'POST', path: '/api/v1/deals', body: '{"account_id":"ID_OF_ACCOUNT","title":"Header"}' },
      { method: 'POST', path: '/api/v1/forms/FORM/submit', body: '{"data":{"email":"header@example.com"}}' },
    );
    await fc.assert(
      fc.asyncProperty(endpoint, headers, fc.boolean(), async (e, h, withToken) => {
        const path = fill(e.path).replace('FORM', formId);
        const sent: Record<string, string> = { ...h };
        if (withToken && !sent.authorization) sent.authorization = `Bearer ${acc.member.token}`;
        const answer = await probe(routeOf(e.method, path), path, { method: e.method, headers: sent, body: e.body && fill(e.body) });
        const id = answer.headers.get('x-request-id');
        const sentId = h['x-request-id']?.trim(); // HTTP drops the spaces around a header value
        if (sentId && /^[\w.:-]{1,128}$/.test(sentId)) expect(id).toBe(sentId);
        else expect(id).toMatch(UUID);
      }),
      property,
    );
  }, FUZZ_TIMEOUT);

  it('tokens: well-signed tokens with hostile claims and headers are a 401, or are served when their claims are valid', async () => {
    const secret = new TextEncoder().encode(TEST_SECRET);
    const claimValue = fc.oneof(nastyString.map(fill), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 2 }));
    const claims = fc.record(
      {
        sub: fc.oneof(fc.constant(acc.member.id), fc.constant(acc.member.id.toUpperCase()), fc.constant(randomUUID()), claimValue),
        email: fc.oneof(claimValue, fc.constant(`${'e'.repeat(300)}@example.com`), fc.constant('a\u0000b@example.com')),
        name: fc.oneof(claimValue, fc.constant('n'.repeat(1000)), fc.constant('Na\u0000me')),
        exp: fc.oneof(fc.constant(Math.floor(Date.now() / 1000) + 600), fc.constant(1), claimValue),
        nbf: claimValue,
        iat: claimValue,
        aud: claimValue,
        iss: claimValue,
      },
      { requiredKeys: ['sub', 'exp'] },
    );
    const header = fc.record(
      { typ: fc.constantFrom('JWT', 'at+jwt', 'x'), kid: nastyString, crit: fc.constantFrom(undefined, ['exp']), jku: fc.constantFrom(undefined, 'https://evil.example/jwks') },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(claims, header, async (payload, extra) => {
        let token: string;
        try {
          token = await new SignJWT(payload as Record<string, unknown>).setProtectedHeader({ alg: 'HS256', ...(extra as object) }).sign(secret);
        } catch {
          return; // jose refuses to sign it: no such token can exist
        }
        const answer = await probe('GET /api/v1/contacts', `/api/v1/contacts?account_id=${acc.id}`, {
          method: 'GET',
          headers: { authorization: `Bearer ${token}` },
        });
        expect([200, 401, 403]).toContain(answer.status);
      }),
      { ...property, numRuns: Math.max(50, Math.floor(RUNS / 2)) },
    );
  }, FUZZ_TIMEOUT);

  it('raw bytes (invalid UTF-8 and worse) as the body of every POST endpoint are a 400 on body', async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 64 }),
      fc.uint8Array({ minLength: 1, maxLength: 8 }).map((junk) => Buffer.concat([Buffer.from('{"first_name":"'), Buffer.from(junk.map((b) => b | 0x80)), Buffer.from('"}')])),
      fc.constantFrom(Buffer.from([0xc0, 0xaf]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00])),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...POST_PATHS()), bytes, who, async (path, body, caller) => {
        const answer = await probe(routeOf('POST', path), path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...authHeader(caller) },
          body: new Uint8Array(body),
        });
        // Anonymous calls to authenticated endpoints stop at the 401 before the body is read.
        if (answer.status === 401) return;
        let utf8 = true;
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(body);
        } catch {
          utf8 = false;
        }
        if (!utf8) {
          expect(answer.status).toBe(400);
          expect(JSON.parse(answer.text).details).toEqual({ body: ['Expected a JSON object'] });
        }
      }),
      property,
    );
  }, FUZZ_TIMEOUT);

  it('/graphql: random variables for the operations behind REST never give INTERNAL_SERVER_ERROR', async () => {
    const ops = [
      'mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }',
      'mutation ($input: CreateDealInput!) { createDeal(input: $input) { id } }',
      'query ($a: ID!, $p: Int, $s: Int, $q: String, $t: ContactType) { contacts(accountId: $a, page: $p, pageSize: $s, search: $q, type: $t) { total } }',
      'mutation ($f: ID!, $d: JSON!, $m: FormMetadataInput) { submitLeadForm(formId: $f, data: $d, metadata: $m) { contactId } }',
    ];
    const value = rawJson;
    const camel = [...CONTACT_FIELDS, ...DEAL_FIELDS].map((f) => f.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()));
    const vars = fc.array(fc.tuple(fc.constantFrom('input', 'a', 'p', 's', 'q', 't', 'f', 'd', 'm', 'x'), fc.oneof(value, rawObject(camel))), {
      maxLength: 5,
    });
    let unchangedAcc: string | undefined;
    const KNOWN_CODES = new Set(['UNAUTHENTICATED', 'FORBIDDEN', 'BAD_USER_INPUT', 'NOT_FOUND', 'RATE_LIMITED', 'IDEMPOTENCY_CONFLICT', 'GRAPHQL_VALIDATION_FAILED', undefined]);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ops), vars, fc.boolean(), who, async (query, entries, useForm, caller) => {
        const list = entries.map(([k, v]) => `${JSON.stringify(k)}:${fill(v)}`);
        if (useForm) list.push(`"f":"${formId}"`, `"a":"${acc.id}"`);
        const before = unchangedAcc ?? (await accountSnapshot(t, acc.id)); // as in probe()
        unchangedAcc = undefined;
        const response = await fetch(`${t.baseUrl}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': randomIp(), ...authHeader(caller) },
          body: `{"query":${JSON.stringify(query)},"variables":{${list.join(',')}}}`,
        });
        const text = await response.text();
        expect(response.status, text).toBeLessThan(500);
        const body = JSON.parse(text) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
        for (const error of body.errors ?? []) {
          expect(error.extensions?.code, text).not.toBe('INTERNAL_SERVER_ERROR');
          expect(KNOWN_CODES.has(error.extensions?.code) || /^Variable "\$\w+"/.test(error.message), text).toBe(true);
        }
        if (body.errors?.length) {
          const after = await accountSnapshot(t, acc.id);
          expect(after).toBe(before);
          unchangedAcc = after;
        }
      }),
      property,
    );
  }, FUZZ_TIMEOUT);
});

describe('search matches % and _ literally (and never as SQL)', () => {
  const ALPHABET = ['a', 'b', 'A', '%', '_', '\\', "'", ' ', '.', '@'];
  let names: { firstName: string; lastName: string; email: string }[];
  let account: TestAccount;

  beforeAll(async () => {
    account = await createAccount(t);
    const seeded = fc.sample(
      fc.tuple(
        fc.string({ unit: fc.constantFrom(...ALPHABET.filter((c) => c !== ' ')), minLength: 1, maxLength: 5 }),
        fc.string({ unit: fc.constantFrom(...ALPHABET.filter((c) => c !== ' ')), minLength: 1, maxLength: 5 }),
      ),
      { seed: SEED, numRuns: 40 },
    );
    names = seeded.map(([first, last], i) => ({ firstName: first, lastName: last, email: `${first.replace(/[^a-z]/gi, '')}${i}@x.test` }));
    for (const name of names) await t.db.contact.create({ data: { accountId: account.id, ...name } });
  });

  /** The rule in docs/decisions.md §3, in plain JavaScript: trimmed, case-insensitive substring, and "first last". */
  function expected(search: string): number {
    const q = search.trim().toLowerCase();
    if (q === '') return names.length;
    return names.filter(({ firstName, lastName, email }) => {
      const [f, l, e] = [firstName.toLowerCase(), lastName.toLowerCase(), email.toLowerCase()];
      if (f.includes(q) || l.includes(q) || e.includes(q)) return true;
      return [...q.matchAll(/ /g)].some(({ index }) => f.endsWith(q.slice(0, index)) && l.startsWith(q.slice(index + 1)));
    }).length;
  }

  it('the number of matches is what a literal substring search finds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 6 }), async (search) => {
        const r = await t.rest('GET', `/api/v1/contacts?account_id=${account.id}&page_size=100&search=${encodeURIComponent(search)}`, {
          as: account.owner,
        });
        expect(r.status, r.text).toBe(200);
        expect(r.body.total, JSON.stringify(search)).toBe(expected(search));
      }),
      property,
    );
  }, FUZZ_TIMEOUT);

  it('"%" finds only names holding a percent sign, "_" only those holding an underscore', async () => {
    for (const c of ['%', '_', '%%', '_%_', '\\']) {
      const r = await t.rest('GET', `/api/v1/contacts?account_id=${account.id}&page_size=100&search=${encodeURIComponent(c)}`, { as: account.owner });
      expect(r.body.total, c).toBe(expected(c));
      expect(r.body.total, c).toBeLessThan(names.length);
    }
  });
});

describe('dangerous keys and duplicate keys', () => {
  const PAYLOADS = ['{"__proto__":{"polluted":"yes"}}', '{"constructor":{"prototype":{"polluted":"yes"}}}', '{"prototype":{"polluted":"yes"}}'];

  it('__proto__, constructor and prototype keys in every body position are refused or ignored, and Object.prototype stays clean', async () => {
    const bodies = PAYLOADS.flatMap((p) => {
      const inner = p.slice(1, -1);
      return [
        ['/api/v1/contacts', `{"account_id":"${acc.id}","first_name":"Proto",${inner}}`],
        ['/api/v1/contacts', `{"account_id":"${acc.id}","first_name":${p}}`],
        ['/api/v1/deals', `{"account_id":"${acc.id}","title":"Proto",${inner}}`],
        [`/api/v1/forms/${formId}/submit`, `{"data":{"email":"proto@example.com",${inner}},${inner}}`],
        [`/api/v1/forms/${formId}/submit`, `{"data":{"email":"proto@example.com"},"metadata":${p}}`],
        [`/api/v1/forms/${formId}/submit`, `{"data":${p}}`],
      ];
    });
    for (const [path, body] of bodies) {
      const answer = await probe(routeOf('POST', path!), path!, { method: 'POST', headers: { 'content-type': 'application/json', ...authHeader('owner') }, body });
      if (body!.includes('"first_name":"Proto",') || body!.includes('"title":"Proto",')) {
        expect(answer.status, body).toBe(400); // an unknown key is named, never assigned
      }
    }
    const gql = await t.gql(
      'mutation ($f: ID!, $d: JSON!) { submitLeadForm(formId: $f, data: $d) { success } }',
      { f: formId, d: JSON.parse('{"email":"gql-proto@example.com","__proto__":{"polluted":"yes"},"prototype":{"polluted":"yes"}}') },
      { clientIp: randomIp() },
    );
    expect(gql.errors).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
  });

  it('a form field named constructor reads only what was sent (never Object.prototype.constructor)', async () => {
    const email = `${unique('ctor')}@example.com`;
    const answer = await probe('POST /api/v1/forms/:form_id/submit', `/api/v1/forms/${formId}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { email } }),
    });
    expect(answer.status).toBe(200);
    const submission = await t.db.formSubmission.findFirstOrThrow({ where: { formId, contact: { email } } });
    expect(submission.isSpam).toBe(false);
    expect(submission.data).toEqual({ email });
  });

  it('a honeypot named like an Object.prototype member is not "filled" by the prototype: real people are not spam', async () => {
    const form = await t.db.leadForm.create({
      data: {
        accountId: acc.id,
        name: 'Trap',
        honeypotField: 'toString',
        fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 }] },
      },
    });
    const email = `${unique('person')}@example.com`;
    const r = await t.rest('POST', `/api/v1/forms/${form.id}/submit`, { body: { data: { email } }, clientIp: randomIp() });
    expect(r.status).toBe(200);
    expect(await t.db.contact.count({ where: { accountId: acc.id, email } })).toBe(1);
    expect(await t.db.formSubmission.count({ where: { formId: form.id, isSpam: true } })).toBe(0);
  });

  it('duplicate JSON keys: the last one wins (as in JSON.parse), never a 500', async () => {
    const first = unique('Second');
    const answer = await probe('POST /api/v1/contacts', '/api/v1/contacts', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authHeader('owner') },
      body: `{"account_id":"${other.id}","account_id":"${acc.id}","first_name":12,"first_name":"${first}"}`,
    });
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.text).data.first_name).toBe(first);
    expect(await t.db.contact.count({ where: { accountId: acc.id, firstName: first } })).toBe(1);
    const refused = await probe('POST /api/v1/contacts', '/api/v1/contacts', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authHeader('owner') },
      body: `{"account_id":"${acc.id}","account_id":"${other.id}","first_name":"x"}`,
    });
    expect(refused.status).toBe(403);
  });
});

describe('sizes, types and encodings', () => {
  const big = (n: number) => `{"first_name":"${'a'.repeat(n)}"}`;

  it.each(['/api/v1/contacts', '/api/v1/deals', 'FORM'])('a body over 1 MiB at POST %s is a 413 {"error":"Payload too large"} and writes nothing', async (p) => {
    const path = p === 'FORM' ? `/api/v1/forms/${formId}/submit` : p;
    const answer = await probe(routeOf('POST', path), path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...authHeader('owner') },
      body: big(1024 * 1024),
    });
    expect({ status: answer.status, body: JSON.parse(answer.text) }).toEqual({ status: 413, body: { error: 'Payload too large' } });
  });

  it.each(['/graphql', '/graphql/'])('a %s body over 1 MiB is a 413 and runs nothing', async (path) => {
    const before = await accountSnapshot(t, acc.id);
    const query = `mutation { createContact(input: { accountId: "${acc.id}", firstName: "${'a'.repeat(1024 * 1024)}" }) { id } }`;
    const response = await fetch(`${t.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acc.owner.token}` },
      body: JSON.stringify({ query }),
    });
    expect(response.status).toBe(413);
    expect(await accountSnapshot(t, acc.id)).toBe(before);
  });

  const TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'text/json', 'application/jsonp', ''];
  it.each(['/api/v1/contacts', '/api/v1/deals', 'FORM', '/graphql'])('a POST to %s without a JSON content type is a 415 and writes nothing', async (p) => {
    const path = p === 'FORM' ? `/api/v1/forms/${formId}/submit` : p;
    for (const type of TYPES) {
      const before = await accountSnapshot(t, acc.id);
      const body = path === '/graphql'
        ? JSON.stringify({ query: `mutation { createContact(input: { accountId: "${acc.id}", firstName: "CT" }) { id } }` })
        : JSON.stringify({ account_id: acc.id, first_name: 'CT', title: 'CT', data: { email: 'ct@example.com' } });
      const response = await fetch(`${t.baseUrl}${path}`, {
        method: 'POST',
        // An empty type: a body with no Content-Type at all.
        headers: { ...(type ? { 'content-type': type } : {}), authorization: `Bearer ${acc.owner.token}`, 'x-forwarded-for': randomIp() },
        body: type ? body : new Blob([body]),
      });
      const text = await response.text();
      expect(response.status, `${type}: ${text}`).toBe(415);
      if (path !== '/graphql') expect(JSON.parse(text)).toEqual({ error: 'Unsupported media type' });
      expect(await accountSnapshot(t, acc.id)).toBe(before);
    }
  });

  it('JSON nested 100,000 deep in any body position is a 400, never a stack overflow, with or without an Idempotency-Key', async () => {
    const nested = deep(100_000);
    const cases: [string, string][] = [
      ['/api/v1/contacts', `{"account_id":"${acc.id}","first_name":${nested}}`],
      ['/api/v1/deals', `{"account_id":"${acc.id}","title":"Deep","value":${nested}}`],
      [`/api/v1/forms/${formId}/submit`, `{"data":{"email":"deep@example.com","note":${nested}}}`],
      [`/api/v1/forms/${formId}/submit`, `{"data":{"email":"deep@example.com","ignored":${nested}}}`],
      [`/api/v1/forms/${formId}/submit`, `{"data":{"email":"deep@example.com"},"metadata":${nested}}`],
    ];
    for (const [path, body] of cases) {
      for (const key of [undefined, unique('deep')]) {
        const answer = await probe(routeOf('POST', path), path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...authHeader('owner'), ...(key ? { 'idempotency-key': key } : {}) },
          body,
        });
        expect(answer.status, `${path} ${body.slice(0, 80)}`).toBe(400);
      }
    }
  });

  it('NUL characters and unpaired surrogates are a 400 naming the field at every text input, REST and GraphQL', async () => {
    for (const bad of ['a\u0000b', 'x\ud800', '\udc00y']) {
      const cases: [string, Record<string, unknown>, string][] = [
        ['/api/v1/contacts', { account_id: acc.id, first_name: bad }, 'first_name'],
        ['/api/v1/contacts', { account_id: acc.id, first_name: 'Ok', last_name: bad }, 'last_name'],
        ['/api/v1/contacts', { account_id: acc.id, first_name: 'Ok', phone: bad }, 'phone'],
        ['/api/v1/contacts', { account_id: acc.id, first_name: 'Ok', company: bad }, 'company'],
        ['/api/v1/contacts', { account_id: acc.id, first_name: 'Ok', email: `${bad}@example.com` }, 'email'],
        ['/api/v1/deals', { account_id: acc.id, title: bad }, 'title'],
        [`/api/v1/forms/${formId}/submit`, { data: { email: 'nul@example.com', note: bad } }, 'note'],
        [`/api/v1/forms/${formId}/submit`, { data: { email: 'nul@example.com', first: bad } }, 'first'],
        [`/api/v1/forms/${formId}/submit`, { data: { email: 'nul@example.com' }, metadata: { page: bad } }, 'metadata.page'],
      ];
      for (const [path, body, field] of cases) {
        const answer = await probe(routeOf('POST', path), path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...authHeader('owner') },
          body: JSON.stringify(body),
        });
        expect(answer.status, `${field} ${JSON.stringify(bad)}`).toBe(400);
        expect(Object.keys(JSON.parse(answer.text).details)).toContain(field);
      }
      // An unpaired surrogate cannot even be percent-encoded as UTF-8 (it would arrive as U+FFFD): NUL only.
      if (bad.includes('\u0000')) {
        const list = await probe('GET /api/v1/contacts', `/api/v1/contacts?account_id=${acc.id}&search=${encodeURIComponent(bad)}`, {
          method: 'GET',
          headers: authHeader('owner'),
        });
        expect(JSON.parse(list.text).details).toHaveProperty('search');
      }
      const gql = await t.gql(
        'mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }',
        { input: { accountId: acc.id, firstName: bad } },
        { as: acc.owner },
      );
      expect(gql.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(gql.errors?.[0]?.extensions?.details).toHaveProperty('firstName');
    }
  });

  it('a filled honeypot holding NUL characters is still quietly kept as spam (a bot learns nothing)', async () => {
    const email = `${unique('bot')}@example.com`;
    const answer = await probe('POST /api/v1/forms/:form_id/submit', `/api/v1/forms/${formId}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { email, note: 'x\u0000y', website: 'http://spam\u0000.example' } }),
    });
    expect(answer.status).toBe(200);
    const spam = (await t.db.formSubmission.findMany({ where: { formId, isSpam: true } })).filter((s) => (s.data as { email?: string }).email === email);
    expect(spam.map((s) => s.data)).toEqual([{ email, note: 'x\ufffdy', website: 'http://spam\ufffd.example' }]);
  });
});
