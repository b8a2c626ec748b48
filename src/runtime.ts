import type { AppDeps, Worker } from './deps.js';
import { loadOrCreateDevSecret } from './auth/dev-secret.js';
import { createTokenVerifier } from './auth/token.js';
import { KnownUsers } from './auth/viewer.js';
import { ApiKeys } from './auth/api-keys.js';
import type { Config } from './config.js';
import { openDatabase } from './db/client.js';
import { notificationsArrive, type Listen } from './db/listen.js';
import type { PrismaClient } from './generated/prisma/client.js';
import { applyMigrations } from './db/migrate.js';
import { openEvents } from './events-runtime.js';
import { startImportThread } from './imports/thread.js';
import { startImportWorker } from './imports/worker.js';
import { startOverdueWorker } from './invoices/overdue-worker.js';
import { startTrashPurge } from './trash/purge-worker.js';
import { startPdfPool } from './invoices/pdf-pool.js';
import type { Logger } from './logger.js';
import { memoryUploadSlots, redisUploadSlots } from './ratelimit/upload-slots.js';
import { createRateLimiter, type RateLimiter } from './ratelimit/limiter.js';
import { memoryDocumentStore, redisDocumentStore } from './graphql/persisted.js';
import { loadCursorKey } from './graphql/keyset.js';

/** How long start-up's probe waits for its own notification (a direct connection hears it in milliseconds). */
const NOTIFY_PROBE_MS = 5_000;

/** True when the service runs with its own development secret (no identity provider configured). */
export const usesDevAuth = (config: Config): boolean => !config.auth.jwtSecret && !config.auth.jwksUrl;

/**
 * Opens everything the app needs, applying pending migrations first (on either database), and
 * returns a close() that releases it all in order.
 */
export async function openDeps(config: Config, log: Logger): Promise<AppDeps & { close(): Promise<void> }> {
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    directUrl: config.databaseDirectUrl,
    dataDir: config.dataDir,
    poolMax: config.databasePoolMax,
    bounds: { poolTimeoutMs: config.databasePoolTimeoutMs, statementTimeoutMs: config.databaseStatementTimeoutMs, sharedWaitMs: config.databaseSharedWaitMs },
    replicaUrls: config.databaseReplicaUrls,
    replicaMaxLagMs: config.databaseReplicaMaxLagMs,
    onReplicaChange: ({ healthy, ...event }) =>
      healthy ? log.info(event, 'read replica in use') : log.warn(event, 'read replica skipped'),
    onConnectionError: (err) => log.warn({ err }, 'database connection error'),
  });
  try {
    const applied = await applyMigrations(db, undefined, {
      lockTimeoutMs: config.migrationLockTimeoutMs,
      log: (message, fields) => log.warn(fields, message),
    });
    if (applied.length > 0) log.info({ migrations: applied }, 'migrations applied');
    const jwtSecret = usesDevAuth(config) ? await loadOrCreateDevSecret(config.dataDir) : config.auth.jwtSecret;
    const cursorKey = await loadCursorKey(config);
    const limiter = config.rateLimits
      ? createRateLimiter({ redisUrl: config.redisUrl, log: (msg: string, err?: unknown) => log.warn({ err }, msg) })
      : noLimits(log);
    const documents = config.redisUrl ? redisDocumentStore(config.redisUrl) : memoryDocumentStore();
    const uploads = config.redisUrl ? redisUploadSlots(config.redisUrl) : memoryUploadSlots();
    // Invoice PDFs, the page's, REST's and the mail's, are drawn in its threads (docs/decisions.md §26).
    const pdfs = startPdfPool(config.pdf);
    const events = await openEvents(config, db.prisma, log, { listen: db.listen, pdfs });
    // Every instance that runs workers takes imports too (docs/imports.md#the-worker).
    const imports = config.events.worker ? startImports(config, db.prisma, log) : null;
    // ...and invoices that fall due (docs/decisions.md §19 "Billing time"); its lock lets one instance at a time work.
    const overdue = config.events.worker ? startOverdueWorker(db.prisma, { ...config.overdue, log }) : null;
    // ...and the trash's purge (docs/trash.md#the-purge), one instance at a time alike.
    const trash = config.events.worker ? startTrashPurge(db.prisma, { intervalMs: config.trash.purgeIntervalMs, retentionDays: config.trash.retentionDays, log }) : null;
    const apiKeys = await new ApiKeys(db.prisma, log).start({ listen: db.listen, redisUrl: config.redisUrl });
    if (db.kind === 'postgres' && !config.databaseDirectUrl) warnIfNotificationsLost(db, log);
    return {
      config,
      db,
      events,
      imports,
      limiter,
      documents,
      uploads,
      pdfs,
      verifyToken: createTokenVerifier({ ...config.auth, jwtSecret }),
      knownUsers: new KnownUsers(),
      apiKeys,
      cursorKey,
      log,
      close: async () => {
        await imports?.close(); // the chunk under way commits; the import is resumed by the next claim
        await overdue?.close(); // the batch under way commits; the rest is the next run's, in any instance
        await trash?.close(); // likewise
        await apiKeys.close();
        await events.close(); // the worker finishes or releases its deliveries first
        await limiter.close();
        await documents.close();
        await uploads.close();
        await pdfs.close(); // after the mail worker (events), which may be drawing an attachment
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

/**
 * On PostgreSQL the import worker runs in a thread of its own, off the main thread that serves
 * requests (src/imports/thread.ts); PGlite is one connection in this process, so there it runs here.
 */
function startImports(config: Config, db: PrismaClient, log: Logger): Worker {
  const timing = { leaseMs: config.imports.leaseMs, pollMs: config.events.pollMs, concurrency: config.imports.concurrency };
  if (!config.databaseUrl) return startImportWorker(db, { ...timing, log, sole: true });
  return startImportThread({
    ...timing, databaseUrl: config.databaseUrl, heapMb: config.imports.threadHeapMb, logLevel: config.logLevel, log, db,
    bounds: { poolTimeoutMs: config.databasePoolTimeoutMs, statementTimeoutMs: config.databaseStatementTimeoutMs, sharedWaitMs: config.databaseSharedWaitMs },
  });
}

/** RATE_LIMITS=off: every call is allowed and nothing is counted, for load tests (scripts/bench) only. */
export function noLimits(log: Logger): RateLimiter {
  log.warn('RATE_LIMITS=off: rate limits are lifted; never run a public service like this');
  return {
    consume: async (rule) => ({ allowed: true, limit: rule.max, remaining: rule.max, resetSeconds: 0 }),
    spend: async (rule) => ({ allowed: true, limit: rule.points, remaining: rule.points, resetSeconds: 0, retryAfter: 0 }),
    close: async () => {},
  };
}

/**
 * Says at start, without holding it up, when LISTEN over DATABASE_URL hears nothing (a transaction
 * pooler in between): what then waits longer, and the variable that fixes it (docs/scaling.md).
 */
function warnIfNotificationsLost(db: { prisma: PrismaClient; listen: Listen }, log: Logger): void {
  notificationsArrive(db.listen, (channel) => db.prisma.$executeRaw`SELECT pg_notify(${channel}, '')`, NOTIFY_PROBE_MS).then(
    (arrive) => arrive || log.warn(
      { waitedMs: NOTIFY_PROBE_MS },
      'notifications sent over DATABASE_URL do not reach this instance (PgBouncer in transaction mode forwards none): set DATABASE_DIRECT_URL to PostgreSQL itself. ' +
        'Until then live events wait for the poll (EVENT_POLL_MS) and a revoked API key is refused within a second by the key cache\'s own expiry',
    ),
    (err: unknown) => log.warn({ err }, 'could not check that notifications arrive'),
  );
}
