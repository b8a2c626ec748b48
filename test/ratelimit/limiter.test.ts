import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createRateLimiter, type LimitRule, type RateLimiter } from '../../src/ratelimit/limiter.js';
import { MemoryStore } from '../../src/ratelimit/memory-store.js';
import { RedisStore } from '../../src/ratelimit/redis-store.js';
import { requireRedis, skipIfMissing, TEST_REDIS_URL, unsetVariables } from '../helpers/prerequisites.js';

const REDIS_URL = TEST_REDIS_URL;
const SKIP_REDIS = skipIfMissing(unsetVariables('REDIS_URL')); // the Redis store runs when REDIS_URL is set

const stores = {
  memory: async () => createRateLimiter({ log: failOnLog }),
  // A fresh key prefix per limiter: tests never see each other's buckets.
  redis: async () => {
    await requireRedis(REDIS_URL); // fails when unreachable: fail-open would hide it
    return createRateLimiter({ redisUrl: REDIS_URL, keyPrefix: `rl:test:${randomUUID()}:`, log: failOnLog });
  },
};
/** The same stores on a clock the test moves (no wall time, so a busy machine cannot move it). */
const onClock: Record<keyof typeof stores, (now: () => number) => Promise<RateLimiter>> = {
  memory: async (now) => createRateLimiter({ store: new MemoryStore({ now }), log: failOnLog }),
  redis: async (now) => {
    await requireRedis(REDIS_URL);
    return createRateLimiter({ store: new RedisStore({ url: REDIS_URL, prefix: `rl:test:${randomUUID()}:`, log: failOnLog, now }), log: failOnLog });
  },
};
function failOnLog(msg: string, err?: unknown): void {
  throw new Error(`unexpected rate-limit log: ${msg} ${String(err)}`);
}

for (const [name, make] of Object.entries(stores) as [keyof typeof stores, () => Promise<RateLimiter>][]) describe.skipIf(name === 'redis' && SKIP_REDIS)(`rate limiter over the ${name} store`, () => {
  let limiter: RateLimiter;
  afterEach(() => limiter?.close());
  const rule = (max: number, window: string): LimitRule => ({ name: `r${randomUUID()}`, max, window });
  const consumeN = (r: LimitRule, id: string, n: number) =>
    Promise.all(Array.from({ length: n }, () => limiter.consume(r, id)));

  it('the limit+1-th call in the window is refused, with header numbers', async () => {
    limiter = await make();
    const r = rule(3, '1m');
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await limiter.consume(r, 'user-1'));
    expect(results.map((x) => x.allowed)).toEqual([true, true, true, false]);
    expect(results.map((x) => x.remaining)).toEqual([2, 1, 0, 0]);
    expect(results.every((x) => x.limit === 3)).toBe(true);
    expect(results[0]!.resetSeconds).toBe(60);
    expect(results[3]!.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(results[3]!.resetSeconds).toBeLessThanOrEqual(60);
  });

  it('a call taken back (an idempotent replay) no longer counts: the full window lets one more through', async () => {
    limiter = await make();
    const r = rule(2, '1m');
    await limiter.consume(r, 'u');
    const second = await limiter.consume(r, 'u');
    expect(second.remaining).toBe(0);
    await second.undo!();
    const third = await limiter.consume(r, 'u');
    expect([third.allowed, third.remaining]).toEqual([true, 0]);
    expect((await limiter.consume(r, 'u')).allowed).toBe(false);
  });

  it('a different identity, or a different rule, is not affected', async () => {
    limiter = await make();
    const r = rule(1, '1m');
    expect((await limiter.consume(r, 'a')).allowed).toBe(true);
    expect((await limiter.consume(r, 'a')).allowed).toBe(false);
    expect((await limiter.consume(r, 'b')).allowed).toBe(true);
    expect((await limiter.consume({ ...r, name: `${r.name}-other` }, 'a')).allowed).toBe(true);
    // ':' in names or identities (IPv6) cannot make two buckets collide.
    const x = { name: `${r.name}:x`, max: 1, window: '1m' };
    expect((await limiter.consume(x, 'y')).allowed).toBe(true);
    expect((await limiter.consume(r, 'x:y')).allowed).toBe(true);
  });

  it('the window slides: a call is allowed again once the oldest leaves the window', async () => {
    let clock = 5_000_000;
    limiter = await onClock[name](() => clock);
    const r = rule(2, '2s');
    expect((await limiter.consume(r, 'u')).allowed).toBe(true);
    clock += 1_000;
    expect((await limiter.consume(r, 'u')).allowed).toBe(true);
    expect((await limiter.consume(r, 'u')).allowed).toBe(false);
    clock += 1_150;
    // The first call left the window; the second (made at 1 s) still counts: no fixed-window reset.
    expect((await limiter.consume(r, 'u')).allowed).toBe(true);
    const refused = await limiter.consume(r, 'u');
    expect(refused.allowed).toBe(false);
    expect(refused.resetSeconds).toBe(1);
  });

  it('100 concurrent calls against max 30 let exactly 30 through', async () => {
    limiter = await make();
    const results = await consumeN(rule(30, '1m'), 'burst', 100);
    const allowed = results.filter((x) => x.allowed);
    expect(allowed).toHaveLength(30);
    expect(allowed.map((x) => x.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  it('refused calls are not recorded: a client that keeps retrying is let in once the window slides', async () => {
    // A controlled clock (no wall time): 2 calls at 0, a refused retry every 100 ms until the window
    // ends, then one at 1,001 ms. Were refusals recorded, the retries would keep the window full.
    let clock = 5_000_000;
    limiter = await onClock[name](() => clock);
    const r = rule(2, '1s');
    expect((await consumeN(r, 'retrier', 2)).map((x) => x.allowed)).toEqual([true, true]);
    const retries = [];
    for (let i = 0; i < 9; i++) {
      clock += 100;
      retries.push((await limiter.consume(r, 'retrier')).allowed);
    }
    expect(retries, 'refused while the two calls are in the window').toEqual(Array(9).fill(false));
    clock += 101;
    expect((await limiter.consume(r, 'retrier')).allowed, 'let in once they leave it').toBe(true);
  });
});
