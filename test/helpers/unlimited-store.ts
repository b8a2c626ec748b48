import { AtomicStore, type HitResult, type TakeResult } from '../../src/ratelimit/atomic-store.js';

/**
 * A rate-limit store that allows every call: for tests that must reach validation or the business
 * rules, not the limit (fuzzers, racing submits). The limits have their own tests
 * (test/graphql/rate-limits.test.ts).
 */
export class Unlimited extends AtomicStore {
  hit(_key: string, _max: number, windowMs: number): HitResult {
    return { allowed: true, count: 1, resetMs: windowMs, before: [] };
  }
  take(_key: string, _cost: number, capacity: number): TakeResult {
    return { allowed: true, remaining: capacity, fullMs: 0, retryMs: 0 };
  }
  async close() {}
}
