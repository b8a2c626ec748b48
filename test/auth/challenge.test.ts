// A 401 says how to authenticate (RFC 9110 §15.5.2, RFC 6750 §3) and every status line has its reason
// phrase (src/plugins/use-auth-challenge.ts), over the real HTTP server.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/rest/routes.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_ORIGIN, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp({ env: { METRICS_TOKEN: 'metrics-token-0123456789' } });
  acc = await createAccount(t);
});
afterAll(() => t?.close());

/** A user route's path with its parameters filled, and a body it would accept were the caller signed in. */
const call = (method: string, path: string, headers: Record<string, string> = {}) =>
  fetch(`${t.baseUrl}${path.replace(/\{[^}]+\}/g, randomUUID())}${method === 'GET' ? `?account_id=${acc.id}` : ''}`, {
    method,
    headers: { 'x-forwarded-for': '198.51.100.7', ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(method === 'POST' ? { body: JSON.stringify({ account_id: acc.id }) } : {}),
  });

// Every route but the public form submit needs a token (its field's rules say so: docs/fields.md).
const userRoutes = routes.filter((r) => !r.path.endsWith('/submit')).map((r) => [`${r.method} ${r.path}`, r.method, r.path] as const);

describe('WWW-Authenticate on every 401', () => {
  it.each(userRoutes)('%s without a token: 401 Unauthorized with WWW-Authenticate: Bearer', async (_, method, path) => {
    const r = await call(method, path);
    expect([r.status, r.statusText, r.headers.get('www-authenticate')]).toEqual([401, 'Unauthorized', 'Bearer']);
  });

  it.each(userRoutes)('%s with a refused bearer token: Bearer error="invalid_token"', async (_, method, path) => {
    const r = await call(method, path, { authorization: 'Bearer not.a.token' });
    expect([r.status, r.statusText, r.headers.get('www-authenticate')]).toEqual([401, 'Unauthorized', 'Bearer error="invalid_token"']);
  });

  it('a refused session cookie is a sent token too: Bearer error="invalid_token"', async () => {
    const r = await call('GET', '/api/v1/contacts', { cookie: 'session=expired.or.forged', origin: TEST_ORIGIN });
    expect([r.status, r.headers.get('www-authenticate')]).toEqual([401, 'Bearer error="invalid_token"']);
  });

  it('GET /metrics without its token: 401 with WWW-Authenticate: Bearer', async () => {
    const r = await fetch(`${t.baseUrl}/metrics`);
    expect([r.status, r.statusText, r.headers.get('www-authenticate')]).toEqual([401, 'Unauthorized', 'Bearer']);
  });

  it('/graphql: a field refused for want of a token carries the same challenge (its answer is 200)', async () => {
    const ask = (headers: Record<string, string>) =>
      fetch(`${t.baseUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"query":"{ me { id } }"}' });
    const anonymous = await ask({});
    expect((await anonymous.json()).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    const forged = await ask({ authorization: 'Bearer not.a.token' });
    expect(forged.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('answers that need no token carry no challenge', async () => {
    const signedIn = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.owner });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.get('www-authenticate')).toBeNull();
    const graphql = await t.gql('{ me { id } }', {}, { as: acc.owner });
    expect(graphql.headers.get('www-authenticate')).toBeNull();
  });
});

describe('every status line has a reason phrase', () => {
  it.each([
    ['GET', '/healthz', 200, 'OK'],
    ['GET', '/api/v1/nope', 404, 'Not Found'],
    ['POST', '/api/v1/contacts', 401, 'Unauthorized'],
    ['GET', '/graphql?query={__typename}', 200, 'OK'],
  ] as const)('%s %s: %i %s', async (method, path, status, text) => {
    const r = await fetch(`${t.baseUrl}${path}`, { method });
    expect([r.status, r.statusText]).toEqual([status, text]);
  });

  it('a REST answer keeps its body and headers through the rewrite', async () => {
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.owner });
    expect(r.body).toMatchObject({ data: [], total: 0, page: 1 });
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('x-request-id')).toBeTruthy();
    expect(r.headers.get('ratelimit-limit')).toBeTruthy();
  });
});
