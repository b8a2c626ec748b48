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
