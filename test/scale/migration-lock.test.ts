/**
 * Start-up that is safe behind a pooler (docs/scaling.md#migrations-behind-a-pooler): nothing
 * pending = no lock taken; a wait for the lock is bounded and logged; the lock never outlives the
 * migration. Runs on the PostgreSQL of DATABASE_URL, each case on a fresh database of its own.
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/client.js';
import { applyMigrations, migrationNames } from '../../src/db/migrate.js';
import { MIGRATION_LOCK_KEY, MigrationLockTimeout } from '../../src/db/migration-adapters.js';
import { advisoryLocks, createDatabase, dropDatabase, skipWithout, withDatabase } from './support.js';

const SERVER = process.env.DATABASE_URL;

describe.skipIf(skipWithout(SERVER ? null : 'DATABASE_URL (a PostgreSQL server)', 'test/scale/migration-lock.test.ts'))('the migration lock', { timeout: 120_000 }, () => {
  const opened: Database[] = [];
  const created: string[] = [];
  const lockHolders: pg.Client[] = [];
  afterAll(async () => {
    for (const c of lockHolders) await c.end().catch(() => {});
    for (const db of opened) await db.close();
    for (const name of created) await dropDatabase(SERVER!, name);
  });

  const fresh = async () => {
    const name = await createDatabase(SERVER!, 'crm_lock');
    created.push(name);
    const url = withDatabase(SERVER!, name);
    const open = async () => {
      const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 2 });
      opened.push(db);
      return db;
    };
    return { url, open };
  };
  /** A session holding the lock the way a crashed migrator behind PgBouncer leaves it. */
  const holdLock = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    lockHolders.push(client);
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    return (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  };

  it('migrating releases the lock: afterwards no session holds it (pg_locks)', async () => {
    const { url, open } = await fresh();
    expect(await applyMigrations(await open())).toEqual(await migrationNames());
    expect(await advisoryLocks(url)).toEqual([]);
  });

  it('two migrators at once apply each migration once, and leave no lock behind', async () => {
    const { url, open } = await fresh();
    const [a, b] = await Promise.all([open(), open()]);
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    const results = await Promise.all([applyMigrations(a, undefined, { log }), applyMigrations(b, undefined, { log })]);
    expect(results.flat().sort()).toEqual(await migrationNames());
    expect(await advisoryLocks(url)).toEqual([]);
  });

  it('an instance that finds nothing pending takes no lock: it starts while another session holds it', async () => {
    const { url, open } = await fresh();
    const db = await open();
    await applyMigrations(db);
    const holder = await holdLock(url);
    const lines: string[] = [];
    // A zero timeout would give up at once if the lock were asked for.
    expect(await applyMigrations(db, undefined, { lockTimeoutMs: 0, log: (l) => lines.push(l) })).toEqual([]);
    expect(lines).toEqual([]);
    expect(await advisoryLocks(url)).toEqual([{ pid: holder, granted: true }]);
  });

  it('a wait for the lock is logged with the holder and bounded: it gives up with MigrationLockTimeout, applying nothing', async () => {
    const { url, open } = await fresh();
    const holder = await holdLock(url);
    const lines: string[] = [];
    const failure = await applyMigrations(await open(), undefined, { lockTimeoutMs: 1_000, log: (l) => lines.push(l) }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(MigrationLockTimeout);
    expect((failure as Error).message).toMatch(new RegExp(`^gave up after 1000 ms waiting for the migration lock held by pid ${holder} since \\d{4}-`));
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^waiting for the migration lock held by pid ${holder} since \\d{4}-\\d\\d-\\d\\dT`))]);
    const tables = await withClient(url, (c) => c.query("SELECT to_regclass('contacts') AS t"));
    expect(tables.rows[0].t).toBeNull();
    // Only the holder's lock remains: the waiter's own attempt went with its transaction.
    expect(await advisoryLocks(url)).toEqual([{ pid: holder, granted: true }]);
  });

  it('once the holder lets go, the waiter takes the lock and migrates', async () => {
    const { url, open } = await fresh();
    await holdLock(url);
    const holderClient = lockHolders[lockHolders.length - 1]!;
    const lines: string[] = [];
    const migrating = applyMigrations(await open(), undefined, { lockTimeoutMs: 60_000, log: (l) => lines.push(l) });
    await expect.poll(() => lines.length).toBe(1); // it is waiting
    await holderClient.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    expect(await migrating).toEqual(await migrationNames());
    expect(await advisoryLocks(url)).toEqual([]);
  });
});

async function withClient<T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
