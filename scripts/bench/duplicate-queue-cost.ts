// node --import tsx scripts/bench/duplicate-queue-cost.ts -- [--contacts 100000] [--blocks 6] [--n 100]
// What the duplicates' queue (triggers duplicate_queue_*, migration *_duplicate_groups) adds to a
// write, in the database: single-row INSERTs of a contact (each its own transaction, as POST
// /contacts) and 100-row INSERTs (a batch), timed in blocks that alternate the triggers enabled and
// disabled, on the duplicates bench database (scripts/bench/duplicates.ts makes it). Two accounts:
// the bench account, whose groups are kept (its writes queue), and one whose groups are not (its
// writes only look, under a shared lock). The rows written are deleted after each block.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { intFlag, namedBenchDatabaseUrl, parseFlags } from './common.js';

const flags = parseFlags(process.argv.slice(2).filter((a) => a !== '--'), ['contacts', 'blocks', 'n']);
const contacts = intFlag(flags, 'contacts', 100_000, 1, 10_000_000);
const blocks = intFlag(flags, 'blocks', 6, 2, 100);
const n = intFlag(flags, 'n', 100, 10, 10_000);
const client = new pg.Client({ connectionString: namedBenchDatabaseUrl(`crm_bench_duplicates_${contacts}`) });
await client.connect();
const TRIGGERS = ['duplicate_queue_insert', 'duplicate_queue_update', 'duplicate_queue_delete'];
const toggle = async (on: boolean) => {
  for (const name of TRIGGERS) await client.query(`ALTER TABLE contacts ${on ? 'ENABLE' : 'DISABLE'} TRIGGER ${name}`);
};
try {
  const kept = (await client.query(`SELECT account_id::text AS id FROM duplicate_state WHERE built LIMIT 1`)).rows[0]?.id as string | undefined;
  if (!kept) throw new Error('no account with kept groups: run scripts/bench/duplicates.ts first');
  // An account of the same owner whose groups were never read (made once).
  await client.query(
    `INSERT INTO accounts (id, name, owner_id) SELECT gen_random_uuid(), 'Duplicate queue bench', owner_id FROM accounts WHERE id = $1::uuid
      AND NOT EXISTS (SELECT 1 FROM accounts WHERE name = 'Duplicate queue bench')`,
    [kept],
  );
  const notKept = (await client.query(`SELECT id::text FROM accounts WHERE name = 'Duplicate queue bench'`)).rows[0]!.id as string;
  const insert = (account: string, rows: number) =>
    client.query(
      `INSERT INTO contacts (id, account_id, first_name, last_name, email, phone, created_at, updated_at)
       SELECT gen_random_uuid(), $1::uuid, 'Queue', 'Bench ' || k, 'queue.bench.' || k || '.' || random() || '@example.com', '+1 555 ' || k, now(), now()
         FROM generate_series(1, $2::int) AS k`,
      [account, rows],
    );
  const timed = async (work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  const results: Record<string, number[]> = {};
  const add = (key: string, ms: number) => (results[key] ??= []).push(ms);
  for (let block = 0; block < blocks; block++) {
    const on = block % 2 === 1;
    await toggle(on);
    for (const [label, account] of [['kept', kept], ['not kept', notKept]] as const) {
      for (let i = 0; i < n; i++) add(`${label}, 1 row, triggers ${on ? 'on' : 'off'}`, await timed(() => insert(account, 1)));
      for (let i = 0; i < n / 10; i++) add(`${label}, 100 rows, triggers ${on ? 'on' : 'off'}`, await timed(() => insert(account, 100)));
    }
    await toggle(false);
    await client.query(`DELETE FROM contacts WHERE first_name = 'Queue' AND last_name LIKE 'Bench %'`);
    await toggle(true);
    await client.query(`DELETE FROM duplicate_queue WHERE account_id = $1::uuid`, [kept]);
  }
  await toggle(true);
  const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)]!;
  for (const [key, xs] of Object.entries(results).sort()) console.log(`${key}: p50 ${p(xs, 0.5).toFixed(2)} ms, p90 ${p(xs, 0.9).toFixed(2)} ms (${xs.length})`);
} finally {
  await toggle(true);
  await client.end();
}
