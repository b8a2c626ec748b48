import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type pg from 'pg';
import { PrismaClient } from '../generated/prisma/client.js';
import { BoundedPool, gatePGlite, type Bounds } from './bounds.js';
import { listenOnPGlite, listenOnPostgres, type Listen } from './listen.js';
import { lockDataDir } from './lock.js';
import { poolQuery, runRawReads, runRawWrites } from './raw.js';
import { KeyQueue } from './queue-by-key.js';
import { openReplicas, primaryOnly, type Reader, type ReplicaEvent, type Replicas } from './replicas.js';
import { PGLITE_EXTENSIONS, pgliteMigrationFactory, postgresMigrationFactory, type MigrationAdapterFactory } from './migration-adapters.js';
import { shareStatements } from './together.js';

export type Database = {
  prisma: PrismaClient;
  /** Reads that may trail the primary (list pages, reads by id, exports): docs/scaling.md#read-replicas. */
  reader: Reader;
  replicas: Pick<Replicas, 'status'>;
  kind: 'pglite' | 'postgres';
  /** The waits and timeouts this database was opened with (docs/faults.md). */
  bounds: Bounds;
  /** The PostgreSQL connection pool (for metrics); absent on PGlite. */
  pool?: pg.Pool;
  /** LISTEN/NOTIFY on a connection of its own (src/db/listen.ts): what wakes the event worker. */
  listen: Listen;
  /** Writes of one lock key in line before they take a connection (src/db/queue-by-key.ts). */
  queue: KeyQueue;
  /** A driver adapter factory for the schema engine (src/db/migrate.ts); close it after use. */
  adapterFactory(): MigrationAdapterFactory;
  close(): Promise<void>;
};

export type OpenDatabaseOptions = {
  /** postgres:// URL; absent = embedded PGlite in `dataDir`. */
  databaseUrl?: string;
  /** Unpooled URL for migrations when `databaseUrl` goes through PgBouncer (docs/scaling.md). */
  directUrl?: string;
  /** Directory of the embedded database; `memory://` keeps it in memory (tests). */
  dataDir: string;
  /** In memory: the database a dump (PGlite's dumpDataDir) holds, rather than a new one (tests start from a migrated template). */
  loadDataDir?: Blob;
  /** Connections in the PostgreSQL pool (default 10). */
  poolMax?: number;
  /** Streaming replicas for `reader`, and how far behind one may be before it is skipped. */
  replicaUrls?: string[];
  replicaMaxLagMs?: number;
  onReplicaChange?: (event: ReplicaEvent) => void;
  /** Told about connection errors that happen outside any query (default: console.warn). */
  onConnectionError?: (err: Error) => void;
  /** Waits and timeouts (docs/faults.md); each defaults to DEFAULT_BOUNDS. */
  bounds?: Partial<Bounds>;
};

/** DATABASE_POOL_TIMEOUT_MS, DATABASE_STATEMENT_TIMEOUT_MS, the connect timeout and DATABASE_SHARED_WAIT_MS, as documented in docs/faults.md. */
export const DEFAULT_BOUNDS: Bounds = { poolTimeoutMs: 2_000, statementTimeoutMs: 10_000, connectTimeoutMs: 5_000, sharedWaitMs: 20 };

/** The `select` / `include` a Pothos resolver hands down for its Prisma query. */
export type Query = { select?: object; include?: object };

/** A record as a write by id finds it: its id and its account (for access). */
export type RecordKey = { id: string; accountId: string };

/**
 * Interactive transactions of writes: up to 10 s to get a connection, 15 s to run. A form submit
 * may wait on another instance's submit holding the advisory lock for its e-mail, and an idempotent
 * write runs inside one.
 */
export const WRITE_TRANSACTION = { maxWait: 10_000, timeout: 15_000 };

export async function openDatabase(opts: OpenDatabaseOptions): Promise<Database> {
  const onError = opts.onConnectionError ?? ((err) => console.warn('database connection error:', err.message));
  const bounds = { ...DEFAULT_BOUNDS, ...opts.bounds };
  if (opts.databaseUrl) {
    const url = opts.databaseUrl;
    const pool = new BoundedPool({ connectionString: url, max: opts.poolMax ?? 10 }, bounds);
    // An idle client losing its server (restart, failover) emits 'error' on the pool; unhandled,
    // that would crash the process. The pool drops the client; the next query reconnects.
    pool.on('error', onError);
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { onConnectionError: onError }) });
    shareStatements(prisma, bounds.sharedWaitMs);
    runRawReads(prisma, (sql) => poolQuery(pool, sql));
    runRawWrites(prisma, pool);
    const replicas = openReplicas(prisma, pool, {
      primaryUrl: url, urls: opts.replicaUrls ?? [], maxLagMs: opts.replicaMaxLagMs ?? 1_000,
      poolMax: opts.poolMax ?? 10, bounds, onChange: opts.onReplicaChange, onConnectionError: onError,
    });
    return {
      prisma,
      reader: replicas.reader,
      replicas,
      kind: 'postgres',
      bounds,
      pool,
      queue: new KeyQueue(bounds.statementTimeoutMs),
      listen: listenOnPostgres(opts.directUrl ?? url, bounds.connectTimeoutMs, onError),
      // Migrations get their own one-connection pool (the engine works on one session), unpooled if given.
      adapterFactory: () => postgresMigrationFactory(opts.directUrl ?? url),
      close: async () => {
        await replicas.close();
        await prisma.$disconnect();
        await pool.end();
      },
    };
  }
  let unlock = () => {};
  if (!opts.dataDir.startsWith('memory://')) {
    await mkdir(opts.dataDir, { recursive: true });
    unlock = lockDataDir(opts.dataDir); // before PGlite touches a file: a second process refuses at once
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create({ dataDir: opts.dataDir, extensions: PGLITE_EXTENSIONS, ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}) });
  } catch (error) {
    unlock();
    throw error;
  }
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(gatePGlite(pglite, bounds.poolTimeoutMs)) });
  shareStatements(prisma, bounds.sharedWaitMs);
  const replicas = primaryOnly(prisma);
  return {
    prisma,
    reader: replicas.reader,
    replicas,
    kind: 'pglite',
    bounds,
    queue: new KeyQueue(bounds.statementTimeoutMs),
    listen: listenOnPGlite(pglite),
    // PGlite is one connection in this process; migrations must share it (a second instance on
    // the same directory would corrupt it).
    adapterFactory: () => pgliteMigrationFactory(pglite),
    close: async () => {
      await prisma.$disconnect();
      await pglite.close();
      unlock();
    },
  };
}

export { isDatabaseUnavailable } from './unavailable.js';
