/**
 * Liveness, readiness and graceful shutdown (src/plugins/use-health.ts, src/main.ts): a real server process
 * that gets SIGTERM while a request is in flight finishes that request, refuses new connections,
 * and exits 0; /readyz turns 503 while draining or when the database does not answer.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import { mintToken } from '../../src/auth/token.js';
import { openDatabase } from '../../src/db/client.js';
import { startDraining, READY_TIMEOUT_MS } from '../../src/plugins/use-health.js';
import { createTestApp, TEST_SECRET, type TestApp } from '../helpers/app.js';
import { cloneDatabaseForProcess } from '../helpers/database.js';
import { parseLogLine, START_TIMEOUT_MS, startServer, stopServer, type ServerProcess } from '../helpers/server-process.js';

// Hundreds of sequential requests on a shared 2-core machine: generous, never part of correctness.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

/** Resolves with the error code of a fresh TCP connection attempt, or 'connected'. */
const connectOutcome = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve('connected')));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });

/**
 * Waits until fresh connections are refused. The "shutting down" line is written just before the
 * listener closes, so the first attempts may still land in the kernel's accept queue: poll. Such an
 * attempt is either accepted or, when the listener closes with it still queued, reset by the kernel
 * (ECONNRESET): both are the race, not the answer.
 */
async function refusedEventually(port: number): Promise<string> {
  const deadline = Date.now() + 30_000;
  const racing = (outcome: string) => outcome === 'connected' || outcome === 'ECONNRESET';
  let outcome = await connectOutcome(port);
  while (racing(outcome) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    outcome = await connectOutcome(port);
  }
  return outcome;
}

describe('graceful shutdown of a server process', () => {
  let server: ServerProcess;
  let database: Awaited<ReturnType<typeof cloneDatabaseForProcess>>;
  let token: string;
  let accountId: string;

  beforeAll(async () => {
    database = await cloneDatabaseForProcess(inject('template'));
    server = await startServer({
      AUTH_JWT_SECRET: TEST_SECRET,
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      ...database.env,
    });
    token = await mintToken(TEST_SECRET, { sub: randomUUID() });
    const created = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: 'mutation { createAccount(input: { name: "Shutdown" }) { id } }' }),
    });
    accountId = ((await created.json()) as { data: { createAccount: { id: string } } }).data.createAccount.id;
  }, START_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await stopServer(server);
    await database?.drop();
  });

  it('while running, /healthz and /readyz are 200', async () => {
    const live = await fetch(`${server.baseUrl}/healthz`);
    expect({ status: live.status, body: await live.json() }).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await fetch(`${server.baseUrl}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 200, body: { status: 'ready' } });
  });

  it('SIGTERM during an in-flight request: the request finishes (201), new connections are refused, then exit 0', async () => {
    const body = JSON.stringify({ account_id: accountId, first_name: 'Inflight' });
    // The request is sent in two steps: headers now (the server answers "100 Continue" once it has
    // them, so it is in flight), the body only after SIGTERM. No timing is involved.
    const request = http.request(`${server.baseUrl}/api/v1/contacts`, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        authorization: `Bearer ${token}`,
        expect: '100-continue',
      },
    });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      request.once('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => void (text += chunk));
        res.once('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      request.once('error', reject);
    });
    response.catch(() => {}); // awaited below; a failure before then must not be an unhandled rejection
    await new Promise<void>((resolve) => request.once('continue', resolve));

    const shuttingDown = new Promise<void>((resolve) => server.onLine((line) => parseLogLine(line)?.msg === 'shutting down' && resolve()));
    server.proc.kill('SIGTERM');
    await shuttingDown;

    // The listener is closed: a load balancer's new connections are refused, not accepted and dropped.
    expect(await refusedEventually(server.port)).toBe('ECONNREFUSED');
    expect(server.proc.exitCode).toBeNull(); // still waiting for our request

    request.end(body);
    const answer = await response;
    expect(answer.status, answer.body).toBe(201);
    expect(JSON.parse(answer.body)).toMatchObject({ data: { first_name: 'Inflight' } });

    expect(await server.exit).toBe(0);
    expect(server.output()).not.toMatch(/shutdown timed out/);
  }, 120_000);
});

describe('SHUTDOWN_DELAY_MS: a drain period before the listener closes', () => {
  it('after SIGTERM the server still answers new connections while /readyz is 503, then refuses them and exits 0', async () => {
    const database = await cloneDatabaseForProcess(inject('template'));
    const server = await startServer({ AUTH_JWT_SECRET: TEST_SECRET, SHUTDOWN_DELAY_MS: '1500', ...database.env });
    try {
      const shuttingDown = new Promise<void>((resolve) => server.onLine((line) => parseLogLine(line)?.msg === 'shutting down' && resolve()));
      const listenerClosed = new Promise<void>((resolve) => server.onLine((line) => parseLogLine(line)?.msg === 'listener closed' && resolve()));
      server.proc.kill('SIGTERM');
      await shuttingDown;
      // A fresh connection (agent-less fetch would reuse one): the load balancer may still send a few.
      const ready = await fetch(`${server.baseUrl}/readyz`, { headers: { connection: 'close' } });
      expect(ready.status).toBe(503);
      const live = await fetch(`${server.baseUrl}/healthz`, { headers: { connection: 'close' } });
      expect(live.status).toBe(200);
      await listenerClosed;
      expect(await refusedEventually(server.port)).toBe('ECONNREFUSED');
      expect(await server.exit).toBe(0);
    } finally {
      await stopServer(server);
      await database.drop();
    }
  }, START_TIMEOUT_MS + 30_000);
});

describe('readiness (in process)', () => {
  let t: TestApp;
  beforeAll(async () => void (t = await createTestApp()));
  afterAll(() => t?.close());

  it('/healthz and /readyz answer GET and HEAD, need no token, and refuse other methods with 405', async () => {
    const head = await t.rest('HEAD', '/readyz');
    expect({ status: head.status, text: head.text }).toEqual({ status: 200, text: '' });
    const post = await t.rest('POST', '/healthz', { body: {} });
    expect({ status: post.status, allow: post.headers.get('allow') }).toEqual({ status: 405, allow: 'GET, HEAD' });
  });

  it('/readyz turns 503 once the app drains, while /healthz stays 200', async () => {
    expect((await t.rest('GET', '/readyz')).body).toEqual({ status: 'ready' });
    startDraining(t.deps);
    const ready = await t.rest('GET', '/readyz');
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 503, body: { status: 'unavailable' } });
    expect(ready.headers.get('cache-control')).toBe('no-store');
    const live = await t.rest('GET', '/healthz');
    expect({ status: live.status, body: live.body }).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('/readyz is 503 when the database refuses connections, and within about a second when it hangs', async () => {
    // A port nothing listens on (refused), and a server that accepts and never answers (hangs).
    const closed = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as net.AddressInfo;
        s.close(() => resolve(port));
      });
    });
    const sockets = new Set<net.Socket>();
    const blackhole = net.createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const hanging = (blackhole.address() as net.AddressInfo).port;

    try {
      for (const port of [closed, hanging]) {
        const db = await openDatabase({ databaseUrl: `postgresql://nobody@127.0.0.1:${port}/none`, dataDir: '', onConnectionError: () => {} });
        const app = createApp({ ...t.deps, db });
        const started = Date.now();
        const ready = await app.fetch('http://localhost/readyz');
        expect({ status: ready.status, body: await ready.json() }).toEqual({ status: 503, body: { status: 'unavailable' } });
        // Bounded by the probe's timeout (generous margin for a busy machine), never hanging.
        expect(Date.now() - started).toBeLessThan(READY_TIMEOUT_MS + 10_000);
        expect((await app.fetch('http://localhost/healthz')).status).toBe(200);
        for (const socket of sockets) socket.destroy();
        await db.close().catch(() => {});
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      blackhole.close();
    }
  });
});
