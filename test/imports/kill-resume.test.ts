// docs/decisions.md §17, §24: an import interrupted by a crash resumes after its last committed
// chunk within 15 s of its instance's death (its worker's heartbeat lapses; docs/imports.md#lease-and-heartbeat),
// says meanwhile that it is waiting to resume, and goes on in exactly one instance, with no row
// written twice. Real server processes; the first is SIGKILLed while the import runs.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { openDatabase } from '../../src/db/client.js';
import { TEST_SECRET } from '../helpers/app.js';
import { cloneDatabaseForProcess } from '../helpers/database.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ROWS = 20_000;
const started: ChildProcess[] = [];

/** The real server (`node --import tsx src/main.ts`); resolves with its base URL once it listens. */
function startServer(env: Record<string, string>, onLine: (line: string) => void = () => {}): Promise<{ proc: ChildProcess; url: string }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  let output = '';
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      for (const line of String(chunk).split('\n')) onLine(line);
      output += chunk;
      const listening = output.split('\n').find((line) => line.includes('"msg":"listening"'));
      if (listening) {
        resolve({ proc, url: (JSON.parse(listening) as { baseUrl: string }).baseUrl });
      }
    });
    proc.stderr!.on('data', (chunk: Buffer) => void (output += chunk));
    proc.once('exit', (code) => reject(new Error(`server exited (${code}):\n${output}`)));
  });
}

const stop = async (proc: ChildProcess, signal: NodeJS.Signals) => {
  if (proc.exitCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill(signal);
  await exited;
};

/** Polls `probe` until it answers something truthy (a condition, never a fixed sleep). */
async function until<T>(probe: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 120_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

afterAll(() => {
  for (const proc of started) if (proc.exitCode === null) proc.kill('SIGKILL');
});

/** docs/decisions.md §24: an interrupted import moves again within this of its instance's death. */
const RESUMES_WITHIN_MS = 15_000;

describe('an import killed mid-way', () => {
  it('a server SIGKILLed mid-import: the import says it is waiting to resume, moves again within 15 s after its last committed chunk in exactly one instance, and no row is written twice', async () => {
    const database = await cloneDatabaseForProcess(inject('template'));
    const owner = crypto.randomUUID();
    let accountId: string;
    const setup = await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR ?? '' });
    try {
      await setup.prisma.user.create({ data: { id: owner } });
      accountId = (await setup.prisma.account.create({ data: { name: 'Resume', ownerId: owner } })).id;
    } finally {
      await setup.close();
    }
    const token = await mintToken(TEST_SECRET, { sub: owner });
    const auth = { authorization: `Bearer ${token}` };
    // IMPORT_LEASE_MS as deployed (10 s): what the 15 s promise rests on.
    const env = { ...database.env, AUTH_JWT_SECRET: TEST_SECRET, EVENT_POLL_MS: '50' };

    // PostgreSQL: the test holds the upsert lock of a row of the second chunk, so the first instance
    // is killed with one chunk committed and the next one open (deterministic). PGlite (one process
    // owns the data directory) is killed as soon as it claims the import.
    const pgUrl = database.env.DATABASE_URL;
    const holder = pgUrl ? new pg.Client({ connectionString: pgUrl }) : null;
    await holder?.connect();
    await holder?.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`${accountId}:p1500@resume.example`]);
    let claimed: () => void = () => {};
    const claimedNow = new Promise<void>((resolve) => (claimed = resolve));
    // The first instance's chunk may wait on the held lock while the racers start (its statements'
    // 10 s bound would fail its attempt first on a loaded machine).
    const first = await startServer({ ...env, DATABASE_STATEMENT_TIMEOUT_MS: '600000' }, (line) => line.includes('import claimed') && claimed());
    const csv = `first_name,email\r\n${Array.from({ length: ROWS }, (_, i) => `P${i},p${i}@resume.example\r\n`).join('')}`;
    const posted = await fetch(`${first.url}/api/v1/imports?account_id=${accountId}&object=contacts&match_on=email`, { method: 'POST', body: csv, headers: { ...auth, 'content-type': 'text/csv' } });
    expect(posted.status).toBe(202);
    const { data } = (await posted.json()) as { data: { id: string } };
    const progress = async (base: string) =>
      ((await (await fetch(`${base}/api/v1/imports/${data.id}`, { headers: auth })).json()) as { data?: { status: string; rows_processed: number; created: number; failed: number; waiting_to_resume: boolean } }).data;
    // PostgreSQL: two more instances are up before the kill, and race to resume the import.
    const racers = holder ? [await startServer(env), await startServer(env)] : [];
    if (holder) {
      // One chunk committed, the second waiting on the held lock: its transaction dies with the process.
      await until(async () => {
        const { rows } = await holder.query<{ done: number; waiting: number }>(
          `SELECT (SELECT done_seq FROM imports WHERE id = $1) AS done, (SELECT count(*)::int FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted) AS waiting`,
          [data.id],
        );
        return rows[0]!.done === 1000 && rows[0]!.waiting > 0;
      }, 'the second chunk to wait on the held lock');
    } else await claimedNow;
    await stop(first.proc, 'SIGKILL');
    // The 15 s run from the death; on PGlite from the restarted instance's listening (below).
    let clockFrom = Date.now();
    const left = () => Math.max(0, clockFrom + RESUMES_WITHIN_MS - Date.now());
    let doneAtDeath: number;
    if (holder) {
      // What the killed instance left: its committed chunk and nothing of the open one.
      const { rows } = await holder.query<{ done: number; n: number }>(
        'SELECT (SELECT done_seq FROM imports WHERE id = $1) AS done, (SELECT count(*)::int FROM contacts WHERE account_id = $2) AS n',
        [data.id, accountId],
      );
      expect(rows[0]).toEqual({ done: 1000, n: 1000 });
      doneAtDeath = 1000;
      // The lock released, the dead chunk's statement ends and its transaction dies with its
      // connection; `gate` then keeps the import's row from the racers' claims (they skip a locked
      // row) until the test has read what the API says meanwhile.
      const gate = new pg.Client({ connectionString: pgUrl });
      await gate.connect();
      await gate.query('BEGIN');
      const gated = gate.query('SELECT 1 FROM imports WHERE id = $1 FOR SHARE', [data.id]);
      await holder.query('SELECT pg_advisory_unlock_all()');
      await gated;
      await until(async () => {
        const { rows: [state] } = await holder.query<{ lapsed: boolean }>(
          'SELECT NOT EXISTS (SELECT 1 FROM import_workers w JOIN imports i ON w.id = i.lease_owner WHERE i.id = $1 AND w.alive_until > now()) AS lapsed', [data.id]);
        return state!.lapsed;
      }, 'the dead instance\'s heartbeat to lapse', left(), 100);
      expect(await progress(racers[0]!.url)).toMatchObject({ status: 'running', rows_processed: 1000, waiting_to_resume: true });
      await gate.end(); // its transaction ends with it
    } else {
      const killed = await openDatabase({ databaseUrl: undefined, dataDir: database.env.DATA_DIR ?? '' });
      doneAtDeath = (await killed.prisma.import.findUniqueOrThrow({ where: { id: data.id } })).doneSeq;
      await killed.close();
    }

    // PGlite: one process owns the data directory, so the instance is restarted (and resumes at once).
    // Its start-up is no lease's wait (a loaded machine took longer than 15 s to start it), so the
    // clock starts when it listens.
    const servers = holder ? racers : [await startServer(env)];
    if (!holder) clockFrom = Date.now();
    // Moving again: a chunk after the dead one's committed (PostgreSQL: read in the database, so the
    // GETs below stay within their rate limit).
    const moved = holder
      ? async () => (await holder.query<{ done: number }>('SELECT done_seq AS done FROM imports WHERE id = $1', [data.id])).rows[0]!.done > doneAtDeath
      : async () => {
        const p = await progress(servers[0]!.url); // undefined while the answer is an error (503 at start-up)
        return p !== undefined && (p.rows_processed > doneAtDeath || p.status === 'completed');
      };
    await until(moved, 'the import to move again', left(), holder ? 50 : 500);
    await holder?.end();
    expect(await progress(servers[0]!.url)).toMatchObject({ waiting_to_resume: false });
    // As a client polls: GET /api/v1/imports/{id} counts 120 a minute per user (docs/rest.md#rate-limits).
    const done = await until(async () => {
      const p = await progress(servers[0]!.url);
      return p !== undefined && p.status !== 'running' && p.status !== 'queued' && p;
    }, 'the import to end', 120_000, 600);
    for (const server of servers) await stop(server.proc, 'SIGTERM');

    expect(done).toMatchObject({ status: 'completed', rows_processed: ROWS, created: ROWS, failed: 0 });
    const check = await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR ?? '' });
    try {
      const [row] = await check.prisma.$queryRaw<{ n: number; emails: number; created: number; completed: number }[]>`
        SELECT (SELECT count(*)::int FROM contacts WHERE account_id = ${accountId}::uuid) AS n,
               (SELECT count(DISTINCT email)::int FROM contacts WHERE account_id = ${accountId}::uuid) AS emails,
               (SELECT count(*)::int FROM events WHERE account_id = ${accountId}::uuid AND type = 'contact.created') AS created,
               (SELECT count(*)::int FROM events WHERE account_id = ${accountId}::uuid AND type = 'import.completed') AS completed`;
      expect(row).toEqual({ n: ROWS, emails: ROWS, created: ROWS, completed: 1 });
    } finally {
      await check.close();
      await database.drop();
    }
  });
});
