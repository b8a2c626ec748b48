import type { LimitResult } from '../ratelimit/limiter.js';

/** RateLimit-* on every limited answer; Retry-After when refused (docs/decisions.md §7). */
export function rateLimitHeaders(result: LimitResult | null): Record<string, string> {
  if (!result) return {};
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(result.limit),
    'RateLimit-Remaining': String(result.remaining),
    'RateLimit-Reset': String(result.resetSeconds),
  };
  if (!result.allowed) headers['Retry-After'] = String(result.resetSeconds);
  return headers;
}
