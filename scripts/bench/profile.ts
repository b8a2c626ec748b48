// npm run bench:profile -- [--path /api/v1/deals] [--duration 15] [--connections 32] [--top 20] [--checkout ../other]
// Where the service spends its CPU under load on one request: starts it with `node --cpu-prof` on the
// bench database (made when missing, as `npm run bench` does), drives the path with autocannon, stops
// it (the profile is written at exit) and prints self time grouped by where the code lives: a
// package of node_modules, one of Node's own modules, a file of src/, or V8's own entries (garbage
// collector, program). The raw .cpuprofile is kept (open it in Chrome DevTools) for the details.
// `[<id>]` in `--body` is a fresh id in each request (a new e-mail per form submit).
// `--checkout` profiles another checkout's service (`npm ci` and `npm run generate` in it first), for a before/after.
// `--no-profile` runs it without the profiler and prints only its process CPU per request: the profiler's
// own cost grows with the code's depth, so it can make one build look slower than another when it is not.
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { mintToken } from '../../src/auth/token.js';
import { BENCH_JWT_SECRET, BENCH_METRICS_TOKEN, benchDatabaseUrl, intFlag, numberFlag, parseFlags } from './common.js';
import { DATA_FLAGS, sizeFromFlags } from './data.js';
import { ensureDataset } from './dataset.js';
import { startServer } from './processes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

type ProfileNode = { id: number; callFrame: { functionName: string; url: string }; children?: number[] };
type CpuProfile = { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] };
/** Microseconds on the monotonic clock V8's profile timestamps use (CLOCK_MONOTONIC on Linux, as hrtime). */
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

/** Where a frame's code lives, coarse enough to add up: `pg`, `node:http`, `src/graphql/page-sql.ts`, `(garbage collector)`. */
export function placeOf(frame: ProfileNode['callFrame'], root = ROOT): string {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName || 'anonymous'}`;
  if (url.startsWith('node:')) return url;
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const inRepo = url.indexOf(`${root}/`);
  return inRepo >= 0 ? url.slice(inRepo + root.length + 1).replace(/^dist\//, '') : url;
}

/** Self time per place within [from, to] (µs), in µs and in percent of the time not idle, biggest first. */
export function summarise(profile: CpuProfile, from = -Infinity, to = Infinity, root = ROOT): { place: string; micros: number; percent: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let busy = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    // Only the load: start-up (module loading, migrations) and shutdown are not the request's cost.
    if (at < from || at > to) return;
    if (!node || node.callFrame.functionName === '(idle)') return;
    const place = placeOf(node.callFrame, root);
    self.set(place, (self.get(place) ?? 0) + dt);
    busy += dt;
  });
  return [...self.entries()].map(([place, t]) => ({ place, micros: t, percent: (100 * t) / busy })).sort((a, b) => b.percent - a.percent);
}

/** CPU seconds the process has used, every thread (user + system, /proc/<pid>/stat), or null off Linux. */
function cpuSecondsOf(pid: number): number | null {
  try {
    // The fields after the command's closing parenthesis; utime and stime are the 12th and 13th of them.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks: USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

async function main() {
  const flags = parseFlags(process.argv.slice(2), [...DATA_FLAGS.filter((f) => f !== 'force'), 'path', 'duration', 'connections', 'top', 'method', 'body', 'checkout', 'no-profile']);
  const size = sizeFromFlags(flags);
  const url = benchDatabaseUrl(size.contacts);
  const dataset = await ensureDataset(url, size, { log: (line) => process.stderr.write(`${line}\n`) });
  const token = await mintToken(BENCH_JWT_SECRET, { sub: dataset.ownerId, expiresIn: '2h' });
  const target = (flags.path ?? '/api/v1/deals').replaceAll('{account}', dataset.accountId);
  const pathAndQuery = target.includes('?') || flags.method === 'POST' ? target : `${target}?account_id=${dataset.accountId}`;
  const checkout = flags.checkout ? path.resolve(flags.checkout) : ROOT;
  const profiling = flags['no-profile'] === undefined;
  const dir = path.join(tmpdir(), `crm-profile-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const server = await startServer({
    name: 'service', cwd: checkout, logFile: path.join(dir, 'service.log'),
    args: [...(profiling ? ['--cpu-prof', '--cpu-prof-dir', dir] : []), '--import', 'tsx', 'src/main.ts'],
    env: { DATABASE_URL: url, AUTH_JWT_SECRET: BENCH_JWT_SECRET, METRICS_TOKEN: BENCH_METRICS_TOKEN, DATABASE_POOL_MAX: '10', NODE_ENV: 'production', RATE_LIMITS: 'off', LOG_LEVEL: 'info' },
  });
  let requests = 0;
  let window: [number, number] = [0, 0];
  try {
    const body = flags.body?.replaceAll('{account}', dataset.accountId);
    // autocannon's `[<id>]` in the body: a fresh id per request (a new visitor on each form submit).
    const sending = body ? { body, idReplacement: body.includes('[<id>]') } : {};
    // A short warm-up first, outside the window: the JIT's first compilations are not the steady state.
    await autocannon({ url: server.baseUrl + pathAndQuery, method: (flags.method ?? 'GET') as 'GET' | 'POST', connections: 8, duration: 2, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...sending });
    const started = nowMicros();
    const cpuBefore = cpuSecondsOf(server.pid);
    const result = await autocannon({
      url: server.baseUrl + pathAndQuery,
      method: (flags.method ?? 'GET') as 'GET' | 'POST',
      connections: intFlag(flags, 'connections', 32, 1, 1000),
      duration: numberFlag(flags, 'duration', 15, 1, 600),
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...sending,
    });
    window = [started, nowMicros()];
    requests = result.requests.total;
    const cpuAfter = cpuSecondsOf(server.pid);
    const cpu = cpuBefore !== null && cpuAfter !== null ? `, ${((1000 * (cpuAfter - cpuBefore)) / Math.max(1, requests)).toFixed(2)} ms of process CPU per request` : '';
    process.stderr.write(`${pathAndQuery}: ${result.requests.average} req/s, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}${cpu}\n`);
  } finally {
    await server.stop();
  }
  if (!profiling) return;
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile in ${dir} (see ${server.logFile})`);
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
  const top = intFlag(flags, 'top', 20, 1, 200);
  const places = summarise(profile, ...window, checkout);
  // The main thread's CPU per request compares two builds even when the machine, not the service, limits req/s.
  const perRequest = places.reduce((sum, p) => sum + p.micros, 0) / 1000 / Math.max(1, requests);
  process.stdout.write(`\n${requests} requests, ${perRequest.toFixed(2)} ms of main-thread CPU each; self time by place, profile ${path.join(dir, file)}\n\n| place | % of busy time | µs per request |\n|---|---:|---:|\n`);
  for (const { place, percent, micros } of places.slice(0, top)) process.stdout.write(`| ${place} | ${percent.toFixed(1)} | ${(micros / Math.max(1, requests)).toFixed(0)} |\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`profile: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
