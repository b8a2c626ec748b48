// node --import tsx scripts/bench/merge-profile.ts -- [--contacts 100000] [--merges 3] [--explain]
// The merge of issue #72 (a primary and 10 duplicates with 1,000 open deals between them, as
// scripts/bench/duplicates.ts times it) on that bench's database (`crm_bench_duplicates_<n>`, made by
// it), each merge's statements logged by the server with their own durations
// (log_min_duration_statement = 0) and, with --explain, their plans and the triggers' nested
// statements (auto_explain, loaded in the merge's session: pg_stat_statements needs a restart of a
// shared server). Reads them back from the server's log (PG_LOG, default Debian's) and prints each
// merge's statements, slowest first, beside the merge's wall time.
import { readFileSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../../src/db/client.js';
import { CONTACTS, mergeRecords } from '../../src/contacts/merge.js';
import { SYSTEM } from '../../src/events/types.js';
import { intFlag, namedBenchDatabaseUrl, parseFlags } from './common.js';

const args = process.argv.slice(2).filter((a) => a !== '--');
const explain = args.includes('--explain');
const flags = parseFlags(args.filter((a) => a !== '--explain'), ['contacts', 'merges']);
const contacts = intFlag(flags, 'contacts', 100_000, 1, 10_000_000);
const merges = intFlag(flags, 'merges', 3, 1, 100);
const log = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
const url = namedBenchDatabaseUrl(`crm_bench_duplicates_${contacts}`);
const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 4, bounds: { statementTimeoutMs: 900_000, poolTimeoutMs: 60_000 } });
try {
  const account = await db.prisma.account.findFirstOrThrow({ where: { name: `Duplicates bench (${contacts} contacts)` }, select: { id: true } });
  for (let i = 0; i < merges; i++) {
    const email = `merge-${Date.now()}-${i}@merge.example`;
    const ids = await db.prisma.$queryRaw<{ id: string }[]>`
      INSERT INTO contacts (id, account_id, first_name, last_name, email, created_at, updated_at)
      SELECT gen_random_uuid(), ${account.id}::uuid, 'Merge', 'Bench ' || k, CASE WHEN k = 0 THEN ${email} ELSE upper(${email}) END, now(), now()
        FROM generate_series(0, 10) AS k
      RETURNING id::text AS id`;
    const [primary, ...duplicates] = ids.map((r) => r.id).sort();
    await db.prisma.$executeRaw`
      INSERT INTO deals (id, account_id, contact_id, title, value, created_at, updated_at)
      SELECT gen_random_uuid(), ${account.id}::uuid, (${duplicates}::uuid[])[1 + k % 10], 'Merge bench deal ' || k, 100, now(), now()
        FROM generate_series(0, 999) AS k`;
    const from = statSync(log).size;
    const started = performance.now();
    await db.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SET LOCAL log_min_duration_statement = 0`);
      if (explain) {
        await tx.$executeRawUnsafe(`LOAD 'auto_explain'`);
        for (const s of ['log_min_duration = 0', 'log_analyze = on', 'log_buffers = on', 'log_nested_statements = on', 'log_triggers = on']) await tx.$executeRawUnsafe(`SET LOCAL auto_explain.${s}`);
      }
      return mergeRecords(tx, CONTACTS, { accountId: account.id, id: primary! }, duplicates, SYSTEM);
    }, { timeout: 60_000 });
    const wall = performance.now() - started;
    // The server writes its log asynchronously: wait until the COMMIT's line is there.
    let text = '';
    for (let tries = 0; tries < 100 && !/statement: COMMIT/.test(text); tries++) {
      text = readFileSync(log).subarray(from).toString();
      if (!/statement: COMMIT/.test(text)) await new Promise((r) => setImmediate(r));
    }
    const lines = [...text.matchAll(/duration: ([\d.]+) ms\s+(?:statement|execute [^:]*|bind [^:]*|parse [^:]*|plan):?\s*([\s\S]*?)(?=\n\S+ \S+ UTC|\n*$)/g)];
    const statements = lines.map((m) => ({ ms: Number(m[1]), sql: m[2]!.replace(/\s+/g, ' ').slice(0, 160) }));
    const server = statements.reduce((s, x) => s + x.ms, 0);
    console.log(`merge ${i + 1}: wall ${wall.toFixed(0)} ms, ${statements.length} logged durations summing ${server.toFixed(0)} ms`);
    for (const s of statements.sort((a, b) => b.ms - a.ms).slice(0, explain ? 40 : 25)) console.log(`  ${s.ms.toFixed(1).padStart(8)} ms  ${s.sql}`);
    if (explain) console.log(text);
  }
} finally {
  await db.close();
}
