import type { Context } from '../context.js';
import type { Prisma } from '../generated/prisma/client.js';
import { once, readIdempotencyKey } from '../idempotency/idempotency.service.js';

/** `scope` says who may reuse a key: `user:<id>`, or `ip:<address>:form:<id>` for the public submit. */
type Claim = { operation: string; accountId: string; scope: string; request: unknown };

/**
 * Honours an `Idempotency-Key` header on a write, through either door (REST or /graphql).
 * `write` must write through the client it is given (with a key, the transaction that also stores
 * the answer) and return a JSON-safe answer: that is what a retry gets back.
 */
export function idempotent<T>(ctx: Context, claim: Claim, write: (db: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  const key = readIdempotencyKey(ctx.request.headers);
  if (key === null) return write(ctx.db);
  return once(ctx.db, { ...claim, key }, write);
}
