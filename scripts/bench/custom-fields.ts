// The bench account's own fields (docs/custom-fields.md): 20 of every type, defined once (a run
// that finds them keeps them), so the create cases with and without values run on one account.
import pg from 'pg';

const TYPES = ['TEXT', 'NUMBER', 'DATE', 'BOOLEAN', 'SELECT', 'MULTI_SELECT', 'URL', 'EMAIL', 'PHONE', 'TEXT'] as const;

/** The 20 fields: key `bench_<n>`, two of each type. */
export const BENCH_FIELDS = Array.from({ length: 20 }, (_, i) => ({ key: `bench_${String(i).padStart(2, '0')}`, type: TYPES[i % TYPES.length]! }));

/** A value of each bench field, as a client sends it. */
export const benchValues = (n = 0): Record<string, unknown> =>
  Object.fromEntries(
    BENCH_FIELDS.map(({ key, type }) => [key, {
      TEXT: `text ${n}`, NUMBER: n + 0.5, DATE: '2027-03-01', BOOLEAN: n % 2 === 0, SELECT: 'gold', MULTI_SELECT: ['a', 'b'],
      URL: 'https://example.com/bench', EMAIL: 'bench@example.com', PHONE: '+1 555 0100',
    }[type]]),
  );

export async function ensureBenchFields(url: string, accountId: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const [i, { key, type }] of BENCH_FIELDS.entries()) {
      const options = type === 'SELECT' ? ['gold', 'silver'] : type === 'MULTI_SELECT' ? ['a', 'b', 'c'] : [];
      await client.query(
        `INSERT INTO custom_field_definitions (id, account_id, object, key, label, type, options, position)
         VALUES (gen_random_uuid(), $1, 'CONTACT', $2, $3, $4::custom_field_type, $5, $6) ON CONFLICT (account_id, object, key) DO NOTHING`,
        [accountId, key, `Bench ${i}`, type, options, i],
      );
    }
  } finally {
    await client.end();
  }
}

/**
 * The list cases' values (docs/custom-fields.md#filters): 9 of every 10 contacts of the account hold
 * all 20 fields, written once in one UPDATE (a run that finds them keeps them). From a hash of the
 * id: `bench_04` (SELECT) is `gold` on a tenth of them, `silver` on the rest; `bench_01` (NUMBER)
 * spreads over 0-9,999.99, so `cf.bench_01.gte=5000&cf.bench_01.lt=5100` holds about 1 %.
 */
export async function ensureBenchValues(url: string, accountId: string, log: (line: string) => void): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Bench writes hold `gold` only: `silver` marks the dataset's own values.
    const { rowCount } = await client.query(`SELECT 1 FROM contacts WHERE account_id = $1 AND custom_fields @> '{"bench_04": "silver"}' LIMIT 1`, [accountId]);
    if (rowCount) return;
    const started = Date.now();
    // One statement over the whole account (minutes at 1,000,000 contacts): no statement timeout, and
    // the tables' own triggers off meanwhile; custom_field_numbers and custom_field_counts, which
    // the triggers keep from the values, are then made again for the account as their migrations make them.
    await client.query('SET statement_timeout = 0');
    await client.query('ALTER TABLE contacts DISABLE TRIGGER USER');
    const { rowCount: written } = await client.query(
      `UPDATE contacts c SET custom_fields = jsonb_build_object(
         'bench_00', 'text ' || (h % 1000), 'bench_01', round((h % 1000000) / 100.0, 2), 'bench_02', to_char(DATE '2026-01-01' + (h % 730)::int, 'YYYY-MM-DD'),
         'bench_03', h % 2 = 0, 'bench_04', CASE WHEN h % 100 < 10 THEN 'gold' ELSE 'silver' END, 'bench_05', CASE WHEN h % 3 = 0 THEN '["a", "b"]'::jsonb ELSE '["c"]'::jsonb END,
         'bench_06', 'https://example.com/bench', 'bench_07', 'bench@example.com', 'bench_08', '+1 555 0100', 'bench_09', 'text ' || (h % 97),
         'bench_10', 'text ' || (h % 89), 'bench_11', (h / 7) % 100000, 'bench_12', to_char(DATE '2027-01-01' + (h % 365)::int, 'YYYY-MM-DD'),
         'bench_13', h % 5 = 0, 'bench_14', CASE WHEN h % 2 = 0 THEN 'gold' ELSE 'silver' END, 'bench_15', '["b"]'::jsonb,
         'bench_16', 'https://example.com/' || (h % 50), 'bench_17', 'user' || (h % 1000) || '@example.com', 'bench_18', '+1 555 ' || (h % 10000), 'bench_19', 'text ' || (h % 7))
       FROM (SELECT id, abs(hashtextextended(id::text, 0)) AS h FROM contacts WHERE account_id = $1) s
       WHERE c.id = s.id AND c.account_id = $1 AND s.h % 10 <> 9`,
      [accountId],
    ).finally(() => client.query('ALTER TABLE contacts ENABLE TRIGGER USER'));
    await client.query(`DELETE FROM custom_field_numbers WHERE account_id = $1 AND object = 'CONTACT'`, [accountId]);
    await client.query(
      `INSERT INTO custom_field_numbers (account_id, object, key, value, record_id)
       SELECT r.account_id, 'CONTACT', e.key, e.value::numeric, r.id FROM contacts r CROSS JOIN LATERAL jsonb_each(r.custom_fields) e
       WHERE r.account_id = $1 AND r.custom_fields <> '{}' AND jsonb_typeof(e.value) = 'number' ON CONFLICT DO NOTHING`,
      [accountId],
    );
    await client.query(`DELETE FROM custom_field_counts WHERE account_id = $1 AND object = 'CONTACT'`, [accountId]);
    await client.query(
      `INSERT INTO custom_field_counts (account_id, object, key, value, slot, n)
       SELECT r.account_id, 'CONTACT', v.key, v.value, 0, count(*) FROM contacts r CROSS JOIN LATERAL custom_field_counted(r.account_id, 'CONTACT', r.custom_fields) v
       WHERE r.account_id = $1 AND r.custom_fields <> '{}' GROUP BY r.account_id, v.key, v.value`,
      [accountId],
    );
    log(`dataset: 20 custom values on ${written} contacts in ${((Date.now() - started) / 1000).toFixed(0)} s; vacuuming`);
    await client.query('VACUUM (ANALYZE) contacts');
    await client.query('VACUUM (ANALYZE) custom_field_numbers');
    log(`dataset: values ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await client.end();
  }
}
