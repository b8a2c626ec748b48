import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';

const statements = new WeakMap<TestApp, string>();

/**
 * Every row of every account-scoped table (found by its account_id column, so a new table is
 * covered without a change here) plus the account row itself, as one sorted text. Two equal
 * snapshots mean nothing of the account was written in between. An API key's last_used_at is left
 * out: a refused call with a valid key was still a use of it (docs/decisions.md §15).
 */
export async function accountSnapshot(t: TestApp, accountId: string): Promise<string> {
  let sql = statements.get(t);
  if (!sql) {
    const tables = (
      await t.db.$queryRaw<{ table_name: string }[]>`
        SELECT DISTINCT table_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = 'account_id' ORDER BY table_name`
    ).map((r) => r.table_name);
    expect(tables.length).toBeGreaterThan(10);
    sql = [
      `SELECT 'accounts' AS name, to_jsonb(x)::text AS row FROM accounts x WHERE id = $1::uuid`,
      ...tables.map((name) => `SELECT '${name}', ${name === 'api_keys' ? `(to_jsonb(x) - 'last_used_at')` : 'to_jsonb(x)'}::text FROM "${name}" x WHERE account_id = $1::uuid`),
    ].join(' UNION ALL ');
    statements.set(t, sql);
  }
  const rows = await t.db.$queryRawUnsafe<{ name: string; row: string }[]>(sql, accountId);
  return rows.map((r) => `${r.name} ${r.row}`).sort().join('\n');
}
