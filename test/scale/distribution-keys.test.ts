/**
 * The schema on its way to Citus (docs/scaling.md#toward-citus): account-scoped tables are
 * distributed by account_id, and a distributed table's unique keys must contain it.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { cloneDatabase } from '../helpers/database.js';

/** Tables whose primary key is still `id` alone: docs/scaling.md#toward-citus says what each becomes. */
const PRIMARY_KEY_ID_ALONE = [
  'api_keys', 'bookings', 'companies', 'contacts', 'contracts', 'custom_field_definitions', 'deals', 'export_logs', 'form_submissions', 'galleries', 'idempotency_keys',
  'imports', 'invoice_lines', 'invoices', 'lead_forms', 'notes', 'payments', 'pipeline_stages', 'proposals', 'tasks', 'workflows',
];

describe('keys ready for distribution by account_id', () => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => ({ db, drop } = await cloneDatabase(inject('template'))));
  afterAll(() => drop?.());

  /** Every unique index (primary keys included) of a table with an account_id column, as column lists. */
  const uniqueKeys = async () => {
    const rows = await db.prisma.$queryRawUnsafe<{ table: string; index: string; primary: boolean; columns: string }[]>(`
      SELECT t.relname AS table, i.relname AS index, x.indisprimary AS primary,
             string_agg(a.attname, ',' ORDER BY k.ord) AS columns
      FROM pg_index x
      JOIN pg_class t ON t.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
      CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      WHERE x.indisunique AND EXISTS (SELECT 1 FROM pg_attribute c WHERE c.attrelid = t.oid AND c.attname = 'account_id' AND NOT c.attisdropped)
      GROUP BY 1, 2, 3 ORDER BY 1, 2`);
    return rows;
  };

  it('lead_form_fields: the primary key is (account_id, id) and a key is unique per (account_id, form_id, key)', async () => {
    const keys = (await uniqueKeys()).filter((k) => k.table === 'lead_form_fields');
    expect(keys.map(({ primary, columns }) => ({ primary, columns }))).toEqual([
      { primary: false, columns: 'account_id,form_id,key' },
      { primary: true, columns: 'account_id,id' },
    ]);
  });

  it('every unique key of an account-scoped table contains account_id, except the keys docs/scaling.md lists', async () => {
    const without = (await uniqueKeys()).filter((k) => !k.columns.split(',').includes('account_id'));
    // api_keys: a presented secret finds its account by its prefix. invoices: the client's page finds its
    // invoice by the page token alone. webhook_endpoints: keyed (account_id, id); unique (id) too, for the
    // mutations that address an endpoint by id.
    expect(without.filter((k) => !k.primary).map((k) => `${k.table}(${k.columns})`)).toEqual(['api_keys(prefix)', 'invoices(page_token)', 'webhook_endpoints(id)']);
    expect(without.filter((k) => k.primary).map((k) => `${k.table}(${k.columns})`)).toEqual(PRIMARY_KEY_ID_ALONE.map((t) => `${t}(id)`));
  });
});
