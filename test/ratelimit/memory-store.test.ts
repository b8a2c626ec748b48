import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { createRateLimiter } from '../../src/ratelimit/limiter.js';
import { MemoryStore } from '../../src/ratelimit/memory-store.js';

describe('memory store stays bounded', () => {
  it('evicts idle identities once their window has passed', async () => {
    let now = 1_000_000;
    const store = new MemoryStore({ now: () => now, sweepEveryMs: 10 });
    const limiter = createRateLimiter({ store });
    const rule = { name: 'idle', max: 5, window: '1s' };
    for (let i = 0; i < 50; i++) await limiter.consume(rule, `ip-${i}`);
    expect(store.size).toBe(50);
    now += 999;
    await sleep(40); // a few sweeps: nothing has left its window yet
    expect(store.size).toBe(50);
    now += 1;
    await vi.waitFor(() => expect(store.size).toBe(0), { timeout: 10_000, interval: 10 }); // the timer's sweep
    await limiter.close();
  });

  it('caps the number of identities, evicting the least recently used', async () => {
    const store = new MemoryStore({ maxKeys: 100 });
    const limiter = createRateLimiter({ store });
    const rule = { name: 'flood', max: 1, window: '1h' };
    expect((await limiter.consume(rule, 'hot')).allowed).toBe(true);
    for (let i = 0; i < 1_000; i++) {
      await limiter.consume(rule, `cold-${i}`);
      if (i % 50 === 0) expect((await limiter.consume(rule, 'hot')).allowed).toBe(false); // touched: kept
    }
    expect(store.size).toBe(100);
    expect((await limiter.consume(rule, 'hot')).allowed).toBe(false);
    // The price of the cap: an evicted identity's calls are forgotten.
    expect((await limiter.consume(rule, 'cold-0')).allowed).toBe(true);
    await limiter.close();
  });

  it('keeps at most max timestamps per identity, however often it is refused', async () => {
    const store = new MemoryStore();
    const limiter = createRateLimiter({ store });
    const rule = { name: 'retry', max: 3, window: '1h' };
    for (let i = 0; i < 500; i++) await limiter.consume(rule, 'retrier');
    const hit = store.hit('retry:retrier', 3, 3_600_000);
    expect(hit).toMatchObject({ allowed: false, count: 3 });
    expect(hit.before).toHaveLength(3);
    await limiter.close();
  });
});
