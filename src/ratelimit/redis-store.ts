import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { closeRedis } from '../redis.js';
import { AtomicStore, type HitResult, type TakeResult } from './atomic-store.js';
import { EventLoopWatch, loopAwareDeadline, PeerTimeout } from './event-loop.js';
import { MemoryStore } from './memory-store.js';

export type Logger = (msg: string, err?: unknown) => void;
export type RedisStoreOptions = {
  url: string;
  log: Logger;
  /** Key namespace; every key starts with it. */
  prefix?: string;
  /**
   * A command unanswered this long, with the event loop running, means Redis is down: the call is
   * decided by the fallback instead (a hung Redis must not hang requests, nor lift the limits).
   */
  commandTimeoutMs?: number;
  /** Where calls are decided while Redis is down: this instance's own memory (default: a MemoryStore). */
  fallback?: AtomicStore;
  /** How often, while down, Redis is asked whether it answers again. */
  probeEveryMs?: number;
  /** At startup, how long calls wait for the first connection before failing open. */
  startupWaitMs?: number;
  /**
   * Tests only: a clock the test moves, passed to the script as the call's time. Without it the
   * script reads Redis TIME, so every instance shares one clock however far their own clocks drift.
   */
  now?: () => number;
};

/**
 * One atomic step per call, in Redis time (TIME) so every instance shares one clock (ARGV[4], when
 * given, replaces it: a test's controlled clock, see RedisStoreOptions.now). A sorted set per
 * bucket, score = timestamp, member unique (instance id + counter) so two calls in the same ms both
 * count: drop entries out of the window, read the rest, add this call only if under the limit, trim
 * to the newest `max`, PEXPIRE until the newest leaves the window. Returns
 * {allowed, count, ms until the oldest leaves, timestamps before this call}.
 */
const HIT_SCRIPT = `
local key, window, max, member = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local raw = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
local before = {}
for i = 2, #raw, 2 do before[#before + 1] = tonumber(raw[i]) end
local allowed = 0
if #before < max then
  redis.call('ZADD', key, now, member)
  allowed = 1
end
redis.call('ZREMRANGEBYRANK', key, 0, -(max + 1))
local oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
local newest = tonumber(redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')[2])
redis.call('PEXPIRE', key, newest + window - now)
return {allowed, redis.call('ZCARD', key), oldest + window - now, before}
`;

/**
 * One weighted take from a leaky bucket (src/ratelimit/budget.ts `leak`, the same arithmetic), in
 * Redis time like HIT_SCRIPT. The hash holds the points spent (p) and when (t); it expires once they
 * have all leaked away. Returns {allowed, remaining, ms until full, ms until `cost` fits}.
 */
const TAKE_SCRIPT = `
local key, cost, capacity, window = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local rate = capacity / window
local held = redis.call('HMGET', key, 'p', 't')
local spent = 0
if held[1] then spent = math.max(0, tonumber(held[1]) - (now - tonumber(held[2])) * rate) end
local allowed, points, retry = 0, spent, math.ceil((spent + cost - capacity) / rate)
if spent + cost <= capacity then allowed, points, retry = 1, spent + cost, 0 end
local full = math.ceil(points / rate)
if points > 0 then
  redis.call('HSET', key, 'p', tostring(points), 't', now)
  redis.call('PEXPIRE', key, math.max(full, 1))
else
  redis.call('DEL', key)
end
return {allowed, math.floor(capacity - points), full, retry}
`;

type HitReply = [number, number, number, number[]];
type TakeReply = [number, number, number, number];
type ScriptClient = Redis & {
  rlHit(key: string, windowMs: number, max: number, member: string, ...now: [number] | []): Promise<HitReply>;
  rlTake(key: string, cost: number, capacity: number, windowMs: number, ...now: [number] | []): Promise<TakeReply>;
};

/**
 * Shared store for every instance. When Redis fails or does not answer in time, calls are decided by
 * this instance's in-memory store (limits never lift; each instance then limits on its own), the
 * switch is logged once, and Redis takes over again as soon as it answers a probe (docs/faults.md).
 * A command that ran out of time while this process's event loop was stalled is not Redis' fault
 * (EventLoopWatch): its wait starts again. With the offline queue off, commands during a
 * disconnection fail at once instead of queueing.
 */
export class RedisStore extends AtomicStore {
  private readonly client: ScriptClient;
  private readonly prefix: string;
  private readonly log: Logger;
  private readonly now: (() => number) | undefined;
  private readonly instance = randomUUID();
  private seq = 0;
  private down = false;
  private started: Promise<void> | undefined;
  private readonly fallback: AtomicStore;
  private readonly watch = new EventLoopWatch();
  private readonly timeoutMs: number;
  private readonly probeEveryMs: number;
  private probe: NodeJS.Timeout | undefined;

  constructor(opts: RedisStoreOptions) {
    super();
    this.prefix = opts.prefix ?? 'rl:';
    this.log = opts.log;
    this.now = opts.now;
    this.fallback = opts.fallback ?? new MemoryStore({ now: opts.now });
    this.timeoutMs = opts.commandTimeoutMs ?? 500;
    this.probeEveryMs = opts.probeEveryMs ?? 1_000;
    this.client = new Redis(opts.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      // No commandTimeout: ioredis would time a command out while the event loop is stalled (see loopAwareDeadline).
      connectTimeout: 2_000,
      retryStrategy: (times) => Math.min(times * 100, 1_000), // keep retrying, forever
    }) as ScriptClient;
    this.client.defineCommand('rlHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.client.defineCommand('rlTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    this.client.on('error', (err) => this.markDown(err));
    this.client.on('ready', () => void (this.down && this.checkBack())); // reconnected: try it at once
    // Calls made before the first connection wait for it (briefly), else the first calls after a
    // deploy would all go through unlimited; a refused connection or the deadline ends the wait.
    this.started = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, opts.startupWaitMs ?? 2_000);
      timer.unref();
      const done = () => (clearTimeout(timer), resolve());
      this.client.once('ready', done);
      this.client.once('error', done);
    }).then(() => void (this.started = undefined));
  }

  async hit(key: string, max: number, windowMs: number): Promise<HitResult> {
    if (this.started) await this.started;
    if (this.down) return this.fallback.hit(key, max, windowMs);
    try {
      const member = `${this.instance}:${(this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER)}`;
      const clock: [number] | [] = this.now ? [this.now()] : [];
      const reply = this.client.rlHit(this.prefix + key, windowMs, max, member, ...clock);
      const [allowed, count, resetMs, before] = await loopAwareDeadline(reply, this.timeoutMs, this.watch);
      if (allowed !== 1) return { allowed: false, count, resetMs, before };
      // The fallback counts this instance's calls all along, so an outage (or a Redis that came back
      // empty) never hands it a fresh budget: a call must pass both.
      const local = await this.fallback.hit(key, max, windowMs);
      if (!local.allowed) return { allowed: false, count: max, resetMs, before };
      return { allowed: true, count, resetMs, before, undo: () => this.undo(key, member, local) };
    } catch (err) {
      // A loop stalled for long says nothing about Redis: this one call is decided here, Redis stays in use.
      if (!(err instanceof PeerTimeout && err.stalled)) this.markDown(err);
      return this.fallback.hit(key, max, windowMs);
    }
  }

  async take(key: string, cost: number, capacity: number, windowMs: number): Promise<TakeResult> {
    if (this.started) await this.started;
    if (this.down) return this.fallback.take(key, cost, capacity, windowMs);
    try {
      const clock: [number] | [] = this.now ? [this.now()] : [];
      const reply = this.client.rlTake(this.prefix + key, cost, capacity, windowMs, ...clock);
      const [allowed, remaining, fullMs, retryMs] = await loopAwareDeadline(reply, this.timeoutMs, this.watch);
      return { allowed: allowed === 1, remaining, fullMs, retryMs };
    } catch (err) {
      // As hit: never fail open; a stalled loop is not Redis' fault.
      if (!(err instanceof PeerTimeout && err.stalled)) this.markDown(err);
      return this.fallback.take(key, cost, capacity, windowMs);
    }
  }

  /** Takes a call back out of both windows; one Redis could not take back stays counted (never lifts a limit). */
  private async undo(key: string, member: string, local: HitResult): Promise<void> {
    await local.undo?.();
    if (this.down) return;
    await loopAwareDeadline(this.client.zrem(this.prefix + key, member), this.timeoutMs, this.watch).catch(() => undefined);
  }

  private markDown(err: unknown): void {
    if (this.down) return;
    this.down = true;
    this.log("rate limit: Redis unavailable; limiting in this instance's memory until it answers again", err);
    this.probe = setInterval(() => void this.checkBack(), this.probeEveryMs);
    this.probe.unref();
  }

  /** While down: one PING; an answer in time (event loop running) brings Redis back. */
  private async checkBack(): Promise<void> {
    try {
      await loopAwareDeadline(this.client.ping(), this.timeoutMs, this.watch);
    } catch {
      return;
    }
    if (!this.down) return;
    this.down = false;
    clearInterval(this.probe);
    this.log('rate limit: Redis answers again; limiting in Redis');
  }

  async close(): Promise<void> {
    clearInterval(this.probe);
    this.watch.close();
    await this.fallback.close();
    await closeRedis(this.client);
  }
}
