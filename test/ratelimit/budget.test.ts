/**
 * The weighted budget behind docs/decisions.md §11's cost limit (20,000 points a minute per user):
 * a leaky bucket, taken all or nothing, atomic, and on Redis shared by every instance.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { AtomicStore } from '../../src/ratelimit/atomic-store.js';
import { leak } from '../../src/ratelimit/budget.js';
import { createRateLimiter } from '../../src/ratelimit/limiter.js';
import { MemoryStore } from '../../src/ratelimit/memory-store.js';
import { RedisStore } from '../../src/ratelimit/redis-store.js';
import { requireRedis, skipIfMissing, TEST_REDIS_URL, unsetVariables } from '../helpers/prerequisites.js';

const MINUTE = 60_000;
/** The Redis cases run when REDIS_URL is set (docs/testing-prerequisites.md). */
const SKIP_REDIS = skipIfMissing(unsetVariables('REDIS_URL'));
const log = (msg: string, err?: unknown) => console.error(`unexpected rate-limit log: ${msg}`, err ?? '');

describe('leak: the arithmetic both stores share', () => {
  it('an untouched budget is full; a take that fits spends its cost', () => {
    expect(leak(null, 0, 300, 1200, MINUTE)).toEqual({ points: 300, result: { allowed: true, remaining: 900, fullMs: 15_000, retryMs: 0 } });
  });

  it('spent points leak back at capacity per window', () => {
    expect(leak({ points: 1200, at: 0 }, 30_000, 0, 1200, MINUTE).result).toMatchObject({ remaining: 600, fullMs: 30_000 });
    expect(leak({ points: 1200, at: 0 }, 90_000, 0, 1200, MINUTE).result).toMatchObject({ remaining: 1200, fullMs: 0 });
  });

  it('a take that does not fit takes nothing and says when it will fit', () => {
    expect(leak({ points: 1000, at: 0 }, 0, 300, 1200, MINUTE)).toEqual({ points: 1000, result: { allowed: false, remaining: 200, fullMs: 50_000, retryMs: 5_000 } });
  });
});

const stores: [string, (now: () => number, prefix?: string) => Promise<AtomicStore>][] = [
  ['memory', async (now) => new MemoryStore({ now })],
  [
    'Redis',
    async (now, prefix = `rl-budget-${randomUUID()}:`) => {
      await requireRedis(TEST_REDIS_URL);
      return new RedisStore({ url: TEST_REDIS_URL, log, prefix, now });
    },
  ],
];

for (const [name, make] of stores) describe.skipIf(name === 'Redis' && SKIP_REDIS)(`take on the ${name} store`, () => {
  const opened: AtomicStore[] = [];
  const open = async (now: () => number, prefix?: string) => {
    const store = await make(now, prefix);
    opened.push(store);
    return store;
  };
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()));
  });

  it('spends by weight, refuses what does not fit without spending it, and refills with time', async () => {
    let clock = 1_000_000;
    const store = await open(() => clock);
    expect(await store.take('k', 700, 1000, MINUTE)).toEqual({ allowed: true, remaining: 300, fullMs: 42_000, retryMs: 0 });
    expect(await store.take('k', 400, 1000, MINUTE)).toEqual({ allowed: false, remaining: 300, fullMs: 42_000, retryMs: 6_000 });
    expect(await store.take('k', 0, 1000, MINUTE)).toMatchObject({ allowed: true, remaining: 300 });
    clock += 6_000;
    expect(await store.take('k', 400, 1000, MINUTE)).toEqual({ allowed: true, remaining: 0, fullMs: 60_000, retryMs: 0 });
    expect(await store.take('other', 1, 1000, MINUTE)).toMatchObject({ allowed: true, remaining: 999 });
  });

  it('concurrent takes never spend more than the budget', async () => {
    const clock = 5_000_000;
    const store = await open(() => clock);
    const results = await Promise.all(Array.from({ length: 50 }, () => store.take('burst', 30, 1000, MINUTE)));
    expect(results.filter((r) => r.allowed)).toHaveLength(33);
    expect(Math.min(...results.map((r) => r.remaining))).toBe(10);
  });
});

describe.skipIf(SKIP_REDIS)('one budget, whichever instance', () => {
  it('two Redis stores with one key space (two instances of the service) spend one budget', async () => {
    await requireRedis(TEST_REDIS_URL);
    const prefix = `rl-shared-${randomUUID()}:`;
    const [a, b] = [new RedisStore({ url: TEST_REDIS_URL, log, prefix }), new RedisStore({ url: TEST_REDIS_URL, log, prefix })];
    try {
      const rule = { name: 'graphql-cost', points: 20_000, window: '1m' };
      const [first, second] = [createRateLimiter({ store: a }), createRateLimiter({ store: b })];
      expect((await first.spend(rule, 'user:1', 15_000)).allowed).toBe(true);
      const refused = await second.spend(rule, 'user:1', 15_000);
      expect(refused).toMatchObject({ allowed: false, limit: 20_000 });
      expect(refused.retryAfter).toBeGreaterThanOrEqual(29);
      expect((await second.spend(rule, 'user:2', 15_000)).allowed).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a cost must be a whole number of points, 0 or more', async () => {
    const limiter = createRateLimiter({ store: new MemoryStore() });
    const rule = { name: 'graphql-cost', points: 20_000, window: '1m' };
    await expect(limiter.spend(rule, 'user:1', -1)).rejects.toThrow(/cost/);
    await expect(limiter.spend(rule, 'user:1', 1.5)).rejects.toThrow(/cost/);
    await limiter.close();
  });
});
