import type { Plugin } from 'graphql-yoga';
import { requestState } from '../context.js';
import { statusOf } from '../http/abandoned.js';
import type { Logger } from '../logger.js';
import { requestInfo } from '../observability/request-info.js';

/** Probes hit every few seconds: logged at debug so they do not drown the requests that matter. */
const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One JSON line per request: id, method, route pattern (+ GraphQL operation), status, duration,
 * and the user and account when known. Deliberately no headers, query string, cookies or bodies.
 * Needs useRequestInfo() in the same app.
 */
export function useRequestLog(logger: Logger): Plugin {
  // The line is built below from the fields named, none of them a redacted path (logger.ts: tokens,
  // passwords, cookies, authorization), so pino's redaction could never change it; it only cloned
  // each line to look (about 4 µs and 3-5 % of a REST page's allocations). Every other line keeps it.
  const log = logger.child({}, { redact: [] });
  return {
    onResponse: ({ request, response, serverContext }) => {
      const info = requestInfo(request);
      // A request its client abandoned is 499 (src/http/abandoned.ts): an info line, never a server error.
      const status = statusOf(response.status, serverContext);
      const line = {
        requestId: requestState(request).requestId,
        method: request.method,
        route: info.route,
        ...(info.operation ? { operation: info.operation } : {}),
        status,
        durationMs: Math.round((performance.now() - info.start) * 100) / 100,
        ...(info.userId ? { userId: info.userId } : {}),
        ...(info.apiKeyId ? { apiKeyId: info.apiKeyId } : {}),
        ...(info.accountId ? { accountId: info.accountId } : {}),
        ...(info.rateLimited.length ? { rateLimited: info.rateLimited } : {}),
      };
      // A 503 from /readyz is an expected answer (src/plugins/use-health.ts logs why, once per change), not a failure.
      if (status >= 500 && info.route !== '/readyz') log.error(line, 'request');
      else if (QUIET_ROUTES.has(info.route)) log.debug(line, 'request');
      else log.info(line, 'request');
    },
  };
}
