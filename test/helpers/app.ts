import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, inject, vi } from 'vitest';
import { createApp, type AppDeps } from '../../src/app.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { KnownUsers } from '../../src/auth/viewer.js';
import { ApiKeys } from '../../src/auth/api-keys.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { openEvents } from '../../src/events-runtime.js';
import { memoryUploadSlots, redisUploadSlots } from '../../src/ratelimit/upload-slots.js';
import { createLogger } from '../../src/logger.js';
import type { AtomicStore } from '../../src/ratelimit/atomic-store.js';
import { createRateLimiter } from '../../src/ratelimit/limiter.js';
import { noLimits } from '../../src/runtime.js';
import { serveGraphqlWs } from '../../src/websocket.js';
import { OPENAPI_PATH } from '../../src/rest/docs.js';
import { loadCursorKey } from '../../src/graphql/keyset.js';
import { cloneDatabase } from './database.js';
import { isApiPath, openApiChecker, type OpenApiChecker } from './openapi.js';
import { TIMEOUTS } from './timeouts.js';

// No global setup ran: the file was started without test/vitest.config.ts (see ./timeouts.ts).
if (inject('template') === undefined) vi.setConfig(TIMEOUTS);

export const TEST_SECRET = 'test-secret-test-secret-test-secret-0123456789';
/** What NODE_ENV=production needs for /metrics (docs/startup-errors.md). */
export const TEST_METRICS_TOKEN = 'test-metrics-token-0123456789';
export const TEST_ORIGIN = 'https://app.example.test';

export type TestUser = { id: string; token: string };

type CallOptions = {
  /** The caller; null or absent = anonymous. */
  as?: TestUser | null;
  headers?: Record<string, string>;
  /** The socket address the request seems to come from (default 127.0.0.1). */
  clientIp?: string;
};

export type GqlResult<T = any> = {
  status: number;
  data: T;
  errors?: { message: string; path?: string[]; extensions?: { code?: string; details?: Record<string, string[]> } & Record<string, unknown> }[];
  /** The answer's own extensions (`cost`: docs/graphql.md#cost-and-budget). */
  extensions?: Record<string, any>;
  headers: Headers;
};

/** The one error a GraphQL answer must carry (fails the test otherwise). */
export const errorOf = (result: GqlResult) => {
  expect(result.errors, JSON.stringify(result.data)).toHaveLength(1);
  return result.errors![0]!;
};

export type RestResult = { status: number; headers: Headers; body: any; text: string };

type RestOptions = CallOptions & { body?: unknown; rawBody?: string };

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

/**
 * The checker of the last document seen, compiled again only when an app serves another text (an
 * environment that changes it): compiling every schema took 0.2-0.3 s of CPU per app, and a worker
 * keeps this module across files (isolate: false). The checker holds no state between answers.
 */
let lastChecker: { text: string; checker: OpenApiChecker } | undefined;
function checkerOf(text: string): OpenApiChecker {
  if (lastChecker?.text !== text) lastChecker = { text, checker: openApiChecker(JSON.parse(text) as never) };
  return lastChecker.checker;
}

/**
 * The whole app on its own fresh database (and its own rate-limit namespace in Redis when
 * REDIS_URL is set), called in-process through Yoga's fetch: no port.
 */
export async function createTestApp(overrides: { env?: Record<string, string>; store?: AtomicStore; worker?: boolean } = {}) {
  const config: Config = loadConfig({
    NODE_ENV: 'test',
    AUTH_JWT_SECRET: TEST_SECRET,
    ALLOWED_ORIGINS: TEST_ORIGIN,
    // The test server sits on loopback; X-Forwarded-For (set from `clientIp`) names the client.
    TRUST_PROXY: '1',
    WEBHOOK_SECRET_KEY: 'test-webhook-secret-key-test-webhook-secret-key',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...overrides.env,
  });
  // The database's waits as the service reads them (DATABASE_POOL_TIMEOUT_MS, DATABASE_STATEMENT_TIMEOUT_MS, DATABASE_SHARED_WAIT_MS).
  const { db, drop } = await cloneDatabase(inject('template'), {
    poolTimeoutMs: config.databasePoolTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    sharedWaitMs: config.databaseSharedWaitMs,
  });
  const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const limiter = config.rateLimits
    ? createRateLimiter({ redisUrl: config.redisUrl, keyPrefix: `rl-test-${randomUUID()}:`, store: overrides.store, log: () => {} })
    : noLimits(log);
  const deps: AppDeps = {
    config,
    db,
    limiter,
    verifyToken: createTokenVerifier(config.auth),
    knownUsers: new KnownUsers(),
    cursorKey: await loadCursorKey(config),
    // Revocations heard as in production: LISTEN/NOTIFY, and Redis where REDIS_URL is set.
    apiKeys: await new ApiKeys(db.prisma, log).start({ listen: db.listen, redisUrl: config.redisUrl }),
    log,
    // The delivery worker and relay run only where a test asks for them (test/events/).
    events: await openEvents(config, db.prisma, log, { worker: overrides.worker ?? false, listen: db.listen }),
    // Uploads under way are counted in Redis where REDIS_URL is set, as every instance would.
    uploads: config.redisUrl ? redisUploadSlots(config.redisUrl) : memoryUploadSlots(),
  };
  const app = createApp(deps);
  // A real HTTP server on a free loopback port: tests drive the service as clients do.
  const server = createServer(app);
  // Idle connections stay open until close(): the client and this server share one event loop, so
  // a test that keeps the loop busy past Node's 5 s keep-alive (a long lint, a busy machine) would
  // otherwise have the server drop the connection the client is about to reuse (ECONNRESET).
  server.keepAliveTimeout = 0;
  const websockets = serveGraphqlWs(server, app, deps); // as src/main.ts serves graphql-ws
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The app's own document, fetched and compiled once: rest() checks every /api/v1 answer with it.
  const openapi = checkerOf(await (await fetch(`${baseUrl}${OPENAPI_PATH}`)).text());

  const call = (method: string, path: string, init: { body?: string; headers: Record<string, string> }, options: CallOptions) => {
    const headers: Record<string, string> = {
      'x-forwarded-for': options.clientIp ?? '198.51.100.1',
      ...init.headers,
      ...options.headers,
    };
    if (options.as) headers.authorization ??= `Bearer ${options.as.token}`;
    return fetch(`${baseUrl}${path}`, { method, body: init.body, headers });
  };

  return {
    app,
    deps,
    baseUrl,
    openapi,
    db: db.prisma as PrismaClient,

    async gql<T = any>(query: string, variables: Record<string, unknown> = {}, options: CallOptions = {}): Promise<GqlResult<T>> {
      const response = await call('POST', '/graphql', {
        body: JSON.stringify({ query, variables }),
        headers: { 'content-type': 'application/json' },
      }, options);
      const body = (await response.json()) as { data: T; errors?: GqlResult['errors']; extensions?: GqlResult['extensions'] };
      return { status: response.status, data: body.data, errors: body.errors, extensions: body.extensions, headers: response.headers };
    },

    /** Calls the service over HTTP; an /api/v1 answer the OpenAPI document does not describe throws. */
    async rest(method: string, path: string, options: RestOptions = {}): Promise<RestResult> {
      const hasBody = options.body !== undefined || options.rawBody !== undefined;
      const response = await call(method, path, {
        body: options.rawBody ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined),
        headers: hasBody ? { 'content-type': 'application/json' } : {},
      }, options);
      const text = await response.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* CSV and other non-JSON answers stay text */
      }
      const result = { status: response.status, headers: response.headers, body, text };
      const { pathname } = new URL(`${baseUrl}${path}`); // as fetch resolves it
      // A CORS preflight is answered by the CORS layer before any route: OpenAPI does not describe it.
      const preflight = method === 'OPTIONS' && Object.keys(options.headers ?? {}).some((h) => /^access-control-request-method$/i.test(h));
      if (isApiPath(pathname) && !preflight) openapi.check(method, pathname, result);
      return result;
    },

    async close() {
      await websockets.close();
      server.closeIdleConnections();
      await new Promise((resolve) => server.close(resolve));
      await deps.events.close();
      await deps.apiKeys.close();
      await limiter.close();
      await deps.uploads?.close();
      await deps.pdfs?.close(); // the PDF threads createApp started (src/invoices/pdf-pool.ts)
      await drop();
    },
  };
}
