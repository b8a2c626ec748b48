// npm run bench:neighbour -- [--seconds 60] [--duties 0,25,50,75,100] [--kind cpu|writes|cpu,writes] [--contacts 100000]
// The list requests of the import bench (scripts/bench/import.ts: GET /api/v1/contacts, one at a
// time, 50 ms apart) beside a neighbour: one PostgreSQL backend running a statement for `duty` %
// of each 200 ms, the way an import's backend keeps a core busy. `cpu`: the statement only computes
// (nothing written, locked or allocated in the service: what the requests lose is their share of
// two cores); `writes`: it inserts rows into a table of its own (WAL, dirty pages, the disk), as an
// import does; `cpu,writes`: one backend of each at once. It says what list p99's rise during an
// import (the import bench's third target) comes from. Results: BENCHMARKS.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { mintToken } from '../../src/auth/token.js';
import { BENCH_JWT_SECRET, BENCH_METRICS_TOKEN, benchDatabaseUrl, DEFAULT_CONTACTS, intFlag, parseFlags } from './common.js';
import { ensureDataset, sizeFor } from './dataset.js';
import { listLatencies, serviceTimed } from './import.js';
import { startServer } from './processes.js';
import { ROOT } from './run.js';

const PERIOD_MS = 200;

const STATEMENTS = {
  cpu: 'SELECT count(*) FROM generate_series(1, $1::bigint)',
  // Rows about as wide as a contact's, with two indexes to keep up.
  writes: `INSERT INTO bench_neighbour (n, email, name) SELECT g, 'person' || g || '@neighbour.example', md5(g::text) FROM generate_series(1, $1::bigint) g`,
};
type Kind = keyof typeof STATEMENTS;

/** One backend busy `duty` % of the time until `stop()`: a statement of duty × PERIOD_MS, then the rest of the period idle. */
async function neighbour(url: string, kind: Kind, duty: number) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  if (kind === 'writes') {
    await client.query('CREATE TABLE IF NOT EXISTS bench_neighbour (id bigserial PRIMARY KEY, n bigint, email text, name text)');
    await client.query('CREATE INDEX IF NOT EXISTS bench_neighbour_email ON bench_neighbour (lower(email))');
  }
  // Rows per millisecond of one core, measured here rather than assumed.
  const probe = kind === 'cpu' ? 2_000_000 : 20_000;
  const started = performance.now();
  await client.query(STATEMENTS[kind], [probe]);
  const perMs = probe / (performance.now() - started);
  let running = duty > 0;
  const loop = (async () => {
    while (running) {
      const began = performance.now();
      await client.query(STATEMENTS[kind], [Math.max(1, Math.round(perMs * PERIOD_MS * (duty / 100)))]);
      const rest = PERIOD_MS - (performance.now() - began);
      if (duty < 100 && rest > 0) await sleep(rest);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      if (kind === 'writes') await client.query('DROP TABLE bench_neighbour');
      await client.end();
    },
  };
}

async function main() {
  const flags = parseFlags(process.argv.slice(2), ['seconds', 'duties', 'kind', 'contacts']);
  const kinds = (flags.kind ?? 'cpu').split(',') as Kind[];
  if (!kinds.every((k) => k in STATEMENTS)) throw new Error(`--kind: one or more of ${Object.keys(STATEMENTS).join(', ')}`);
  const seconds = intFlag(flags, 'seconds', 60, 5, 600);
  const duties = (flags.duties ?? '0,25,50,75,100').split(',').map(Number);
  const contacts = intFlag(flags, 'contacts', DEFAULT_CONTACTS, 1, 1_000_000);
  const url = benchDatabaseUrl(contacts);
  const dataset = await ensureDataset(url, sizeFor(contacts), { log: (line) => process.stderr.write(`${line}\n`) });
  const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-neighbour-'));
  const server = await startServer({
    name: 'service', cwd: ROOT, logFile: path.join(work, 'service.log'), args: ['--import', 'tsx', 'src/main.ts'],
    env: { DATABASE_URL: url, AUTH_JWT_SECRET: BENCH_JWT_SECRET, METRICS_TOKEN: BENCH_METRICS_TOKEN, NODE_ENV: 'production', RATE_LIMITS: 'off', LOG_LEVEL: 'info' },
  });
  try {
    const token = await mintToken(BENCH_JWT_SECRET, { sub: dataset.ownerId, expiresIn: '6h' });
    const list = `/api/v1/contacts?account_id=${dataset.accountId}`;
    const warm = performance.now() + 3000;
    await listLatencies(server, list, token, () => performance.now() >= warm);
    console.log(`| neighbour (${kinds.join(' + ')}), duty | requests | client p50 / p99 ms | service p50 / p99 ms |\n|---:|---:|---:|---:|`);
    for (const duty of duties) {
      const busy = await Promise.all(kinds.map((kind) => neighbour(url, kind, duty)));
      const from = Date.now();
      const until = performance.now() + seconds * 1000;
      const client = await listLatencies(server, list, token, () => performance.now() >= until);
      await Promise.all(busy.map((b) => b.stop()));
      const service = serviceTimed(server.logFile, '/api/v1/contacts', from, Date.now());
      console.log(`| ${duty} % | ${client.requests} | ${client.p50.toFixed(1)} / ${client.p99.toFixed(1)} | ${service.p50.toFixed(1)} / ${service.p99.toFixed(1)} |`);
    }
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:neighbour: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
