import type { Context } from '../context.js';
import { once, readIdempotencyKey } from '../idempotency/idempotency.service.js';

/** `scope` says who may reuse a key: `user:<id>`, or `ip:<address>:form:<id>` for the public submit. */
type Claim = { operation: string; accountId: string; scope: string; request: unknown };

/**
 * Honours an `Idempotency-Key` header on a write, through either door (REST or /graphql).
 * `write` returns a JSON-safe answer: that is what a retry gets back.
 */
export function idempotent<T>(ctx: Context, claim: Claim, write: () => Promise<T>): Promise<T> {
  const key = readIdempotencyKey(ctx.request.headers);
  if (key === null) return write();
  return once(ctx.db, { ...claim, key }, write);
}
