import type { TakeResult } from './atomic-store.js';

/**
 * One weighted take from a leaky bucket, the arithmetic both stores share (the Redis script repeats
 * it in Lua): `points` already spent leak away at `capacity` per `windowMs`; a take fits when the
 * spent points plus `cost` stay within `capacity`. Spent points, not points left, are stored, so a
 * budget nobody used needs no entry at all.
 */
export function leak(
  held: { points: number; at: number } | null,
  now: number,
  cost: number,
  capacity: number,
  windowMs: number,
): { result: TakeResult; points: number } {
  const rate = capacity / windowMs;
  const spent = Math.max(0, (held?.points ?? 0) - (now - (held?.at ?? now)) * rate);
  const allowed = spent + cost <= capacity;
  const points = allowed ? spent + cost : spent;
  return {
    points,
    result: {
      allowed,
      remaining: Math.floor(capacity - points),
      fullMs: Math.ceil(points / rate),
      retryMs: allowed ? 0 : Math.ceil((spent + cost - capacity) / rate),
    },
  };
}
