import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';

/** How long closing a client waits for Redis to answer QUIT. */
export const REDIS_QUIT_MS = 1_000;

/**
 * Closes an ioredis client. It sends QUIT, so that commands already sent are answered first, but
 * waits at most `ms` for the answer: a hung Redis (a stopped process, a lost network) must not hold
 * up a shutdown, and ioredis's own QUIT waits forever. Then it disconnects, which also stops a
 * client that never connected from reconnecting.
 */
export async function closeRedis(client: Redis, ms = REDIS_QUIT_MS): Promise<void> {
  const answered = new AbortController();
  await Promise.race([client.quit().catch(() => undefined), sleep(ms, undefined, { signal: answered.signal }).catch(() => undefined)]);
  answered.abort();
  client.disconnect();
}
