// Driver adapter factories for the schema engine, with the adapters' migration bugs fixed
// (none of them affects queries, which use the stock adapters: see client.ts).
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  DriverAdapterError,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';

/** Extensions the migrations create (pg_trgm: contact search); every PGlite instance must load them. */
export const PGLITE_EXTENSIONS = { pg_trgm };

export type MigrationAdapterFactory = SqlMigrationAwareDriverAdapterFactory & { close(): Promise<void> };

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
  return {
    provider: 'postgres',
    adapterName: 'pglite-prisma-adapter',
    connect: () => pgliteAdapter(pglite, false),
    connectToShadowDb: pgliteShadow,
    close: async () => {},
  };
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
    adapter.executeScript = (script) => query({ text: script }).then(() => undefined, toDriverError);
    return adapter;
  };
  return {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    connect: async () => fix(await inner.connect()),
    // Not a CREATE DATABASE on the server: that needs the CREATEDB privilege and leaks on a crash.
    connectToShadowDb: pgliteShadow,
    close: () => pool.end(),
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
