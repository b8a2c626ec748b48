// npm run bench:overdue -- [--due 10000] [--rounds 3] [--contacts 100000] [--idle 10] [--batch 500] [--log-level warn]
// The overdue job (docs/decisions.md §19 "Billing time") against its target: --due invoices that fall
// due at once are moved in ≤ 10 s without pushing list p99 above 2× of idle. In one run:
//   1. a bench account of --contacts contacts and 2× as many invoices (BENCH_DATABASE_URL, made when
//      missing); whatever in it is already due is moved first, so only this run's invoices are due;
//   2. the service starts (its own overdue worker sleeps through the run) and GET /api/v1/invoices is
//      timed idle for --idle seconds;
//   3. each round inserts --due invoices due in the last 30 days (sent, viewed, partial; issued 30 days
//      before), runs the job once in a process of its own (another instance: scripts/bench/overdue-job.ts)
//      and times the list meanwhile.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintToken } from '../../src/auth/token.js';
import { seedBench } from '../../src/cli/seed-bench.js';
import { openDatabase } from '../../src/db/client.js';
import { markOverdueInvoices } from '../../src/invoices/overdue.js';
import { BENCH_JWT_SECRET, BENCH_METRICS_TOKEN, benchDatabaseUrl, ensureMigrated, intFlag, parseFlags } from './common.js';
import { startServer, type Server } from './processes.js';
import { pgVersion, ROOT } from './run.js';

/** The issue's targets (#26). */
const TARGETS = { seconds: 10, listP99Ratio: 2 };
/** Between list requests: one client paging, as the import bench times it. */
const LIST_GAP_MS = 10;
/** One bench account per size, so sizes never mix in one database. */
const benchAccountName = (contacts: number) => `Overdue bench (${contacts} contacts)`;

type Latencies = { requests: number; failures: number; p50: number; p99: number };
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The bench account (seeded when missing) and its owner. */
async function benchAccount(url: string, contacts: number): Promise<{ accountId: string; ownerId: string }> {
  const { created } = await ensureMigrated(url);
  const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 2 });
  try {
    const existing = await db.prisma.account.findFirst({ where: { name: benchAccountName(contacts) }, select: { id: true, ownerId: true } });
    if (existing) return { accountId: existing.id, ownerId: existing.ownerId };
    log(`seeding ${contacts} contacts and ${contacts * 2} invoices${created ? ' into a new database' : ''}`);
    const seeded = await seedBench(db.prisma, { contacts, deals: 0, invoices: contacts * 2, submissions: 0, seed: 26 });
    await db.prisma.account.update({ where: { id: seeded.accountId }, data: { name: benchAccountName(contacts) } });
    await db.prisma.$executeRawUnsafe('ANALYZE');
    return seeded;
  } finally {
    await db.close();
  }
}

/** Moves what is due already (seeded history), so a round's invoices are the only ones due. */
async function settle(url: string): Promise<number> {
  const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 2 });
  try {
    return (await markOverdueInvoices(db.prisma, { batchSize: 5000 })).moved;
  } finally {
    await db.close();
  }
}

/**
 * `n` invoices of the account that fell due over the last month, in the states that fall due, in one
 * statement; each issued 30 days before its due date, as invoices are: not the newest rows the list shows first.
 */
async function insertDue(url: string, accountId: string, n: number, round: number): Promise<void> {
  const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 1 });
  try {
    await db.prisma.$executeRaw`
      INSERT INTO invoices (id, account_id, invoice_number, amount, status, due_date, created_at, updated_at)
      SELECT gen_random_uuid(), ${accountId}::uuid, 'OVD-' || ${`${Date.now()}-${round}`} || '-' || g, 100 + g % 900,
             (ARRAY['sent', 'viewed', 'partial'])[1 + g % 3]::invoice_status, due, issued, issued
      FROM generate_series(1, ${n}) g,
           LATERAL (SELECT current_date - 1 - g % 30 AS due) d,
           LATERAL (SELECT (due - 30)::timestamptz + make_interval(secs => g % 86400) AS issued) i`;
  } finally {
    await db.close();
  }
}

/** The job in a process of its own, connected and waiting: go() runs it and resolves with its result. */
async function startJob(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bench/overdue-job.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('ready\n')) resolve();
    });
    void exited.then((code) => reject(new Error(`the job exited (${code}) before it was ready`)));
  });
  return {
    go: async (): Promise<{ moved: number; batches: number; seconds: number }> => {
      child.stdin.write('go\n');
      const code = await exited;
      const line = out.trim().split('\n').pop()!;
      if (code !== 0) throw new Error(`the job exited (${code}): ${line}`);
      return JSON.parse(line);
    },
  };
}

/** GET `pathAndQuery` one request at a time until `done()`: each one's latency. */
async function listLatencies(server: Server, pathAndQuery: string, token: string, done: () => boolean, into: number[] = []): Promise<number[]> {
  while (!done()) {
    const started = performance.now();
    const response = await fetch(server.baseUrl + pathAndQuery, { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
    await response?.arrayBuffer();
    into.push(response?.status === 200 ? performance.now() - started : NaN);
    await sleep(LIST_GAP_MS);
  }
  return into;
}

function summary(all: number[]): Latencies {
  const times = all.filter((t) => !Number.isNaN(t)).sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)] ?? NaN;
  return { requests: all.length, failures: all.length - times.length, p50: at(0.5), p99: at(0.99) };
}

async function main() {
  const flags = parseFlags(process.argv.slice(2), ['due', 'rounds', 'contacts', 'idle', 'batch', 'log-level']);
  const due = intFlag(flags, 'due', 10_000, 1, 1_000_000);
  const rounds = intFlag(flags, 'rounds', 3, 1, 20);
  const contacts = intFlag(flags, 'contacts', 100_000, 1, 2_000_000);
  const idleSeconds = intFlag(flags, 'idle', 10, 1, 600);
  const batch = intFlag(flags, 'batch', 500, 1, 10_000);
  const url = benchDatabaseUrl(contacts);
  const { accountId, ownerId } = await benchAccount(url, contacts);
  const settled = await settle(url);
  if (settled) log(`moved ${settled} invoices already due before measuring`);

  const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-overdue-'));
  const env = { DATABASE_URL: url, AUTH_JWT_SECRET: BENCH_JWT_SECRET, METRICS_TOKEN: BENCH_METRICS_TOKEN, NODE_ENV: 'production', RATE_LIMITS: 'off', LOG_LEVEL: flags['log-level'] ?? 'warn' };
  // The service's own overdue worker waits a day: the rounds' job runs in the other process only.
  const server = await startServer({ name: 'service', cwd: ROOT, logFile: path.join(work, 'service.log'), args: ['--import', 'tsx', 'src/main.ts'], env: { ...env, OVERDUE_INTERVAL_MS: '86400000' } });
  try {
    const token = await mintToken(BENCH_JWT_SECRET, { sub: ownerId, expiresIn: '6h' });
    const list = `/api/v1/invoices?account_id=${accountId}`;
    const warm = Date.now() + 3000;
    await listLatencies(server, list, token, () => Date.now() > warm);
    const idleEnd = Date.now() + idleSeconds * 1000;
    const idle = summary(await listLatencies(server, list, token, () => Date.now() > idleEnd));
    const duringTimes: number[] = [];
    const runs: { moved: number; batches: number; seconds: number }[] = [];
    for (let round = 1; round <= rounds; round++) {
      await insertDue(url, accountId, due, round);
      const job = await startJob({ ...env, OVERDUE_BATCH_SIZE: String(batch) });
      let jobDone = false;
      const timing = listLatencies(server, list, token, () => jobDone, duringTimes);
      const result = await job.go().finally(() => (jobDone = true));
      await timing;
      runs.push(result);
      log(`round ${round}: moved ${result.moved} in ${result.batches} batches, ${result.seconds.toFixed(2)} s`);
      if (result.moved !== due) throw new Error(`round ${round} moved ${result.moved} of ${due}`);
    }
    const during = summary(duringTimes);
    const worst = Math.max(...runs.map((r) => r.seconds));
    const ratio = during.p99 / idle.p99;
    const report = [
      `Overdue job: ${due} invoices falling due at once, batch ${batch}, ${rounds} rounds; PostgreSQL ${await pgVersion(url)}, account of ${contacts} contacts and ${contacts * 2} invoices`,
      `job seconds per round: ${runs.map((r) => r.seconds.toFixed(2)).join(', ')} (target ≤ ${TARGETS.seconds}): ${worst <= TARGETS.seconds ? 'PASS' : 'MISS'}`,
      `GET /api/v1/invoices idle:   ${idle.requests} requests, p50 ${idle.p50.toFixed(1)} ms, p99 ${idle.p99.toFixed(1)} ms, ${idle.failures} failed`,
      `GET /api/v1/invoices during: ${during.requests} requests, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, ${during.failures} failed`,
      `list p99 during / idle: ${ratio.toFixed(2)}× (target ≤ ${TARGETS.listP99Ratio}×): ${ratio <= TARGETS.listP99Ratio && during.failures === 0 ? 'PASS' : 'MISS'}`,
    ];
    process.stdout.write(`\n${report.join('\n')}\n`);
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:overdue: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
