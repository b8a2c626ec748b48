/** GET /metrics: Prometheus text format, one registry per app instance. */
import { timingSafeEqual } from 'node:crypto';
import { getOperationAST } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AppDeps } from '../deps.js';
import type { Context } from '../context.js';
import { Response } from '../http/response.js';
import { statusOf } from '../http/abandoned.js';
import { requestInfo } from './request-info.js';
import { waitingOn } from '../db/together.js';

export const METRICS_PATH = '/metrics';

const GRAPHQL_ROUTE = '/graphql';
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const ERROR_CODES = new Set([
  'UNAUTHENTICATED', 'FORBIDDEN', 'BAD_USER_INPUT', 'NOT_FOUND', 'RATE_LIMITED', 'INVALID_TRANSITION', 'CONFLICT',
  'IDEMPOTENCY_CONFLICT', 'SERVICE_UNAVAILABLE', 'INTERNAL_SERVER_ERROR',
]);

/** A pg Pool's counters, when the database has one (PGlite has none). */
type PoolStats = { totalCount: number; idleCount: number; waitingCount: number };

/**
 * `knownOperations`: names a client sends to /graphql get a series only when listed; any other is
 * 'anonymous', so labels stay bounded. Operations the server runs itself (REST routes, form pages)
 * are fixed code.
 */
export function createMetrics(deps: Pick<AppDeps, 'db'> & { config: Pick<AppDeps['config'], 'metricsToken'> }, knownOperations: readonly string[] = []) {
  const KNOWN_OPERATIONS = new Set(knownOperations);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  // Each series registers in this app's own registry (one per app instance), never prom-client's global one.
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Counter({ name, help, labelNames, registers: [registry] });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
    new Histogram({ name, help, labelNames, buckets, registers: [registry] });

  const requests = counter('http_requests_total', 'HTTP requests by route pattern and status', ['method', 'route', 'status']);
  const duration = histogram('http_request_duration_seconds', 'Time to the response headers, by route pattern', ['method', 'route'], [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
  ]);
  const rejections = counter('rate_limit_rejections_total', 'Requests refused with 429, by rate-limit rule', ['rule']);
  const operations = histogram(
    'graphql_operation_duration_seconds',
    'GraphQL execution time by operation name (REST routes run named operations too)',
    ['operation', 'type'],
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  const operationErrors = counter('graphql_operation_errors_total', 'GraphQL errors by operation name and error code', ['operation', 'code']);

  const pool: PoolStats | undefined = deps.db.pool;
  if (pool) {
    const gauge = (name: string, help: string, read: (p: PoolStats) => number) =>
      new Gauge({ name, help, registers: [registry], collect() { this.set(read(pool)); } });
    gauge('db_pool_connections', 'Connections open in the PostgreSQL pool', (p) => p.totalCount);
    gauge('db_pool_idle_connections', 'Idle connections in the PostgreSQL pool', (p) => p.idleCount);
    gauge('db_pool_waiting_requests', 'Queries waiting for a free connection', (p) => p.waitingCount);
  }

  const db = deps.db.prisma;
  new Gauge({ name: 'db_statements_waiting', help: 'Requests waiting to share the next statement of their kind (docs/scaling.md)', registers: [registry], collect() { this.set(waitingOn(db)); } });

  const token = deps.config.metricsToken;
  const authorized = (request: Request) => {
    if (!token) return true;
    const given = Buffer.from(request.headers.get('authorization') ?? '');
    const expected = Buffer.from(`Bearer ${token}`);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  const plugin: Plugin<Context> = {
    onRequest: async ({ request, url, endResponse }) => {
      if (url.pathname !== METRICS_PATH) return;
      if (request.method !== 'GET') return endResponse(new Response(null, { status: 405, headers: { Allow: 'GET' } }));
      if (!authorized(request)) return endResponse(new Response(null, { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } }));
      endResponse(new Response(await registry.metrics(), { status: 200, headers: { 'Content-Type': registry.contentType } }));
    },
    onExecute: ({ args }) => {
      const operation = getOperationAST(args.document, args.operationName);
      const name = operation?.name?.value;
      const request = (args.contextValue as Partial<Context>).request;
      const fromClient = !request || requestInfo(request).route === GRAPHQL_ROUTE;
      const labels = {
        operation: name && (!fromClient || KNOWN_OPERATIONS.has(name)) ? name : 'anonymous',
        type: operation?.operation ?? 'unknown',
      };
      const stop = operations.startTimer(labels);
      return {
        onExecuteDone: ({ result }) => {
          stop();
          for (const error of 'errors' in result ? (result.errors ?? []) : []) {
            const code = String(error.extensions?.code ?? 'INTERNAL_SERVER_ERROR');
            operationErrors.inc({ operation: labels.operation, code: ERROR_CODES.has(code) ? code : 'OTHER' });
          }
        },
      };
    },
    onResponse: ({ request, response, serverContext }) => {
      const info = requestInfo(request);
      const method = METHODS.has(request.method) ? request.method : 'OTHER';
      // A request its client abandoned counts as 499 (src/http/abandoned.ts), never as a 5xx.
      requests.inc({ method, route: info.route, status: String(statusOf(response.status, serverContext)) });
      duration.observe({ method, route: info.route }, (performance.now() - info.start) / 1000);
      for (const rule of info.rateLimited) rejections.inc({ rule });
    },
  };
  return { registry, plugin };
}
