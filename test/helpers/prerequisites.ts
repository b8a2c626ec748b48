/**
 * What a test needs from the machine (a browser, server binaries, a real PostgreSQL or Redis). Locally
 * a missing one skips the test (`npm test` needs nothing installed); in CI (.ci/run exports CI=1) it
 * fails, so a green CI never hides a test that did not run (docs/testing-prerequisites.md).
 */
import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';

/** True under CI (CI=1 from .ci/run, CI=true from most CI systems); CI=0 or CI=false is not CI. */
export const IN_CI = !!process.env.CI && !/^(0|false)$/i.test(process.env.CI);

/** Whether to skip for a missing prerequisite (`missing` names it, null if none): locally yes; in CI it throws. */
export function skipIfMissing(missing: string | null): boolean {
  if (missing && IN_CI) throw new Error(`CI must not skip: ${missing} is missing on this machine`);
  return missing !== null;
}

/** What to set for the tests that need a real PostgreSQL or Redis: printed once by test/global-setup.ts. */
export const REAL_SERVICES = {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/test',
  REDIS_URL: 'redis://127.0.0.1:6379',
} as const;
export type RealService = keyof typeof REAL_SERVICES;

/** For skipIfMissing: which of these variables is unset (named with an example value), or null when all are set. */
export function unsetVariables(...names: RealService[]): string | null {
  const unset = names.filter((name) => !process.env[name]?.trim());
  return unset.length ? unset.map((name) => `${name} (e.g. ${REAL_SERVICES[name]})`).join(' and ') : null;
}

/** A program on PATH (redis-server, initdb), for skipIfMissing: null when found, else what is missing. */
export function missingProgram(name: string): string | null {
  return spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim() ? null : `${name} on PATH`;
}

/** The Redis of tests that must run on Redis whatever the environment: REDIS_URL, else the local default. */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const pinged = new Map<string, Promise<void>>();

/**
 * Fails (never skips) unless Redis at `url` answers PING: a fail-open store would let limit tests
 * "pass" on no Redis at all. In CI, REDIS_URL must be set, since createTestApp limits in Redis only then.
 * Without a url (locally, no REDIS_URL) there is nothing to check: the app limits in memory.
 */
export function requireRedis(url: string | undefined = process.env.REDIS_URL): Promise<void> {
  if (IN_CI && !process.env.REDIS_URL) {
    return Promise.reject(new Error('CI must set REDIS_URL: the rate-limit tests must prove the limits on real Redis'));
  }
  if (!url) return Promise.resolve();
  let check = pinged.get(url);
  if (!check) pinged.set(url, (check = expectRedis(url, 'these rate-limit tests')));
  return check;
}

/** Resolves when Redis at `url` answers PING, else rejects naming who needs it. */
export async function expectRedis(url: string, neededBy: string): Promise<void> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await probe.connect();
    if ((await probe.ping()) !== 'PONG') throw new Error('no PONG');
  } catch (err) {
    throw new Error(`Redis at ${url} is unreachable: ${neededBy} need it`, { cause: err });
  } finally {
    probe.disconnect();
  }
}
