/**
 * Sync never skips a change (docs/decisions.md §24): every account-scoped table with an updated_at
 * column is stamped from its transaction's start (the stamps_from_transaction_start trigger), so a
 * new table cannot join the lists a follower reads without it. test/rest/sync-commit-order.test.ts
 * shows what the stamp is for.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { cloneDatabase } from '../helpers/database.js';

describe('write stamps', () => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => ({ db, drop } = await cloneDatabase(inject('template'))));
  afterAll(() => drop?.());

  it('every account-scoped table with updated_at is stamped from its transaction start', async () => {
    const unstamped = await db.prisma.$queryRawUnsafe<{ table: string }[]>(`
      SELECT t.relname AS table FROM pg_class t
      JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
      WHERE t.relkind = 'r'
        AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = 'account_id' AND NOT a.attisdropped)
        AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = t.oid AND a.attname = 'updated_at' AND NOT a.attisdropped)
        AND NOT EXISTS (SELECT 1 FROM pg_trigger g WHERE g.tgrelid = t.oid AND g.tgname = 'stamps_from_transaction_start')
      ORDER BY 1`);
    expect(unstamped.map((r) => r.table)).toEqual([]);
  });
});
