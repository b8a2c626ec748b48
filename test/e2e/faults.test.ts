/**
 * Faults under load (docs/decisions.md §2, §7): the real server process (`node --import tsx src/main.ts`)
 * against a PRIVATE PostgreSQL (initdb into a temp dir, its own port) and a PRIVATE redis-server,
 * both started and stopped by this file. The machine's own PostgreSQL (5432) and Redis (6379) are
 * never touched (afterAll checks they still answer); everything started here is killed in afterAll.
 * Runs when DATABASE_URL and REDIS_URL are set (the real-services run) and the binaries exist; otherwise
 * it skips locally and fails in CI (test/helpers/prerequisites.ts).
 *
 * While a steady load of reads, creates and form submissions runs:
 * - PostgreSQL stops: answers are 503 {"error":"Service unavailable"} with Retry-After, fast, never a
 *   500, a crash or a hang; PostgreSQL starts again: the service recovers by itself;
 * - Redis stops: the service keeps serving (rate limits fail open); Redis starts: limits are back;
 * - every form submission is recorded whole (contact and submission) or not at all;
 * - SIGTERM: no request in flight is dropped, and the process exits 0.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { TEST_SECRET } from '../helpers/app.js';
import { IN_CI, skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { freePort, postgresBin, redisBin } from '../../scripts/soak/services.js';
import { parseLogLine, START_TIMEOUT_MS, startServer, stopServer, type ServerProcess } from '../helpers/server-process.js';

// A hang shows up as a timeout, which fails the test. Generous, so a busy machine is not taken for a hang:
// the tests judge a hang by whether an answer comes while the fault lasts, not by how fast it comes.
const REQUEST_TIMEOUT_MS = 60_000;

// ---------------------------------------------------------------------------------------------
// Private PostgreSQL and Redis.


const PG_BIN = postgresBin();
const REDIS_BIN = redisBin();
const AS_ROOT = process.getuid?.() === 0;

/** PostgreSQL refuses to run as root: run its tools as the `postgres` user then. */
function pgTool(tool: string, args: string[]): { status: number | null; output: string } {
  const bin = path.join(PG_BIN!, tool);
  const [cmd, argv] = AS_ROOT ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  const r = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}


class PrivatePostgres {
  readonly data: string;
  constructor(readonly dir: string, readonly port: number) {
    this.data = path.join(dir, 'data');
  }
  get url() {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }
  init() {
    if (AS_ROOT) {
      const [uid, gid] = ['-u', '-g'].map((flag) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim()));
      chownSync(this.dir, uid!, gid!);
    }
    const r = pgTool('initdb', ['-D', this.data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    if (r.status !== 0) throw new Error(`initdb failed:\n${r.output}`);
  }
  start() {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
    const r = pgTool('pg_ctl', ['-D', this.data, '-l', path.join(this.dir, 'postgres.log'), '-o', options, '-w', '-t', '60', 'start']);
    if (r.status !== 0) throw new Error(`pg_ctl start failed:\n${r.output}`);
  }
  stop(mode: 'fast' | 'immediate' = 'fast') {
    return pgTool('pg_ctl', ['-D', this.data, '-m', mode, '-w', '-t', '60', 'stop']);
  }
  query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.url });
    return client.connect().then(
      () => client.query<T>(sql, params).then((r) => r.rows).finally(() => client.end()),
    );
  }
}

/** Whether a Redis on this loopback port answers PING (a raw RESP exchange: no client, no retries). */
function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(5_000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => (socket.destroy(), resolve(d.toString().startsWith('+PONG'))));
    socket.once('error', () => resolve(false));
  });
}

/** Which of the machine's own services answer: PostgreSQL on 5432 (pg_isready), Redis on 6379 (PING). */
async function machineServices(): Promise<{ postgres: boolean; redis: boolean }> {
  const ready = spawnSync(path.join(PG_BIN!, 'pg_isready'), ['-h', '127.0.0.1', '-p', '5432', '-t', '5'], { timeout: 10_000 });
  return { postgres: ready.status === 0, redis: await redisAnswers(6379) };
}

class PrivateRedis {
  proc: ChildProcess | null = null;
  constructor(readonly port: number) {}
  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start() {
    this.proc = spawn(REDIS_BIN!, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const deadline = Date.now() + 20_000;
    while (!(await this.ping())) {
      if (Date.now() > deadline) throw new Error('private redis-server did not start');
      await sleep(100);
    }
  }
  ping(): Promise<boolean> {
    return redisAnswers(this.port);
  }
  async stop() {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL'); // an outage, not a polite shutdown
    await exited;
    this.proc = null;
  }
}

// ---------------------------------------------------------------------------------------------
// Load.

/** One request through node:http on a new connection closed after it; a cut-off answer rejects (INCOMPLETE). */
function onFreshConnection(url: string, init: RequestInit): Promise<{ status: number; retryAfter: string | null; body: string }> {
  const body = init.body as string | undefined;
  const headers = { ...(init.headers as Record<string, string>), ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) };
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: init.method, headers, agent: false, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => void (text += chunk));
      res.once('error', reject);
      res.once('end', () => {
        if (!res.complete) return reject(Object.assign(new Error('answer cut off'), { code: 'INCOMPLETE' }));
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode!, retryAfter: typeof retryAfter === 'string' ? retryAfter : null, body: text });
      });
    });
    request.once('error', reject);
    request.end(body);
  });
}

type Kind = 'read' | 'create' | 'submit';
type Outcome = { kind: Kind; n: number; started: number; ended: number; status?: number; body?: string; retryAfter?: string | null; error?: string };

const UNAVAILABLE = '{"error":"Service unavailable"}';

const MISSING = unsetVariables('DATABASE_URL', 'REDIS_URL') ?? (!PG_BIN ? 'PostgreSQL server binaries (initdb, pg_ctl)' : !REDIS_BIN ? 'redis-server' : null);

describe.skipIf(skipIfMissing(MISSING))('faults under load: a private PostgreSQL and Redis stop and start', () => {
  let dir: string;
  let postgres: PrivatePostgres;
  let redis: PrivateRedis;
  let server: ServerProcess;
  let accountId: string;
  let formId: string;
  let members: { id: string; token: string }[];
  let machineBefore: { postgres: boolean; redis: boolean } | undefined;
  const tag = randomUUID().slice(0, 8);
  const outcomes: Outcome[] = [];
  /** Requests sent and not yet answered. */
  const pending = new Set<Outcome>();
  let load: { stop: () => Promise<void> } | null = null;
  const cleanup = () => {
    server?.proc.kill('SIGKILL');
    redis?.proc?.kill('SIGKILL');
    if (postgres) postgres.stop('immediate');
  };

  beforeAll(async () => {
    machineBefore = await machineServices();
    // .ci/run starts both: in CI the check in afterAll must have something to check.
    if (IN_CI) expect(machineBefore, "the machine's PostgreSQL and Redis answer before the test").toEqual({ postgres: true, redis: true });
    process.once('exit', cleanup); // should the run be cut short, leave no private server behind
    dir = await mkdtemp(path.join(tmpdir(), 'crm-faults-'));
    postgres = new PrivatePostgres(dir, await freePort());
    redis = new PrivateRedis(await freePort());
    postgres.init();
    postgres.start();
    await redis.start();
    server = await startServer({
      DATABASE_URL: postgres.url,
      REDIS_URL: redis.url,
      AUTH_JWT_SECRET: TEST_SECRET,
      TRUST_PROXY: '1',
      DATABASE_POOL_MAX: '10',
      // As behind a load balancer: keep accepting briefly after SIGTERM, then close the listener.
      SHUTDOWN_DELAY_MS: '300',
    });

    const ownerId = randomUUID();
    const owner = await mintToken(TEST_SECRET, { sub: ownerId });
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const r = await fetch(`${server.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await r.json()) as { data: any; errors?: unknown };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    accountId = (await gql('mutation { createAccount(input: { name: "Faults" }) { id } }')).createAccount.id;
    formId = (
      await gql('mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }', {
        input: { accountId, name: 'Faults', fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
      })
    ).createLeadForm.id;
    members = [];
    for (let i = 0; i < 60; i++) {
      const id = randomUUID();
      await gql('mutation ($input: AddTeamMemberInput!) { addTeamMember(input: $input) { userId } }', { input: { accountId, userId: id } });
      members.push({ id, token: await mintToken(TEST_SECRET, { sub: id }) });
    }
  }, START_TIMEOUT_MS + 120_000);

  afterAll(async () => {
    await load?.stop().catch(() => {});
    await stopServer(server);
    await redis?.stop();
    postgres?.stop('immediate');
    process.removeListener('exit', cleanup);
    if (dir) await rm(dir, { recursive: true, force: true });
    // The machine's own services are untouched: each one that answered before still answers.
    if (machineBefore) {
      const after = await machineServices();
      const stillUp = { postgres: !machineBefore.postgres || after.postgres, redis: !machineBefore.redis || after.redis };
      expect(stillUp, "the machine's PostgreSQL and Redis still answer").toEqual({ postgres: true, redis: true });
    }
  }, 120_000);

  let seq = 0;
  /**
   * One request of the mix, bounded by REQUEST_TIMEOUT_MS; never throws. With `freshConnection` it
   * goes on a connection of its own (no keep-alive), opened as it starts: `started` is when it connected.
   */
  async function one(kind: Kind, { freshConnection = false } = {}): Promise<Outcome> {
    const n = ++seq;
    const user = members[n % members.length]!;
    const started = Date.now();
    const outcome: Outcome = { kind, n, started, ended: 0 };
    pending.add(outcome);
    try {
      const init: RequestInit =
        kind === 'read'
          ? { method: 'GET', headers: { authorization: `Bearer ${user.token}` } }
          : kind === 'create'
            ? {
                method: 'POST',
                headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
                body: JSON.stringify({ account_id: accountId, first_name: `Load ${n}`, last_name: tag }),
              }
            : {
                method: 'POST',
                headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` },
                body: JSON.stringify({ data: { email: `sub-${n}-${tag}@example.com` }, metadata: { page: `/fault/${n}` } }),
              };
      const url = kind === 'read' ? `/api/v1/contacts?account_id=${accountId}&page_size=5` : kind === 'create' ? '/api/v1/contacts' : `/api/v1/forms/${formId}/submit`;
      if (freshConnection) {
        Object.assign(outcome, await onFreshConnection(`${server.baseUrl}${url}`, init));
      } else {
        const response = await fetch(`${server.baseUrl}${url}`, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        outcome.status = response.status;
        outcome.retryAfter = response.headers.get('retry-after');
        outcome.body = await response.text();
      }
    } catch (error) {
      const e = error as { cause?: { code?: string }; code?: string; name?: string };
      outcome.error = String(e.cause?.code ?? e.code ?? e.name ?? error);
    }
    outcome.ended = Date.now();
    outcomes.push(outcome);
    pending.delete(outcome);
    return outcome;
  }

  /** A steady mix of reads, creates and submissions from a few workers, until stopped. */
  function startLoad(workers = 6) {
    let running = true;
    const kinds: Kind[] = ['read', 'create', 'submit'];
    const loops = Array.from({ length: workers }, async (_, w) => {
      for (let i = w; running; i++) {
        await one(kinds[i % 3]!);
        await sleep(15);
      }
    });
    return { stop: async () => void ((running = false), await Promise.all(loops)) };
  }

  const ok = (o: Outcome) => o.status !== undefined && (o.status < 300 || o.status === 429);
  const describeAll = (list: Outcome[]) => list.map((o) => `${o.kind}#${o.n} ${o.status ?? o.error} ${o.body?.slice(0, 80) ?? ''}`);
  async function until(condition: () => boolean, ms: number, what: string) {
    const deadline = Date.now() + ms;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}\n${server.output().slice(-3000)}`);
      await sleep(100);
    }
  }
  /** Polls /readyz until it answers `status`: the service itself has seen the database go or come back. */
  async function untilReadiness(status: 200 | 503, what: string) {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const seen = await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then(
        async (r) => (await r.arrayBuffer(), r.status),
        () => 0,
      );
      if (seen === status) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}\n${server.output().slice(-3000)}`);
      await sleep(100);
    }
  }

  it('under load, every answer is a success or 503 {"error":"Service unavailable"} with Retry-After: never a 500, a crash or a hang', async () => {
    // Each answer is judged by when its request was sent relative to events seen, never by how long
    // anything took: pg_ctl returning (the database is gone, or back) and /readyz (the service saw it).
    const notOk = (list: Outcome[]) => list.filter((o) => !ok(o)).map((o) => `${o.kind} ${o.status ?? o.error} ${o.body}`);
    load = startLoad();
    await until(() => outcomes.filter(ok).length >= 30, 60_000, 'a first run of successful answers');
    const stopAt = Date.now();
    // Answered before PostgreSQL began to stop: the database was up all along, so each one succeeded.
    expect(notOk(outcomes.filter((o) => o.ended <= stopAt))).toEqual([]);

    // PostgreSQL stops (pg_ctl -w returns once the postmaster is gone).
    const stopped = postgres.stop('fast');
    expect(stopped.status, stopped.output).toBe(0);
    const downAt = Date.now();
    await untilReadiness(503, 'the service sees PostgreSQL gone (/readyz 503)');
    const sentDuringOutage = () => outcomes.filter((o) => o.started >= downAt);
    await until(
      () => (['read', 'create', 'submit'] as const).every((kind) => sentDuringOutage().filter((o) => o.kind === kind).length >= 5),
      120_000,
      'answers to requests sent while PostgreSQL is down',
    );
    // No hang: every request in flight now is answered while the database is still down (a request
    // waiting for the database would wait until it is back, and that is never, here).
    const waitingFor = [...pending];
    await until(() => waitingFor.every((o) => o.ended > 0), 120_000, 'requests in flight answered while PostgreSQL stays down');
    const upFrom = Date.now();
    postgres.start();
    const upAt = Date.now();

    // Sent after PostgreSQL was gone and answered before it started again: each one a 503 (or a 429).
    const outage = outcomes.filter((o) => o.started >= downAt && o.ended <= upFrom);
    expect(outage.length).toBeGreaterThanOrEqual(15);
    expect(outage.filter((o) => o.status !== 503 && o.status !== 429).map((o) => `${o.kind} ${o.status ?? o.error} ${o.body}`)).toEqual([]);
    for (const o of outage.filter((x) => x.status === 503)) {
      expect(o.body).toBe(UNAVAILABLE);
      expect(Number(o.retryAfter)).toBeGreaterThan(0);
    }

    // PostgreSQL is back: the service recovers by itself (no restart, no operator). Once it says it is
    // ready, every request sent from then on succeeds.
    await untilReadiness(200, 'recovery after PostgreSQL restarts (/readyz 200)');
    const readyAt = Date.now();
    const sentOnceReady = () => outcomes.filter((o) => o.started >= readyAt);
    await until(
      () => (['read', 'create', 'submit'] as const).every((kind) => sentOnceReady().filter((o) => o.kind === kind).length >= 5),
      120_000,
      'answers to requests sent once the service is ready again',
    );
    expect(notOk(sentOnceReady())).toEqual([]);
    expect(outcomes.some((o) => o.started >= upAt && o.status !== undefined && o.status < 300)).toBe(true);

    // Over the whole run: nothing but successes, 429s and well-formed 503s; no transport error, no timeout.
    const bad = outcomes.filter((o) => !(ok(o) || (o.status === 503 && o.body === UNAVAILABLE)));
    expect(describeAll(bad)).toEqual([]);
    expect(server.proc.exitCode).toBeNull();
  }, 480_000);

  it('Redis stops: the service keeps serving (rate limits fail open); Redis starts: limits are back', async () => {
    load ??= startLoad();
    await redis.stop(); // returns once the process has exited
    const downAt = Date.now();
    const sentDuringOutage = () => outcomes.filter((o) => o.started >= downAt);
    await until(
      () => (['read', 'create', 'submit'] as const).every((kind) => sentDuringOutage().filter((o) => o.kind === kind).length >= 5),
      120_000,
      'answers to requests sent while Redis is down',
    );
    // No request waits on the missing Redis: every one in flight now is answered while it stays down.
    const waitingFor = [...pending];
    await until(() => waitingFor.every((o) => o.ended > 0), 120_000, 'requests in flight answered while Redis stays down');
    const during = sentDuringOutage();
    expect(during.length).toBeGreaterThanOrEqual(15);
    expect(describeAll(during.filter((o) => o.status === undefined || o.status >= 300))).toEqual([]);

    await redis.start();
    // Once reconnected (ioredis retries at least every second), one user's 31st create in a minute is a 429 again.
    const probe = await mintToken(TEST_SECRET, { sub: randomUUID() });
    let limited = false;
    const deadline = Date.now() + 30_000;
    while (!limited && Date.now() < deadline) {
      const r = await fetch(`${server.baseUrl}/api/v1/contacts?account_id=${accountId}`, {
        headers: { authorization: `Bearer ${probe}` },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      limited = r.status === 429;
      await r.arrayBuffer();
    }
    expect(limited, 'rate limiting resumes once Redis is back').toBe(true);
    expect(server.proc.exitCode).toBeNull();
  }, 360_000);

  it('every form submission is recorded whole (contact and submission) or not at all, across the outage', async () => {
    await load?.stop();
    load = null;
    const submits = outcomes.filter((o) => o.kind === 'submit');
    expect(submits.some((o) => o.status === 503)).toBe(true);
    expect(submits.some((o) => o.status === 200)).toBe(true);

    const rows = await postgres.query<{ page: string; contact_id: string | null; email: string | null }>(
      `SELECT s.page, s.contact_id, c.email FROM form_submissions s LEFT JOIN contacts c ON c.id = s.contact_id
       WHERE s.form_id = $1 AND NOT s.is_spam`,
      [formId],
    );
    // No submission without its contact.
    expect(rows.filter((r) => r.contact_id === null || r.email === null)).toEqual([]);
    // No contact from the form without its submission (each request used its own e-mail).
    const orphans = await postgres.query(
      `SELECT c.email FROM contacts c WHERE c.account_id = $1 AND c.email LIKE $2
       AND NOT EXISTS (SELECT 1 FROM form_submissions s WHERE s.contact_id = c.id)`,
      [accountId, `sub-%-${tag}@example.com`],
    );
    expect(orphans).toEqual([]);
    // Every 200 was recorded, with the contact it named; a 503 left nothing, or (committed just as the
    // connection broke) both halves.
    const byPage = new Map(rows.map((r) => [r.page, r]));
    for (const o of submits) {
      const row = byPage.get(`/fault/${o.n}`);
      if (o.status === 200) {
        expect(row, `submission ${o.n} answered 200`).toBeDefined();
        expect(row!.contact_id).toBe(JSON.parse(o.body!).contact_id);
        expect(row!.email).toBe(`sub-${o.n}-${tag}@example.com`);
      } else if (row) {
        expect(row.email).toBe(`sub-${o.n}-${tag}@example.com`);
      }
    }
    // And contacts created through POST /api/v1/contacts: one row per 201, none for a 503.
    const created = outcomes.filter((o) => o.kind === 'create' && o.status === 201).map((o) => `Load ${o.n}`);
    const stored = await postgres.query<{ first_name: string }>('SELECT first_name FROM contacts WHERE account_id = $1 AND last_name = $2', [accountId, tag]);
    const storedNames = new Set(stored.map((r) => r.first_name));
    expect(created.filter((name) => !storedNames.has(name))).toEqual([]);
    expect(stored.length).toBe(storedNames.size);
  }, 60_000);

  it('SIGTERM during load: every request in flight is answered in full, new connections are refused, and the process exits 0', async () => {
    // Requests held in flight: the server has their headers (it answered "100 Continue"), their
    // bodies follow only after SIGTERM. Plus a steady load of ordinary requests around them.
    const held = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const n = ++seq;
        const user = members[n % members.length]!;
        const [url, body, headers] =
          i % 2 === 0
            ? ['/api/v1/contacts', JSON.stringify({ account_id: accountId, first_name: `Held ${n}`, last_name: tag }), { authorization: `Bearer ${user.token}` }]
            : [`/api/v1/forms/${formId}/submit`, JSON.stringify({ data: { email: `held-${n}-${tag}@example.com` } }), { 'x-forwarded-for': `172.20.${(n >> 8) & 255}.${n & 255}` }];
        const request = http.request(`${server.baseUrl}${url}`, {
          method: 'POST',
          agent: false,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
        });
        const answer = new Promise<{ status: number; text: string; complete: boolean }>((resolve, reject) => {
          request.once('response', (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => void (text += chunk));
            res.once('end', () => resolve({ status: res.statusCode!, text, complete: res.complete }));
            res.once('error', reject);
          });
          request.once('error', reject);
        });
        await new Promise<void>((resolve) => request.once('continue', resolve));
        return { send: () => request.end(body), answer };
      }),
    );

    // Each on a connection of its own, so when a request started is when its connection opened. A few
    // workers, each waiting for its answer: within the server's capacity, so no connection waits long
    // unaccepted (an overloaded server would reset its whole accept queue on close, whatever it does).
    const background: Outcome[] = [];
    let loading = true;
    const backgroundLoop = Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = w; loading; i++) {
          background.push(await one((['read', 'create', 'submit'] as const)[i % 3]!, { freshConnection: true }));
          await sleep(10);
        }
      }),
    );
    await until(() => background.filter(ok).length >= 12, 60_000, 'ordinary requests answered before SIGTERM');

    // The server logs "shutting down", keeps accepting for SHUTDOWN_DELAY_MS, then logs "listener closed".
    let closedSeenAt = Infinity;
    const shuttingDown = new Promise<void>((resolve) =>
      server.onLine((line) => parseLogLine(line)?.msg === 'listener closed' && ((closedSeenAt = Date.now()), resolve())),
    );
    const sigtermAt = Date.now();
    server.proc.kill('SIGTERM');
    await shuttingDown;
    for (const h of held) h.send();
    const answers = await Promise.all(held.map((h) => h.answer));
    loading = false;
    await backgroundLoop;
    const settled = background;

    expect(answers.filter((a) => !a.complete || (a.status !== 201 && a.status !== 200)).map((a) => `${a.status} ${a.text}`)).toEqual([]);
    expect(await server.exit).toBe(0);
    expect(server.output()).not.toMatch(/shutdown timed out/);

    // Ordinary requests. A connection opened before SIGTERM was sent met an open listener: its request
    // is in flight and gets a full answer, whatever happens after (a dropped one fails here).
    const inFlight = settled.filter((o) => o.started < sigtermAt);
    expect(inFlight.length).toBeGreaterThan(10);
    expect(describeAll(inFlight.filter((o) => !ok(o)))).toEqual([]);
    // Opened once the listener was closed (its "listener closed" line seen): refused at the door, or answered.
    const afterClose = settled.filter((o) => o.started >= closedSeenAt);
    expect(describeAll(afterClose.filter((o) => !ok(o) && o.error !== 'ECONNREFUSED'))).toEqual([]);
    // Opened in the milliseconds while the handler closed the listener: also a reset unaccepted in its backlog.
    const duringClose = settled.filter((o) => o.started >= sigtermAt && o.started < closedSeenAt);
    expect(describeAll(duringClose.filter((o) => !ok(o) && !/^(ECONNREFUSED|ECONNRESET|EPIPE)$/.test(o.error ?? '')))).toEqual([]);

    // What was answered 201 is stored: the held creates are all in the database.
    const stored = await postgres.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM contacts WHERE account_id = $1 AND first_name LIKE 'Held %'`,
      [accountId],
    );
    expect(Number(stored[0]!.n)).toBe(15);
  }, 120_000);
});
