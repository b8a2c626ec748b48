/**
 * Read replicas (docs/scaling.md#read-replicas) on a primary and a streaming standby this test makes
 * for itself (initdb + pg_basebackup -R in a temp dir, free ports). Two apps share them: one allows
 * 60 s of lag, one 300 ms, so a paused standby is read by the first and skipped by the second.
 * Pausing replay (pg_wal_replay_pause) makes the standby's answers tell where a read was served.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { COLLECTIONS } from '../../src/exports/account-json.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { mintToken } from '../../src/auth/token.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { openDeps } from '../../src/runtime.js';
import { DatabaseUnavailableError } from '../../src/db/bounds.js';
import { TEST_SECRET } from '../helpers/app.js';
import { Cluster, PG_BIN, query, skipWithout, waitFor } from './support.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

type Deps = Awaited<ReturnType<typeof openDeps>>;
type Instance = { deps: Deps; app: App };

/** The bounds of §14 (docs/faults.md), short enough for a statement or a wait to outrun them here. */
const STATEMENT_TIMEOUT_MS = 3_000;
const POOL_TIMEOUT_MS = 500;

describe.skipIf(skipWithout(PG_BIN ? null : 'PostgreSQL server binaries (initdb, pg_basebackup, pg_ctl)', 'test/scale/replicas.test.ts'))('read replicas', () => {
  let dir: string;
  let primary: Cluster;
  let standby: Cluster;
  let loose: Instance; // DATABASE_REPLICA_MAX_LAG_MS=60000
  let strict: Instance; // DATABASE_REPLICA_MAX_LAG_MS=300
  let token: string;
  let accountId: string;
  const cleanup = () => [standby, primary].forEach((c) => c?.stop('immediate'));

  const open = async (maxLagMs: number, env: Record<string, string> = {}): Promise<Instance> => {
    const config = loadConfig({
      NODE_ENV: 'test',
      AUTH_JWT_SECRET: TEST_SECRET,
      RATE_LIMITS: 'off', // exports run several times here; limits are not what this proves
      DATABASE_URL: primary.url('crm'),
      DATABASE_REPLICA_URLS: standby.url('crm'),
      DATABASE_REPLICA_MAX_LAG_MS: String(maxLagMs),
      DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
      ...env,
    });
    const deps = await openDeps(config, createLogger({ level: 'silent' }));
    return { deps, app: createApp(deps) };
  };
  const call = async (instance: Instance, method: string, route: string, body?: unknown) => {
    const response = await instance.app.fetch(`http://localhost${route}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    return { status: response.status, text, json: () => JSON.parse(text) };
  };
  const createContact = async (firstName: string) => {
    const r = await call(loose, 'POST', '/api/v1/contacts', { account_id: accountId, first_name: firstName });
    expect(r.status, r.text).toBe(201);
    return r.json().data as { id: string; first_name: string };
  };
  const listedNames = async (instance: Instance) => {
    const r = await call(instance, 'GET', `/api/v1/contacts?account_id=${accountId}&page_size=100`);
    expect(r.status, r.text).toBe(200);
    return (r.json().data as { first_name: string }[]).map((c) => c.first_name);
  };
  const standbyHealthy = (instance: Instance) => instance.deps.db.replicas.status()[0]?.healthy;
  /** Every write so far replayed on the standby. */
  const caughtUp = async () => {
    const [{ lsn }] = await query(primary.url(), 'SELECT pg_current_wal_lsn()::text AS lsn');
    await waitFor('the standby to replay', async () => (await query(standby.url(), 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [lsn]))[0].ok);
  };
  const pauseReplay = () => query(standby.url(), 'SELECT pg_wal_replay_pause()');
  const resumeReplay = () => query(standby.url(), 'SELECT pg_wal_replay_resume()');

  beforeAll(async () => {
    process.once('exit', cleanup);
    dir = await mkdtemp(path.join(tmpdir(), 'crm-replicas-'));
    primary = await Cluster.primary(dir);
    await query(primary.url(), 'CREATE DATABASE crm');
    standby = await Cluster.standbyOf(primary);
    // the first migrates the primary; its small pools show the replica pool's admission bound
    [loose, strict] = [await open(60_000, { DATABASE_POOL_MAX: '2', DATABASE_POOL_TIMEOUT_MS: String(POOL_TIMEOUT_MS) }), await open(300)];
    token = await mintToken(TEST_SECRET, { sub: randomUUID() });
    const created = await loose.app.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { createAccount(input: { name: "Replicas" }) { id } }' }),
    });
    accountId = ((await created.json()) as { data: { createAccount: { id: string } } }).data.createAccount.id;
    await caughtUp();
    await waitFor('both instances to use the standby', () => Boolean(standbyHealthy(loose) && standbyHealthy(strict)));
  });

  afterAll(async () => {
    await resumeReplay().catch(() => {});
    await loose?.deps.close();
    await strict?.deps.close();
    cleanup();
    process.removeListener('exit', cleanup);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a list page is served by the standby: a contact created while replay is paused is not listed until replay resumes', async () => {
    await pauseReplay();
    const created = await createContact('WhilePaused');
    // The create answers from the primary: a caller always sees its own write.
    expect(created.first_name).toBe('WhilePaused');
    expect(await listedNames(loose)).not.toContain('WhilePaused');
    await resumeReplay();
    await expect.poll(() => listedNames(loose), { timeout: 30_000 }).toContain('WhilePaused');
  });

  it('a standby lagging past DATABASE_REPLICA_MAX_LAG_MS is skipped: that instance lists from the primary, and uses the standby again once it catches up', async () => {
    await caughtUp();
    await pauseReplay();
    await createContact('WhileLagging');
    await expect.poll(() => standbyHealthy(strict), { timeout: 30_000 }).toBe(false);
    expect(strict.deps.db.replicas.status()[0]!.lagMs).toBeGreaterThan(300);
    expect(await listedNames(strict)).toContain('WhileLagging'); // the primary
    expect(await listedNames(loose)).not.toContain('WhileLagging'); // the same standby, 60 s allowed
    await resumeReplay();
    await expect.poll(() => standbyHealthy(strict), { timeout: 30_000 }).toBe(true);
  });

  it('the contacts CSV export reads the standby; the account export lists its own audit row, from the primary while the standby lags', async () => {
    await caughtUp();
    await pauseReplay();
    await createContact('NotExportedYet');
    const csv = await call(loose, 'GET', `/api/v1/contacts/export?account_id=${accountId}`);
    expect(csv.status).toBe(200);
    expect(csv.text).toContain('WhilePaused');
    expect(csv.text).not.toContain('NotExportedYet');

    const before = await query(primary.url('crm'), 'SELECT count(*)::int AS n FROM export_logs WHERE account_id = $1', [accountId]);
    const doc = await call(loose, 'GET', `/api/v1/account/export?account_id=${accountId}`);
    expect(doc.status).toBe(200);
    const exports = doc.json().exports as { kind: string }[];
    expect(exports).toHaveLength(before[0].n + 1); // its own row, which the paused standby lacks
    expect(doc.json().contacts.map((c: { first_name: string }) => c.first_name)).toContain('NotExportedYet');
    await resumeReplay();
  });

  it('the account export reads the standby once the standby has replayed the export\'s own audit row', async () => {
    await caughtUp();
    const servedByStandby = async () => {
      const doc = await call(loose, 'GET', `/api/v1/account/export?account_id=${accountId}`);
      expect(doc.status).toBe(200);
      // The export's last statement reads its last collection; the standby's sessions keep their last query.
      const last = COLLECTIONS[COLLECTIONS.length - 1]!.table;
      const seen = await query(
        standby.url(),
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'crm-reader' AND query LIKE '%${last}%'`,
      );
      return seen[0].n > 0;
    };
    await expect.poll(servedByStandby, { timeout: 30_000, interval: 200 }).toBe(true);
  });

  it('a standby that stops is skipped at once (the read is retried on the primary), /readyz stays 200, and it is used again when back', async () => {
    standby.stop('fast');
    expect(await listedNames(loose)).toContain('WhileLagging');
    expect(standbyHealthy(loose)).toBe(false);
    expect((await call(loose, 'GET', '/readyz')).status).toBe(200);
    standby.start();
    await expect.poll(() => standbyHealthy(loose), { timeout: 30_000 }).toBe(true);
    expect((await call(loose, 'GET', '/readyz')).status).toBe(200);
  });

  it("a replica's pool is bounded as the primary's (§14): a wait for a connection gives up with 08001, a statement past DATABASE_STATEMENT_TIMEOUT_MS is cancelled by the standby (57014), in a transaction and outside one", async () => {
    await caughtUp();
    await expect.poll(() => standbyHealthy(loose), { timeout: 30_000 }).toBe(true);
    const pool = loose.deps.db.reader.$replicaPool()!;
    const isStandby = async (client: { query(text: string): Promise<{ rows: { r: boolean }[] }> }) => (await client.query('SELECT pg_is_in_recovery() AS r')).rows[0]!.r;
    // Both of its connections (DATABASE_POOL_MAX=2) taken: the next caller waits DATABASE_POOL_TIMEOUT_MS, then 08001.
    const held = [await pool.connect(), await pool.connect()];
    try {
      expect(await isStandby(held[0]!)).toBe(true);
      await expect(pool.query('SELECT 1')).rejects.toMatchObject({ name: 'DatabaseUnavailableError', code: '08001' });
    } finally {
      held.forEach((c) => c.release());
    }
    const sleeping = () => query(standby.url('crm'), "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(30)%'");
    const expectServerCancel = async (run: Promise<unknown>) => {
      const err = await run.then(() => undefined, (e: unknown) => e);
      expect(err).not.toBeInstanceOf(DatabaseUnavailableError); // the client's own deadline comes a second later
      expect(err).toMatchObject({ code: '57014', message: 'canceling statement due to statement timeout' });
      expect(await sleeping()).toEqual([]);
    };
    await expectServerCancel(pool.query('SELECT pg_sleep(30)'));
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await expectServerCancel(client.query('SELECT pg_sleep(30)'));
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
  });
});
