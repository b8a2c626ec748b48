// Holding a table against requests from another connection, for the tests of statements shared by
// concurrent requests (docs/scaling.md): the first request waits on the lock, so the rest are sure to
// wait for it. PostgreSQL only: PGlite has one connection.
import type pg from 'pg';
import type { TestApp } from './app.js';

/** Sessions of the test's database waiting for a lock. */
export const waitingForLocks = async (t: TestApp): Promise<number> =>
  (await t.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0]!.n;

/**
 * A transaction of another connection holding `table` until `release`: in SHARE mode against every
 * write, in ACCESS EXCLUSIVE mode against reads too.
 */
export async function holdTable(t: TestApp, table: string, mode: 'SHARE' | 'ACCESS EXCLUSIVE' = 'SHARE'): Promise<{ release: () => Promise<void> }> {
  const client = await (t.deps.db.pool as pg.Pool).connect();
  await client.query('BEGIN');
  await client.query(`LOCK TABLE "${table}" IN ${mode} MODE`);
  return {
    release: async () => {
      await client.query('COMMIT');
      client.release();
    },
  };
}
