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
