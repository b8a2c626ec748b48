// Driver adapter factories for the schema engine, with the adapters' migration bugs fixed
// (none of them affects queries, which use the stock adapters: see client.ts).
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  DriverAdapterError,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQuery,
} from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';

/** Extensions the migrations create (pg_trgm: contact search); every PGlite instance must load them. */
export const PGLITE_EXTENSIONS = { pg_trgm };

export type MigrationAdapterFactory = SqlMigrationAwareDriverAdapterFactory & {
  close(): Promise<void>;
  /**
   * What the engine's own `pg_advisory_lock(72707369)` does instead (set by migrate.ts): the engine
   * never unlocks, relying on its session ending, which a pooled server connection outlives.
   */
  engineLock?: () => Promise<void>;
  /** Waits (bounded) for the migration lock on a connection of its own; absent where one process owns the database. */
  holdLock?: (opts: LockOptions) => Promise<HeldLock>;
};

/** The key Prisma's schema engine (and `prisma migrate` anywhere) locks, so every migrator agrees. */
export const MIGRATION_LOCK_KEY = 72707369;
const ENGINE_LOCK = new RegExp(`^\\s*SELECT pg_advisory_lock\\(${MIGRATION_LOCK_KEY}\\)\\s*;?\\s*$`, 'i');
// Same column name and type (void) as the engine's statement, and it waits for nothing.
const ENGINE_LOCK_ANSWER = 'SELECT pg_sleep(0) AS pg_advisory_lock';

/** Who holds the lock, as pg_locks and pg_stat_activity tell it. */
export type LockHolder = { pid: number; since: Date | null; state: string | null; application: string | null };
export type LockOptions = { timeoutMs: number; onWait(holder: LockHolder | null): void };
export type HeldLock = { waitedMs: number; release(): Promise<void> };

export class MigrationLockTimeout extends Error {
  constructor(timeoutMs: number, holder: LockHolder | null) {
    super(
      `gave up after ${timeoutMs} ms waiting for the migration lock` +
        (holder ? ` held by pid ${holder.pid}${holder.since ? ` since ${holder.since.toISOString()}` : ''}` : '') +
        ' (MIGRATION_LOCK_TIMEOUT_MS; docs/scaling.md#migrations-behind-a-pooler)',
    );
    this.name = 'MigrationLockTimeout';
    this.stack = `${this.name}: ${this.message}`; // an expected failure: the message says it all
  }
}

/** Answers the engine's lock statement with `factory.engineLock` (see MigrationAdapterFactory). */
function interceptEngineLock(adapter: SqlDriverAdapter, factory: MigrationAdapterFactory): SqlDriverAdapter {
  const { queryRaw, executeRaw } = adapter;
  const swap = async (query: SqlQuery): Promise<SqlQuery> => {
    if (!ENGINE_LOCK.test(query.sql)) return query;
    if (!factory.engineLock) throw new Error('migration lock requested outside migrate.ts (engineLock not set)');
    await factory.engineLock();
    return { ...query, sql: ENGINE_LOCK_ANSWER };
  };
  adapter.queryRaw = async (query) => queryRaw.call(adapter, await swap(query));
  adapter.executeRaw = async (query) => executeRaw.call(adapter, await swap(query));
  return adapter;
}

/** Re-throws a PostgreSQL error as a DriverAdapterError so the engine reports its code and text. */
function toDriverError(err: unknown): never {
  const e = err as { code?: unknown; severity?: unknown; message?: unknown } & Record<string, unknown>;
  if (typeof e?.code !== 'string' || typeof e.severity !== 'string') throw err;
  throw new DriverAdapterError({
    kind: 'postgres',
    code: e.code,
    severity: e.severity,
    message: String(e.message),
    detail: e.detail as string | undefined,
    column: e.column as string | undefined,
    hint: e.hint as string | undefined,
  });
}

async function pgliteAdapter(client: PGlite, ownsClient: boolean): Promise<SqlDriverAdapter> {
  const adapter = await new PrismaPGlite(client).connect();
  // The adapter fires exec() without awaiting it: a failing migration would be recorded as
  // applied and its rejection would crash the process. exec() runs the whole script as one
  // implicit transaction, so a failure leaves nothing behind.
  adapter.executeScript = (script) => client.exec(script).then(() => undefined, toDriverError);
  if (ownsClient) adapter.dispose = () => client.close();
  return adapter;
}

/** Shadow database for diffs: a fresh in-memory PGlite, closed when the engine disposes of it. */
async function pgliteShadow(): Promise<SqlDriverAdapter> {
  return pgliteAdapter(await PGlite.create({ extensions: PGLITE_EXTENSIONS }), true);
}

/** Migrates through the app's own PGlite: it is single-connection, a second instance can't open it. */
export function pgliteMigrationFactory(pglite: PGlite): MigrationAdapterFactory {
  const factory: MigrationAdapterFactory = {
    provider: 'postgres',
    adapterName: 'pglite-prisma-adapter',
    connect: async () => interceptEngineLock(await pgliteAdapter(pglite, false), factory),
    connectToShadowDb: pgliteShadow,
    close: async () => {},
  };
  return factory;
}

/**
 * Migrates PostgreSQL through a pool of exactly one connection that never idles out: the engine's
 * advisory lock (pg_advisory_lock) belongs to a session, so every statement must use that session.
 */
export function postgresMigrationFactory(url: string): MigrationAdapterFactory {
  const pool = new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 0 });
  // An error on an idle client (server restart) must not crash the process; the next query fails.
  pool.on('error', (err) => console.error('[migrate] PostgreSQL connection error:', err.message));
  const query = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
  // Introspection selects `"char"` columns (oid 18, e.g. pg_constraint.contype), which adapter-pg
  // rejects as unsupported; their values are plain one-letter strings, so call them text (oid 25).
  (pool as { query: unknown }).query = async (config: pg.QueryConfig) => {
    const result = await query(config);
    for (const field of result.fields ?? []) if (field.dataTypeID === 18) field.dataTypeID = 25;
    return result;
  };
  const inner = new PrismaPg(pool);
  const fix = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    // adapter-pg splits scripts on ';' (breaking $$ bodies) and runs the pieces one by one (not
    // atomic). One simple-protocol query runs the whole script as one implicit transaction.
    // Unbounded: a migration may rightly outlast DATABASE_STATEMENT_TIMEOUT_MS, the role's default
    // (src/db/migrate.ts); SET LOCAL ends with the script's implicit transaction, so it never leaks.
    adapter.executeScript = (script) => query({ text: `SET LOCAL statement_timeout = 0;\n${script}` }).then(() => undefined, toDriverError);
    return adapter;
  };
  const factory: MigrationAdapterFactory = {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    connect: async () => interceptEngineLock(fix(await inner.connect()), factory),
    // Not a CREATE DATABASE on the server: that needs the CREATEDB privilege and leaks on a crash.
    connectToShadowDb: pgliteShadow,
    close: () => pool.end(),
    holdLock: (opts) => holdMigrationLock(url, opts),
  };
  return factory;
}

const HOLDER = `
  SELECT l.pid, coalesce(a.xact_start, a.state_change, a.backend_start) AS since, a.state, a.application_name AS application
  FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = $1 AND l.objsubid = 1
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  LIMIT 1`;

/**
 * Takes the migration lock as a transaction-scoped lock on a connection of its own, held open until
 * release(): a transaction keeps its server connection under PgBouncer's transaction pooling, and
 * its end (COMMIT, or the connection dropping when the process dies) releases the lock whatever the
 * connection is. It conflicts with the session-level lock of other migrators on the same key.
 */
async function holdMigrationLock(url: string, { timeoutMs, onWait }: LockOptions): Promise<HeldLock> {
  const started = Date.now();
  const client = new pg.Client({ connectionString: url, application_name: 'crm-migrate-lock' });
  client.on('error', (err) => console.error('[migrate] lock connection error:', err.message));
  await client.connect();
  try {
    // Idle in transaction while the engine works on its own connection: no server timeout may end it.
    await client.query("BEGIN; SET LOCAL idle_in_transaction_session_timeout = 0; SET LOCAL statement_timeout = 0");
    const [first] = (await client.query<{ got: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS got', [MIGRATION_LOCK_KEY])).rows;
    if (!first?.got) {
      const holder = (await client.query<LockHolder>(HOLDER, [MIGRATION_LOCK_KEY])).rows[0] ?? null;
      onWait(holder);
      const left = Math.max(1, timeoutMs - (Date.now() - started));
      await client.query(`SET LOCAL lock_timeout = ${Math.ceil(left)}`);
      try {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      } catch (err) {
        if ((err as { code?: string }).code === '55P03') throw new MigrationLockTimeout(timeoutMs, holder); // lock_not_available
        throw err;
      }
    }
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
  let released: Promise<void> | undefined;
  return {
    waitedMs: Date.now() - started,
    release: () =>
      (released ??= client
        .query('COMMIT')
        .then(() => undefined)
        .finally(() => client.end().catch(() => {}))),
  };
}

/**
 * For engine commands that need no real database (diff). The engine only probes the main
 * connection (version query) before replaying migrations into the shadow, so the first shadow
 * shares the main's in-memory PGlite: each one takes seconds to start.
 */
export function throwawayMigrationFactory(): MigrationAdapterFactory {
  let shared: Promise<PGlite> | undefined;
  let sharedShadowUsed = false;
  const db = () => (shared ??= PGlite.create({ extensions: PGLITE_EXTENSIONS }));
  return {
    provider: 'postgres',
    adapterName: 'pglite-prisma-adapter',
    connect: async () => pgliteAdapter(await db(), false),
    connectToShadowDb: async () => {
      if (sharedShadowUsed) return pgliteShadow();
      sharedShadowUsed = true;
      return pgliteAdapter(await db(), false);
    },
    close: async () => {
      if (shared) await (await shared).close();
    },
  };
}
