// Loaded into the service by `bench:workflows --probe` (node --import): every PROBE_MS it appends a
// line to $BENCH_PROBE_FILE with how late the event loop ran in that window (perf_hooks'
// monitorEventLoopDelay: its p99 and max, the longest the thread was held) and the most queries
// that waited at once for one of the pool's connections. The bench splits the lines by phase.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';

const PROBE_MS = 100;
const file = process.env.BENCH_PROBE_FILE;

if (file) {
  const pools = new Set<pg.Pool>();
  let waitingMax = 0;
  let connects = 0;
  const connect = pg.Pool.prototype.connect;
  // Every checkout passes here (BoundedPool's connect calls it): the pool's waiters just after it queued.
  pg.Pool.prototype.connect = function (this: pg.Pool, ...args: unknown[]) {
    pools.add(this);
    connects++;
    const answer = (connect as (...a: unknown[]) => unknown).apply(this, args);
    waitingMax = Math.max(waitingMax, this.waitingCount);
    return answer;
  } as typeof connect;
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const lines: string[] = [];
  setInterval(() => {
    const waiting = [...pools].reduce((n, p) => n + p.waitingCount, 0);
    const busy = [...pools].reduce((n, p) => n + p.totalCount - p.idleCount, 0);
    lines.push(JSON.stringify({ at: Date.now(), p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, waitingMax: Math.max(waitingMax, waiting), busy, connects }));
    loop.reset();
    waitingMax = 0;
    connects = 0;
    if (lines.length >= 10) appendFileSync(file, `${lines.splice(0).join('\n')}\n`);
  }, PROBE_MS).unref();
}
