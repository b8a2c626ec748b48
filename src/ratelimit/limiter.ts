import type { GraphQLResolveInfo } from 'graphql/index.js';
import { getGraphQLRateLimiter } from 'graphql-rate-limit';
import { currentCall, type AtomicStore, type CallState } from './atomic-store.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore, type Logger } from './redis-store.js';

export type LimitRule = { name: string; max: number; window: string /* '1m', '1h' */ };
export type LimitResult = { allowed: boolean; limit: number; remaining: number; resetSeconds: number };
/** One call counted: `undo` (when the store can) takes it back, for an answer that turns out to be a replay. */
export type Charge = LimitResult & { undo?: () => Promise<void> };
/** A budget of points per window spent by weight (docs/decisions.md §11: 20,000 cost points a minute). */
export type BudgetRule = { name: string; points: number; window: string };
export type BudgetResult = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the budget is full again. */
  resetSeconds: number;
  /** Refused: seconds until the cost fits (Retry-After); 0 when allowed. */
  retryAfter: number;
};
export interface RateLimiter {
  consume(rule: LimitRule, identity: string): Promise<Charge>;
  /** Spends `cost` points of `rule`'s budget for `identity`, all or nothing; cost 0 only reads it. */
  spend(rule: BudgetRule, identity: string, cost: number): Promise<BudgetResult>;
  close(): Promise<void>;
}
export type RateLimiterOptions = {
  /** Redis shared by every instance; without it, limits are kept in this process's memory. */
  redisUrl?: string;
  log?: Logger;
  /** Redis key namespace (default 'rl:'). */
  keyPrefix?: string;
  /** A ready-made store (tests, custom setups); takes precedence over redisUrl. */
  store?: AtomicStore;
};

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * Checks a rule and returns its window in ms. graphql-rate-limit accepts bad values silently
 * (`max: 0` becomes 5, a numeric window never limits), so a bad rule is a programming error: throw.
 */
export function parseRule(rule: LimitRule): { max: number; windowMs: number } {
  const where = `rate limit rule ${JSON.stringify(rule?.name)}`;
  if (typeof rule?.name !== 'string' || rule.name.trim() === '') throw new TypeError('rate limit rule: name is required');
  if (!Number.isSafeInteger(rule.max) || rule.max < 1) throw new TypeError(`${where}: max must be an integer >= 1`);
  const m = typeof rule.window === 'string' ? /^([1-9]\d{0,5})(s|m|h)$/.exec(rule.window) : null;
  if (!m) throw new TypeError(`${where}: window must be a string like '30s', '1m' or '1h'`);
  return { max: rule.max, windowMs: Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] };
}

/** Validates a rule where it is declared, so bad config fails at startup rather than on first use. */
export function defineLimitRule(rule: LimitRule): Readonly<LimitRule> {
  parseRule(rule);
  return Object.freeze({ ...rule });
}

export function createRateLimiter(opts: RateLimiterOptions = {}): RateLimiter {
  const log = opts.log ?? ((msg, err) => console.warn(msg, err ?? ''));
  const store: AtomicStore =
    opts.store ??
    (opts.redisUrl ? new RedisStore({ url: opts.redisUrl, log, prefix: opts.keyPrefix }) : new MemoryStore());
  // The customer's library, used through its function API only. Our "resolver" is the rule: its
  // name goes in as the field name and the identity (user id, client IP, account id) as the context
  // identity, so the bucket key is rule name + identity (see keyOf) and two same-named GraphQL
  // fields can never share a bucket as long as their rules are named apart (enforced below).
  const limit = getGraphQLRateLimiter({ store, identifyContext: (ctx: { identity: string }) => ctx.identity });
  const seen = new Map<string, string>();

  return {
    async consume(rule, identity) {
      const { max, windowMs } = parseRule(rule);
      if (typeof identity !== 'string' || identity === '') throw new TypeError(`rate limit ${rule.name}: identity is required`);
      const shape = `${max}/${rule.window}`;
      if ((seen.get(rule.name) ?? shape) !== shape) {
        throw new Error(`rate limit rule ${JSON.stringify(rule.name)} declared twice with different limits`);
      }
      seen.set(rule.name, shape);

      const call: CallState = { max, windowMs };
      const info = { fieldName: rule.name } as GraphQLResolveInfo;
      await currentCall.run(call, () =>
        limit({ parent: undefined, args: {}, context: { identity }, info }, { max, window: rule.window }),
      );
      const hit = call.result;
      if (!hit) throw new Error('rate limit store did not record the call');
      // The store's verdict is the one that counts: it is what was recorded. The library re-filters
      // the timestamps on its own clock a moment later and could, at a window edge, call "allowed" a
      // call the store refused (and did not record).
      return {
        allowed: hit.allowed,
        limit: max,
        remaining: Math.max(0, max - hit.count),
        resetSeconds: Math.max(1, Math.ceil(hit.resetMs / 1000)),
        undo: hit.undo && (async () => void (await hit.undo!())),
      };
    },
    async spend(rule, identity, cost) {
      const { max, windowMs } = parseRule({ name: rule.name, max: rule.points, window: rule.window });
      if (!Number.isSafeInteger(cost) || cost < 0) throw new TypeError(`budget ${rule.name}: cost must be an integer >= 0`);
      if (typeof identity !== 'string' || identity === '') throw new TypeError(`budget ${rule.name}: identity is required`);
      const key = `${encodeURIComponent(`budget:${rule.name}`)}:${encodeURIComponent(identity)}`;
      const taken = await store.take(key, cost, max, windowMs);
      return {
        allowed: taken.allowed,
        limit: max,
        remaining: Math.max(0, taken.remaining),
        resetSeconds: Math.ceil(taken.fullMs / 1000),
        retryAfter: taken.allowed ? 0 : Math.max(1, Math.ceil(taken.retryMs / 1000)),
      };
    },
    close: () => store.close(),
  };
}
