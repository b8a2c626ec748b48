import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { parseAllowedOrigins } from './http/origin.js';

/** Every environment variable the service reads, validated once at start (docs/decisions.md §10). */
export type Config = {
  port: number;
  host: string;
  production: boolean;
  databaseUrl?: string;
  /** Connections in the PostgreSQL pool (DATABASE_POOL_MAX). */
  databasePoolMax: number;
  /** How long a request waits for a database connection before 503 (DATABASE_POOL_TIMEOUT_MS, docs/faults.md). */
  databasePoolTimeoutMs: number;
  /** Longest database statement before 503 (DATABASE_STATEMENT_TIMEOUT_MS, docs/faults.md). */
  databaseStatementTimeoutMs: number;
  /** Longest a request waits to share a running statement of its kind (DATABASE_SHARED_WAIT_MS, docs/scaling.md). */
  databaseSharedWaitMs: number;
  /** An upload's body slower than `minBytes` in any `windowMs` is cut off, 408 (IMPORT_BODY_WINDOW_MS, IMPORT_BODY_MIN_BYTES; docs/imports.md#bounds). */
  uploadPace: { windowMs: number; minBytes: number };
  /** A direct (unpooled) URL for migrations when DATABASE_URL goes through PgBouncer (docs/scaling.md). */
  databaseDirectUrl?: string;
  /** How long start-up waits for another instance's migration lock before exit 1 (MIGRATION_LOCK_TIMEOUT_MS). */
  migrationLockTimeoutMs: number;
  /** Streaming replicas that serve list pages, reads by id and exports (DATABASE_REPLICA_URLS). */
  databaseReplicaUrls: string[];
  /** A replica further behind the primary than this is skipped until it catches up (DATABASE_REPLICA_MAX_LAG_MS). */
  databaseReplicaMaxLagMs: number;
  dataDir: string;
  redisUrl?: string;
  auth: {
    jwtSecret?: string;
    jwksUrl?: string;
    issuer?: string;
    audience?: string;
    cookieName: string;
  };
  allowedOrigins: string[];
  /** How many proxy hops of X-Forwarded-For to trust; 0 = use the socket address. */
  trustProxy: number;
  /** Where clients reach the service (PUBLIC_URL): the OpenAPI document's server; else each request's host. */
  publicUrl?: string;
  /** GraphQL introspection and GraphiQL; on by default outside production. */
  introspection: boolean;
  /** COMPRESSION=off sends every answer as it is, whatever Accept-Encoding asks (a proxy in front codes them; the bench's "off" side). */
  compression: boolean;
  logLevel: LogLevel;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`; production refuses to start without it. */
  metricsToken?: string;
  /** CURSOR_SECRET: signs list cursors (docs/configuration.md); else AUTH_JWT_SECRET's, else a dev key outside production. */
  cursorSecret?: string;
  /** RATE_LIMITS=off lifts every rate limit: load tests only (scripts/bench). On unless set so. */
  rateLimits: boolean;
  /** After SIGTERM, how long to keep accepting (readiness already 503) before closing the listener. */
  shutdownDelayMs: number;
  /** GRAPHQL_TRUSTED_DOCUMENTS: the only documents /graphql runs (SHA-256 hash -> document), when set. */
  trustedDocuments?: Record<string, string>;
  /** Events, webhooks and subscriptions (docs/events.md, docs/configuration.md). */
  events: EventsConfig;
  /**
   * Imports (docs/imports.md): IMPORT_LEASE_MS, how long a worker's heartbeat (renewed every third of it) keeps its running import from other instances (a crash frees it after this);
   * IMPORT_THREAD_HEAP_MB, the import thread's old generation cap on PostgreSQL;
   * IMPORT_CONCURRENCY, how many imports (of different accounts) an instance runs at once, at least two (docs/decisions.md §26).
   */
  imports: { leaseMs: number; threadHeapMb: number; concurrency: number };
  /** The overdue jobs (docs/decisions.md §19 "Billing time", §21 tasks): OVERDUE_INTERVAL_MS between runs, OVERDUE_BATCH_SIZE invoices or tasks per transaction. */
  overdue: { intervalMs: number; batchSize: number };
  /** The trash (docs/trash.md): TRASH_RETENTION_DAYS a deleted contact, deal or company is kept; TRASH_PURGE_INTERVAL_MS between the purge's runs. */
  trash: { retentionDays: number; purgeIntervalMs: number };
  /**
   * Invoice mail (docs/decisions.md §20 "Sending"): SMTP_URL and MAIL_FROM, both or neither (no mail);
   * MAIL_RETRY_BASE_MS, the first retry's delay after a failed attempt (each next one 4 times longer).
   */
  mail: MailConfig | null;
  /**
   * Invoice PDFs (docs/decisions.md §26): PDF_THREADS worker threads draw them off the event loop;
   * PDF_QUEUE more may wait for one, and past that a download is answered 503 with Retry-After.
   */
  pdf: PdfConfig;
};

export type PdfConfig = { threads: number; queue: number };

export type MailConfig = { smtpUrl: string; from: string; retryBaseMs: number };

export type EventsConfig = {
  /** EVENT_RETENTION_DAYS: events older than this are purged (default 90). */
  retentionDays: number;
  /** WEBHOOK_SECRET_KEY: encrypts webhook signing secrets (docs/security.md); a dev key outside production. */
  webhookSecretKey?: string;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS=true lifts the address-range check (local receivers, tests). */
  allowPrivateTargets: boolean;
  /** WEBHOOK_RETRY_BASE_MS: the first retry's delay; each next one is 4 times longer (capped at 12 h). */
  retryBaseMs: number;
  /** WEBHOOK_LEASE_MS: how long a claimed delivery is kept from other instances (a crash frees it after this). */
  leaseMs: number;
  /** EVENT_POLL_MS: how often the worker looks for due work unprompted (committed events wake it at once). */
  pollMs: number;
  /** EVENT_WORKER=off: this instance delivers nothing (another one does). */
  worker: boolean;
  /** WORKFLOW_RETRY_BASE_MS: a failed workflow step's first retry delay; each next one 4 times longer (docs/workflows.md#runs). */
  workflowRetryBaseMs: number;
  /** WORKFLOW_LEASE_MS: how long a claimed run is kept from other instances (a crash frees it after this). */
  workflowLeaseMs: number;
};

/** Long enough for another instance to apply a migration of ordinary size (docs/scaling.md). */
export const MIGRATION_LOCK_TIMEOUT_DEFAULT_MS = 60_000;
/** A list read may trail a write by at most this much (docs/scaling.md#read-replicas). */
export const REPLICA_MAX_LAG_DEFAULT_MS = 1_000;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const NODE_ENVS = ['development', 'test', 'production'];
// RFC 6265 cookie-name: an RFC 7230 token.
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// An address, alone or as `Name <address>` (the sender of invoice mail).
const MAIL_FROM = /^(?:[^<>\r\n]*<[^\s<>@]+@[^\s<>@]+>|[^\s<>@]+@[^\s<>@]+)$/;
// A DNS name (RFC 1123 labels) when HOST is not an IP address.
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const url = (name: string, protocols: string[], given = env[name]): string | undefined => {
    const raw = given?.trim();
    if (!raw) return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) throw new Error();
      return raw;
    } catch {
      problems.push(`${name} must be a ${protocols.join(' or ')} URL`);
      return undefined;
    }
  };
  const urls = (name: string, protocols: string[]): string[] => {
    const list = (env[name] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    return list.flatMap((item, i) => url(`${name} entry ${i + 1}`, protocols, item) ?? []);
  };
  const origins = (raw: string | undefined): string[] => {
    const list: string[] = [];
    // One line per bad entry: parseAllowedOrigins stops at the first, so it is given one at a time.
    for (const item of (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
      try {
        for (const origin of parseAllowedOrigins(item)) if (!list.includes(origin)) list.push(origin);
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    return list;
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  };
  const host = (): string => {
    const raw = env.HOST?.trim();
    if (!raw) return '127.0.0.1';
    if (isIP(raw) || HOST_NAME.test(raw)) return raw;
    problems.push(`HOST must be an IP address or a host name (got "${raw}")`);
    return '127.0.0.1';
  };
  const cookieName = (): string => {
    const raw = env.AUTH_COOKIE_NAME?.trim();
    if (!raw) return 'session';
    if (COOKIE_NAME.test(raw)) return raw;
    problems.push(`AUTH_COOKIE_NAME must be a cookie name: letters, digits and !#$%&'*+-.^_\`|~ only (got "${raw}")`);
    return 'session';
  };

  const mail = (): MailConfig | null => {
    const smtpUrl = url('SMTP_URL', ['smtp:', 'smtps:']);
    const from = env.MAIL_FROM?.trim() || undefined;
    if (from !== undefined && !MAIL_FROM.test(from)) problems.push(`MAIL_FROM must be an e-mail address, or "Name <address>" (got "${from}")`);
    if (Boolean(env.SMTP_URL?.trim()) !== Boolean(from)) problems.push('SMTP_URL and MAIL_FROM go together: set both to send mail, or neither');
    return smtpUrl && from ? { smtpUrl, from, retryBaseMs: int('MAIL_RETRY_BASE_MS', 30_000, 1, 3_600_000) } : null;
  };

  const trustedDocuments = (): Record<string, string> | undefined => {
    const file = env.GRAPHQL_TRUSTED_DOCUMENTS?.trim();
    if (!file) return undefined;
    try {
      return parseTrustedDocuments(readFileSync(path.resolve(file), 'utf8'));
    } catch (error) {
      problems.push(`GRAPHQL_TRUSTED_DOCUMENTS (${file}): ${(error as Error).message}`);
      return undefined;
    }
  };

  const nodeEnv = oneOf('NODE_ENV', NODE_ENVS, 'development');
  const production = nodeEnv === 'production';
  const config: Config = {
    port: int('PORT', 3000, 0, 65535),
    host: host(),
    production,
    databaseUrl: url('DATABASE_URL', ['postgresql:', 'postgres:']),
    databasePoolMax: int('DATABASE_POOL_MAX', 10, 1, 1000),
    databasePoolTimeoutMs: int('DATABASE_POOL_TIMEOUT_MS', 2_000, 100, 60_000),
    databaseStatementTimeoutMs: int('DATABASE_STATEMENT_TIMEOUT_MS', 10_000, 100, 600_000),
    databaseSharedWaitMs: int('DATABASE_SHARED_WAIT_MS', 20, 0, 60_000),
    uploadPace: { windowMs: int('IMPORT_BODY_WINDOW_MS', 30_000, 100, 3_600_000), minBytes: int('IMPORT_BODY_MIN_BYTES', 64 * 1024, 1, 1024 * 1024 * 1024) },
    databaseDirectUrl: url('DATABASE_DIRECT_URL', ['postgresql:', 'postgres:']),
    migrationLockTimeoutMs: int('MIGRATION_LOCK_TIMEOUT_MS', MIGRATION_LOCK_TIMEOUT_DEFAULT_MS, 0, 3_600_000),
    databaseReplicaUrls: urls('DATABASE_REPLICA_URLS', ['postgresql:', 'postgres:']),
    databaseReplicaMaxLagMs: int('DATABASE_REPLICA_MAX_LAG_MS', REPLICA_MAX_LAG_DEFAULT_MS, 1, 3_600_000),
    dataDir: path.resolve(env.DATA_DIR?.trim() || '.data'),
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    auth: {
      jwtSecret: env.AUTH_JWT_SECRET || undefined,
      jwksUrl: url('AUTH_JWKS_URL', ['https:', 'http:']),
      issuer: env.AUTH_JWT_ISSUER || undefined,
      audience: env.AUTH_JWT_AUDIENCE || undefined,
      cookieName: cookieName(),
    },
    allowedOrigins: origins(env.ALLOWED_ORIGINS),
    trustProxy: int('TRUST_PROXY', 0, 0, 10),
    publicUrl: url('PUBLIC_URL', ['https:', 'http:'])?.replace(/\/+$/, ''),
    introspection: oneOf('GRAPHQL_INTROSPECTION', ['true', 'false'], production ? 'false' : 'true') === 'true',
    compression: oneOf('COMPRESSION', ['on', 'off'], 'on') === 'on',
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    metricsToken: env.METRICS_TOKEN || undefined,
    cursorSecret: env.CURSOR_SECRET || undefined,
    rateLimits: oneOf('RATE_LIMITS', ['on', 'off'], 'on') === 'on',
    shutdownDelayMs: int('SHUTDOWN_DELAY_MS', 0, 0, 60_000),
    trustedDocuments: trustedDocuments(),
    events: {
      retentionDays: int('EVENT_RETENTION_DAYS', 90, 1, 3650),
      webhookSecretKey: env.WEBHOOK_SECRET_KEY || undefined,
      allowPrivateTargets: oneOf('WEBHOOK_ALLOW_PRIVATE_TARGETS', ['true', 'false'], 'false') === 'true',
      retryBaseMs: int('WEBHOOK_RETRY_BASE_MS', 30_000, 1, 3_600_000),
      leaseMs: int('WEBHOOK_LEASE_MS', 60_000, 100, 3_600_000),
      pollMs: int('EVENT_POLL_MS', 2_000, 10, 60_000),
      worker: oneOf('EVENT_WORKER', ['on', 'off'], 'on') === 'on',
      workflowRetryBaseMs: int('WORKFLOW_RETRY_BASE_MS', 30_000, 1, 3_600_000),
      workflowLeaseMs: int('WORKFLOW_LEASE_MS', 60_000, 100, 3_600_000),
    },
    imports: {
      leaseMs: int('IMPORT_LEASE_MS', 10_000, 100, 3_600_000),
      threadHeapMb: int('IMPORT_THREAD_HEAP_MB', 96, 32, 4096),
      concurrency: int('IMPORT_CONCURRENCY', 2, 2, 16),
    },
    overdue: { intervalMs: int('OVERDUE_INTERVAL_MS', 60_000, 100, 86_400_000), batchSize: int('OVERDUE_BATCH_SIZE', 500, 1, 10_000) },
    trash: { retentionDays: int('TRASH_RETENTION_DAYS', 30, 1, 3650), purgeIntervalMs: int('TRASH_PURGE_INTERVAL_MS', 3_600_000, 100, 86_400_000) },
    mail: mail(),
    pdf: { threads: int('PDF_THREADS', 1, 1, 64), queue: int('PDF_QUEUE', 16, 0, 10_000) },
  };
  if (config.auth.jwtSecret !== undefined && config.auth.jwtSecret.length < 32) {
    problems.push('AUTH_JWT_SECRET must be at least 32 characters');
  }
  if (config.events.webhookSecretKey !== undefined && config.events.webhookSecretKey.length < 32) {
    problems.push('WEBHOOK_SECRET_KEY must be at least 32 characters');
  }
  if (config.cursorSecret !== undefined && config.cursorSecret.length < 32) {
    problems.push('CURSOR_SECRET must be at least 32 characters');
  }
  if (production && config.auth.jwksUrl && !config.auth.jwtSecret && !config.cursorSecret) {
    problems.push('NODE_ENV=production with AUTH_JWKS_URL alone needs CURSOR_SECRET (the key that signs list cursors)');
  }
  if (config.metricsToken !== undefined && config.metricsToken.length < 16) {
    problems.push('METRICS_TOKEN must be at least 16 characters');
  }
  if (!config.databaseUrl && (config.databaseDirectUrl || config.databaseReplicaUrls.length > 0)) {
    problems.push('DATABASE_DIRECT_URL and DATABASE_REPLICA_URLS need DATABASE_URL (the embedded database has neither)');
  }
  if (production && !config.auth.jwtSecret && !config.auth.jwksUrl) {
    problems.push('NODE_ENV=production needs AUTH_JWT_SECRET or AUTH_JWKS_URL');
  }
  // /metrics shares the API's port: open, it tells anyone the routes, error rates and pool (docs/observability.md).
  if (production && !config.metricsToken) {
    problems.push('NODE_ENV=production needs METRICS_TOKEN (GET /metrics then asks for it as a bearer token)');
  }
  // A mailed link on the listen address reaches nobody outside this machine.
  if (production && config.mail && !config.publicUrl) {
    problems.push("NODE_ENV=production with SMTP_URL needs PUBLIC_URL (the base of the invoice page's link in the mail)");
  }
  if (problems.length > 0) throw new ConfigError(problems.join('\n'));
  return config;
}

/**
 * Development convenience: variables from `.env` (dotenv syntax) fill in what the real environment
 * does not set; a real variable always wins. Never in production. Returns the names it set.
 */
export function loadDotenv(env: NodeJS.ProcessEnv = process.env, file = path.resolve('.env')): string[] {
  if (env.NODE_ENV === 'production' || !existsSync(file)) return [];
  const set: string[] = [];
  for (const [name, value] of Object.entries(parseDotenv(readFileSync(file)))) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    set.push(name);
  }
  return set;
}

/** Where a server on `host:port` answers (an IPv6 host in brackets; 0.0.0.0 / :: stay as given). */
export const baseUrlOf = (host: string, port: number): string => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/** The service's public base URL: PUBLIC_URL, else its listen address (an invoice's hostedUrl, the mailed link). */
export const publicBaseUrl = (config: Pick<Config, 'publicUrl' | 'host' | 'port'>): string => config.publicUrl ?? baseUrlOf(config.host, config.port);

/** A GraphQL document's SHA-256 (hex), as persisted and trusted documents are keyed (src/graphql/persisted.ts). */
export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Reads a trusted-documents file: a JSON object of SHA-256 hash -> document, each hash checked (as src/plugins/use-trusted-documents.ts looks them up). */
export function parseTrustedDocuments(text: string): Record<string, string> {
  const parsed = JSON.parse(text) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('must be a JSON object of hash -> document');
  for (const [hash, document] of Object.entries(parsed)) {
    if (typeof document !== 'string') throw new Error(`the document of ${hash} is not a string`);
    if (sha256(document) !== hash) throw new Error(`${hash} is not the SHA-256 of its document`);
  }
  return parsed as Record<string, string>;
}
