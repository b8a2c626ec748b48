// rawTransaction (src/db/raw.ts): a transaction on one of the pool's own pg clients, as the form
// submit's new contact takes (docs/events.md: a committed change has its event, a rolled-back one none).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Prisma } from '../../src/generated/prisma/client.js';
import { hasRawTransactions, rawTransaction, rawWrite } from '../../src/db/raw.js';
import type { Database } from '../../src/db/client.js';
import { cloneDatabase } from '../helpers/database.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

let db: Database;
let drop: () => Promise<void>;
beforeAll(async () => ({ db, drop } = await cloneDatabase(inject('template'))), 120_000);
afterAll(() => drop());

const rows = async () => (await db.prisma.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM raw_tx_probe`)[0]!.n;

describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('rawTransaction on PostgreSQL', () => {
  beforeAll(() => db.prisma.$executeRaw`CREATE TABLE raw_tx_probe (n int)`);

  it('its statements commit together when the work resolves', async () => {
    const answer = await rawTransaction(db.prisma, async (tx) => {
      await rawWrite(tx, Prisma.sql`INSERT INTO raw_tx_probe VALUES (1)`);
      // Uncommitted: another connection does not see it yet.
      expect(await rows()).toBe(0);
      await rawWrite(tx, Prisma.sql`INSERT INTO raw_tx_probe VALUES (2)`);
      return 'done';
    });
    expect(answer).toBe('done');
    expect(await rows()).toBe(2);
  });

  it('nothing it wrote stays when the work throws, and the error is the caller\'s', async () => {
    const failed = await rawTransaction(db.prisma, async (tx) => {
      await rawWrite(tx, Prisma.sql`INSERT INTO raw_tx_probe VALUES (3)`);
      throw new Error('the work failed');
    }).catch((e: unknown) => e);
    expect(String(failed)).toContain('the work failed');
    expect(await rows()).toBe(2);
  });

  it('a lock given is held from BEGIN until the end of the transaction, whatever quotes its key has', async () => {
    const key = "o'brien@example.com \\ '); SELECT 1; --";
    const held = (tx: object) => rawWrite<{ n: number }>(tx, Prisma.sql`
      SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted`);
    const [inside] = await rawTransaction(db.prisma, async (tx) => {
      // The same key taken again through a statement is the same lock: re-entrant, not a second one.
      await rawWrite(tx, Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}::text, 0))::text`);
      return held(tx);
    }, { lock: key });
    expect(inside!.n).toBe(1);
    expect(await rawTransaction(db.prisma, async (tx) => (await held(tx))[0]!.n)).toBe(0);
  });

  it('a read given runs in BEGIN\'s round trip after the lock, its values as given; the work receives its rows', async () => {
    const key = "o'brien@example.com; SELECT 1; --";
    const read = Prisma.sql`SELECT ${key}::text AS text,
      (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted) AS locks`;
    const rows = await rawTransaction(db.prisma, async (_tx, rows) => rows, { lock: key, read });
    expect(rows).toEqual([{ text: key, locks: 1 }]);
  });

  it('every client goes back to the pool, after a commit or a rollback alike', async () => {
    const pool = db.pool!;
    await Promise.all(Array.from({ length: 12 }, (_, i) =>
      rawTransaction(db.prisma, async (tx) => {
        await rawWrite(tx, Prisma.sql`INSERT INTO raw_tx_probe VALUES (${i})`);
        if (i % 2) throw new Error('rolled back');
      }).catch(() => undefined)));
    expect(pool.totalCount - pool.idleCount).toBe(0);
    expect(await rows()).toBe(2 + 6);
  });
});

describe('rawTransaction where there is no pool', () => {
  it("a transaction's client and PGlite's have none: their callers take Prisma's transaction", async () => {
    await db.prisma.$transaction(async (tx) => expect(hasRawTransactions(tx)).toBe(false));
    expect(hasRawTransactions(db.prisma)).toBe(inject('template').kind === 'postgres');
  });
});
