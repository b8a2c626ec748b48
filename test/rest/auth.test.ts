import { randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createUser, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_ORIGIN, TEST_SECRET, type RestResult, type TestApp, type TestUser } from '../helpers/app.js';

// REST contract, Authentication (docs/rest.md) and docs/decisions.md §1, §2: who may call what, and how.

const NO_ACCESS = { error: 'Forbidden: no access to this account' };
const OWNER_ONLY = { error: 'Forbidden: only the account owner can export account data' };
const CROSS_SITE = { error: 'Forbidden: cross-site request' };
const UNAUTHORIZED = { error: 'Unauthorized' };

let t: TestApp;
let acc: TestAccount;
let formId: string;
let ip = 0;
const nextIp = () => `172.16.${Math.floor(++ip / 250) % 250}.${(ip % 250) + 1}`;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  const r = await t.gql(
    'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }',
    { input: { accountId: acc.id, name: 'Auth form', fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] } },
    { as: acc.owner },
  );
  formId = r.data.createLeadForm.id;
});
afterAll(() => t?.close());

const secret = new TextEncoder().encode(TEST_SECRET);
/** A signed token with full control over its claims (exp/nbf in seconds since the epoch). */
function sign(claims: { sub?: string; exp?: number | null; nbf?: number }, key: Uint8Array = secret) {
  const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt();
  if (claims.sub !== undefined) jwt.setSubject(claims.sub);
  if (claims.exp !== null) jwt.setExpirationTime(claims.exp ?? Math.floor(Date.now() / 1000) + 3600);
  if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf);
  return jwt.sign(key);
}
const now = () => Math.floor(Date.now() / 1000);

type Call = { method: 'GET' | 'POST'; path: string; body?: unknown };
/** One request per endpoint of the contract, addressed to `accountId`. */
const ENDPOINTS: Record<string, (accountId: string) => Call> = {
  'GET /api/v1/contacts': (id) => ({ method: 'GET', path: `/api/v1/contacts?account_id=${id}` }),
  'POST /api/v1/contacts': (id) => ({ method: 'POST', path: '/api/v1/contacts', body: { account_id: id, first_name: 'Auth' } }),
  'GET /api/v1/contacts/export': (id) => ({ method: 'GET', path: `/api/v1/contacts/export?account_id=${id}` }),
  'GET /api/v1/deals': (id) => ({ method: 'GET', path: `/api/v1/deals?account_id=${id}` }),
  'POST /api/v1/deals': (id) => ({ method: 'POST', path: '/api/v1/deals', body: { account_id: id, title: 'Auth' } }),
  'GET /api/v1/invoices': (id) => ({ method: 'GET', path: `/api/v1/invoices?account_id=${id}` }),
  'GET /api/v1/account/export': (id) => ({ method: 'GET', path: `/api/v1/account/export?account_id=${id}` }),
};
const AUTHENTICATED = Object.keys(ENDPOINTS);
const send = (call: Call, options: { as?: TestUser | null; headers?: Record<string, string> } = {}): Promise<RestResult> =>
  t.rest(call.method, call.path, { ...options, body: call.body, clientIp: nextIp() });

describe('the access matrix (owner, member, outsider, anonymous)', () => {
  const OK: Record<string, number> = { GET: 200, POST: 201 };

  it.each(AUTHENTICATED.filter((e) => e !== 'GET /api/v1/account/export'))(
    '%s: owner and member succeed, an outsider gets 403, anonymous 401',
    async (endpoint) => {
      const account = await createAccount(t);
      const call = ENDPOINTS[endpoint]!(account.id);
      expect((await send(call, { as: account.owner })).status).toBe(OK[call.method]);
      expect((await send(call, { as: account.member })).status).toBe(OK[call.method]);
      const outsider = await send(call, { as: account.outsider });
      expect([outsider.status, outsider.body]).toEqual([403, NO_ACCESS]);
      const anonymous = await send(call, { as: null });
      expect([anonymous.status, anonymous.body]).toEqual([401, UNAUTHORIZED]);
    },
  );

  it('GET /api/v1/account/export: the owner succeeds, a member gets the owner-only 403, an outsider 403, anonymous 401', async () => {
    const account = await createAccount(t);
    const call = ENDPOINTS['GET /api/v1/account/export']!(account.id);
    const member = await send(call, { as: account.member });
    expect([member.status, member.body]).toEqual([403, OWNER_ONLY]);
    const outsider = await send(call, { as: account.outsider });
    expect([outsider.status, outsider.body]).toEqual([403, NO_ACCESS]);
    const anonymous = await send(call, { as: null });
    expect([anonymous.status, anonymous.body]).toEqual([401, UNAUTHORIZED]);
    expect((await send(call, { as: account.owner })).status).toBe(200);
  });

  it('POST /api/v1/forms/{form_id}/submit: anyone, with or without a token, gets 200', async () => {
    for (const as of [acc.owner, acc.member, acc.outsider, null]) {
      const r = await t.rest('POST', `/api/v1/forms/${formId}/submit`, { as, body: { data: { email: `${unique('p')}@example.com` } }, clientIp: nextIp() });
      expect(r.status).toBe(200);
    }
  });

  it('a user with no account at all gets 403 everywhere', async () => {
    const loner = await createUser(t);
    for (const endpoint of AUTHENTICATED) {
      const r = await send(ENDPOINTS[endpoint]!(acc.id), { as: loner });
      expect([endpoint, r.status, r.body]).toEqual([endpoint, 403, NO_ACCESS]);
    }
  });
});

describe('account_id', () => {
  it.each(AUTHENTICATED)('%s: an account that does not exist and a foreign account give the same 403 body', async (endpoint) => {
    const caller = await createAccount(t);
    const unknown = await send(ENDPOINTS[endpoint]!(randomUUID()), { as: caller.owner });
    const foreign = await send(ENDPOINTS[endpoint]!(acc.id), { as: caller.owner });
    expect([unknown.status, unknown.body]).toEqual([403, NO_ACCESS]);
    expect([foreign.status, foreign.body]).toEqual([403, NO_ACCESS]);
  });

  it.each(AUTHENTICATED)('%s: an account_id that is not a UUID is a 400 on account_id', async (endpoint) => {
    const caller = await createAccount(t);
    const call = ENDPOINTS[endpoint]!('not-a-uuid');
    const r = await send(call, { as: caller.owner });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: call.method === 'GET' ? 'Invalid query' : 'Invalid payload', details: { account_id: ['Must be a UUID'] } });
  });

  it('an account_id in upper case names the same account', async () => {
    const r = await send(ENDPOINTS['GET /api/v1/contacts']!(acc.id.toUpperCase()), { as: acc.member });
    expect(r.status).toBe(200);
  });
});

describe('bearer token', () => {
  const call = () => ENDPOINTS['GET /api/v1/contacts']!(acc.id);
  const withHeader = (authorization: string) => send(call(), { headers: { authorization } });

  it('Authorization: Bearer <token> authenticates', async () => {
    expect((await withHeader(`Bearer ${acc.member.token}`)).status).toBe(200);
  });

  it('the scheme is case-insensitive', async () => {
    expect((await withHeader(`bearer ${acc.member.token}`)).status).toBe(200);
  });

  it.each([
    ['no token at all', null],
    ['an empty bearer', 'Bearer '],
    ['a garbage token', 'Bearer garbage'],
    ['another scheme', `Basic ${Buffer.from('user:pass').toString('base64')}`],
    ['a token without the scheme', 'TOKEN'],
  ])('%s is a 401 {"error":"Unauthorized"}', async (_name, authorization) => {
    const r = authorization === null ? await send(call()) : await withHeader(authorization);
    expect([r.status, r.body]).toEqual([401, UNAUTHORIZED]);
  });

  it('an expired token is a 401', async () => {
    const r = await withHeader(`Bearer ${await sign({ sub: acc.member.id, exp: now() - 120 })}`);
    expect([r.status, r.body]).toEqual([401, UNAUTHORIZED]);
  });

  it('a token that expired less than 30 s ago is still accepted (clock tolerance)', async () => {
    expect((await withHeader(`Bearer ${await sign({ sub: acc.member.id, exp: now() - 5 })}`)).status).toBe(200);
  });

  it('a token signed with another secret is a 401', async () => {
    const r = await withHeader(`Bearer ${await sign({ sub: acc.member.id }, new TextEncoder().encode('another-secret-another-secret-0123456789'))}`);
    expect([r.status, r.body]).toEqual([401, UNAUTHORIZED]);
  });

  it('an unsigned token (alg none) is a 401', async () => {
    const unsecured = new UnsecuredJWT({}).setSubject(acc.member.id).setExpirationTime('1h').encode();
    expect((await withHeader(`Bearer ${unsecured}`)).status).toBe(401);
  });

  it('a token without exp is a 401', async () => {
    expect((await withHeader(`Bearer ${await sign({ sub: acc.member.id, exp: null })}`)).status).toBe(401);
  });

  it('a token not valid yet (nbf in the future) is a 401', async () => {
    expect((await withHeader(`Bearer ${await sign({ sub: acc.member.id, nbf: now() + 600 })}`)).status).toBe(401);
  });

  it('a token whose sub is not a UUID is a 401', async () => {
    expect((await withHeader(`Bearer ${await sign({ sub: 'user-1' })}`)).status).toBe(401);
  });

  it('a sub seen for the first time becomes a user: 403 on a foreign account, not 401', async () => {
    const id = randomUUID();
    const r = await withHeader(`Bearer ${await sign({ sub: id })}`);
    expect([r.status, r.body]).toEqual([403, NO_ACCESS]);
    expect(await t.db.user.findUnique({ where: { id } })).not.toBeNull();
  });

  it.each(AUTHENTICATED)('%s: a garbage token is a 401', async (endpoint) => {
    const r = await send(ENDPOINTS[endpoint]!(acc.id), { headers: { authorization: 'Bearer x.y.z' } });
    expect([r.status, r.body]).toEqual([401, UNAUTHORIZED]);
  });
});

describe('session cookie', () => {
  const cookie = (user: TestUser) => `session=${user.token}`;
  const createContact = (headers: Record<string, string>) => send(ENDPOINTS['POST /api/v1/contacts']!(acc.id), { headers });

  it('the cookie named session authenticates a GET', async () => {
    const r = await send(ENDPOINTS['GET /api/v1/contacts']!(acc.id), { headers: { cookie: `theme=dark; ${cookie(acc.member)}; lang=en` } });
    expect(r.status).toBe(200);
  });

  it('a cookie with another name is not a session: 401', async () => {
    const r = await send(ENDPOINTS['GET /api/v1/contacts']!(acc.id), { headers: { cookie: `sid=${acc.member.token}` } });
    expect([r.status, r.body]).toEqual([401, UNAUTHORIZED]);
  });

  it('a cookie holding an invalid token is a 401', async () => {
    const r = await send(ENDPOINTS['GET /api/v1/contacts']!(acc.id), { headers: { cookie: 'session=garbage' } });
    expect([r.status, r.body]).toEqual([401, UNAUTHORIZED]);
  });

  it('a cookie POST without Origin or Referer is a 403 {"error":"Forbidden: cross-site request"} and creates nothing', async () => {
    const before = await t.db.contact.count({ where: { accountId: acc.id } });
    const r = await createContact({ cookie: cookie(acc.member) });
    expect([r.status, r.body]).toEqual([403, CROSS_SITE]);
    expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(before);
  });

  it('a cookie POST from another origin is a 403 cross-site request', async () => {
    const r = await createContact({ cookie: cookie(acc.member), origin: 'https://evil.example' });
    expect([r.status, r.body]).toEqual([403, CROSS_SITE]);
  });

  it('a cookie POST from another origin is refused even with an allowed Referer (Origin decides)', async () => {
    const r = await createContact({ cookie: cookie(acc.member), origin: 'https://evil.example', referer: `${TEST_ORIGIN}/contacts` });
    expect([r.status, r.body]).toEqual([403, CROSS_SITE]);
  });

  it('a cookie POST with Origin "null" is a 403 cross-site request', async () => {
    expect((await createContact({ cookie: cookie(acc.member), origin: 'null' })).status).toBe(403);
  });

  it('a cookie POST with the allowed Origin works', async () => {
    expect((await createContact({ cookie: cookie(acc.member), origin: TEST_ORIGIN })).status).toBe(201);
  });

  it('a cookie POST with no Origin but an allowed Referer works', async () => {
    expect((await createContact({ cookie: cookie(acc.member), referer: `${TEST_ORIGIN}/contacts/new?x=1` })).status).toBe(201);
  });

  it('a cookie POST to /api/v1/deals from another site is refused as well', async () => {
    const r = await send(ENDPOINTS['POST /api/v1/deals']!(acc.id), { headers: { cookie: cookie(acc.member), origin: 'https://evil.example' } });
    expect([r.status, r.body]).toEqual([403, CROSS_SITE]);
  });

  it('a bearer POST is not subject to the origin check: no Origin, or another one, both work', async () => {
    expect((await createContact({ authorization: `Bearer ${acc.member.token}` })).status).toBe(201);
    expect((await createContact({ authorization: `Bearer ${acc.member.token}`, origin: 'https://evil.example' })).status).toBe(201);
  });

  it('the bearer token wins over the cookie: an invalid bearer with a valid cookie is a 401', async () => {
    const r = await send(ENDPOINTS['GET /api/v1/contacts']!(acc.id), { headers: { authorization: 'Bearer garbage', cookie: cookie(acc.member) } });
    expect(r.status).toBe(401);
    const ok = await send(ENDPOINTS['GET /api/v1/contacts']!(acc.id), { headers: { authorization: `Bearer ${acc.member.token}`, cookie: 'session=garbage' } });
    expect(ok.status).toBe(200);
  });
});

describe('AUTH_COOKIE_NAME', () => {
  it('names the session cookie; the default name then means nothing', async () => {
    const custom = await createTestApp({ env: { AUTH_COOKIE_NAME: 'crm_session' } });
    try {
      const account = await createAccount(custom);
      const path = `/api/v1/contacts?account_id=${account.id}`;
      expect((await custom.rest('GET', path, { headers: { cookie: `crm_session=${account.member.token}` } })).status).toBe(200);
      expect((await custom.rest('GET', path, { headers: { cookie: `session=${account.member.token}` } })).status).toBe(401);
    } finally {
      await custom.close();
    }
  });
});

describe('order of checks: 401 -> 429 -> 400 -> 403', () => {
  it('an anonymous request with an invalid account_id is a 401, not a 400', async () => {
    const r = await send(ENDPOINTS['GET /api/v1/contacts']!('nope'), { as: null });
    expect(r.status).toBe(401);
  });

  it('an anonymous POST with a body that is not JSON is a 401, not a 415', async () => {
    const r = await t.rest('POST', '/api/v1/contacts', { rawBody: 'x', headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(401);
  });

  it('an outsider sending invalid input gets the 400, not the 403', async () => {
    const r = await send({ method: 'POST', path: '/api/v1/contacts', body: { account_id: acc.id } }, { as: acc.outsider });
    expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { first_name: ['Required'] } }]);
  });

  it('once limited, invalid input and a foreign account are a 429 too; a request refused as invalid still counted', async () => {
    const caller = await createAccount(t);
    const exportOf = (id: string) => ENDPOINTS['GET /api/v1/contacts/export']!(id);
    // Five calls that fail validation spend the 5/min budget all the same.
    for (let i = 0; i < 5; i++) expect((await send(exportOf('bad'), { as: caller.member })).status).toBe(400);
    expect((await send(exportOf(caller.id), { as: caller.member })).status).toBe(429);
    expect((await send(exportOf('bad'), { as: caller.member })).status).toBe(429);
    expect((await send(exportOf(acc.id), { as: caller.member })).status).toBe(429);
    // 401 still comes first.
    expect((await send(exportOf(caller.id), { as: null })).status).toBe(401);
  });
});

describe('TRUST_PROXY', () => {
  it('with TRUST_PROXY=0 a spoofed X-Forwarded-For does not escape the per-IP limit: the 6th submit from one socket in a minute is a 429', async () => {
    const direct = await createTestApp({ env: { TRUST_PROXY: '0' } });
    try {
      const owner = await createAccount(direct);
      const form = await direct.gql(
        'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }',
        { input: { accountId: owner.id, name: 'Direct form', fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] } },
        { as: owner.owner },
      );
      // Each request claims another client address; only the socket (127.0.0.1) may count.
      const submit = (i: number) =>
        direct.rest('POST', `/api/v1/forms/${form.data.createLeadForm.id}/submit`, {
          body: { data: { email: `${unique('direct')}@example.com` } },
          clientIp: `203.0.113.${i + 1}`,
        });
      for (let i = 0; i < 5; i++) expect((await submit(i)).status).toBe(200);
      const sixth = await submit(5);
      expect([sixth.status, sixth.body]).toEqual([429, { error: 'Rate limit exceeded' }]);
    } finally {
      await direct.close();
    }
  });
});
