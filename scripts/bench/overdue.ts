// npm run bench:overdue -- [--object invoices|tasks] [--due N] [--rounds N] [--contacts 100000] [--idle 10] [--batch 500] [--log-level warn]
// An overdue job against its target, for invoices (docs/decisions.md §19 "Billing time": --due 10,000
// invoices that fall due at once are moved in ≤ 10 s without pushing list p99 above 2× of idle) or
// tasks (§21, issue #53: 100,000 due tasks announced in bounded batches without pushing list p99
// above 1.5× of idle). In one run:
//   1. a bench account of --contacts contacts and 2× as many invoices (BENCH_DATABASE_URL, made when
//      missing); whatever in it is already due is moved first, so only this run's records are due;
//   2. the service starts (its own overdue worker sleeps through the run) and the object's list
//      (GET /api/v1/invoices or /api/v1/tasks) is timed idle for --idle seconds;
//   3. each round inserts --due records due in the last 30 days (invoices sent, viewed, partial and
//      issued 30 days before; tasks open and created 30 days before), runs the job once in a process
//      of its own (another instance: scripts/bench/overdue-job.ts) and times the list meanwhile.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { mintToken } from '../../src/auth/token.js';
import { seedBench } from '../../src/cli/seed-bench.js';
import { openDatabase } from '../../src/db/client.js';
import { OVERDUE_OBJECTS, runOverdueJob, type OverdueObject } from './overdue-objects.js';
import { BENCH_JWT_SECRET, BENCH_METRICS_TOKEN, benchDatabaseUrl, ensureMigrated, intFlag, parseFlags } from './common.js';
import { listLatencies, summary } from './list-latency.js';
import { startServer } from './processes.js';
import { pgVersion, ROOT } from './run.js';

/** The issues' targets (#26 for invoices, #53 for tasks). */
const TARGETS: Record<OverdueObject, { seconds: number; listP99Ratio: number }> = {
  invoices: { seconds: 10, listP99Ratio: 2 },
  tasks: { seconds: Infinity, listP99Ratio: 1.5 },
};
/** One bench account per size, so sizes never mix in one database. */
const benchAccountName = (contacts: number) => `Overdue bench (${contacts} contacts)`;

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

/** Moves what is due already (seeded history), so a round's records are the only ones due. */
async function settle(url: string, object: OverdueObject): Promise<number> {
  const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 2 });
  try {
    return (await runOverdueJob(db.prisma, object, 5000)).moved;
  } finally {
    await db.close();
  }
}

/** `n` records of the account that fell due over the last month, in one statement (overdue-objects.ts). */
async function insertDue(url: string, object: OverdueObject, accountId: string, n: number, round: number): Promise<void> {
  // Ten minutes, not the service's 10 s (its bound, and the default it gives its role in this
  // database): 100,000 tasks with their triggers take longer on a busy machine.
  const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 1, bounds: { statementTimeoutMs: 600_000 } });
  try {
    await db.prisma.$executeRawUnsafe("SET statement_timeout = '10min'");
    await db.prisma.$executeRaw(OVERDUE_OBJECTS[object].insertDue(accountId, n, `${Date.now()}-${round}`));
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



async function main() {
  const flags = parseFlags(process.argv.slice(2), ['object', 'due', 'rounds', 'contacts', 'idle', 'batch', 'log-level']);
  const object = (flags.object ?? 'invoices') as OverdueObject;
  if (!(object in OVERDUE_OBJECTS)) throw new Error(`--object: invoices or tasks, not ${flags.object}`);
  const { defaults } = OVERDUE_OBJECTS[object];
  const due = intFlag(flags, 'due', defaults.due, 1, 1_000_000);
  const rounds = intFlag(flags, 'rounds', defaults.rounds, 1, 20);
  const contacts = intFlag(flags, 'contacts', 100_000, 1, 2_000_000);
  const idleSeconds = intFlag(flags, 'idle', 10, 1, 600);
  const batch = intFlag(flags, 'batch', 500, 1, 10_000);
  const url = benchDatabaseUrl(contacts);
  const { accountId, ownerId } = await benchAccount(url, contacts);
  const settled = await settle(url, object);
  if (settled) log(`moved ${settled} ${object} already due before measuring`);

  const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-overdue-'));
  const env = { DATABASE_URL: url, AUTH_JWT_SECRET: BENCH_JWT_SECRET, METRICS_TOKEN: BENCH_METRICS_TOKEN, NODE_ENV: 'production', RATE_LIMITS: 'off', LOG_LEVEL: flags['log-level'] ?? 'warn' };
  // The service's own overdue worker waits a day: the rounds' job runs in the other process only.
  const server = await startServer({ name: 'service', cwd: ROOT, logFile: path.join(work, 'service.log'), args: ['--import', 'tsx', 'src/main.ts'], env: { ...env, OVERDUE_INTERVAL_MS: '86400000' } });
  try {
    const token = await mintToken(BENCH_JWT_SECRET, { sub: ownerId, expiresIn: '6h' });
    const list = `/api/v1/${object}?account_id=${accountId}`;
    const warm = Date.now() + 3000;
    await listLatencies(server, list, token, () => Date.now() > warm);
    const idleEnd = Date.now() + idleSeconds * 1000;
    const idle = summary(await listLatencies(server, list, token, () => Date.now() > idleEnd));
    const duringTimes: number[] = [];
    const runs: { moved: number; batches: number; seconds: number }[] = [];
    for (let round = 1; round <= rounds; round++) {
      await insertDue(url, object, accountId, due, round);
      const job = await startJob({ ...env, OVERDUE_BATCH_SIZE: String(batch), OVERDUE_OBJECT: object });
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
    const target = TARGETS[object];
    const label = `GET /api/v1/${object}`;
    const report = [
      `Overdue job: ${due} ${object} falling due at once, batch ${batch}, ${rounds} rounds; PostgreSQL ${await pgVersion(url)}, account of ${contacts} contacts and ${contacts * 2} invoices`,
      `job seconds per round: ${runs.map((r) => `${r.seconds.toFixed(2)} (${r.batches} batches)`).join(', ')}` +
        (Number.isFinite(target.seconds) ? ` (target ≤ ${target.seconds}): ${worst <= target.seconds ? 'PASS' : 'MISS'}` : ''),
      `${label} idle:   ${idle.requests} requests, p50 ${idle.p50.toFixed(1)} ms, p99 ${idle.p99.toFixed(1)} ms, ${idle.failures} failed`,
      `${label} during: ${during.requests} requests, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, ${during.failures} failed`,
      `list p50 during / idle: ${(during.p50 / idle.p50).toFixed(2)}×`,
      `list p99 during / idle: ${ratio.toFixed(2)}× (target ≤ ${target.listP99Ratio}×): ${ratio <= target.listP99Ratio && during.failures === 0 ? 'PASS' : 'MISS'}`,
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
