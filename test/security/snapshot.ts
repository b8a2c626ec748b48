import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';

const statements = new WeakMap<TestApp, string>();

/**
 * Every row of every account-scoped table (found by its account_id column, so a new table is
 * covered without a change here) plus the account row itself, as one sorted text per account. Two
 * equal snapshots mean nothing of the account was written in between. An API key's last_used_at is
 * left out: a refused call with a valid key was still a use of it (docs/decisions.md §15).
 * Several accounts are read in one statement: the fuzz tests take thousands of snapshots, and on
 * PGlite each statement over the 40-odd tables costs far more than the rows it returns.
 */
export async function accountSnapshots(t: TestApp, accountIds: string[]): Promise<string[]> {
  let sql = statements.get(t);
  if (!sql) {
    const tables = (
      await t.db.$queryRaw<{ table_name: string }[]>`
        SELECT DISTINCT table_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND column_name = 'account_id' ORDER BY table_name`
    ).map((r) => r.table_name);
    expect(tables.length).toBeGreaterThan(10);
    sql = [
      `SELECT 'accounts' AS name, x.id::text AS account, to_jsonb(x)::text AS row FROM accounts x WHERE id = ANY($1::uuid[])`,
      ...tables.map((name) => `SELECT '${name}', x.account_id::text, ${name === 'api_keys' ? `(to_jsonb(x) - 'last_used_at')` : 'to_jsonb(x)'}::text FROM "${name}" x WHERE account_id = ANY($1::uuid[])`),
    ].join(' UNION ALL ');
    statements.set(t, sql);
  }
  const rows = await t.db.$queryRawUnsafe<{ name: string; account: string; row: string }[]>(sql, accountIds);
  return accountIds.map((id) => rows.filter((r) => r.account === id).map((r) => `${r.name} ${r.row}`).sort().join('\n'));
}

export const accountSnapshot = async (t: TestApp, accountId: string): Promise<string> => (await accountSnapshots(t, [accountId]))[0]!;
