/**
 * docs/decisions.md §26 "Hostile bytes are client errors", beside fuzz.test.ts: a NUL, a malformed
 * percent-escape or bytes that are not UTF-8 in any path parameter of every route of
 * src/rest/routes.ts and of the client's pages (`/i/{token}`, `/i/{token}/pdf`, `/forms/{form_id}`)
 * is a 404; in any query parameter a route reads, a 400 `Invalid query` naming it; never a 5xx, and
 * parameters a route does not read stay ignored. Judged at the edge (src/http/hostile-bytes.ts).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_BYTES } from '../../src/http/hostile-bytes.js';
import { Unlimited } from '../helpers/unlimited-store.js';
import { compileRoute } from '../../src/rest/match.js';
import { routes } from '../../src/rest/routes.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** NUL, malformed escapes, invalid UTF-8 (a lone continuation, a byte no UTF-8 has, an overlong `/`, an encoded surrogate). */
const HOSTILE = ['%00', 'x%00', '%ZZ', '%', '%C3%28', '%FF', '%C0%AF', '%ED%A0%80'];

let t: TestApp;
let acc: TestAccount;
let formId: string;
beforeAll(async () => {
  t = await createTestApp({ store: new Unlimited() });
  acc = await createAccount(t);
  formId = (await t.db.leadForm.create({
    data: { accountId: acc.id, name: 'Hostile', fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 }] } },
  })).id;
});
afterAll(() => t?.close());

/** A raw request: fetch sends the path and query as written (their escapes untouched). */
async function send(method: string, path: string, route?: (typeof routes)[number]) {
  const upload = route?.answer.kind === 'upload';
  const body = method === 'GET' || method === 'HEAD' || method === 'DELETE' ? undefined : upload ? 'first_name\r\nAda\r\n' : '{}';
  const response = await fetch(`${t.baseUrl}${path}`, {
    method,
    body,
    headers: { authorization: `Bearer ${acc.owner.token}`, 'x-forwarded-for': '198.51.100.9', ...(body ? { 'content-type': upload ? 'text/csv' : 'application/json' } : {}) },
  });
  const text = await response.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    /* the pages answer HTML */
  }
  return { status: response.status, body: json, text };
}

const pathWith = (pattern: string, value: string, at: string) =>
  pattern.split('/').map((segment) => (segment === at ? value : segment.startsWith(':') ? randomUUID() : segment)).join('/');

describe('hostile bytes in a path parameter are a 404', () => {
  const withParams = routes.filter((route) => route.path.includes('/:'));

  it.each(withParams.map((route) => [`${route.method} ${route.path}`, route] as const))('%s', async (_name, route) => {
    for (const param of route.path.split('/').filter((s) => s.startsWith(':'))) {
      for (const value of HOSTILE) {
        const r = await send(route.method, pathWith(route.path, value, param), route);
        expect([r.status, r.body], `${param}=${value}`).toEqual([404, { error: 'Not found' }]);
      }
    }
  });

  it('the pages: /i/{token}, /i/{token}/pdf and /forms/{form_id}', async () => {
    for (const value of HOSTILE) {
      for (const path of [`/i/${value}`, `/i/${value}/pdf`, `/forms/${value}`]) {
        const r = await send('GET', path);
        expect(r.status, `${path}: ${r.text.slice(0, 200)}`).toBe(404);
      }
    }
  });
});

describe('hostile bytes in a query parameter a route reads are a 400 naming it', () => {
  // A parameter read by its prefix (a list's cf.<key>) stands for all of them.
  const reading = routes
    .map((route) => compileRoute(route))
    .map(({ route, query, queryPrefixes }) => ({ route, query: [...query, ...queryPrefixes.map((prefix) => `${prefix}tier`)] }))
    .filter(({ query }) => query.length > 0);

  it('every route that reads its query is here', () => {
    expect(reading.length).toBeGreaterThan(10);
  });

  it.each(reading.map(({ route, query }) => [`${route.method} ${route.path}`, route, query] as const))('%s', async (_name, route, query) => {
    const path = route.path.split('/').map((s) => (s.startsWith(':') ? randomUUID() : s)).join('/');
    for (const name of query) {
      for (const value of HOSTILE) {
        // The account named rightly where the route takes one, so that only the hostile parameter is wrong.
        const others = name === 'account_id' || !query.includes('account_id') ? '' : `account_id=${acc.id}&`;
        const r = await send(route.method, `${path}?${others}${name}=${value}`, route);
        expect([r.status, r.body], `${name}=${value}`).toEqual([400, { error: 'Invalid query', details: { [name]: [HOSTILE_BYTES] } }]);
      }
    }
  });

  it('a parameter a route does not read stays ignored, whatever it holds', async () => {
    for (const value of HOSTILE) {
      const r = await send('GET', `/api/v1/contacts?account_id=${acc.id}&unread=${value}&${value}=1`);
      expect(r.status, value).toBe(200);
    }
  });

  it("the form page: hostile bytes in its theme or a field's prefill are a 400 page; in another parameter, ignored", async () => {
    for (const value of HOSTILE) {
      for (const name of ['theme', 'email']) {
        const r = await send('GET', `/forms/${formId}?${name}=${value}`);
        expect(r.status, `${name}=${value}`).toBe(400);
        expect(r.text).toContain('Invalid link');
      }
      expect((await send('GET', `/forms/${formId}?unread=${value}`)).status, value).toBe(200);
    }
  });
});

describe('hostile bytes in a header the service reads', () => {
  it("an upload's X-File-Name that is not UTF-8 is a 400 naming it, and no import begins; a UTF-8 name is taken", async () => {
    const upload = (name: string) =>
      fetch(`${t.baseUrl}/api/v1/imports?account_id=${acc.id}&object=contacts`, {
        method: 'POST',
        body: 'first_name\r\nAda\r\n',
        // fetch sends each character of a header value as one byte: these are the raw bytes.
        headers: { authorization: `Bearer ${acc.owner.token}`, 'content-type': 'text/csv', 'x-forwarded-for': '198.51.100.9', 'x-file-name': name },
      });
    const before = await t.db.import.count({ where: { accountId: acc.id } });
    for (const name of ['\xff.csv', 'a\xc3\x28.csv', '\xc0\xaf.csv']) {
      const r = await upload(name);
      expect([r.status, await r.json()], JSON.stringify(name)).toEqual([400, { error: 'Invalid query', details: { 'x-file-name': [HOSTILE_BYTES] } }]);
    }
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(before);
    const utf8 = Buffer.from('Müller.csv').toString('latin1');
    expect((await upload(utf8)).status).toBe(202);
  });
});
