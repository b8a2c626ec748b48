import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ApiKeys } from '../../src/auth/api-keys.js';
import { createEventBus } from '../../src/events/bus.js';
import { redisDocumentStore } from '../../src/graphql/persisted.js';
import { createRateLimiter } from '../../src/ratelimit/limiter.js';
import { RedisStore } from '../../src/ratelimit/redis-store.js';
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

// docs/faults.md "Rate limits when Redis fails": each instance falls back to its own memory, never fails open.
describe('Redis outage', () => {
  // No wall clock: the first connection's wait is ten minutes, so only the refusal can end it (else
  // the test times out), and "ioredis keeps retrying" is its connection attempts, counted.
  it("Redis unreachable: limits hold in this instance's memory, decided on the refusal (no wait), logged once", async () => {
    const port = await freePort();
    const connects = vi.spyOn(Socket.prototype, 'connect');
    // net.connect hands Socket#connect its arguments normalized: [options, callback].
    const portOf = (args: unknown[]) => ((Array.isArray(args[0]) ? args[0][0] : args[0]) as { port?: number } | undefined)?.port;
    const attempts = () => connects.mock.calls.filter((args) => portOf(args) === port).length;
    try {
      const log = vi.fn();
      const store = new RedisStore({ url: `redis://127.0.0.1:${port}`, log, startupWaitMs: 600_000 });
      const limiter = createRateLimiter({ store, log });
      const results = [];
      for (let i = 0; i < 10; i++) results.push((await limiter.consume(rule('down', 2), 'u')).allowed);
      expect(results).toEqual([true, true, false, false, false, false, false, false, false, false]);
      const before = attempts();
      while (attempts() < before + 2) await sleep(20); // ioredis reconnects meanwhile: still one log line
      expect((await limiter.consume(rule('down', 2), 'u')).allowed).toBe(false);
      expect(log).toHaveBeenCalledTimes(1);
      expect(log.mock.calls[0]![0]).toMatch(/unavailable; limiting in this instance's memory/);
      await limiter.close();
    } finally {
      connects.mockRestore();
    }
  });

  withRedisServer('Redis goes down then comes back: limits hold in memory meanwhile (logged once), then Redis limits again', async () => {
    const port = await freePort();
    await startRedis(port);
    const log = vi.fn();
    const limiter = createRateLimiter({ redisUrl: `redis://127.0.0.1:${port}`, log });
    const r = rule('outage', 2);
    expect((await limiter.consume(r, 'u')).allowed).toBe(true);
    expect((await limiter.consume(r, 'u')).allowed).toBe(true);
    expect((await limiter.consume(r, 'u')).allowed).toBe(false);

    await stopRedis();
    const during = [];
    for (let i = 0; i < 5; i++) {
      during.push((await limiter.consume(rule('during', 2), 'u')).allowed);
      await sleep(100);
    }
    expect(during).toEqual([true, true, false, false, false]);
    expect(log).toHaveBeenCalledTimes(1);
    expect(log.mock.calls[0]![0]).toMatch(/unavailable/);

    await startRedis(port); // empty again: nothing persisted
    // Redis is probed while down; wait until a max-1 rule decided in Redis refuses the second call of
    // a fresh identity while the memory fallback, which saw none of these, would allow it.
    const t0 = Date.now();
    while (log.mock.calls.length < 2) {
      expect(Date.now() - t0).toBeLessThan(10_000);
      await sleep(50);
    }
    expect(log.mock.calls[1]![0]).toMatch(/answers again/);
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await limiter.consume(rule('after', 2), 'u')).allowed);
    expect(results).toEqual([true, true, false]);
    const other = createRateLimiter({ redisUrl: `redis://127.0.0.1:${port}`, log: () => {} });
    expect((await other.consume(rule('after', 2), 'u')).allowed, 'counted in Redis, shared').toBe(false);
    await other.close();
    await limiter.close();
    await stopRedis();
  });

  // Decided while the process is still stopped (it resumes only in `finally`): a call that waited for
  // Redis would never return. No wall-clock bound: the deadline stretches with a stalled event loop.
  // Every Redis client the service holds: a shutdown during a Redis hang still ends (src/redis.ts).
  withRedisServer('Redis hangs (process stopped): the rate limiter, the live-event bus, the API-key cache and the persisted queries close while it hangs', async () => {
    const port = await freePort();
    await startRedis(port);
    const url = `redis://127.0.0.1:${port}`;
    const limiter = createRateLimiter({ redisUrl: url, log: () => {} });
    expect((await limiter.consume(rule('close', 5), 'u')).allowed).toBe(true); // connected
    const bus = createEventBus(url);
    const keys = await new ApiKeys(null as never, { warn: () => {} }).start({ redisUrl: url });
    const documents = redisDocumentStore(url);
    await documents.set('h', '{ __typename }');
    expect(await documents.get('h')).toBe('{ __typename }'); // connected
    server!.kill('SIGSTOP');
    try {
      await Promise.all([limiter.close(), bus.close(), keys.close(), documents.close()]);
      expect(exited(server!), 'still stopped, not gone').toBe(false);
    } finally {
      server!.kill('SIGCONT');
    }
    await stopRedis();
  });

  withRedisServer('Redis hangs (process stopped): calls are decided in memory while it hangs, not when it comes back', async () => {
    const port = await freePort();
    await startRedis(port);
    const log = vi.fn();
    const limiter = createRateLimiter({ redisUrl: `redis://127.0.0.1:${port}`, log });
    expect((await limiter.consume(rule('hang', 1), 'u')).allowed).toBe(true);
    server!.kill('SIGSTOP');
    try {
      expect((await limiter.consume(rule('hang-2', 1), 'u')).allowed).toBe(true);
      expect((await limiter.consume(rule('hang-2', 1), 'u')).allowed, 'still limited, in memory').toBe(false);
      expect(log).toHaveBeenCalledTimes(1);
      expect(log.mock.calls[0]![0]).toMatch(/unavailable/);
    } finally {
      server!.kill('SIGCONT');
    }
    const t0 = Date.now();
    while (log.mock.calls.length < 2) {
      expect(Date.now() - t0).toBeLessThan(10_000);
      await sleep(50);
    }
    expect((await limiter.consume(rule('hang', 1), 'u')).allowed, 'the call made before the hang still counts in Redis').toBe(false);
    expect(log.mock.calls[1]![0]).toMatch(/answers again/);
    await limiter.close();
    await stopRedis();
  });

  it("a command that runs out of time while this process's event loop is stalled is not Redis' fault", async () => {
    const port = await freePort();
    await startRedis(port);
    const log = vi.fn();
    const limiter = createRateLimiter({ redisUrl: `redis://127.0.0.1:${port}`, log });
    await limiter.consume(rule('warm', 5), 'u'); // connected
    // The command goes out, then the loop is blocked for twice the command timeout before its reply is read.
    const pending = limiter.consume(rule('stall', 1), 'u');
    for (const end = Date.now() + 1_000; Date.now() < end; ) {
      // spin
    }
    expect((await pending).allowed).toBe(true);
    expect(log).not.toHaveBeenCalled();
    // Decided in Redis (not in memory): another instance sharing Redis sees the call.
    const other = createRateLimiter({ redisUrl: `redis://127.0.0.1:${port}`, log: () => {} });
    expect((await other.consume(rule('stall', 1), 'u')).allowed).toBe(false);
    await other.close();
    await limiter.close();
    await stopRedis();
  });
});
