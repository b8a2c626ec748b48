// Uploads under way, counted per caller and per account (docs/imports.md#bounds, docs/decisions.md
// §24): at most UPLOADS_PER_CALLER for one user or API key and UPLOADS_PER_ACCOUNT for one account.
// In Redis when REDIS_URL is set, so every instance counts the same uploads; else in this process.
// A place is a lease renewed while its upload runs, so an instance that dies frees its places within
// LEASE_MS, and is given back when the upload ends in any way.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { closeRedis } from '../redis.js';

export const UPLOADS_PER_CALLER = 2;
export const UPLOADS_PER_ACCOUNT = 3;
const LEASE_MS = 60_000;
const RENEW_MS = LEASE_MS / 3;

type Counter = { key: string; max: number };

/** The places an upload holds; `release` is idempotent. */
export type UploadPlaces = { release(): Promise<void> };

export interface UploadSlots {
  /** Takes one place in each counter, all or none: null when any is full. */
  take(counters: Counter[]): Promise<UploadPlaces | null>;
  close(): Promise<void>;
}

/** The counters of an upload by `caller` (a user's or a key's id) into `accountId`. */
export const uploadCounters = (caller: string, accountId: string): Counter[] => [
  { key: `caller:${caller}`, max: UPLOADS_PER_CALLER },
  { key: `account:${accountId}`, max: UPLOADS_PER_ACCOUNT },
];

/** Renews the places every RENEW_MS until released. */
function held(renew: () => Promise<unknown>, drop: () => Promise<unknown>): UploadPlaces {
  const timer = setInterval(() => void renew().catch(() => undefined), RENEW_MS);
  timer.unref();
  let released: Promise<void> | null = null;
  return {
    release: () =>
      (released ??= (async () => {
        clearInterval(timer);
        await drop().catch(() => undefined);
      })()),
  };
}

export function memoryUploadSlots(): UploadSlots {
  const holders = new Map<string, Map<string, number>>(); // counter -> holder -> lease end
  const live = (key: string, now: number) => {
    const found = holders.get(key) ?? new Map<string, number>();
    for (const [holder, until] of found) if (until <= now) found.delete(holder);
    holders.set(key, found);
    return found;
  };
  const stamp = (counters: Counter[], holder: string) => {
    for (const { key } of counters) live(key, Date.now()).set(holder, Date.now() + LEASE_MS);
  };
  return {
    async take(counters) {
      const now = Date.now();
      if (counters.some(({ key, max }) => live(key, now).size >= max)) return null;
      const holder = randomUUID();
      stamp(counters, holder);
      return held(
        async () => stamp(counters, holder),
        async () => counters.forEach(({ key }) => holders.get(key)?.delete(holder)),
      );
    },
    close: async () => holders.clear(),
  };
}

/**
 * One atomic step: drop lapsed leases from every counter (a sorted set, score = lease end), refuse
 * if any is full, else add the holder to each. Redis time, so instances share one clock.
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease, holder = tonumber(ARGV[1]), ARGV[2]
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= tonumber(ARGV[2 + i]) then return 0 end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + lease, holder)
  redis.call('PEXPIRE', key, lease)
end
return 1
`;

const RENEW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', now + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', key, tonumber(ARGV[1]))
end
return 1
`;

export function redisUploadSlots(url: string, prefix = 'uploads:'): UploadSlots {
  const client = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 1_000 });
  client.on('error', () => undefined); // an outage is met in take(), below
  // Redis unreachable: this instance counts its own uploads, as the rate limits fall back (src/ratelimit).
  const fallback = memoryUploadSlots();
  return {
    async take(counters) {
      const keys = counters.map(({ key }) => `${prefix}${key}`);
      const holder = randomUUID();
      let taken: unknown;
      try {
        taken = await client.eval(TAKE_SCRIPT, keys.length, ...keys, LEASE_MS, holder, ...counters.map(({ max }) => max));
      } catch {
        return fallback.take(counters);
      }
      if (taken !== 1) return null;
      return held(
        () => client.eval(RENEW_SCRIPT, keys.length, ...keys, LEASE_MS, holder),
        () => Promise.all(keys.map((key) => client.zrem(key, holder))),
      );
    },
    close: () => closeRedis(client),
  };
}

// The places each request holds: taken by admitImport, given back when the request is answered
// (src/app.ts) or its upload ends (src/rest/answers/upload.ts), whichever comes first.
const heldBy = new WeakMap<Request, UploadPlaces>();

/** Takes places for `request`'s upload (once per request); false when a counter is full. */
export async function holdUpload(slots: UploadSlots, request: Request, counters: Counter[]): Promise<boolean> {
  if (heldBy.has(request)) return true;
  const places = await slots.take(counters);
  if (places) heldBy.set(request, places);
  return places !== null;
}

/** Gives back what `request` holds, if anything. */
export async function releaseUpload(request: Request): Promise<void> {
  const places = heldBy.get(request);
  heldBy.delete(request);
  await places?.release();
}
