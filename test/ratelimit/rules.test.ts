import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/ratelimit/memory-store.js';
import { createRateLimiter, defineLimitRule, parseRule, type LimitRule } from '../../src/ratelimit/limiter.js';

describe('rate limit rules are validated', () => {
  const bad: unknown[] = [
    { name: 'a', max: 0, window: '1m' }, // graphql-rate-limit would silently use 5
    { name: 'a', max: -1, window: '1m' },
    { name: 'a', max: 1.5, window: '1m' },
    { name: 'a', max: Number.NaN, window: '1m' },
    { name: 'a', max: '5', window: '1m' },
    { name: 'a', max: 5, window: 60_000 }, // graphql-rate-limit would never limit
    { name: 'a', max: 5, window: '1d' },
    { name: 'a', max: 5, window: '0s' },
    { name: 'a', max: 5, window: '1 m' },
    { name: 'a', max: 5, window: '' },
    { name: 'a', max: 5 },
    { name: '', max: 5, window: '1m' },
    { max: 5, window: '1m' },
    null,
  ];

  it.each(bad.map((r) => [JSON.stringify(r), r]))('throws on %s', async (_, r) => {
    expect(() => parseRule(r as LimitRule)).toThrow(TypeError);
    expect(() => defineLimitRule(r as LimitRule)).toThrow(TypeError);
    const limiter = createRateLimiter({ store: new MemoryStore() });
    await expect(limiter.consume(r as LimitRule, 'someone')).rejects.toThrow(TypeError);
    await limiter.close();
  });

  it('accepts s, m and h windows', () => {
    expect(parseRule({ name: 'a', max: 1, window: '30s' })).toEqual({ max: 1, windowMs: 30_000 });
    expect(parseRule({ name: 'a', max: 60, window: '1m' })).toEqual({ max: 60, windowMs: 60_000 });
    expect(parseRule({ name: 'a', max: 1, window: '1h' })).toEqual({ max: 1, windowMs: 3_600_000 });
  });

  it('refuses one rule name used with two different limits, and an empty identity', async () => {
    const limiter = createRateLimiter({ store: new MemoryStore() });
    await limiter.consume({ name: 'contacts.list', max: 60, window: '1m' }, 'u1');
    await expect(limiter.consume({ name: 'contacts.list', max: 30, window: '1m' }, 'u1')).rejects.toThrow(/twice/);
    await expect(limiter.consume({ name: 'contacts.list', max: 60, window: '1m' }, '')).rejects.toThrow(TypeError);
    await limiter.close();
  });

  it('a store is only usable through the limiter (it needs the rule and reports its verdict)', async () => {
    const store = new MemoryStore();
    await expect(store.getForIdentity({ contextIdentity: 'u', fieldIdentity: 'f' })).rejects.toThrow(/createRateLimiter/);
    await store.close();
  });
});
