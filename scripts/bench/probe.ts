// `npm run bench -- --probe`: what each server's requests cost on both sides, measured while they run
// (BENCHMARKS.md, "Writes as fast as reads"). Per case and server, over its measured rounds:
// - the server process's CPU (user + system, /proc/<pid>/stat) per completed request;
// - PostgreSQL's own CPU per request: every `postgres` process of the machine (backends, WAL writer,
//   checkpointer), so a statement's parse, plan, protocol and commit count, not only its execution
//   (a backend that ends during the round is left out);
// - PostgreSQL's own time: pg_stat_statements of the bench database (reset before each round, read
//   after: statements, their executions and total time, the COMMIT's WAL flush included) per request;
//   left out (`–`) on a server that does not preload the extension, so CPU and waits still measure;
// - what the bench database's busy backends wait on, sampled from pg_stat_activity every 10 ms
//   (`CPU` = active without a wait event: running, or waiting on something PostgreSQL does not report).
// The probe's own connection is to the server's `postgres` database, so none of its statements count.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { withDatabase } from './common.js';

export type Probe = {
  cpuMs: number;
  /** CPU of every `postgres` process over the round (the bench runs on a machine of its own). */
  postgresCpuMs: number;
  /** pg_stat_statements of the bench database over the round; null when the server does not load it. */
  statements: { query: string; calls: number; ms: number }[] | null;
  /** Samples of busy backends by wait ("Lock:object", "LWLock:NotifyQueue", "IO:WALSync", "CPU"). */
  waits: Record<string, number>;
  samples: number;
};

const TICKS_PER_MS = 100 / 1000; // USER_HZ is 100 on Linux

/** user + system CPU of `pid` in ms (0 when it is gone). */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_MS;
  } catch {
    return 0;
  }
}

/** user + system CPU in ms of each process named `postgres`, by pid. */
function postgresCpu(): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') byPid.set(Number(entry), cpuOf(Number(entry)));
    } catch {
      // gone between the listing and the read
    }
  }
  return byPid;
}

/** CPU the `postgres` processes used between two readings: a backend that ended in between is left out, one that started counts whole. */
const postgresCpuBetween = (before: Map<number, number>, after: Map<number, number>): number =>
  [...after].reduce((sum, [pid, ms]) => sum + Math.max(0, ms - (before.get(pid) ?? 0)), 0);

/** Connects once; `during(pid, work)` measures `work` (one round of one server). */
export async function openProbe(benchUrl: string) {
  const database = decodeURIComponent(new URL(benchUrl).pathname.slice(1));
  const client = new pg.Client({ connectionString: withDatabase(benchUrl, 'postgres') });
  await client.connect();
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  // Its functions exist once created, but answer an error unless shared_preload_libraries names it.
  const counted = await client.query('SELECT pg_stat_statements_reset()').then(() => true, () => false);
  const { rows } = await client.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = $1', [database]);
  const dbid = rows[0]!.oid;
  return {
    async during<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; probe: Probe }> {
      if (counted) await client.query('SELECT pg_stat_statements_reset(0, $1, 0)', [dbid]);
      const waits: Record<string, number> = {};
      let samples = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const { rows: busy } = await client.query<{ w: string }>(
            `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS w FROM pg_stat_activity
             WHERE datname = $1 AND state IN ('active', 'idle in transaction') AND backend_type = 'client backend'
               AND NOT (state = 'idle in transaction' AND wait_event = 'ClientRead')`,
            [database],
          );
          samples++;
          for (const { w } of busy) waits[w] = (waits[w] ?? 0) + 1;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      const cpuBefore = cpuOf(pid);
      const postgresBefore = postgresCpu();
      const result = await work();
      const cpuMs = cpuOf(pid) - cpuBefore;
      const postgresCpuMs = postgresCpuBetween(postgresBefore, postgresCpu());
      sampling = false;
      await sampler;
      const statements = counted
        ? (await client.query<{ query: string; calls: string; ms: number }>(
          'SELECT query, calls, total_exec_time AS ms FROM pg_stat_statements WHERE dbid = $1 ORDER BY total_exec_time DESC', [dbid],
        )).rows.map((s) => ({ query: s.query, calls: Number(s.calls), ms: s.ms }))
        : null;
      return { result, probe: { cpuMs, postgresCpuMs, statements, waits, samples } };
    },
    close: () => client.end(),
  };
}

/** Rounds of one server merged. */
export function mergeProbes(probes: Probe[]): Probe {
  const statements = new Map<string, { query: string; calls: number; ms: number }>();
  const waits: Record<string, number> = {};
  for (const p of probes) {
    for (const s of p.statements ?? []) {
      const m = statements.get(s.query) ?? { query: s.query, calls: 0, ms: 0 };
      m.calls += s.calls;
      m.ms += s.ms;
      statements.set(s.query, m);
    }
    for (const [w, n] of Object.entries(p.waits)) waits[w] = (waits[w] ?? 0) + n;
  }
  return {
    cpuMs: probes.reduce((sum, p) => sum + p.cpuMs, 0),
    postgresCpuMs: probes.reduce((sum, p) => sum + p.postgresCpuMs, 0),
    statements: probes.some((p) => p.statements === null) ? null : [...statements.values()].sort((a, b) => b.ms - a.ms),
    waits,
    samples: probes.reduce((sum, p) => sum + p.samples, 0),
  };
}

const short = (query: string) => query.replace(/\s+/g, ' ').slice(0, 90);

/** The probe's lines for one case and server: CPU and database time per request, statements, waits. */
export function formatProbe(label: string, server: string, requests: number, p: Probe): string[] {
  const per = (x: number) => (requests ? (x / requests).toFixed(2) : '-');
  const dbMs = p.statements?.reduce((sum, s) => sum + s.ms, 0);
  const calls = p.statements?.reduce((sum, s) => sum + s.calls, 0);
  const busy = Object.values(p.waits).reduce((a, b) => a + b, 0);
  const waits = Object.entries(p.waits).sort((a, b) => b[1] - a[1]).slice(0, 6)
    .map(([w, n]) => `${w} ${((100 * n) / Math.max(busy, 1)).toFixed(0)}%`).join(', ');
  const lines = [
    `${label} / ${server}: ${requests} requests; process CPU ${per(p.cpuMs)} ms/req; PostgreSQL's CPU ${per(p.postgresCpuMs)} ms/req; ${p.statements ? `PostgreSQL ${per(dbMs!)} ms/req in ${per(calls!)} statements/req` : 'PostgreSQL – (pg_stat_statements not loaded)'}; ` +
      `busy backends ${(busy / Math.max(p.samples, 1)).toFixed(1)} on average (${waits})`,
  ];
  for (const s of p.statements?.slice(0, 8) ?? []) lines.push(`    ${per(s.ms).padStart(6)} ms/req ${(s.calls / Math.max(requests, 1)).toFixed(2).padStart(5)} calls/req  ${(s.ms / Math.max(s.calls, 1)).toFixed(3)} ms/call  ${short(s.query)}`);
  return lines;
}
