// Where a neighbour's latency goes during a background burst (bench:workflows --probe), phase by phase: the service's
// own windows (scripts/bench/service-probe.ts: event-loop delay, pool waiters) and, sampled here,
// PostgreSQL's side (the bench database's backends: how many active, on what they wait, their CPU
// from /proc) and the machine's idle CPU, each summarised per phase (idle, writes, runs alone).
import { readFileSync } from 'node:fs';
import pg from 'pg';

const SAMPLE_MS = 100;

type ServiceLine = { at: number; p99: number; max: number; waitingMax: number; busy: number; connects: number };
type DbSample = { at: number; active: number; waits: Record<string, number>; cpu: Map<number, number>; idle: number; total: number };

/** The machine's CPU ticks: idle (idle + iowait) and total, from /proc/stat's first line. */
function machineTicks(): { idle: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { idle: fields[3]! + fields[4]!, total: fields.reduce((a, b) => a + b, 0) };
}

function processTicks(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** Samples the bench database's backends every SAMPLE_MS on a connection of its own until stopped. */
export async function startProbe(url: string) {
  const client = new pg.Client({ connectionString: url, options: '-c statement_timeout=0' });
  await client.connect();
  const samples: DbSample[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const at = Date.now();
      const { rows } = await client.query<{ pid: number; state: string | null; wait: string | null }>(
        `SELECT pid, state, wait_event_type || ':' || wait_event AS wait FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`);
      const cpu = new Map<number, number>();
      const waits: Record<string, number> = {};
      let active = 0;
      for (const row of rows) {
        const ticks = processTicks(row.pid);
        if (ticks !== null) cpu.set(row.pid, ticks);
        if (row.state === 'idle in transaction') waits['(idle in transaction)'] = (waits['(idle in transaction)'] ?? 0) + 1;
        if (row.state === 'active') {
          active++;
          const wait = row.wait ?? 'CPU';
          waits[wait] = (waits[wait] ?? 0) + 1;
        }
      }
      samples.push({ at, active, waits, cpu, ...machineTicks() });
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      await client.end();
      return samples;
    },
  };
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
};

/** One line per phase: the service's loop delay and pool waiters, the database's active backends, waits and CPU, the machine's idle share. */
export function summarisePhases(serviceFile: string, samples: DbSample[], phases: { name: string; from: number; to: number }[]): string[] {
  const service: ServiceLine[] = readFileSync(serviceFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as ServiceLine);
  const out = ['| phase | s | loop delay p99 of windows / max ms | windows with loop delay > 20 ms | pool waiters max / windows with any | PG active backends mean (by wait; idle in transaction apart) | PG CPU (bench db) cores | machine idle |', '|---|---:|---:|---:|---:|---|---:|---:|'];
  for (const { name, from, to } of phases) {
    const lines = service.filter((l) => l.at > from && l.at <= to);
    const db = samples.filter((s) => s.at >= from && s.at <= to);
    if (!lines.length || db.length < 2) continue;
    const first = db[0]!;
    const last = db[db.length - 1]!;
    let ticks = 0;
    for (const [pid, end] of last.cpu) {
      const start = first.cpu.get(pid);
      if (start !== undefined) ticks += end - start;
    }
    const seconds = (last.at - first.at) / 1000;
    const waits: Record<string, number> = {};
    for (const s of db) for (const [w, n] of Object.entries(s.waits)) waits[w] = (waits[w] ?? 0) + n;
    const waitText = Object.entries(waits).sort((a, b) => b[1] - a[1]).slice(0, 5).map(([w, n]) => `${w} ${(n / db.length).toFixed(2)}`).join(', ');
    const active = db.reduce((n, s) => n + s.active, 0) / db.length;
    const idle = (last.idle - first.idle) / (last.total - first.total);
    out.push(`| ${name} | ${((to - from) / 1000).toFixed(1)} | ${quantile(lines.map((l) => l.p99), 0.99).toFixed(1)} / ${Math.max(...lines.map((l) => l.max)).toFixed(1)} | ${lines.filter((l) => l.max > 20).length} of ${lines.length} | ${Math.max(...lines.map((l) => l.waitingMax))} / ${lines.filter((l) => l.waitingMax > 0).length} | ${active.toFixed(2)} (${waitText}) | ${(ticks / 100 / seconds).toFixed(2)} | ${(idle * 100).toFixed(0)} % |`);
  }
  return out;
}
