
/** What the logs and the metrics learn about one request while it runs (never a token or a body). */
export type RequestInfo = {
  /** performance.now() when the request arrived. */
  start: number;
  /** The route pattern: bounded, never the URL as sent. */
  route: string;
  /** The GraphQL operation that ran (REST routes run one too); 'anonymous' when it has no name. */
  operation?: string;
  userId?: string;
  /** An API key's id when a key made the request (its secret never). */
  apiKeyId?: string;
  accountId?: string;
  /** Names of the rate-limit rules that refused this request. */
  rateLimited: string[];
};

const infos = new WeakMap<Request, RequestInfo>();

export function requestInfo(request: Request): RequestInfo {
  let info = infos.get(request);
  if (!info) infos.set(request, (info = { start: performance.now(), route: 'unmatched', rateLimited: [] }));
  return info;
}

/**
 * What the app serves, handed down by the composition root (app.ts) so this machinery needs no
 * import of the REST table: route patterns label requests, operation names label executions.
 */
export type KnownRoutes = { paths: readonly string[]; operations: readonly string[] };

/** Paths served outside the REST table (GraphQL, health, metrics, the API reference; form pages below). */
const FIXED = new Set(['/graphql', '/metrics', '/healthz', '/readyz', '/api/v1/openapi.json', '/api/v1/docs']);

/** A path's route pattern (e.g. `/api/v1/forms/:form_id/submit`), or `unmatched`: a bounded label. */
export function routeMatcher(patterns: readonly string[]): (pathname: string) => string {
  const known = [...new Set(patterns)].map((pattern) => ({ pattern, segments: pattern.split('/') }));
  return (pathname) => {
    const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
    if (FIXED.has(path)) return path;
    if (path.startsWith('/api/v1/docs/')) return '/api/v1/docs/*';
    if (/^\/forms\/[^/]+$/.test(path)) return '/forms/:form_id';
    const parts = path.split('/');
    const found = known.find(
      ({ segments }) => segments.length === parts.length && segments.every((s, i) => s.startsWith(':') ? parts[i] !== '' : s === parts[i]),
    );
    return found?.pattern ?? 'unmatched';
  };
}
