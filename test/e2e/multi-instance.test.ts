/**
 * Several instances behind one load balancer (README "Running several instances"): two real server
 * processes on their own ports share one PostgreSQL and one Redis. Both start at once on an empty
 * database (migrations run once, under the engine's advisory lock), and every limit is shared:
 * across both instances exactly the limit passes, sequentially and in concurrent bursts.
 *
 * Needs PostgreSQL and Redis (PGlite cannot be shared by two processes, memory limits are per process):
 * runs when DATABASE_URL and REDIS_URL are set and then fails if they are unreachable; skips when they
 * are unset, except in CI, where it fails (test/helpers/prerequisites.ts).
 */
import { randomInt, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { TEST_SECRET } from '../helpers/app.js';
import { expectRedis, REAL_SERVICES, skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { ROOT, START_TIMEOUT_MS, startServer, stopServer, type ServerProcess } from '../helpers/server-process.js';

// Hundreds of sequential requests on a shared 2-core machine: generous, never part of correctness.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

const SKIP = skipIfMissing(unsetVariables('DATABASE_URL', 'REDIS_URL'));
const DATABASE_URL = process.env.DATABASE_URL ?? REAL_SERVICES.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL ?? REAL_SERVICES.REDIS_URL;

// ---- fixtures ---------------------------------------------------------------------------------

async function requireReachable(): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`PostgreSQL at ${DATABASE_URL} is unreachable: the multi-instance test needs it`, { cause: err });
  } finally {
    await client.end().catch(() => {});
  }
  await expectRedis(REDIS_URL, 'the multi-instance tests');
}

async function admin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const withDatabase = (url: string, name: string) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();

type Response = { status: number; headers: Headers; body: any };

/** One call to one instance, as a client behind the load balancer at `ip` (TRUST_PROXY=1). */
async function call(server: ServerProcess, method: string, route: string, opts: { token?: string; body?: unknown; ip?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = { 'x-forwarded-for': opts.ip ?? '192.0.2.10' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.baseUrl}${route}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* CSV, JSON download */
  }
  return { status: response.status, headers: response.headers, body };
}

async function gql(server: ServerProcess, token: string, query: string, variables: Record<string, unknown> = {}) {
  const r = await call(server, 'POST', '/graphql', { token, body: { query, variables } });
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined();
  return r.body.data;
}

/** A new user (created on first sight of the token) who owns a new account. */
async function newOwner(server: ServerProcess) {
  const token = await mintToken(TEST_SECRET, { sub: randomUUID() });
  const data = await gql(server, token, 'mutation { createAccount(input: { name: "Multi" }) { id } }');
  return { token, accountId: data.createAccount.id as string };
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

// ---- the tests --------------------------------------------------------------------------------

describe.skipIf(SKIP)('two instances sharing one PostgreSQL and one Redis', () => {
  const databaseName = `crm_multi_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  let databaseCreated = false;
  const A = () => a!;
  const B = () => b!;

  beforeAll(async () => {
    await requireReachable();
    await admin(DATABASE_URL, (c) => c.query(`CREATE DATABASE ${databaseName}`));
    databaseCreated = true;
    const env = {
      DATABASE_URL: withDatabase(DATABASE_URL, databaseName),
      REDIS_URL,
      AUTH_JWT_SECRET: TEST_SECRET,
      TRUST_PROXY: '1', // behind a load balancer: the client is the address it appends
    };
    // Both at once, on an empty database: both try to apply every migration at start.
    const started = await Promise.allSettled([startServer(env), startServer(env)]);
    [a, b] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  }, 2 * START_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await Promise.all([stopServer(a), stopServer(b)]);
    if (databaseCreated) await admin(DATABASE_URL, (c) => c.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`));
  }, 60_000);

  it('both instances started at once on an empty database: each migration applied exactly once, both ready', async () => {
    expect(A().baseUrl).not.toBe(B().baseUrl);
    const migrations = (await readdir(path.join(ROOT, 'prisma/migrations'), { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    const applied = await admin(withDatabase(DATABASE_URL, databaseName), (c) =>
      c.query<{ migration_name: string; n: number }>(
        `SELECT migration_name, count(*)::int AS n FROM _prisma_migrations
         WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL GROUP BY 1 ORDER BY 1`,
      ),
    );
    expect(applied.rows).toEqual(migrations.map((name) => ({ migration_name: name, n: 1 })));
    for (const server of [A(), B()]) expect((await call(server, 'GET', '/readyz')).body).toEqual({ status: 'ready' });
  });

  it('40 POST /api/v1/contacts for one user, alternating between the instances: exactly 30 × 201, then 10 × 429', async () => {
    const owner = await newOwner(A());
    const results: Response[] = [];
    for (let i = 0; i < 40; i++) {
      results.push(await call(i % 2 ? B() : A(), 'POST', '/api/v1/contacts', { token: owner.token, body: { account_id: owner.accountId, first_name: `C${i}` } }));
    }
    expect(results.map((r) => r.status)).toEqual([...Array(30).fill(201), ...Array(10).fill(429)]);
    // One count for both: RateLimit-Remaining goes 29..0 whichever instance answered.
    expect(results.slice(0, 30).map((r) => Number(r.headers.get('ratelimit-remaining')))).toEqual(Array.from({ length: 30 }, (_, i) => 29 - i));
    for (const refused of results.slice(30)) {
      expect(refused.body).toEqual({ error: 'Rate limit exceeded' });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // And one database: B lists what both created.
    const list = await call(B(), 'GET', `/api/v1/contacts?account_id=${owner.accountId}&page_size=100`, { token: owner.token });
    expect(list.body.total).toBe(30);
  });

  it('a concurrent burst of 100 POST /api/v1/contacts spread over both instances: exactly 30 pass', async () => {
    const owner = await newOwner(A());
    const statuses = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        call(i % 2 ? B() : A(), 'POST', '/api/v1/contacts', { token: owner.token, body: { account_id: owner.accountId, first_name: `B${i}` } }).then((r) => r.status),
      ),
    );
    expect({ created: count(statuses, 201), limited: count(statuses, 429) }).toEqual({ created: 30, limited: 70 });
    const list = await call(A(), 'GET', `/api/v1/contacts?account_id=${owner.accountId}&page_size=100`, { token: owner.token });
    expect(list.body.total).toBe(30);
  });

  it('the per-address form limit is shared: 12 concurrent submissions from one address over both instances, exactly 5 pass', async () => {
    const owner = await newOwner(A());
    const form = await gql(A(), owner.token, 'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
      input: { accountId: owner.accountId, name: 'Multi', fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
    });
    // A random address per run: instances of this test run by others share the Redis namespace.
    const ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    const submit = (server: ServerProcess, n: number) =>
      call(server, 'POST', `/api/v1/forms/${form.createLeadForm.id}/submit`, { ip, body: { data: { email: `lead${n}-${randomUUID()}@example.com` } } });
    const statuses = await Promise.all(Array.from({ length: 12 }, (_, i) => submit(i % 2 ? B() : A(), i).then((r) => r.status)));
    expect({ accepted: count(statuses, 200), limited: count(statuses, 429) }).toEqual({ accepted: 5, limited: 7 });
  });

  it('the hourly account export is shared: once it passed on one instance, the other answers 429', async () => {
    const owner = await newOwner(A());
    const route = `/api/v1/account/export?account_id=${owner.accountId}`;
    expect((await call(A(), 'GET', route, { token: owner.token })).status).toBe(200);
    const refused = await call(B(), 'GET', route, { token: owner.token });
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 429, body: { error: 'Rate limit exceeded' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3500);
  });
});
