import pg from 'pg';
import { vi } from 'vitest';

/**
 * Round trips the service makes to PostgreSQL while `work` runs, counted on pg's client (BEGIN and
 * COMMIT too): the embedded database's adapter runs a transaction's statements where no spy sees
 * them, so a test of this needs PostgreSQL.
 */
export async function roundTrips(work: () => Promise<unknown>): Promise<number> {
  const spy = vi.spyOn(pg.Client.prototype, 'query');
  try {
    await work();
    // The wake-up NOTIFY a write sends after its commit (src/events/emit.ts) is not the request's;
    // nor is the read of the account's custom-field definitions that the cache makes at most once
    // every DEFINITIONS_FRESH_MS (src/model/shapes.ts): whether a request meets it depends on the
    // clock, not on the request (test/unit/record-shapes.test.ts proves a batch shares one).
    const text = (args: unknown[]) => (typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text ?? '');
    const cacheRefresh = (sql: string) => /^\s*SELECT\b/i.test(sql) && sql.includes('custom_field_definitions');
    return spy.mock.calls.filter((args) => !text(args).includes('pg_notify(') && !cacheRefresh(text(args))).length;
  } finally {
    spy.mockRestore();
  }
}
