import { describe, expect, inject, it } from 'vitest';
import { isDatabaseUnavailable, openDatabase, type Database } from '../../src/db/client.js';
import { cloneDatabase } from '../helpers/database.js';

// A copy of the run's PGlite template opens in under a second; a new in-memory PGlite runs initdb (seconds).
async function embedded(): Promise<{ db: Database; drop(): Promise<void> }> {
  const template = inject('template');
  if (template.kind === 'pglite') return cloneDatabase(template);
  const db = await openDatabase({ dataDir: 'memory://' }); // a PostgreSQL run has no embedded template
  return { db, drop: () => db.close() };
}

// The HTTP layer answers 503 exactly when isDatabaseUnavailable says so.
describe('isDatabaseUnavailable', { timeout: 120_000 }, () => {
  it('a PostgreSQL server that refuses connections means unavailable, for model and raw queries', async () => {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once.
    const db = await openDatabase({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/none', dataDir: '' });
    try {
      const errors = await Promise.all([
        db.prisma.account.count().catch((e: unknown) => e),
        db.prisma.$queryRaw`SELECT 1`.catch((e: unknown) => e),
        db.prisma.$transaction((tx) => tx.account.count()).catch((e: unknown) => e),
      ]);
      for (const err of errors) expect(isDatabaseUnavailable(err), String(err)).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('a closed embedded database means unavailable', async () => {
    const { db, drop } = await embedded();
    await drop();
    expect(isDatabaseUnavailable(await db.prisma.$queryRaw`SELECT 1`.catch((e: unknown) => e))).toBe(true);
  });

  it('errors in the query or the data are not outages', async () => {
    const { db, drop } = await embedded();
    try {
      const syntax = await db.prisma.$queryRawUnsafe('SELEC 1').catch((e: unknown) => e);
      const missing = await db.prisma.$queryRawUnsafe('SELECT * FROM no_such_table').catch((e: unknown) => e);
      expect(syntax).toBeInstanceOf(Error);
      expect(isDatabaseUnavailable(syntax)).toBe(false);
      expect(isDatabaseUnavailable(missing)).toBe(false);
      expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
      expect(isDatabaseUnavailable(undefined)).toBe(false);
      // Codes alone decide: a socket error by code, and PostgreSQL's "admin shutdown" SQLSTATE.
      expect(isDatabaseUnavailable(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(true);
      expect(isDatabaseUnavailable(Object.assign(new Error('x'), { code: '57P01' }))).toBe(true);
      expect(isDatabaseUnavailable(Object.assign(new Error('x'), { code: '23505' }))).toBe(false);
    } finally {
      await drop();
    }
  });
});
