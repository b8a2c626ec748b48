/**
 * Behind PgBouncer in transaction mode (docs/scaling.md#pgbouncer): Debian's pgbouncer in front of
 * a private PostgreSQL (initdb in a temp dir, free ports). Two instances start at the same moment on
 * an empty database, one with DATABASE_DIRECT_URL and one with nothing but the pooled URL; every
 * endpoint of the contract then answers through the pooler; a key revoked on one is refused by the
 * other within a second; a lock left behind makes a starting instance give up with one line and exit 1.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { migrationNames } from '../../src/db/migrate.js';
import { MIGRATION_LOCK_KEY } from '../../src/db/migration-adapters.js';
import { DatabaseUnavailableError } from '../../src/db/bounds.js';
import { openDatabase } from '../../src/db/client.js';
import { KEY_FRESH_MS } from '../../src/auth/api-keys.js';
import { TEST_SECRET } from '../helpers/app.js';
import { advisoryLocks, Cluster, PG_BIN, Pgbouncer, PGBOUNCER_BIN, freePort, query, skipWithout, spawnServer, startServer, stopServer, waitFor, type ServerProcess } from './support.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 240_000 });

/** The bound: both instances ready within 60 s of starting together. */
const READY_WITHIN_MS = 60_000;
/** Short, so a statement can outrun it; the client's own deadline comes CLIENT_GRACE_MS later. */
const STATEMENT_TIMEOUT_MS = 1_500;
const MISSING = !PG_BIN ? 'PostgreSQL server binaries (initdb, pg_ctl)' : !PGBOUNCER_BIN ? 'pgbouncer (apt-get install pgbouncer)' : null;

describe.skipIf(skipWithout(MISSING, 'test/scale/pgbouncer.test.ts'))('behind PgBouncer in transaction mode', () => {
  let dir: string;
  let postgres: Cluster;
  let bouncer: Pgbouncer;
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  const cleanup = () => {
    for (const s of [a, b]) s?.proc.kill('SIGKILL');
    bouncer?.stop();
    postgres?.stop('immediate');
  };
  // The instances' statements may take as long as the service allows: a busy machine must not turn the
  // import's chunks into timeouts. The statement-timeout test starts an instance of its own with a short one.
  const common = { AUTH_JWT_SECRET: TEST_SECRET, TRUST_PROXY: '1', DATABASE_STATEMENT_TIMEOUT_MS: '600000' };

  beforeAll(async () => {
    process.once('exit', cleanup);
    dir = await mkdtemp(path.join(tmpdir(), 'crm-pgbouncer-'));
    postgres = await Cluster.primary(dir);
    await query(postgres.url(), 'CREATE DATABASE crm');
    await query(postgres.url(), 'CREATE DATABASE crm_locked');
    bouncer = new Pgbouncer(dir, await freePort());
    await bouncer.start({ crm: postgres.url('crm'), crm_locked: postgres.url('crm_locked') });
    // The same moment, the same empty database: one bypasses the pooler for migrations, one does not.
    const started = await Promise.allSettled([
      startServer({ ...common, DATABASE_URL: bouncer.url('crm'), DATABASE_DIRECT_URL: postgres.url('crm') }, READY_WITHIN_MS),
      startServer({ ...common, DATABASE_URL: bouncer.url('crm') }, READY_WITHIN_MS),
    ]);
    [a, b] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  });

  afterAll(async () => {
    await Promise.all([stopServer(a), stopServer(b)]);
    cleanup();
    process.removeListener('exit', cleanup);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('two instances started at the same moment on an empty database both become ready, each migration applied once, and no advisory lock is left (pg_locks)', async () => {
    const applied = await query(
      postgres.url('crm'),
      `SELECT migration_name, count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL GROUP BY 1 ORDER BY 1`,
    );
    expect(applied).toEqual((await migrationNames()).map((name) => ({ migration_name: name, n: 1 })));
    expect(await advisoryLocks(postgres.url('crm'))).toEqual([]);
    for (const server of [a!, b!]) expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
  });

  it("the contract's requests pass through PgBouncer, on both instances", async () => {
    for (const server of [a!, b!]) {
      const token = await mintToken(TEST_SECRET, { sub: randomUUID() });
      const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
        const r = await fetch(`${server.baseUrl}${route}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
          body: body ? JSON.stringify(body) : undefined,
        });
        const text = await r.text();
        return { status: r.status, type: r.headers.get('content-type'), text, json: () => JSON.parse(text) };
      };
      const gql = async (q: string, variables: object = {}) => {
        const r = await call('POST', '/graphql', { query: q, variables });
        expect(r.json().errors, r.text).toBeUndefined();
        return r.json().data;
      };
      const accountId = (await gql('mutation { createAccount(input: { name: "Pooled" }) { id } }')).createAccount.id;
      const q = `account_id=${accountId}`;

      const contact = await call('POST', '/api/v1/contacts', { account_id: accountId, first_name: 'Ada', email: 'ada@example.test' }, { 'idempotency-key': 'k1' });
      expect(contact.status, contact.text).toBe(201);
      const again = await call('POST', '/api/v1/contacts', { account_id: accountId, first_name: 'Ada', email: 'ada@example.test' }, { 'idempotency-key': 'k1' });
      expect(again.json().data.id).toBe(contact.json().data.id); // the idempotent replay, not a second row
      expect((await call('POST', '/api/v1/contacts', { account_id: accountId })).status).toBe(400);
      const contacts = await call('GET', `/api/v1/contacts?${q}&search=ada`);
      expect(contacts.status).toBe(200);
      expect(contacts.json()).toMatchObject({ total: 1, page: 1, page_size: 25 });

      const deal = await call('POST', '/api/v1/deals', { account_id: accountId, title: 'Pooled deal', contact_id: contact.json().data.id, value: 100 });
      expect(deal.status, deal.text).toBe(201);
      expect((await call('GET', `/api/v1/deals?${q}`)).json()).toMatchObject({ total: 1 });
      // A follower's page reads the horizon first (src/graphql/horizon.ts), through the pooler too; the feed's last page gives a cursor.
      const follow = await call('GET', `/api/v1/contacts?${q}&sort=updated_at&order=asc&updated_since=2000-01-01T00:00:00Z`);
      expect(follow.json().data.map((c: { id: string }) => c.id), follow.text).toEqual([contact.json().data.id]);
      const feed = await call('GET', `/api/v1/events?${q}&types=deal.created`);
      expect(feed.json(), feed.text).toMatchObject({ data: [{ type: 'deal.created' }], next_cursor: expect.any(String) });

      await gql('mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { id } }', {
        input: { accountId, contactId: contact.json().data.id, amount: 42.5, dueDate: '2030-01-31' },
      });
      expect((await call('GET', `/api/v1/invoices?${q}`)).json()).toMatchObject({ total: 1 });

      const formId = (
        await gql('mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
          input: { accountId, name: 'Pooled', fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
        })
      ).createLeadForm.id;
      // Two submits of one e-mail at once meet on the form's transaction-scoped advisory lock: one contact.
      const submits = await Promise.all(
        [1, 2].map(() => call('POST', `/api/v1/forms/${formId}/submit`, { data: { email: 'visitor@example.test' }, metadata: { page: '/p' } })),
      );
      expect(submits.map((s) => s.status)).toEqual([200, 200]);
      expect(submits[0]!.json().contact_id).toBe(submits[1]!.json().contact_id);
      expect((await call('POST', `/api/v1/forms/${randomUUID()}/submit`, { data: {} })).status).toBe(404);

      const csv = await call('GET', `/api/v1/contacts/export?${q}`);
      expect(csv.status).toBe(200);
      expect(csv.type).toMatch(/^text\/csv/);
      expect(csv.text.split('\r\n').filter(Boolean)).toHaveLength(3); // header, Ada, the visitor
      const doc = await call('GET', `/api/v1/account/export?${q}`);
      expect(doc.status).toBe(200);
      expect(doc.json()).toMatchObject({ account: { id: accountId }, deals: [{ title: 'Pooled deal' }], exports: [{}, {}] });
    }
  });

  it('a CSV import through PgBouncer: posted to one instance, its chunks written by whichever claims it, it completes once with its bad row reported; search and reports answer from what it wrote; no advisory lock is left', async () => {
    const token = await mintToken(TEST_SECRET, { sub: randomUUID() });
    const auth = { authorization: `Bearer ${token}` };
    const json = async (server: ServerProcess, route: string, init: RequestInit = {}) => {
      const r = await fetch(`${server.baseUrl}${route}`, { ...init, headers: { ...auth, ...init.headers } });
      return { status: r.status, body: (await r.json()) as any };
    };
    const created = await json(a!, '/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { createAccount(input: { name: "Imported" }) { id } }' }),
    });
    const accountId = created.body.data.createAccount.id as string;
    // Three chunks of the worker's 1,000 rows; line 1,201 (the header is line 1) has no first name.
    const rows = Array.from({ length: 2500 }, (_, i) => (i === 1199 ? `,bad${i}@pooled.example` : `Pooled${i},p${i}@pooled.example`));
    const posted = await json(b!, `/api/v1/imports?account_id=${accountId}&object=contacts&match_on=email`, {
      method: 'POST',
      headers: { 'content-type': 'text/csv' },
      body: `first_name,email\r\n${rows.join('\r\n')}\r\n`,
    });
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const id = posted.body.data.id as string;
    let done: any;
    // As a client polls: GET /api/v1/imports/{id} counts 120 a minute per user (docs/rest.md#rate-limits).
    await waitFor('the import to end', async () => {
      done = (await json(a!, `/api/v1/imports/${id}`)).body.data;
      return done.status !== 'queued' && done.status !== 'running';
    }, 120_000, 600);
    expect(done).toMatchObject({ status: 'completed', rows_processed: 2500, created: 2499, failed: 1 });
    const errors = await fetch(`${b!.baseUrl}/api/v1/imports/${id}/errors`, { headers: auth });
    expect((await errors.text()).split('\r\n').filter(Boolean).map((line) => line.split(',')[0])).toEqual(['line', '1201']);

    const search = await json(b!, `/api/v1/contacts?account_id=${accountId}&search=p2499@pooled`);
    expect(search.body).toMatchObject({ total: 1, data: [{ first_name: 'Pooled2499' }] });
    const breakdown = await json(a!, `/api/v1/reports/contacts?account_id=${accountId}`);
    expect(breakdown.status, JSON.stringify(breakdown.body)).toBe(200);
    expect(breakdown.body.data.by_type).toContainEqual({ key: 'lead', count: 2499 });
    const [count] = await query(postgres.url('crm'), 'SELECT count(*)::int AS n FROM contacts WHERE account_id = $1', [accountId]);
    expect(count).toEqual({ n: 2499 });
    expect(await advisoryLocks(postgres.url('crm'))).toEqual([]);
  }, 180_000);

  it('an instance whose LISTEN goes through the pooler (no DATABASE_DIRECT_URL) says so at start, naming DATABASE_DIRECT_URL; one with it does not', async () => {
    const warning = 'do not reach this instance (PgBouncer in transaction mode forwards none): set DATABASE_DIRECT_URL';
    await waitFor('the start-up warning', () => b!.output().includes(warning), 30_000);
    expect(b!.output().split('\n').filter((line) => line.includes(warning))).toHaveLength(1);
    expect(a!.output()).not.toContain('notifications sent over DATABASE_URL');
  });

  it('a key revoked through one instance is refused by the other within a second, though no notice reaches it through the pooler (no DATABASE_DIRECT_URL, no Redis); a key whose expires_at passes is refused by both', async () => {
    const token = await mintToken(TEST_SECRET, { sub: randomUUID() });
    const gql = async (query: string, variables: object = {}) => {
      const r = await fetch(`${a!.baseUrl}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await r.json()) as any;
      expect(body.errors, JSON.stringify(body)).toBeUndefined();
      return body.data;
    };
    const accountId = (await gql('mutation { createAccount(input: { name: "Keys" }) { id } }')).createAccount.id as string;
    const newKey = async (expiresAt?: number) =>
      (await gql('mutation ($i: CreateApiKeyInput!) { createApiKey(input: $i) { apiKey { id } secret } }', {
        i: { accountId, name: randomUUID(), scopes: ['CONTACTS_READ'], ...(expiresAt ? { expiresAt: new Date(expiresAt).toISOString() } : {}) },
      })).createApiKey as { apiKey: { id: string }; secret: string };
    const status = async (server: ServerProcess, secret: string) => {
      const r = await fetch(`${server.baseUrl}/api/v1/contacts?account_id=${accountId}`, { headers: { authorization: `Bearer ${secret}` } });
      await r.arrayBuffer();
      return r.status;
    };

    const revoked = await newKey();
    for (const server of [a!, b!]) expect(await status(server, revoked.secret)).toBe(200); // warm in both caches
    await gql('mutation ($id: ID!) { revokeApiKey(id: $id) { id } }', { id: revoked.apiKey.id });
    const answered = Date.now(); // the revocation is committed
    expect(await status(a!, revoked.secret)).toBe(401); // the revoking instance: at once
    // The other instance trusts what it read for KEY_FRESH_MS, then reads the row again: a request sent
    // once that long has passed since the revocation is refused, however long the machine takes to answer.
    await waitFor('KEY_FRESH_MS since the revocation', () => Date.now() - answered > KEY_FRESH_MS, KEY_FRESH_MS + 10_000, 20);
    expect(await status(b!, revoked.secret)).toBe(401);

    // A key that expires: warmed in both caches while it is still valid (a machine too slow for the
    // margin tries again with twice the margin), then refused by both once its expires_at has passed.
    let expiring: { secret: string } | undefined;
    let expiresAt = 0;
    for (let margin = 2_000; !expiring; margin *= 2) {
      if (margin > 64_000) throw new Error('could not warm both caches within 64 s');
      expiresAt = Date.now() + margin;
      const key = await newKey(expiresAt);
      const warm = [await status(a!, key.secret), await status(b!, key.secret)];
      if (Date.now() < expiresAt) {
        expect(warm).toEqual([200, 200]); // both answered before expires_at
        expiring = key;
      }
    }
    await waitFor('the key to expire', () => Date.now() > expiresAt, 70_000);
    for (const server of [a!, b!]) expect(await status(server, expiring.secret)).toBe(401);
  }, 240_000);

  it('a migration lock left behind (a session holding it through a pooled connection): a starting instance logs the holder, gives up with one line and exits 1', async () => {
    const holder = new pg.Client({ connectionString: postgres.url('crm_locked') });
    await holder.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const { rows } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const server = spawnServer({ ...common, DATABASE_URL: bouncer.url('crm_locked'), MIGRATION_LOCK_TIMEOUT_MS: '1000' });
      expect(await server.exit).toBe(1);
      const lines = server.output().split('\n');
      const pid = rows[0]!.pid;
      expect(lines.filter((l) => l.includes(`"msg":"waiting for the migration lock held by pid ${pid} since `))).toHaveLength(1);
      expect(lines.filter((l) => l.includes(`gave up after 1000 ms waiting for the migration lock held by pid ${pid}`))).toHaveLength(1);
      expect(await query(postgres.url('crm_locked'), "SELECT to_regclass('contacts') AS t")).toEqual([{ t: null }]);
    } finally {
      await holder.end();
    }
    expect(await advisoryLocks(postgres.url('crm_locked'))).toEqual([]);
  });

  it('a statement running past DATABASE_STATEMENT_TIMEOUT_MS behind a default-configured PgBouncer is cancelled by PostgreSQL (57014), outside a transaction and inside one', async () => {
    // An instance started with DATABASE_STATEMENT_TIMEOUT_MS sets the role's default in its database.
    await stopServer(await startServer({ ...common, DATABASE_URL: bouncer.url('crm'), DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) }, READY_WITHIN_MS));
    // A PgBouncer started after that: the server connections it opens get that default (one opened
    // before keeps its own until server_lifetime, docs/scaling.md#pgbouncer).
    const fresh = new Pgbouncer(dir, await freePort());
    await fresh.start({ crm: postgres.url('crm') });
    const db = await openDatabase({ databaseUrl: fresh.url('crm'), dataDir: 'memory://', bounds: { statementTimeoutMs: STATEMENT_TIMEOUT_MS } });
    const sleeping = () => query(postgres.url('crm'), "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(30)%'");
    /** The server's own cancel: a PostgreSQL error, not the client's deadline (a DatabaseUnavailableError). */
    const expectServerCancel = async (run: Promise<unknown>) => {
      const err = (await run.then(() => undefined, (e: unknown) => e)) as { code?: string; message?: string } | undefined;
      expect(err).toBeDefined();
      expect(err).not.toBeInstanceOf(DatabaseUnavailableError);
      expect(err).toMatchObject({ code: '57014', message: 'canceling statement due to statement timeout' });
      expect(await sleeping()).toEqual([]);
    };
    try {
      // Outside a transaction: the role's default in this database, set by the instances at start.
      await expectServerCancel(db.pool!.query('SELECT pg_sleep(30)'));
      // Inside one: SET LOCAL after BEGIN, on whichever server connection PgBouncer lends.
      const client = await db.pool!.connect();
      try {
        await client.query('BEGIN');
        await expectServerCancel(client.query('SELECT pg_sleep(30)'));
        await client.query('ROLLBACK');
      } finally {
        client.release();
      }
      // Through Prisma's interactive transaction, as the service runs its writes.
      const viaPrisma = db.prisma.$transaction(async (tx) => tx.$queryRawUnsafe('SELECT pg_sleep(30)'), { timeout: 60_000 });
      await expect(viaPrisma).rejects.toThrow(/57014|statement timeout/);
      expect(await sleeping()).toEqual([]);
    } finally {
      await db.close();
      fresh.stop();
    }
  }, 180_000);
});
