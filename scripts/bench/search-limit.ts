// npm run bench:search-limit -- [--contacts 1000000] [--search nakamura] [--connections 32] [--duration 10]
// The limit of a contact search (docs/decisions.md §19, BENCHMARKS.md "Search"): pgbench running the
// very statement the service sends for GET /api/v1/contacts?search=... (page 1, 25 rows, exact total),
// built by the service's own readPage, on the bench database. What the service adds on top is its
// HTTP, auth and JSON work; the ratio of its req/s to this tps is what the bench table compares.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import '../../src/schema.js';
import { contacts } from '../../src/contacts/contact-reads.schema.js';
import { Prisma, type PrismaClient } from '../../src/generated/prisma/client.js';
import { planOf, readSlices } from '../../src/graphql/list.js';
import { benchDatabaseUrl, DEFAULT_CONTACTS, intFlag, numberFlag, parseFlags } from './common.js';

const flags = parseFlags(process.argv.slice(2), ['contacts', 'search', 'connections', 'duration']);
const url = benchDatabaseUrl(intFlag(flags, 'contacts', DEFAULT_CONTACTS, 1, 1_000_000));
const search = flags.search ?? 'nakamura';
const connections = intFlag(flags, 'connections', 32, 1, 1000);
const duration = numberFlag(flags, 'duration', 10, 1, 300);

const client = new pg.Client({ connectionString: url });
await client.connect();
const { rows } = await client.query<{ account_id: string }>('SELECT account_id FROM contacts GROUP BY 1 ORDER BY count(*) DESC LIMIT 1');
await client.end();

// readSlices hands its statement to db.$queryRaw (src/db/raw.ts: a client with no pool of its own);
// this stand-in keeps it instead of running it, and answers a parent with no rows.
let statement: Prisma.Sql | undefined;
const capture = {
  $queryRaw: (query: Prisma.Sql) => {
    statement = query;
    return Promise.resolve([{ ord: 0, total: 0, row: null }]);
  },
} as unknown as PrismaClient;
const account = { accountId: rows[0]!.account_id, id: rows[0]!.account_id };
const plan = planOf(contacts, null, account, { filter: { search }, order: { field: 'CREATED_AT', direction: 'DESC' }, size: 25, cursorKey: Buffer.alloc(32) });
await readSlices(capture, plan, [account], { total: true, rows: true, nodes: {} });

// pgbench runs text: the parameters become literals.
const literal = (v: unknown) => (typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`);
const sql = statement!.text.replace(/\$(\d+)/g, (_, n: string) => literal(statement!.values[Number(n) - 1])).replace(/\s+/g, ' ');
const file = path.join(mkdtempSync(path.join(tmpdir(), 'search-limit-')), 'search.sql');
writeFileSync(file, `${sql};\n`);
const out = execFileSync('pgbench', ['-n', '-f', file, '-c', String(connections), '-j', '2', '-T', String(duration), url], { encoding: 'utf8' });
const tps = /tps = ([\d.]+)/.exec(out)?.[1];
const latency = /latency average = ([\d.]+) ms/.exec(out)?.[1];
console.log(`limit: pgbench, the service's search statement ("${search}"), ${connections} connections, ${duration} s: ${Number(tps).toFixed(1)} tps, latency average ${latency} ms`);
