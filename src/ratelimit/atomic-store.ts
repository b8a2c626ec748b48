import { AsyncLocalStorage } from 'node:async_hooks';
import type { Identity, Store } from 'graphql-rate-limit';

/** What a store decided for one call, atomically. */
export type HitResult = {
  allowed: boolean;
  /** Calls counted in the window after this decision (this one included if allowed). */
  count: number;
  /** Milliseconds until the oldest counted call leaves the window. */
  resetMs: number;
  /** Counted timestamps before this call: what graphql-rate-limit gets back from getForIdentity. */
  before: number[];
  /** Allowed: takes this call back out of the window (an idempotent replay is not a new call). */
  undo?: () => void | Promise<void>;
};

/** What a store decided for one weighted take from a budget (a leaky bucket), atomically. */
export type TakeResult = {
  allowed: boolean;
  /** Points left after this decision. */
  remaining: number;
  /** Milliseconds until the budget is full again. */
  fullMs: number;
  /** Refused: milliseconds until `cost` points are back. 0 when allowed. */
  retryMs: number;
};

/**
 * Per-call state shared between the limiter and the store. graphql-rate-limit calls
 * `getForIdentity(identity)` with neither the rule's max/window nor any way to return a verdict,
 * so the limiter runs each call inside this AsyncLocalStorage: the store reads the rule from it and
 * writes its decision back (correct under concurrency, unlike any shared "last call" variable).
 */
export type CallState = { max: number; windowMs: number; result?: HitResult };
export const currentCall = new AsyncLocalStorage<CallState>();

/**
 * Bucket key = rule name (graphql-rate-limit's fieldIdentity: we pass the rule name as fieldName)
 * + identity (its contextIdentity). Both parts are URI-encoded so ':' inside an IPv6 address or a
 * rule name cannot make two different pairs collide ('a' + 'b:c' vs 'a:b' + 'c').
 */
export function keyOf(identity: Identity): string {
  return `${encodeURIComponent(identity.fieldIdentity)}:${encodeURIComponent(identity.contextIdentity)}`;
}

/**
 * Why we replace graphql-rate-limit's own stores: the library does `get` then `set` (a read-modify-
 * write with an await between), so concurrent calls all read the same old list and all pass
 * (100 concurrent calls against max 30 all got through); it also records refused calls (a client
 * that keeps retrying stays locked out and the list grows without bound), its in-memory store never
 * evicts, and its Redis store speaks callbacks only.
 *
 * An AtomicStore decides and records inside `getForIdentity`, in one atomic step, and refuses to
 * record a call over the limit. `setForIdentity` is a deliberate no-op: the library would write back
 * its stale copy (overwriting calls recorded concurrently) including refused calls.
 */
export abstract class AtomicStore implements Store {
  /** Decide and record one call for `key` atomically (sliding window, refused calls not stored). */
  abstract hit(key: string, max: number, windowMs: number): HitResult | Promise<HitResult>;
  /**
   * Take `cost` points from a budget of `capacity` that refills at `capacity` per `windowMs`
   * (a leaky bucket: docs/decisions.md §11's per-user cost budget), atomically; a take that does not
   * fit takes nothing. `cost` 0 only reads the budget.
   */
  abstract take(key: string, cost: number, capacity: number, windowMs: number): TakeResult | Promise<TakeResult>;
  abstract close(): Promise<void>;

  async getForIdentity(identity: Identity): Promise<readonly number[]> {
    const call = currentCall.getStore();
    if (!call) throw new Error('rate-limit stores must be used through createRateLimiter()');
    // Idempotent per call: should a future library version read twice, the call still counts once.
    if (!call.result) call.result = await this.hit(keyOf(identity), call.max, call.windowMs);
    return call.result.before;
  }

  setForIdentity(): void {
    // No-op on purpose: see the class comment.
  }
}
