import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createMember, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_ORIGIN, type RestResult, type TestApp } from '../helpers/app.js';

// The HTTP rules every /api/v1 answer follows (docs/decisions.md §2): unknown routes, methods, bodies,
// request ids, safe headers, and the 500 / 503 bodies that never leak internals.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MIB = 1024 * 1024;
const INTERNAL = '{"error":"Internal server error"}';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const postRaw = async (path: string, rawBody: string, headers: Record<string, string> = {}) =>
  t.rest('POST', path, { as: await createMember(t, acc.id), rawBody, headers });

describe('unknown routes under /api/v1', () => {
  it.each([
    ['GET', '/api/v1/nope'],
    ['GET', '/api/v1'],
    ['GET', '/api/v1/contacts/123'],
    ['GET', '/api/v1/contact'],
    ['POST', '/api/v1/forms'],
    ['POST', '/api/v1/forms/x/submit/again'],
    ['GET', '/api/v1/account'],
    ['DELETE', '/api/v1/accounts/export'],
  ])('%s %s is a 404 {"error":"Not found"}', async (method, path) => {
    const r = await t.rest(method, path, { as: acc.owner });
    expect([r.status, r.body]).toEqual([404, { error: 'Not found' }]);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('is a 404 for an anonymous caller too (the route is decided before authentication)', async () => {
    const r = await t.rest('GET', '/api/v1/secrets');
    expect([r.status, r.body]).toEqual([404, { error: 'Not found' }]);
  });

  it('a path that does not even decode is a 404', async () => {
    const r = await t.rest('POST', '/api/v1/forms/%E0%A4%A/submit', { body: { data: {} } });
    expect([r.status, r.body]).toEqual([404, { error: 'Not found' }]);
  });
});

describe('wrong method on a known path', () => {
  it.each([
    ['DELETE', '/api/v1/contacts', 'GET, POST'],
    ['PUT', '/api/v1/contacts', 'GET, POST'],
    ['PATCH', '/api/v1/deals', 'GET, POST'],
    ['POST', '/api/v1/contacts/export', 'GET'],
    ['DELETE', '/api/v1/invoices', 'GET, POST'],
    ['GET', '/api/v1/invoices/00000000-0000-4000-8000-000000000000/status', 'POST'],
    ['GET', '/api/v1/forms/00000000-0000-4000-8000-000000000000/submit', 'POST'],
    ['POST', '/api/v1/account/export', 'GET'],
  ])('%s %s is a 405 {"error":"Method not allowed"} with Allow: %s', async (method, path, allow) => {
    const r = await t.rest(method, path);
    expect([r.status, r.body]).toEqual([405, { error: 'Method not allowed' }]);
    expect(r.headers.get('allow')).toBe(allow);
  });
});

describe('request bodies', () => {
  const valid = () => ({ account_id: acc.id, first_name: 'Body' });

  it('a body larger than 1 MiB is a 413 {"error":"Payload too large"} and creates nothing', async () => {
    const before = await t.db.contact.count({ where: { accountId: acc.id } });
    const r = await postRaw('/api/v1/contacts', JSON.stringify({ ...valid(), company: 'c'.repeat(MIB) }));
    expect([r.status, r.body]).toEqual([413, { error: 'Payload too large' }]);
    expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(before);
  });

  it('a chunked body (no Content-Length) that grows past 1 MiB is a 413 too', async () => {
    const user = await createMember(t, acc.id);
    const chunk = new TextEncoder().encode(' '.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode(`{"account_id":"${acc.id}","first_name":"x"`));
        if (sent > 2 * MIB) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${t.baseUrl}/api/v1/contacts`, {
      method: 'POST', body, duplex: 'half',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'Payload too large' });
  });

  it('a body of just under 1 MiB is read (and judged on its fields)', async () => {
    const r = await postRaw('/api/v1/contacts', JSON.stringify({ ...valid(), company: 'c'.repeat(MIB - 200) }));
    expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { company: ['Must be at most 200 characters'] } }]);
  });

  it.each([
    ['no content type', undefined],
    ['text/plain', 'text/plain'],
    ['form encoding', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
  ])('a POST with %s is a 415 {"error":"Unsupported media type"}', async (_name, type) => {
    const user = await createMember(t, acc.id);
    const response = await fetch(`${t.baseUrl}/api/v1/contacts`, {
      method: 'POST',
      body: new Blob([JSON.stringify(valid())], type ? { type } : {}),
      headers: { authorization: `Bearer ${user.token}` },
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({ error: 'Unsupported media type' });
  });

  it.each(['application/json; charset=utf-8', 'Application/JSON', 'application/vnd.api+json'])('%s is JSON', async (type) => {
    const r = await postRaw('/api/v1/contacts', JSON.stringify(valid()), { 'content-type': type });
    expect(r.status).toBe(201);
  });

  it.each([
    ['invalid JSON', '{"first_name": "x",}'],
    ['a JSON array', '[]'],
    ['a JSON string', '"x"'],
    ['JSON null', 'null'],
    ['JSON true', 'true'],
    ['an empty body', ''],
  ])('%s is a 400 {"error":"Invalid payload","details":{"body":["Expected a JSON object"]}}', async (_name, rawBody) => {
    const r = await postRaw('/api/v1/deals', rawBody);
    expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { body: ['Expected a JSON object'] } }]);
  });

  it('a body that is not UTF-8 is a 400 on body', async () => {
    const user = await createMember(t, acc.id);
    const response = await fetch(`${t.baseUrl}/api/v1/contacts`, {
      method: 'POST',
      body: new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), // {"a":"\xff\xfe"}
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'Invalid payload', details: { body: ['Expected a JSON object'] } });
  });
});

describe('headers on every answer', () => {
  const answers = async (): Promise<[string, RestResult][]> => {
    const user = await createMember(t, acc.id);
    return [
      ['200', await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: user })],
      ['201', await t.rest('POST', '/api/v1/contacts', { as: user, body: { account_id: acc.id, first_name: 'H' } })],
      ['400', await t.rest('GET', '/api/v1/deals?account_id=x', { as: user })],
      ['401', await t.rest('GET', `/api/v1/invoices?account_id=${acc.id}`)],
      ['403', await t.rest('GET', `/api/v1/invoices?account_id=${acc.id}`, { as: acc.outsider })],
      ['404', await t.rest('GET', '/api/v1/nothing')],
      ['405', await t.rest('PUT', '/api/v1/deals')],
      ['415', await t.rest('POST', '/api/v1/deals', { as: user, rawBody: '{}', headers: { 'content-type': 'text/plain' } })],
      ['CSV', await t.rest('GET', `/api/v1/contacts/export?account_id=${acc.id}`, { as: user })],
    ];
  };

  it('X-Request-Id is on every answer, a fresh UUID when the client sent none', async () => {
    const ids = new Set<string>();
    for (const [name, r] of await answers()) {
      const id = r.headers.get('x-request-id');
      expect(id, name).toMatch(UUID);
      ids.add(id!);
    }
    expect(ids.size).toBe(9);
  });

  it('X-Content-Type-Options: nosniff and Cache-Control: no-store are on every answer', async () => {
    for (const [name, r] of await answers()) {
      expect(r.headers.get('x-content-type-options'), name).toBe('nosniff');
      expect(r.headers.get('cache-control'), name).toBe('no-store');
    }
  });

  it('JSON answers say application/json', async () => {
    for (const [name, r] of (await answers()).filter(([n]) => n !== 'CSV')) {
      expect(r.headers.get('content-type'), name).toMatch(/^application\/json(;|$)/);
    }
  });

  it('a JSON answer is sent whole: its Content-Length is its size, never chunked', async () => {
    for (const [name, r] of (await answers()).filter(([n]) => n !== 'CSV')) {
      // Coded (fetch asks for gzip), its length is the coded body's, which fetch has decoded into r.text.
      const size = r.headers.get('content-encoding') ? expect.stringMatching(/^[1-9]\d*$/) : String(Buffer.byteLength(r.text));
      expect([r.headers.get('content-length'), r.headers.get('transfer-encoding')], name).toEqual([size, null]);
    }
  });

  it.each(['abc-123', 'req_42.retry:2', 'x'.repeat(128)])('a sane X-Request-Id (%s) is echoed', async (id) => {
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.member, headers: { 'x-request-id': id } });
    expect(r.headers.get('x-request-id')).toBe(id);
    const refused = await t.rest('GET', '/api/v1/nope', { headers: { 'x-request-id': id } });
    expect(refused.headers.get('x-request-id')).toBe(id);
  });

  it.each([
    ['with spaces', 'two words'],
    ['too long', 'x'.repeat(129)],
    ['with markup', '<script>'],
    ['with a line break attempt', 'a%0d%0ab'],
  ])('an X-Request-Id %s is replaced by a fresh one', async (_name, id) => {
    const r = await t.rest('GET', '/api/v1/nope', { headers: { 'x-request-id': id } });
    expect(r.headers.get('x-request-id')).toMatch(UUID);
  });
});

describe('CORS', () => {
  const preflight = (origin: string, path = '/api/v1/contacts') =>
    t.rest('OPTIONS', path, { headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' } });

  it('the allowed origin may call with credentials', async () => {
    const r = await preflight(TEST_ORIGIN);
    expect(r.status).toBeLessThan(300);
    expect(r.headers.get('access-control-allow-origin')).toBe(TEST_ORIGIN);
    expect(r.headers.get('access-control-allow-credentials')).toBe('true');
  });

  it('another origin is never granted access with credentials', async () => {
    const evil = 'https://evil.example';
    for (const r of [
      await preflight(evil),
      await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.member, headers: { origin: evil } }),
    ]) {
      const granted = r.headers.get('access-control-allow-origin');
      expect(granted === evil || granted === '*' ? r.headers.get('access-control-allow-credentials') : 'no grant').not.toBe('true');
      expect(granted).not.toBe(evil);
    }
  });
});

describe('500: never a stack, SQL or message from inside', () => {
  it('an unexpected failure in the REST pipeline is exactly {"error":"Internal server error"}', async () => {
    const limiter = t.deps.limiter;
    const consume = limiter.consume;
    limiter.consume = async () => {
      throw new Error('redis://admin:hunter2@10.0.0.5:6379 ECONNWEIRD at Limiter.consume (/srv/app/limiter.ts:42)');
    };
    try {
      const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.member, headers: { 'x-request-id': 'trace-500' } });
      expect(r.status).toBe(500);
      expect(r.text).toBe(INTERNAL);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.headers.get('x-request-id')).toBe('trace-500');
    } finally {
      limiter.consume = consume;
    }
  });

  describe('a failing query inside a resolver', () => {
    let broken: TestApp;
    let owner: TestAccount;
    beforeAll(async () => {
      broken = await createTestApp();
      owner = await createAccount(broken);
      await broken.db.deal.create({ data: { accountId: owner.id, title: 'D' } });
      // The schema no longer matches what the code expects: every query on these columns fails.
      await broken.db.$executeRawUnsafe('ALTER TABLE deals RENAME COLUMN title TO title_gone');
      await broken.db.$executeRawUnsafe('ALTER TABLE contacts RENAME COLUMN company TO company_gone');
    });
    afterAll(() => broken?.close());

    const assertMasked = (r: RestResult) => {
      expect(r.status).toBe(500);
      expect(r.text).toBe(INTERNAL);
      for (const leak of ['title_gone', 'company', 'column', 'SELECT', 'INSERT', 'prisma', 'at ', 'stack']) {
        expect(r.text).not.toContain(leak);
      }
    };

    it('a list whose query fails is exactly {"error":"Internal server error"}', async () => {
      assertMasked(await broken.rest('GET', `/api/v1/deals?account_id=${owner.id}`, { as: owner.owner }));
    });

    it('a create whose insert fails is exactly {"error":"Internal server error"}', async () => {
      assertMasked(await broken.rest('POST', '/api/v1/contacts', { as: owner.owner, body: { account_id: owner.id, first_name: 'X', company: 'Y' } }));
    });

    it('a download whose query fails before the first byte is exactly {"error":"Internal server error"}', async () => {
      const r = await broken.rest('GET', `/api/v1/contacts/export?account_id=${owner.id}`, { as: owner.owner });
      assertMasked(r);
      expect(r.headers.get('content-disposition')).toBeNull();
    });
  });

  // Coded, the first pages may still sit in the encoder when the failure comes: then even the headers never arrive.
  it.each(['identity', 'gzip'])('a download that fails after its first bytes is cut off: the client never gets a complete-looking file (%s)', async (coding) => {
    const cut = await createAccount(t);
    // The first two pages of rows come back (a response chunk each; the download reads one ahead of the socket),
    // so bytes are on the wire when the query for the third page fails.
    // The CSV pages are raw SQL through the reader's pg pool on PostgreSQL, through the reader's
    // Prisma client on the embedded database, which has no pool (src/exports/contacts-csv.ts).
    const pool = t.deps.db.reader.$replicaPool();
    const client = t.deps.db.reader.$replica();
    const [target, method] = pool ? ([pool, 'query'] as const) : ([client, '$queryRaw'] as const);
    const original = (target as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[method]!;
    let calls = 0;
    // A page as the CSV query answers it: one JSON text of [first name, ..., source, created_at in epoch ms].
    const rows = Array.from({ length: 1000 }, (_, i) => [`Row${i}`, null, null, null, `Company ${i}`.padEnd(100, '.'), 'lead', 'other', Date.UTC(2024, 0, 1, 0, 0, 0, i)]);
    // With it, the key of its last row, as PostgreSQL writes it (src/exports/pages.ts).
    const page = [{ page: JSON.stringify(rows), last: JSON.stringify(['2024-01-01T00:00:00.999+00:00', '00000000-0000-4000-8000-000000000999']) }];
    const fake = async (...args: unknown[]) => {
      // pg: (text, values); Prisma: (Prisma.Sql), whose text and values are its own fields.
      const [text, values] = pool ? args : [(args[0] as { text?: string }).text, (args[0] as { values?: unknown[] }).values];
      const csvPage = Array.isArray(values) && values.includes(cut.id) && String(text).includes('json_agg');
      if (!csvPage) return original.apply(target, args);
      if (++calls <= 2) return pool ? { rows: page } : page;
      throw new Error('SELECT "first_name" FROM contacts: connection to 10.0.0.9 lost');
    };
    Object.assign(target, { [method]: fake });
    try {
      const download = fetch(`${t.baseUrl}/api/v1/contacts/export?account_id=${cut.id}`, {
        headers: { authorization: `Bearer ${cut.member.token}`, 'accept-encoding': coding },
      });
      if (coding === 'identity') expect((await download).status).toBe(200);
      await expect(download.then((response) => response.text())).rejects.toThrow();
      expect(calls).toBe(3);
    } finally {
      Object.assign(target, { [method]: original });
    }
  });
});

describe('503 when the database is unreachable', () => {
  let down: TestApp;
  let owner: TestAccount;
  beforeAll(async () => {
    down = await createTestApp();
    owner = await createAccount(down);
    const db = down.deps.db;
    await db.close();
    db.close = async () => {}; // already closed: the harness's own close must not close it twice
  });
  afterAll(() => down?.close());

  it('an authenticated endpoint answers 503 {"error":"Service unavailable"} with Retry-After', async () => {
    const r = await down.rest('GET', `/api/v1/contacts?account_id=${owner.id}`, { as: owner.owner });
    expect([r.status, r.body]).toEqual([503, { error: 'Service unavailable' }]);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(r.headers.get('x-request-id')).toMatch(UUID);
  });

  it('the public form submit answers 503 too', async () => {
    const r = await down.rest('POST', '/api/v1/forms/00000000-0000-4000-8000-000000000000/submit', { body: { data: {} } });
    expect([r.status, r.body]).toEqual([503, { error: 'Service unavailable' }]);
  });
});
