// npm run bench:import -- [--rows 1000000] [--contacts 100000] [--idle 60] [--pool 10] [--log-level info]
//                         [--out report.json] [--pglite] [--cpu-prof dir] [--node-flags "..."] [--service-log file]
//                         [--beside] [--concurrency n] [--no-limit]
// A CSV import of --rows new contacts (docs/imports.md), against its limit, in one run:
//   1. the CSV (the contacts export's shape, ~120 bytes a row) is generated, streamed, into a temp file;
//   2. the limit: the same rows COPYed into a bare twin of `contacts` with the same indexes;
//   3. the service imports the file (POST /api/v1/imports, streamed, match_on=email) and is polled to
//      its end; meanwhile its RSS is sampled and GET /contacts is timed, as it was timed idle before.
// Against the bench database of --contacts (scripts/bench/dataset.ts); what the import wrote is then
// deleted (removeBenchWrites). --pglite: the same import into a fresh embedded database in a temp
// dir (100,000 rows by default; no COPY there, so no limit): how much slower PGlite imports.
// --cpu-prof: the service runs under `node --cpu-prof`, its profile written into dir at exit (read
// it with scripts/bench/profile-summary.ts, as npm run bench:profile groups it). --node-flags: more
// flags for the service's node (e.g. "--trace-gc"); --service-log: its log is copied there at the end.
// --beside: once the import runs, another account posts a one-row import, timed from its POST to its
// end (docs/decisions.md §26: within 5 s, whatever the first import's size); --concurrency sets the
// service's IMPORT_CONCURRENCY; --no-limit skips step 2 (no COPY limit, no ratio).
import { copyFileSync, createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintToken } from '../../src/auth/token.js';
import { seedBench } from '../../src/cli/seed-bench.js';
import { openDatabase } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { MAX_IMPORT_ROWS } from '../../src/imports/intake.js';
import { BENCH_JWT_SECRET, BENCH_METRICS_TOKEN, benchDatabaseUrl, DEFAULT_CONTACTS, intFlag, numberFlag, parseFlags } from './common.js';
import { ensureDataset, removeBenchWrites, sizeFor } from './dataset.js';
import { copyLimit, IMPORT_DOMAIN, writeImportCsv } from './import-data.js';
import { formatImportReport, verdicts, type ImportReport, type Latencies } from './import-report.js';
import { rssOf, sampleRss, startServer, type Server } from './processes.js';
import { pgVersion, ROOT } from './run.js';

/** Between list requests: a person paging while the import runs, not a load test taking the machine from it. */
const LIST_GAP_MS = 50;
const POLL_MS = 200;
const WARMUP_SECONDS = 3;

/** Where the import runs: the service's database settings, the account importing, and how to undo the run. */
type Target = { database: string; url: string | null; accountId: string; ownerId: string; env: Record<string, string>; cleanup: () => Promise<void>; besideAccountId?: string };
/** An import as GET /api/v1/imports/{id} answers it (the fields read here). */
type ImportState = { id: string; status: string; rows_processed: number; created: number; updated: number; failed: number; error: string | null };

const log = (line: string) => process.stderr.write(`${line}\n`);
const mb = (bytes: number) => bytes / 2 ** 20;

/** The bench database's main account (made when missing), cleared of earlier bench writes. */
async function postgresTarget(contacts: number): Promise<Target> {
  const url = benchDatabaseUrl(contacts);
  const dataset = await ensureDataset(url, sizeFor(contacts), { log });
  const leftovers = await removeBenchWrites(dataset);
  if (leftovers > 0) log(`dataset: removed ${leftovers} rows an earlier run wrote`);
  const besideAccountId = randomUUID();
  await withPg(url, (client) => client.query(`INSERT INTO accounts (id, name, owner_id) VALUES ($1, 'bench:import beside', $2)`, [besideAccountId, dataset.ownerId]));
  return {
    database: `PostgreSQL ${await pgVersion(url)} (${new URL(url).pathname.slice(1)}, ${contacts} contacts)`,
    url, accountId: dataset.accountId, ownerId: dataset.ownerId, besideAccountId,
    env: { DATABASE_URL: url },
    cleanup: async () => {
      await removeBenchWrites(dataset);
      await withPg(url, (client) => client.query('DELETE FROM accounts WHERE id = $1', [besideAccountId]));
    },
  };
}

/** A fresh embedded database in `dir` with one account of `contacts` contacts (the service reopens it). */
async function pgliteTarget(dir: string, contacts: number): Promise<Target> {
  const db = await openDatabase({ dataDir: dir });
  try {
    await applyMigrations(db);
    const seeded = await seedBench(db.prisma, { contacts, deals: 0, invoices: 0, submissions: 0, seed: 42 });
    const beside = await db.prisma.account.create({ data: { name: 'bench:import beside', ownerId: seeded.ownerId } });
    return {
      database: `PGlite (${contacts} contacts)`, url: null, accountId: seeded.accountId, ownerId: seeded.ownerId, besideAccountId: beside.id,
      // The directory goes with the run's temp dir.
      env: { DATA_DIR: dir }, cleanup: async () => {},
    };
  } finally {
    await db.close();
  }
}

async function withPg<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Another account's one-row import, posted while the long one runs: seconds from its POST to its
 * end, and how far the long import was then (docs/decisions.md §26).
 */
async function besideImport(server: Server, accountId: string, auth: Record<string, string>, longId: string) {
  const started = performance.now();
  const posted = await fetch(`${server.baseUrl}/api/v1/imports?account_id=${accountId}&object=contacts`, {
    method: 'POST', headers: { ...auth, 'content-type': 'text/csv' }, body: `first_name,email\nBeside,beside-${Date.now()}@${IMPORT_DOMAIN}\n`,
  });
  if (posted.status !== 202) throw new Error(`the beside import's POST answered ${posted.status}: ${(await posted.text()).slice(0, 300)}`);
  let state = ((await posted.json()) as { data: ImportState }).data;
  while (!['completed', 'failed', 'cancelled'].includes(state.status)) {
    await sleep(POLL_MS / 4);
    state = ((await (await fetch(`${server.baseUrl}/api/v1/imports/${state.id}`, { headers: auth })).json()) as { data: ImportState }).data;
  }
  const seconds = (performance.now() - started) / 1000;
  const long = ((await (await fetch(`${server.baseUrl}/api/v1/imports/${longId}`, { headers: auth })).json()) as { data: ImportState }).data;
  log(`  beside: another account's one-row import ${state.status} in ${seconds.toFixed(2)} s (the long import ${long.status}, ${long.rows_processed} rows processed)`);
  return { seconds, status: state.status, longStatus: long.status, longRowsProcessed: long.rows_processed };
}

/** GET `pathAndQuery` one request at a time, LIST_GAP_MS apart, until `done()`: each one's latency. */
export async function listLatencies(server: Server, pathAndQuery: string, token: string, done: () => boolean): Promise<Latencies> {
  const times: number[] = [];
  let failures = 0;
  while (!done()) {
    const started = performance.now();
    const response = await fetch(server.baseUrl + pathAndQuery, { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
    await response?.arrayBuffer();
    if (response?.status === 200) times.push(performance.now() - started);
    else failures++;
    await sleep(LIST_GAP_MS);
  }
  return latencies(times, failures);
}

function latencies(times: number[], failures: number): Latencies {
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)] ?? NaN;
  return { requests: times.length + failures, failures, p50: at(0.5), p99: at(0.99) };
}

/**
 * The same requests as the service timed them (its request log, `durationMs`), those that ended
 * between `from` and `to` (epoch ms). On this machine the bench's client shares two cores with the
 * service, its import and PostgreSQL: what it measures includes its own waits for a core.
 */
export function serviceTimed(logFile: string, route: string, from: number, to: number): Latencies {
  const times: number[] = [];
  let failures = 0;
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes(`"route":"${route}"`) || !line.includes('"msg":"request"')) continue;
    const entry = JSON.parse(line) as { time: number; method: string; status: number; durationMs: number };
    if (entry.method !== 'GET' || entry.time < from || entry.time > to) continue;
    if (entry.status === 200) times.push(entry.durationMs);
    else failures++;
  }
  return latencies(times, failures);
}

/** POSTs the file as curl --data-binary would (Content-Length, streamed from disk); the answer's status and body. */
async function postFile(url: string, file: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const req = request(url, { method: 'POST', headers: { ...headers, 'content-type': 'text/csv', 'content-length': String(statSync(file).size) } });
  const answered = new Promise<IncomingMessage>((resolve, reject) => req.once('response', resolve).once('error', reject));
  // The service may answer (a refusal) before the body is sent: its answer then says why, not the broken pipe.
  const sent = pipeline(createReadStream(file, { highWaterMark: 256 * 1024 }), req).catch((error: unknown) => error);
  const response = await answered;
  let text = '';
  for await (const chunk of response) text += chunk;
  await sent;
  return { status: response.statusCode ?? 0, text };
}

async function measureImport(server: Server, target: Target, token: string, file: string, rows: number, idleSeconds: number, beside: boolean) {
  const list = `/api/v1/contacts?account_id=${target.accountId}`;
  const auth = { authorization: `Bearer ${token}` };
  // The first requests compile code and plan queries: a warm-up, not counted as idle latency.
  const warmUntil = performance.now() + WARMUP_SECONDS * 1000;
  await listLatencies(server, list, token, () => performance.now() >= warmUntil);
  const idleUntil = performance.now() + idleSeconds * 1000;
  log(`list requests idle for ${idleSeconds} s`);
  const idleFrom = Date.now();
  const idle = await listLatencies(server, list, token, () => performance.now() >= idleUntil);
  const duringFrom = Date.now();
  let ended = false;
  const rss = sampleRss(server.pid);
  const during = listLatencies(server, list, token, () => ended);
  // Also on a failure: neither the list loop nor the sampling may outlive the import.
  const stop = () => ((ended = true), rss.stop());
  let stored = 0;
  // --beside: started once the long import has written rows, awaited after it.
  let besideRun: ReturnType<typeof besideImport> | null = null;
  const onRunning = (id: string) => {
    if (beside && target.besideAccountId && !besideRun) besideRun = besideImport(server, target.besideAccountId, auth, id);
  };
  const { state, intakeSeconds, seconds } = await runImport(server, target.accountId, auth, file, rows, () => (stored = rssOf(server.pid) ?? 0), onRunning).catch((error: unknown) => {
    stop();
    throw error;
  });
  const besideResult = besideRun ? await besideRun : null;
  const memory = stop();
  const listed = await during;
  const service = { idle: serviceTimed(server.logFile, '/api/v1/contacts', idleFrom, duringFrom), during: serviceTimed(server.logFile, '/api/v1/contacts', duringFrom, Date.now()) };
  return {
    idle, during: listed, service, beside: besideResult,
    import: { id: state.id, status: state.status, seconds, intakeSeconds, rowsPerSecond: rows / seconds, created: state.created, updated: state.updated, failed: state.failed, error: state.error },
    rss: { beforeMb: mb(memory.before), storedMb: mb(stored), peakMb: mb(memory.peak), growthMb: mb(memory.peak - memory.before), source: memory.source },
  };
}

/** POSTs the file, then polls the import until it ends; seconds from the POST's start. */
async function runImport(server: Server, accountId: string, auth: Record<string, string>, file: string, rows: number, onStored: () => void, onRunning: (id: string) => void = () => {}) {
  const started = performance.now();
  log(`importing ${rows} rows`);
  const posted = await postFile(`${server.baseUrl}/api/v1/imports?account_id=${accountId}&object=contacts&match_on=email`, file, { ...auth, 'x-file-name': 'bench-import.csv' });
  if (posted.status !== 202) throw new Error(`POST /api/v1/imports answered ${posted.status}: ${posted.text.slice(0, 300)}`);
  const intakeSeconds = (performance.now() - started) / 1000;
  onStored();
  log(`  file stored in ${intakeSeconds.toFixed(1)} s; waiting for the worker`);
  let state = (JSON.parse(posted.text) as { data: ImportState }).data;
  let reported = 0;
  while (!['completed', 'failed', 'cancelled'].includes(state.status)) {
    await sleep(POLL_MS);
    const response = await fetch(`${server.baseUrl}/api/v1/imports/${state.id}`, { headers: auth });
    if (response.status !== 200) throw new Error(`GET /api/v1/imports/${state.id} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    state = ((await response.json()) as { data: ImportState }).data;
    if (state.rows_processed - reported >= rows / 10) log(`  ${(reported = state.rows_processed)} rows processed`);
    if (state.status === 'running' && state.rows_processed > 0) onRunning(state.id);
  }
  return { state, intakeSeconds, seconds: (performance.now() - started) / 1000 };
}

async function main() {
  const flags = parseFlags(process.argv.slice(2), ['rows', 'contacts', 'idle', 'pool', 'log-level', 'out', 'pglite', 'cpu-prof', 'node-flags', 'service-log', 'beside', 'concurrency', 'no-limit']);
  const pglite = flags.pglite === 'true';
  const rows = intFlag(flags, 'rows', pglite ? 100_000 : 1_000_000, 1, MAX_IMPORT_ROWS);
  const contacts = intFlag(flags, 'contacts', pglite ? 10_000 : DEFAULT_CONTACTS, 1, 1_000_000);
  // 60 s: ~1,000 idle requests, so the idle p99 is not one slow request among 175 (as with 10 s).
  const idleSeconds = numberFlag(flags, 'idle', 60, 1, 300);
  const serviceEnv = {
    AUTH_JWT_SECRET: BENCH_JWT_SECRET, METRICS_TOKEN: BENCH_METRICS_TOKEN, DATABASE_POOL_MAX: String(intFlag(flags, 'pool', 10, 1, 200)),
    NODE_ENV: 'production', RATE_LIMITS: 'off', LOG_LEVEL: flags['log-level'] ?? 'info',
    ...(flags.concurrency ? { IMPORT_CONCURRENCY: String(intFlag(flags, 'concurrency', 2, 2, 16)) } : {}),
  };
  const startedAt = new Date().toISOString();
  const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-import-'));
  const file = path.join(work, 'contacts.csv');
  let target: Target | null = null;
  let server: Server | null = null;
  let finished = false;
  try {
    log(`generating ${rows} rows (e-mails @${IMPORT_DOMAIN}) into ${file}`);
    const generating = performance.now();
    const bytes = await writeImportCsv(file, rows);
    const generateSeconds = (performance.now() - generating) / 1000;
    target = pglite ? await pgliteTarget(path.join(work, 'pglite'), contacts) : await postgresTarget(contacts);
    let limit = null;
    if (target.url && flags['no-limit'] !== 'true') {
      log(`COPY of ${rows} rows into a bare copy of contacts (the limit)`);
      limit = await copyLimit(target.url, target.accountId, rows);
    }
    log('starting the service');
    server = await startServer({
      name: 'service', cwd: ROOT, logFile: path.join(work, 'service.log'), args: [
        ...(flags['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', flags['cpu-prof']] : []),
        // e.g. --node-flags "--trace-gc": V8's own account of the run, in the service's log.
        ...(flags['node-flags']?.split(/\s+/).filter(Boolean) ?? []),
        '--import', 'tsx', 'src/main.ts',
      ], env: { ...target.env, ...serviceEnv },
    });
    const token = await mintToken(BENCH_JWT_SECRET, { sub: target.ownerId, expiresIn: '6h' });
    const measured = await measureImport(server, target, token, file, rows, idleSeconds, flags.beside === 'true');
    const partial = {
      startedAt, database: target.database, rows, fileMb: mb(bytes), generateSeconds, limit, import: measured.import, rss: measured.rss,
      list: { idle: measured.idle, during: measured.during, service: measured.service }, beside: measured.beside,
    };
    const report: ImportReport = { ...partial, verdicts: verdicts(partial, pglite) };
    process.stdout.write(`\n${formatImportReport(report)}\n`);
    if (flags.out) writeFileSync(flags.out, `${JSON.stringify(report, null, 2)}\n`);
    finished = true;
  } finally {
    await server?.stop();
    if (flags['service-log'] && server) copyFileSync(server.logFile, flags['service-log']);
    if (target) {
      log('removing what the import wrote');
      await target.cleanup();
    }
    // A failed run keeps the service's log (not the file or a PGlite database) to say what happened.
    if (finished) rmSync(work, { recursive: true, force: true });
    else {
      rmSync(file, { force: true });
      rmSync(path.join(work, 'pglite'), { recursive: true, force: true });
      log(`service log: ${path.join(work, 'service.log')}`);
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`bench:import: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
