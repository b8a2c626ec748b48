import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createRateLimiter } from '../../src/ratelimit/limiter.js';
import { missingProgram, skipIfMissing } from '../helpers/prerequisites.js';

// Outages are simulated on a private redis-server we start and stop: never on the machine's 6379.
// Without redis-server those tests skip locally and fail in CI (test/helpers/prerequisites.ts).
const withRedisServer = it.skipIf(skipIfMissing(missingProgram('redis-server')));
async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as { port: number };
  srv.close();
  await once(srv, 'close');
  return port;
}

let server: ChildProcess | undefined;
const exited = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;
const started = new Set<ChildProcess>();
async function startRedis(port: number): Promise<void> {
  await stopRedis();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  server = child;
  started.add(child);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  for (const t0 = Date.now(); !out.includes('Ready to accept connections'); await sleep(20)) {
    if (exited(child) || Date.now() - t0 > 5_000) throw new Error(`redis-server did not start: ${out}`);
  }
}
async function stopRedis(): Promise<void> {
  if (!server || exited(server)) return;
  const exit = once(server, 'exit');
  server.kill('SIGKILL'); // an abrupt outage, not a polite shutdown
  await exit;
}
// Whatever a failing test left running: kill every server we started (ours only, by handle).
afterAll(() => {
  for (const child of started) if (!exited(child)) child.kill('SIGKILL');
});

const rule = (name: string, max: number) => ({ name, max, window: '1m' });

describe('Redis outage', () => {
  it('Redis unreachable: consume fails open, fast, and logs once', async () => {
    const log = vi.fn();
    const limiter = createRateLimiter({ redisUrl: `redis://127.0.0.1:${await freePort()}`, log });
    const t0 = Date.now();
    for (let i = 0; i < 10; i++) expect((await limiter.consume(rule('down', 2), 'u')).allowed).toBe(true);
    await sleep(300); // ioredis keeps retrying meanwhile: still one log line
    expect((await limiter.consume(rule('down', 2), 'u')).allowed).toBe(true);
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0]![0]).toMatch(/unavailable/);
    await limiter.close();
  });

  withRedisServer('Redis goes down then comes back: fails open and logs once, then limits again', async () => {
    const port = await freePort();
    await startRedis(port);
    const log = vi.fn();
    const limiter = createRateLimiter({ redisUrl: `redis://127.0.0.1:${port}`, log });
    const r = rule('outage', 2);
    expect((await limiter.consume(r, 'u')).allowed).toBe(true);
    expect((await limiter.consume(r, 'u')).allowed).toBe(true);
    expect((await limiter.consume(r, 'u')).allowed).toBe(false);

    await stopRedis();
    for (let i = 0; i < 5; i++) {
      expect((await limiter.consume(r, 'u')).allowed).toBe(true);
      await sleep(100);
    }
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0]![0]).toMatch(/unavailable/);

    await startRedis(port); // empty again: nothing persisted
    // ioredis reconnects by itself; wait until a max-1 rule refuses its second call again.
    const t0 = Date.now();
    for (let i = 0; ; i++) {
      const probe = rule('probe', 1);
      await limiter.consume(probe, `p${i}`);
      if (!(await limiter.consume(probe, `p${i}`)).allowed) break;
      expect(Date.now() - t0).toBeLessThan(10_000);
      await sleep(50);
    }
    expect(log).toHaveBeenCalledTimes(2);
    expect(log.mock.calls[1]![0]).toMatch(/back/);
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await limiter.consume(rule('after', 2), 'u')).allowed);
    expect(results).toEqual([true, true, false]);
    await limiter.close();
    await stopRedis();
  });

  withRedisServer('Redis hangs (process stopped): calls time out and fail open instead of hanging', async () => {
    const port = await freePort();
    await startRedis(port);
    const log = vi.fn();
    const limiter = createRateLimiter({ redisUrl: `redis://127.0.0.1:${port}`, log });
    expect((await limiter.consume(rule('hang', 1), 'u')).allowed).toBe(true);
    server!.kill('SIGSTOP');
    try {
      const t0 = Date.now();
      expect((await limiter.consume(rule('hang', 1), 'u')).allowed).toBe(true);
      expect(Date.now() - t0).toBeLessThan(1_500);
      expect(log).toHaveBeenCalledTimes(1);
    } finally {
      server!.kill('SIGCONT');
    }
    await sleep(100);
    expect((await limiter.consume(rule('hang', 1), 'u')).allowed).toBe(false);
    expect(log.mock.calls[1]![0]).toMatch(/back/);
    await limiter.close();
    await stopRedis();
  });
});
