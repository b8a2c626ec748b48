/**
 * CSRF defence for cookie-authenticated, state-changing requests: a browser attaches the cookie to
 * cross-site requests on its own, but it also says where the request comes from (Origin, else Referer).
 */
export function isAllowedOrigin(headers: Headers, allowedOrigins: string[]): boolean {
  const origin = headers.get('origin');
  // An Origin header, even "null" (sandboxed frame, privacy redirect), is authoritative: no Referer fallback.
  const source = origin !== null ? originOf(origin) : originOf(headers.get('referer'));
  if (source === null) return false;
  return allowedOrigins.some((allowed) => originOf(allowed) === source);
}

/**
 * Evidence that another site started the request. Sec-Fetch-Site is set by the browser (a page cannot
 * forge it); an Origin or Referer, when sent, must be an allowed origin. No evidence at all (address
 * bar, bookmark, curl, a browser too old to send Sec-Fetch-Site) is not cross-site.
 */
export function isCrossSite(headers: Headers, allowedOrigins: string[]): boolean {
  const site = headers.get('sec-fetch-site');
  // The API's own pages (docs, GraphiQL) need not be listed in ALLOWED_ORIGINS.
  if (site === 'same-origin') return false;
  if (headers.has('origin') || headers.has('referer')) return !isAllowedOrigin(headers, allowedOrigins);
  // "same-site" is a sibling host (another subdomain), which need not be one of ours either.
  return site === 'cross-site' || site === 'same-site';
}

export type OperationKind = 'query' | 'mutation' | 'subscription';

/** Requests that must prove their origin: every POST, PATCH and DELETE (a body or an effect by method). */
const provesOrigin = (method: string): boolean => method === 'POST' || method === 'PATCH' || method === 'DELETE';

/** Requests the cookie cross-site rule covers: those above, and any other request that runs a mutation. */
export const changesState = (method: string, operation: OperationKind | undefined): boolean =>
  provesOrigin(method) || operation === 'mutation';

/**
 * docs/decisions.md §1, the one cross-site rule for a cookie-authenticated request. A POST must prove it
 * comes from an allowed origin. Any other request that runs a mutation (the REST export GETs, which
 * write an audit row and spend a budget) is refused when it is evidently cross-site: a SameSite=Lax
 * cookie rides along on another site's top-level navigation, while a download typed into the address
 * bar or linked from the app still works.
 */
export function isRefusedCrossSite(request: Request, operation: OperationKind | undefined, allowedOrigins: string[]): boolean {
  if (provesOrigin(request.method)) return !isAllowedOrigin(request.headers, allowedOrigins);
  return changesState(request.method, operation) && isCrossSite(request.headers, allowedOrigins);
}

/** `ALLOWED_ORIGINS`: comma-separated; each entry normalised to scheme://host[:port]. */
export function parseAllowedOrigins(value: string | undefined): string[] {
  const origins: string[] = [];
  for (const item of (value ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const origin = originOf(item);
    if (origin === null) {
      throw new Error(`ALLOWED_ORIGINS: "${item}" is not an origin (expected e.g. https://app.example.com)`);
    }
    if (!origins.includes(origin)) origins.push(origin);
  }
  return origins;
}

// `new URL().origin` lower-cases the host and drops default ports; opaque origins come back as "null".
function originOf(value: string | null): string | null {
  if (!value) return null;
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}
