/**
 * The reference map (src/db/references.ts, docs/fields.md#who-points-at-a-record) is the database's
 * own list of what points at a contact, a deal or a company: every foreign key onto their
 * (account_id, id) is in the map with its table, column and stamp, and nothing else is.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { referencesTo, type Referenced } from '../../src/db/references.js';
import { cloneDatabase } from '../helpers/database.js';

const TARGETS: Record<Referenced, string> = { Contact: 'contacts', Deal: 'deals', Company: 'companies' };

describe('the reference map', () => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => ({ db, drop } = await cloneDatabase(inject('template'))));
  afterAll(() => drop?.());

  it.each(Object.entries(TARGETS))('names every foreign key onto %s, with its column and whether its rows carry updated_at', async (target, table) => {
    const keys = await db.prisma.$queryRawUnsafe<{ table: string; column: string; stamped: boolean; cascade: boolean }[]>(
      `SELECT s.relname AS table, a.attname AS column,
              EXISTS (SELECT 1 FROM pg_attribute u WHERE u.attrelid = s.oid AND u.attname = 'updated_at' AND NOT u.attisdropped) AS stamped,
              c.confdeltype = 'c' AS cascade
         FROM pg_constraint c
         JOIN pg_class s ON s.oid = c.conrelid
         JOIN pg_class t ON t.oid = c.confrelid
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[2]
        WHERE c.contype = 'f' AND t.relname = $1 AND array_length(c.conkey, 1) = 2
        ORDER BY 1, 2`,
      table,
    );
    const map = referencesTo(target as Referenced)
      .map((ref) => ({ table: ref.table, column: ref.column, stamped: ref.stamped, cascade: ref.onGone === 'cascade' }))
      .sort((a, b) => a.table.localeCompare(b.table) || a.column.localeCompare(b.column));
    expect(map).toEqual(keys);
  });
});
