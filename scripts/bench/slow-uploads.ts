// npm run bench:uploads -- [--seconds 30] [--uploads 12] [--contacts 100000]
// docs/decisions.md §24: while twelve slow uploads run, every other tenant's list answers within its
// usual time. The list requests of the import bench (GET /api/v1/contacts, one at a time, 50 ms
// apart) first with nothing else running, then beside `uploads` uploads of as many other tenants
// (one each: within the limits of uploads under way), each sending just above the slow-body floor
// (64 KB in any 30 s: 2.5 KB a second here), so none is cut off and every one stays open the whole
// time, as the attack kept them. Each upload is spooled to a file, holding no pooled connection
// (docs/imports.md#intake). Results: BENCHMARKS.md.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { mintToken } from '../../src/auth/token.js';
import { BENCH_JWT_SECRET, BENCH_METRICS_TOKEN, benchDatabaseUrl, DEFAULT_CONTACTS, intFlag, parseFlags } from './common.js';
import { ensureDataset, sizeFor } from './dataset.js';
import { listLatencies, serviceTimed } from './import.js';
import { startServer, type Server } from './processes.js';
import { ROOT } from './run.js';

const PIECE = 'x'.repeat(248); // a cell of a row of 250 bytes with its line end
const PIECE_EVERY_MS = 100;

/** `n` tenants of their own, each an owner with a token (their rows are removed by `drop`). */
async function tenants(url: string, n: number) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const made = Array.from({ length: n }, () => ({ userId: randomUUID(), accountId: randomUUID() }));
  for (const { userId, accountId } of made) {
    await client.query('INSERT INTO users (id) VALUES ($1)', [userId]);
    await client.query(`INSERT INTO accounts (id, name, owner_id) VALUES ($1, 'Slow uploader', $2)`, [accountId, userId]);
  }
  const withTokens = await Promise.all(made.map(async (t) => ({ ...t, token: await mintToken(BENCH_JWT_SECRET, { sub: t.userId, expiresIn: '1h' }) })));
  return {
    list: withTokens,
    drop: async () => {
      const accounts = made.map((t) => t.accountId);
      await client.query('DELETE FROM accounts WHERE id = ANY($1::uuid[])', [accounts]);
      await client.query('DELETE FROM users WHERE id = ANY($1::uuid[])', [made.map((t) => t.userId)]);
      await client.end();
    },
  };
}

/** An upload that sends its header and a row, then a 250-byte row every 100 ms until `end()`; resolves to its status. */
function slowUpload(server: Server, accountId: string, token: string) {
  const req = request(new URL(`${server.baseUrl}/api/v1/imports?account_id=${accountId}&object=contacts`), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv', 'transfer-encoding': 'chunked' },
  });
  const status = new Promise<number>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', () => resolve(0));
  });
  req.write('first_name,notes\r\nSlow,first\r\n');
  let n = 0;
  const timer = setInterval(() => req.write(`Slow ${++n},${PIECE}\r\n`), PIECE_EVERY_MS);
  return {
    status,
    end: () => {
      clearInterval(timer);
      req.end('Last,row\r\n');
      return status;
    },
  };
}

async function main() {
  const flags = parseFlags(process.argv.slice(2), ['seconds', 'uploads', 'contacts']);
  const seconds = intFlag(flags, 'seconds', 30, 5, 600);
  const count = intFlag(flags, 'uploads', 12, 1, 100);
  const contacts = intFlag(flags, 'contacts', DEFAULT_CONTACTS, 1, 1_000_000);
  const url = benchDatabaseUrl(contacts);
  const dataset = await ensureDataset(url, sizeFor(contacts), { log: (line) => process.stderr.write(`${line}\n`) });
  const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-uploads-'));
  const server = await startServer({
    name: 'service', cwd: ROOT, logFile: path.join(work, 'service.log'), args: ['--import', 'tsx', 'src/main.ts'],
    env: { DATABASE_URL: url, AUTH_JWT_SECRET: BENCH_JWT_SECRET, METRICS_TOKEN: BENCH_METRICS_TOKEN, NODE_ENV: 'production', RATE_LIMITS: 'off', LOG_LEVEL: 'info' },
  });
  const others = await tenants(url, count);
  try {
    const token = await mintToken(BENCH_JWT_SECRET, { sub: dataset.ownerId, expiresIn: '6h' });
    const list = `/api/v1/contacts?account_id=${dataset.accountId}`;
    const warm = performance.now() + 3000;
    await listLatencies(server, list, token, () => performance.now() >= warm);
    console.log('| beside the lists | requests (failed) | client p50 / p99 ms | service p50 / p99 ms |\n|---|---:|---:|---:|');
    for (const uploads of [0, count]) {
      const running = others.list.slice(0, uploads).map((t) => slowUpload(server, t.accountId, t.token));
      const from = Date.now();
      const until = performance.now() + seconds * 1000;
      const client = await listLatencies(server, list, token, () => performance.now() >= until);
      const to = Date.now();
      const statuses = await Promise.all(running.map((u) => u.end()));
      const service = serviceTimed(server.logFile, '/api/v1/contacts', from, to);
      const label = uploads === 0 ? 'nothing' : `${uploads} slow uploads (answered ${[...new Set(statuses)].join(', ')})`;
      console.log(`| ${label} | ${client.requests} (${client.failures}) | ${client.p50.toFixed(1)} / ${client.p99.toFixed(1)} | ${service.p50.toFixed(1)} / ${service.p99.toFixed(1)} |`);
    }
  } finally {
    await server.stop();
    await others.drop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:uploads: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
