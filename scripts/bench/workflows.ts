// npm run bench:workflows -- [--samples 50] [--burst 10000] [--contacts 20000] [--idle 15] [--posts 10] [--ceiling 1200] [--cpu-prof dir] [--log-level warn] [--service-log file] [--database crm_bench_workflows] [--probe]
// Workflows against issue 75's targets (docs/workflows.md), on PostgreSQL (the service started as
// every bench starts it), in one run:
//   1. the events trigger's cost on a write: a fresh account's POST /api/v1/contacts req/s (4 at a
//      time, --posts seconds) and the trigger's own time (EXPLAIN ANALYZE of one-row event inserts,
//      rolled back), with no workflow, one on another event type, and one on contact.created whose
//      condition never holds;
//   2. latency: a workflow contact.created → add_note, then --samples contacts one at a time, each
//      from its event's occurred_at to its run's finished_at (target: p50 ≤ 2 s);
//   3. a burst: --burst contacts through POST /api/v1/contacts/batch (100 a request, 4 at a time):
//      every run ends, none twice (runs and notes counted in the database), at ≥ 300 runs a second
//      (from the first event's occurred_at to the last run's finished_at), while another account's
//      GET /api/v1/contacts (--contacts contacts) is timed, against its idle p99 (target ≤ 1.5×).
// Its own database, crm_bench_workflows (the other account seeded once); the run's account is
// deleted at the end (--database: another crm_bench* database, so that two benches side by side do
// not run each other's runs). --cpu-prof: the service runs under node --cpu-prof, its profile written
// to dir; --service-log: its log is copied there at the end. --probe: where the list's time goes in
// each phase (scripts/bench/phase-probe.ts: the service's event-loop delay and pool waiters, the
// database's active backends, their waits and CPU, the machine's idle share).
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { mintToken } from '../../src/auth/token.js';
import { seedBench } from '../../src/cli/seed-bench.js';
import { openDatabase } from '../../src/db/client.js';
import { BENCH_JWT_SECRET, BENCH_METRICS_TOKEN, ensureMigrated, intFlag, namedBenchDatabaseUrl, parseFlags } from './common.js';
import { listLatencies, summary } from './list-latency.js';
import { startServer, type Server } from './processes.js';
import { startProbe, summarisePhases } from './phase-probe.js';
import { pgVersion, ROOT } from './run.js';

const TARGETS = { firstStepP50Ms: 2000, runsPerSecond: 300, listP99Ratio: 1.5 };
const BATCH = 100;
const WRITERS = 4;

const log = (line: string) => process.stderr.write(`${line}\n`);



/** The other tenant (seeded when missing): an account of `contacts` contacts whose list is timed. */
async function otherTenant(url: string, contacts: number): Promise<{ accountId: string; ownerId: string }> {
  await ensureMigrated(url);
  const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 2 });
  const name = `Workflows bench: other tenant (${contacts} contacts)`;
  try {
    const existing = await db.prisma.account.findFirst({ where: { name }, select: { id: true, ownerId: true } });
    if (existing) return { accountId: existing.id, ownerId: existing.ownerId };
    log(`seeding the other tenant: ${contacts} contacts`);
    const seeded = await seedBench(db.prisma, { contacts, deals: 0, invoices: 0, submissions: 0, notes: 0, tasks: 0, seed: 75 });
    await db.prisma.account.update({ where: { id: seeded.accountId }, data: { name } });
    await db.prisma.$executeRawUnsafe('ANALYZE');
    return seeded;
  } finally {
    await db.close();
  }
}

async function api(server: Server, token: string, method: string, route: string, body?: unknown) {
  // One key a request: a 503 (no pooled connection within its wait, on a busy machine) is tried again, never applied twice.
  const key = randomUUID();
  let response: Response;
  for (let attempt = 1; ; attempt++) {
    response = await fetch(server.baseUrl + route, {
      method, headers: { authorization: `Bearer ${token}`, 'idempotency-key': key, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
    });
    if (response.status !== 503 || attempt === 5) break;
    await response.arrayBuffer();
    log(`${method} ${route}: 503, trying again`);
    await sleep(200 * attempt);
  }
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${route} answered ${response.status}: ${text.slice(0, 400)}`);
  return text ? (JSON.parse(text) as { data: Record<string, unknown> }) : null;
}

/** POST /api/v1/contacts, WRITERS at a time, for `seconds`: requests a second and the p50. */
async function postRate(server: Server, token: string, accountId: string, seconds: number) {
  const until = performance.now() + seconds * 1000;
  const times: number[] = [];
  let n = 0;
  await Promise.all(Array.from({ length: WRITERS }, async () => {
    while (performance.now() < until) {
      const started = performance.now();
      await api(server, token, 'POST', '/api/v1/contacts', { account_id: accountId, first_name: 'Rate', last_name: String(n++) });
      times.push(performance.now() - started);
    }
  }));
  return { perSecond: times.length / seconds, p50: summary(times).p50 };
}

/** The trigger's own time on `inserts` one-row event inserts (EXPLAIN ANALYZE's Triggers), rolled back: mean ms. */
async function triggerTime(client: pg.Client, accountId: string, inserts: number): Promise<number> {
  await client.query('BEGIN');
  try {
    let total = 0;
    for (let i = 0; i < inserts; i++) {
      const { rows } = await client.query<{ 'QUERY PLAN': [{ Triggers: { 'Trigger Name': string; Time: number }[] }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) INSERT INTO events (id, account_id, type, occurred_at, actor_type, actor_id, subject_id, data)
         VALUES (gen_random_uuid(), $1, 'contact.created', now(), 'user', 'bench', gen_random_uuid(), '{"object": {"source": "bench"}}')`,
        [accountId],
      );
      total += rows[0]!['QUERY PLAN'][0].Triggers.find((t) => t['Trigger Name'] === 'events_start_workflow_runs')?.Time ?? NaN;
    }
    return total / inserts;
  } finally {
    await client.query('ROLLBACK');
  }
}

/** CPU seconds (user + system) a process has used, from /proc (Linux): a cost per run that the machine's load does not change much. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

async function waitFor<T>(what: string, check: () => Promise<T | null>, timeoutMs: number, everyMs = 5): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await check();
    if (found !== null) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(everyMs);
  }
}

async function main() {
  const flags = parseFlags(process.argv.slice(2), ['samples', 'burst', 'contacts', 'idle', 'posts', 'cpu-prof', 'log-level', 'service-log', 'ceiling', 'database', 'probe']);
  const samples = intFlag(flags, 'samples', 50, 1, 1000);
  const burst = intFlag(flags, 'burst', 10_000, BATCH, 200_000);
  const contacts = intFlag(flags, 'contacts', 20_000, 1, 1_000_000);
  const idleSeconds = intFlag(flags, 'idle', 15, 1, 600);
  const postSeconds = intFlag(flags, 'posts', 10, 1, 600);
  const ceiling = intFlag(flags, 'ceiling', 1200, 10, 7200);
  const url = namedBenchDatabaseUrl(flags.database ?? 'crm_bench_workflows');
  const other = await otherTenant(url, contacts);
  // Unbounded: the service gives its role a 10 s statement_timeout in this database at start, and
  // counting a burst's runs, events and notes on a busy machine may take longer.
  const client = new pg.Client({ connectionString: url, options: '-c statement_timeout=0' });
  await client.connect();
  // Each run leaves the tables it wrote full of dead rows, which a server with autovacuum off (a
  // shared bench machine's) keeps: a run starts from vacuumed tables, so runs compare.
  await client.query('VACUUM ANALYZE workflow_runs, events, event_queue, notes, contacts');
  // The run's own account, owned by the same person (one token), deleted at the end.
  const accountId = randomUUID();
  await client.query(`INSERT INTO accounts (id, name, owner_id) VALUES ($1, 'Workflows bench: runs', $2)`, [accountId, other.ownerId]);

  const work = mkdtempSync(path.join(tmpdir(), 'crm-bench-workflows-'));
  const prof = flags['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(flags['cpu-prof'])}`] : [];
  const probeFile = path.join(work, 'probe.jsonl');
  const probing = 'probe' in flags ? ['--import', path.join(ROOT, 'scripts/bench/service-probe.ts')] : [];
  const env = { DATABASE_URL: url, AUTH_JWT_SECRET: BENCH_JWT_SECRET, METRICS_TOKEN: BENCH_METRICS_TOKEN, NODE_ENV: 'production', RATE_LIMITS: 'off', LOG_LEVEL: flags['log-level'] ?? 'warn', BENCH_PROBE_FILE: probing.length ? probeFile : '' };
  const server = await startServer({ name: 'service', cwd: ROOT, logFile: path.join(work, 'service.log'), args: [...prof, '--import', 'tsx', ...probing, 'src/main.ts'], env });
  const report: string[] = [];
  const out = (line: string) => (report.push(line), log(line));
  try {
    const token = await mintToken(BENCH_JWT_SECRET, { sub: other.ownerId, expiresIn: '6h' });
    const flow = (name: string, trigger: unknown, body = 'Welcome') => api(server, token, 'POST', '/api/v1/workflows', { account_id: accountId, name, trigger, actions: [{ type: 'add_note', params: { body } }] });
    const deactivate = (id: unknown) => api(server, token, 'PATCH', `/api/v1/workflows/${id as string}`, { active: false });
    out(`Workflows bench: PostgreSQL ${await pgVersion(url)}, other tenant of ${contacts} contacts; load before: ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')}`);

    // 1. The trigger's cost on every write.
    await postRate(server, token, accountId, 2); // warm-up
    const modes: [string, () => Promise<unknown>][] = [
      ['no workflow', async () => null],
      ['one on deal.created', async () => (await flow('Other type', { event: 'deal.created' }))!.data.id],
      ['one on contact.created, condition never holds', async () => (await flow('Never', { event: 'contact.created', conditions: [{ path: 'object.source', op: 'eq', value: 'never' }] }))!.data.id],
    ];
    out('| the account has | POST /api/v1/contacts req/s (4 at a time) | p50 ms | trigger ms per one-row insert (mean of 500) |\n|---|---:|---:|---:|');
    for (const [label, setup] of modes) {
      const id = await setup();
      const rate = await postRate(server, token, accountId, postSeconds);
      const trigger = await triggerTime(client, accountId, 500);
      out(`| ${label} | ${rate.perSecond.toFixed(0)} | ${rate.p50.toFixed(1)} | ${trigger.toFixed(3)} |`);
      if (id) await deactivate(id);
    }
    // The non-matching runs the last mode made are removed by the runner: wait until none is left.
    await waitFor('non-matching runs removed', async () => ((await client.query(`SELECT 1 FROM workflow_runs WHERE account_id = $1 AND status = 'pending' LIMIT 1`, [accountId])).rowCount ? null : true), 60_000, 100);

    // 2. The first step on an idle service.
    const welcome = (await flow('Welcome', { event: 'contact.created' }, 'Welcome {{object.first_name}}'))!.data.id as string;
    const lags: number[] = [];
    for (let i = 0; i < samples; i++) {
      const contact = (await api(server, token, 'POST', '/api/v1/contacts', { account_id: accountId, first_name: `Sample${i}` }))!.data.id as string;
      lags.push(await waitFor('a sample run', async () => {
        const { rows } = await client.query<{ lag: number }>(
          `SELECT extract(epoch FROM r.finished_at - e.occurred_at) * 1000 AS lag FROM workflow_runs r JOIN events e ON e.account_id = r.account_id AND e.id = r.event_id
           WHERE r.account_id = $1 AND r.workflow_id = $2 AND e.subject_id = $3 AND r.status = 'succeeded'`, [accountId, welcome, contact]);
        return rows[0] ? Number(rows[0].lag) : null;
      }, 30_000));
    }
    const lag = summary(lags);
    out(`first step, occurred_at → finished_at, ${samples} contacts one at a time: p50 ${lag.p50.toFixed(0)} ms, p99 ${lag.p99.toFixed(0)} ms (target p50 ≤ ${TARGETS.firstStepP50Ms}): ${lag.p50 <= TARGETS.firstStepP50Ms ? 'PASS' : 'MISS'}`);

    // 3. The burst, with the other tenant's list timed idle first.
    const list = `/api/v1/contacts?account_id=${other.accountId}`;
    const warm = Date.now() + 3000;
    await listLatencies(server, list, token, () => Date.now() > warm);
    const probe = probing.length ? await startProbe(url) : null;
    const idleStart = Date.now();
    const idleEnd = Date.now() + idleSeconds * 1000;
    const idle = summary(await listLatencies(server, list, token, () => Date.now() > idleEnd));
    const { rows: [mark] } = await client.query<{ at: Date }>('SELECT now() AS at');
    let ended = false;
    const duringTimes: number[] = [];
    const timing = listLatencies(server, list, token, () => ended, duringTimes);
    const burstStarted = performance.now();
    const cpuBefore = cpuSeconds(server.pid);
    let next = 0;
    try {
      await Promise.all(Array.from({ length: WRITERS }, async () => {
        while (next < burst) {
          const from = next;
          next += BATCH;
          const inputs = Array.from({ length: Math.min(BATCH, burst - from) }, (_, k) => ({ first_name: 'Burst', last_name: String(from + k) }));
          await api(server, token, 'POST', `/api/v1/contacts/batch`, { account_id: accountId, mode: 'create', records: inputs });
        }
      }));
      const writeSeconds = (performance.now() - burstStarted) / 1000;
      const writesEnd = Date.now();
      const duringWrites = duringTimes.length;
      // Past the ceiling the runs are counted as they stand: the report says how many had ended.
      await waitFor('every burst run ended', async () => {
        const { rows } = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM workflow_runs WHERE account_id = $1 AND workflow_id = $2 AND started_at >= $3 AND status IN ('succeeded', 'failed', 'skipped')`, [accountId, welcome, mark!.at]);
        return rows[0]!.n >= burst ? true : null;
      }, ceiling * 1000, 250).catch((err: Error) => log(`${err.message}: counted as they stand`));
      ended = true;
      const runsEnd = Date.now();
      const cpu = cpuSeconds(server.pid) - cpuBefore;
      await timing;
      const samples = await probe?.stop();
      const { rows: [counted] } = await client.query<{ events: number; runs: number; made: number; succeeded: number; twice: number; notes: number; noted: number; first: Date; last: Date }>(`
        WITH ev AS (SELECT id, subject_id, occurred_at FROM events WHERE account_id = $1 AND type = 'contact.created' AND occurred_at >= $3),
             ru AS (SELECT r.* FROM workflow_runs r JOIN ev ON ev.id = r.event_id WHERE r.account_id = $1 AND r.workflow_id = $2),
             nt AS (SELECT contact_id, count(*) AS n FROM notes WHERE account_id = $1 AND created_at >= $3 GROUP BY contact_id)
        SELECT (SELECT count(*)::int FROM ev) AS events, (SELECT count(*)::int FROM ru WHERE status IN ('succeeded', 'failed', 'skipped')) AS runs, (SELECT count(*)::int FROM ru) AS made,
               (SELECT count(*)::int FROM ru WHERE status = 'succeeded') AS succeeded,
               (SELECT count(*)::int FROM (SELECT event_id FROM ru GROUP BY event_id HAVING count(*) > 1) d) AS twice,
               (SELECT coalesce(sum(n), 0)::int FROM nt) AS notes, (SELECT count(*)::int FROM nt WHERE n > 1) AS noted,
               (SELECT min(occurred_at) FROM ev) AS first, (SELECT max(finished_at) FROM ru WHERE status IN ('succeeded', 'failed', 'skipped')) AS last`, [accountId, welcome, mark!.at]);
      const c = counted!;
      const seconds = (c.last.getTime() - c.first.getTime()) / 1000;
      const perSecond = c.runs / seconds;
      const during = summary(duringTimes);
      const ratio = during.p99 / idle.p99;
      const once = c.events === burst && c.made === burst && c.runs === burst && c.succeeded === burst && c.twice === 0 && c.notes === burst && c.noted === 0;
      out(`burst: ${burst} contacts in ${burst / BATCH} batch requests (${WRITERS} at a time) written in ${writeSeconds.toFixed(2)} s`);
      out(`runs: ${c.events} events, ${c.made} runs made, ${c.runs} ended, ${c.succeeded} succeeded, ${c.twice} events run twice, ${c.notes} notes (${c.noted} contacts with more than one): ${once ? 'PASS' : 'MISS'}`);
      out(`runs a second, first event → last ended run: ${perSecond.toFixed(0)} (${seconds.toFixed(2)} s; target ≥ ${TARGETS.runsPerSecond}): ${perSecond >= TARGETS.runsPerSecond ? 'PASS' : 'MISS'}`);
      out(`the service's CPU during the burst (its writes, the runs, the list requests): ${cpu.toFixed(1)} s, ${((cpu * 1000) / burst).toFixed(2)} ms a run`);
      out(`other tenant's GET /api/v1/contacts idle:   ${idle.requests} requests, p50 ${idle.p50.toFixed(1)} ms, p99 ${idle.p99.toFixed(1)} ms, ${idle.failures} failed`);
      out(`other tenant's GET /api/v1/contacts during: ${during.requests} requests, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, ${during.failures} failed`);
      const [writing, runsAlone] = [summary(duringTimes.slice(0, duringWrites)), summary(duringTimes.slice(duringWrites))];
      out(`  while the burst was written: ${writing.requests} requests, p50 ${writing.p50.toFixed(1)} ms, p99 ${writing.p99.toFixed(1)} ms; after (the runs alone): ${runsAlone.requests} requests, p50 ${runsAlone.p50.toFixed(1)} ms, p99 ${runsAlone.p99.toFixed(1)} ms (${(runsAlone.p99 / idle.p99).toFixed(2)}× idle)`);
      out(`list p99 during / idle: ${ratio.toFixed(2)}× (target ≤ ${TARGETS.listP99Ratio}×): ${ratio <= TARGETS.listP99Ratio && during.failures === 0 ? 'PASS' : 'MISS'}`);
      if (samples) {
        await sleep(1200); // the service's probe writes its lines once a second
        const burstStart = writesEnd - writeSeconds * 1000;
        out(summarisePhases(probeFile, samples, [{ name: 'idle', from: idleStart, to: idleEnd }, { name: 'burst written', from: burstStart, to: writesEnd }, { name: 'runs alone', from: writesEnd, to: runsEnd }]).join('\n'));
      }
      out(`load after: ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    } finally {
      ended = true;
    }
  } finally {
    await server.stop();
    await client.query('DELETE FROM accounts WHERE id = $1', [accountId]).catch((err: Error) => log(`cleanup: ${err.message}`));
    await client.end();
    if (flags['service-log']) copyFileSync(path.join(work, 'service.log'), flags['service-log']);
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`\n${report.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:workflows: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
