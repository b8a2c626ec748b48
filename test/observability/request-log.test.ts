import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { createAccount, createApiKey, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// One JSON line per request (src/plugins/use-request-log.ts): id, method, route pattern,
// operation, status, duration, user and account when known; never tokens, cookies or bodies.

let t: TestApp;
let acc: TestAccount;
let lines: string[];
let app: ReturnType<typeof createApp>;
let log: Logger;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  lines = [];
  // The same app, but its logger writes into `lines`.
  log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
  app = createApp({ ...t.deps, log });
});
afterAll(() => t.close());

async function call(path: string, init: RequestInit = {}) {
  lines.length = 0;
  const response = await app.fetch(`http://localhost${path}`, init);
  await response.arrayBuffer();
  const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
  return { response, requestLines, raw: lines.join('') };
}

describe('request log', () => {
  it('a REST request logs one line with id, method, route pattern, operation, status, duration, user and account', async () => {
    await createContact(t, acc);
    const cookie = `session=${acc.member.token}`;
    const { response, requestLines, raw } = await call(`/api/v1/contacts?account_id=${acc.id}&search=Tester`, {
      headers: { authorization: `Bearer ${acc.member.token}`, cookie, 'x-request-id': 'req-log-1' },
    });
    expect(response.status).toBe(200);
    expect(requestLines).toHaveLength(1);
    const [line] = requestLines;
    expect(line).toMatchObject({
      level: 30,
      requestId: 'req-log-1',
      method: 'GET',
      route: '/api/v1/contacts',
      operation: 'ListContacts',
      status: 200,
      userId: acc.member.id,
      accountId: acc.id,
    });
    expect(typeof line.durationMs).toBe('number');
    expect(line.durationMs).toBeGreaterThanOrEqual(0);
    expect(raw).not.toContain(acc.member.token);
    expect(raw).not.toContain('Bearer');
    expect(raw).not.toContain('search=');
    expect(raw).not.toContain('Tester');
  });

  it('a request with an API key logs the key\'s id, never its secret, whatever the answer', async () => {
    const key = await createApiKey(t, acc, ['CONTACTS_READ']);
    const random = key.token.split('_')[3]!;
    const headers = { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' };
    const answers = [
      await call(`/api/v1/contacts?account_id=${acc.id}`, { headers }),
      await call('/api/v1/contacts', { method: 'POST', headers, body: JSON.stringify({ account_id: acc.id, first_name: 'A', last_name: 'B', email: 'a@example.com' }) }),
      await call('/graphql', { method: 'POST', headers, body: JSON.stringify({ query: '{ me { id } }' }) }),
      await call(`/api/v1/contacts?account_id=${acc.id}`, { headers: { authorization: `Bearer ${key.token}x` } }),
    ];
    expect(answers.map((a) => a.response.status)).toEqual([200, 403, 200, 401]);
    expect(answers[0]!.requestLines[0]).toMatchObject({ apiKeyId: key.id, accountId: acc.id });
    expect(answers[0]!.requestLines[0].userId).toBeUndefined();
    for (const { raw } of answers) {
      expect(raw).not.toContain(key.token);
      expect(raw).not.toContain(random); // not even the secret's random part
    }
  });

  it('logs the route pattern, not the URL, and no body', async () => {
    const email = `${unique('secret')}@example.com`;
    const { response, requestLines, raw } = await call('/api/v1/forms/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/submit', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' },
      body: JSON.stringify({ data: { email } }),
    });
    expect(response.status).toBe(404);
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatchObject({ route: '/api/v1/forms/:form_id/submit', status: 404, method: 'POST' });
    expect(requestLines[0].userId).toBeUndefined();
    expect(raw).not.toContain(email);
    expect(raw).not.toContain('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
  });

  it('a GraphQL request logs /graphql with its operation name; an anonymous 401 has no user', async () => {
    const me = await call('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acc.owner.token}` },
      body: JSON.stringify({ query: 'query WhoAmI { me { id } }' }),
    });
    expect(me.requestLines).toEqual([expect.objectContaining({ route: '/graphql', operation: 'WhoAmI', status: 200, userId: acc.owner.id })]);

    const anonymous = await call(`/api/v1/deals?account_id=${acc.id}`);
    expect(anonymous.requestLines).toEqual([expect.objectContaining({ route: '/api/v1/deals', status: 401 })]);
    expect(anonymous.requestLines[0].userId).toBeUndefined();
  });

  it('an unknown path is logged as unmatched', async () => {
    const { requestLines } = await call('/api/v1/nothing/here?token=abc');
    expect(requestLines).toEqual([expect.objectContaining({ route: 'unmatched', status: 404 })]);
  });

  it('the request line skips redaction, yet every other line of the same logger is still redacted', async () => {
    await call(`/api/v1/contacts?account_id=${acc.id}`, { headers: { authorization: `Bearer ${acc.member.token}` } });
    lines.length = 0;
    log.info({ req: { headers: { authorization: 'Bearer secret-1', cookie: 'session=secret-2' } }, key: { token: 'secret-3', password: 'secret-4' } }, 'other');
    const raw = lines.join('');
    expect(raw).toContain('[Redacted]');
    for (const secret of ['secret-1', 'secret-2', 'secret-3', 'secret-4']) expect(raw).not.toContain(secret);
  });
});

describe('error log', () => {
  it('an unexpected Prisma error is logged with its type and stack frames but never the e-mail its arguments held', async () => {
    const email = `${unique('private')}@example.com`;
    // contact.update gets one unknown field, so Prisma throws a real validation error that prints its
    // arguments (a create is one raw statement now: the set-based write path, docs/batches.md). The
    // update runs in a transaction (with its event, docs/events.md): the transaction's client is broken too.
    const { id } = (await t.rest('POST', '/api/v1/contacts', { as: acc.member, body: { account_id: acc.id, first_name: 'Grace' } })).body.data;
    const real = t.deps.db.prisma as PrismaClient;
    const breakContact = <T extends object>(client: T): T => new Proxy(client, {
      get: (target, prop) => prop === 'contact'
        ? new Proxy((target as PrismaClient).contact, {
          get: (contact, method) => method === 'update'
            ? (args: { data: object }) => contact.update({ ...args, data: { ...args.data, notAColumn: true } } as never)
            : Reflect.get(contact, method),
        })
        : Reflect.get(target, prop),
    });
    const prisma = new Proxy(breakContact(real), {
      get: (target, prop) => prop === '$transaction'
        ? (work: (tx: object) => Promise<unknown>, options?: object) => real.$transaction((tx) => work(breakContact(tx)), options)
        : Reflect.get(target, prop),
    });
    const broken = createApp({ ...t.deps, db: { ...t.deps.db, prisma }, log });

    lines.length = 0;
    const response = await broken.fetch(`http://localhost/api/v1/contacts/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acc.member.token}` },
      body: JSON.stringify({ email }),
    });
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain(email);

    const errors = lines.map((l) => JSON.parse(l)).filter((l) => l.level >= 50 && l.err);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0].err.type).toBe('PrismaClientValidationError');
    expect(errors[0].err.stack).toMatch(/^\s+at /);
    expect(lines.join('')).not.toContain(email);
    expect(lines.join('')).not.toContain('notAColumn');
  });
});
