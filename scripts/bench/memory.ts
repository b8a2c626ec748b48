// npm run bench:memory -- [--database-url URL] [--requests 4000] [--connections 32] [--pdfs 20] [--settle 70]
//
// Where the built service's memory goes (issue #76; BENCHMARKS.md "Memory"): starts `dist/src/main.js`
// as `npm start` does (--max-semi-space-size=32, nothing else set: the development secret and, without
// --database-url, the embedded database in a temporary DATA_DIR), with scripts/bench/memory-probe.cjs
// preloaded (and RATE_LIMITS=off, as the bench runs it), and prints RSS and its parts (the main heap, each thread's heap, each WebAssembly memory's
// resident pages) when it listens, idle, after GET and POST /api/v1/contacts, after invoice PDFs and
// after `--settle` seconds idle. It then stops it and starts it again on the same data (no migration
// to run this time) for the same stages. Memory only: run it beside other load, not for CPU figures.
// A PDF thread (piscina) waits for work in Atomics.wait and answers no probe: its cost is the RSS
// added by the PDFs and given back once it has been idle a minute (src/invoices/pdf-pool.ts).
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadOrCreateDevSecret } from '../../src/auth/dev-secret.js';
import { mintToken } from '../../src/auth/token.js';
import { openDatabase } from '../../src/db/client.js';
import { DEMO, seedDemo } from '../../src/demo.js';
import { intFlag, parseFlags } from './common.js';
import { startServer, type Server } from './processes.js';

const flags = parseFlags(process.argv.slice(2), ['database-url', 'requests', 'connections', 'pdfs', 'settle', 'keep', 'entry']);
const databaseUrl = flags['database-url'];
const requests = intFlag(flags, 'requests', 4000, 2, 1_000_000);
const connections = intFlag(flags, 'connections', 32, 1, 1000);
const pdfs = intFlag(flags, 'pdfs', 20, 0, 10_000);
const settleSeconds = intFlag(flags, 'settle', 70, 0, 3600);
/** `--keep <dir>`: each sample's whole report (the largest mappings too) is written there. */
const keep = flags.keep;
/** `--entry <file>`: another build to measure (a copy of dist/ made before a change), relative to the root. */
const entry = flags.entry ?? 'dist/src/main.js';

const root = path.resolve(import.meta.dirname, '../..');
const probe = path.join(import.meta.dirname, 'memory-probe.cjs');
const dataDir = mkdtempSync(path.join(tmpdir(), 'crm-memory-'));
const probeFile = path.join(dataDir, 'probe.json');

type Heap = { threadId: number; label: string; heapTotal: number; heapUsed: number; external: number };
type Report = { rss: number; main: Heap & { arrayBuffers: number }; threads: Heap[]; wasmMemories: number[]; anonOther: number; fileBacked: number };

let samples = 0;
async function sample(server: Server): Promise<Report> {
  const report = await ask(server);
  if (keep) writeFileSync(path.join(keep, `memory-${String(++samples).padStart(2, '0')}.json`), JSON.stringify(report, null, 1));
  return report;
}

async function ask(server: Server): Promise<Report> {
  rmSync(probeFile, { force: true });
  process.kill(server.pid, 'SIGUSR2');
  for (let i = 0; i < 100; i++) {
    await sleep(100);
    try {
      if (statSync(probeFile).size > 0) return JSON.parse(readFileSync(probeFile, 'utf8')) as Report;
    } catch {
      // not written yet
    }
  }
  throw new Error('the probe did not answer');
}

const row = (start: string, stage: string, r: Report) => {
  const threads = r.threads.map((t) => `${t.label} ${t.heapTotal}`).join(', ') || '–';
  const wasm = r.wasmMemories.length ? r.wasmMemories.map((w) => Math.round(w)).join(' + ') : '–';
  return `| ${start} | ${stage} | ${Math.round(r.rss)} | ${r.main.heapTotal} (${r.main.heapUsed} used) | ${r.main.external} | ${threads} | ${wasm} | ${Math.round(r.anonOther)} | ${Math.round(r.fileBacked)} |`;
};

/** `total` requests, `connections` at a time, alternating a page-1 list and a create. */
async function load(baseUrl: string, token: string, total: number): Promise<number> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  let next = 0;
  let failed = 0;
  let firstFailure = '';
  const one = async (i: number) => {
    const response = i % 2 === 0
      ? await fetch(`${baseUrl}/api/v1/contacts?account_id=${DEMO.accountId}`, { headers })
      : await fetch(`${baseUrl}/api/v1/contacts`, { method: 'POST', headers, body: JSON.stringify({ account_id: DEMO.accountId, first_name: `Memory ${i}`, email: `memory-${Date.now()}-${i}@example.com` }) });
    const text = await response.text();
    if (!response.ok && failed++ === 0) firstFailure = `${response.status} ${text.slice(0, 200)}`;
  };
  await Promise.all(Array.from({ length: connections }, async () => {
    while (next < total) await one(next++);
  }));
  if (firstFailure) console.error(`${failed} of ${total} requests failed; the first: ${firstFailure}`);
  return failed;
}

async function drawPdfs(baseUrl: string, token: string, count: number): Promise<number> {
  const headers = { authorization: `Bearer ${token}` };
  const list = (await (await fetch(`${baseUrl}/api/v1/invoices?account_id=${DEMO.accountId}`, { headers })).json()) as { data: { id: string }[] };
  let failed = 0;
  for (let i = 0; i < count && list.data.length > 0; i++) {
    const response = await fetch(`${baseUrl}/api/v1/invoices/${list.data[i % list.data.length]!.id}/pdf?account_id=${DEMO.accountId}`, { headers });
    await response.arrayBuffer();
    if (!response.ok) failed++;
  }
  return failed;
}

async function run(start: string): Promise<string[]> {
  // Rate limits off, as in the bench: the load is a few thousand requests of one user in seconds.
  const env: Record<string, string> = { DATA_DIR: dataDir, MEMORY_PROBE_FILE: probeFile, LOG_LEVEL: 'warn', RATE_LIMITS: 'off' };
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  const began = Date.now();
  const server = await startServer({ name: 'service', args: ['--require', probe, entry], env, cwd: root, logFile: path.join(dataDir, `service-${start}.log`), readyTimeoutMs: 300_000 });
  const rows: string[] = [];
  try {
    rows.push(row(start, `listening (${((Date.now() - began) / 1000).toFixed(1)} s)`, await sample(server)));
    if (databaseUrl) {
      // The development secret is in DATA_DIR; the demo account is seeded as `npm run cli -- seed demo` would.
      const db = await openDatabase({ databaseUrl, dataDir });
      try {
        // Its transaction has Prisma's 5 s; on a loaded machine it may take longer: again (it is idempotent).
        for (let attempt = 1; ; attempt++) {
          try {
            await seedDemo(db.prisma, await loadOrCreateDevSecret(dataDir));
            break;
          } catch (error) {
            if (attempt === 5) throw error;
          }
        }
      } finally {
        await db.close();
      }
    }
    const token = await mintToken(await loadOrCreateDevSecret(dataDir), { sub: DEMO.ownerId, expiresIn: '1h' });
    await sleep(10_000);
    rows.push(row(start, 'idle 10 s', await sample(server)));
    const failed = await load(server.baseUrl, token, requests);
    rows.push(row(start, `after ${requests} requests${failed ? ` (${failed} failed)` : ''}`, await sample(server)));
    if (pdfs > 0) {
      const pdfFailed = await drawPdfs(server.baseUrl, token, pdfs);
      rows.push(row(start, `after ${pdfs} PDFs${pdfFailed ? ` (${pdfFailed} failed)` : ''}`, await sample(server)));
    }
    if (settleSeconds > 0) {
      await sleep(settleSeconds * 1000);
      rows.push(row(start, `idle ${settleSeconds} s after`, await sample(server)));
    }
  } finally {
    await server.stop();
  }
  return rows;
}

try {
  const rows = [...(await run('first')), ...(await run('second'))];
  console.log(`\n${databaseUrl ? 'PostgreSQL' : 'embedded (PGlite)'}, MB:\n`);
  console.log('| start | stage | RSS | main heap total | main external | threads\' heap total | WebAssembly memories (resident) | other anonymous | file-backed |');
  console.log('|---|---|---:|---:|---:|---|---|---:|---:|');
  for (const line of rows) console.log(line);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
