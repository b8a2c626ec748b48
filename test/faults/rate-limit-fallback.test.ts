/**
 * The per-IP form limit (5 a minute) never fails open (docs/faults.md "Rate limits when Redis
 * fails"): not when the server's event loop is saturated (a busy loop inside the server process and
 * 1,000 submissions at once from one address), and not when Redis is gone (each instance then limits
 * in its own memory). Redis here is a redis-server of this file's own, on a free port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { missingServices, PrivateRedis } from '../../scripts/soak/services.js';
import { skipIfMissing } from '../helpers/prerequisites.js';
import { BUSY_LOOP, startFaultService, tally, type FaultService } from './service.js';

describe.skipIf(skipIfMissing(missingServices()))('the form limit with Redis configured', () => {
  let redis: PrivateRedis;
  let service: FaultService;

  beforeAll(async () => {
    redis = await PrivateRedis.create();
    // Stalls longer than the Redis command timeout (500 ms): a reply can sit unread past its deadline.
    service = await startFaultService({ REDIS_URL: redis.url, BUSY_LOOP_MS: '700', BUSY_LOOP_EVERY_MS: '800' }, [BUSY_LOOP]);
  }, 240_000);
  afterAll(async () => {
    await service?.close();
    await redis?.stop();
  }, 120_000);

  const burst = (count: number, address: string, tag: string) =>
    Promise.all(
      Array.from({ length: count }, async (_, i) => {
        try {
          const r = await fetch(`${service.server.baseUrl}/api/v1/forms/${service.formId}/submit`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
            body: JSON.stringify({ data: { email: `${tag}-${i}@example.com` } }),
            signal: AbortSignal.timeout(300_000),
          });
          await r.arrayBuffer();
          return { status: r.status };
        } catch (error) {
          return { error: String((error as { cause?: { code?: string } }).cause?.code ?? error) };
        }
      }),
    );

  it('1,000 concurrent submissions from one address, the event loop saturated: at most 5 accepted a minute, and Redis is never blamed', async () => {
    const started = Date.now();
    const counts = tally(await burst(1_000, '203.0.113.50', 'burst'));
    // The window slides: a burst the machine stretches past a minute may get 5 more per minute it spans.
    const minutes = Math.ceil((Date.now() - started) / 60_000);
    expect(counts['200'] ?? 0, `${JSON.stringify(counts)} over ${minutes} minute(s)`).toBeLessThanOrEqual(5 * minutes);
    expect(counts['200'], JSON.stringify(counts)).toBeGreaterThan(0);
    expect(Object.keys(counts).filter((k) => !['200', '429', '503'].includes(k)), JSON.stringify(counts)).toEqual([]);
    const blamed = service.server.output().split('\n').filter((line) => line.includes('Redis unavailable'));
    expect(blamed, 'the lines that blamed Redis, with their reasons').toEqual([]);
  }, 600_000);

  it("Redis stopped: the limit still holds, in the instance's memory", async () => {
    await redis.stop();
    const counts = tally(await burst(50, '203.0.113.51', 'down'));
    expect(counts, JSON.stringify(counts)).toEqual({ 200: 5, 429: 45 });
    expect(service.server.output()).toMatch(/Redis unavailable; limiting in this instance's memory/);
  }, 120_000);
});
