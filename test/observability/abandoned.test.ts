import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/logger.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §26: a request its client abandons (an upload aborted mid-body, a body cut
// off, a connection closed before the answer) is logged and counted in /metrics as 499, as nginx
// names it: never a 500 or 503, which would page someone for a client's decision.

let t: TestApp;
let acc: TestAccount;
let lines: Record<string, any>[];
let app: ReturnType<typeof createApp>;
let server: Server;
let base: URL;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  lines = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  app = createApp({ ...t.deps, log });
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t?.close();
});

/** A request whose headers and `first` bytes go out on a real socket, the rest never: destroyed when `abort` says. */
function cutOff(path: string, headers: Record<string, string>, first: string, declared: number) {
  const req = request(new URL(path, base), { method: 'POST', headers: { authorization: `Bearer ${acc.member.token}`, 'content-length': String(declared), ...headers } });
  req.on('error', () => undefined); // the socket this test destroys
  req.write(first);
  return req;
}

const requestLine = (route: string) => lines.find((l) => l.msg === 'request' && l.route === route);

async function counted(route: string): Promise<Record<string, number>> {
  const text = await (await app.fetch('http://localhost/metrics')).text();
  const statuses: Record<string, number> = {};
  for (const [, status, n] of text.matchAll(new RegExp(`^http_requests_total\\{method="POST",route="${route.replace(/\//g, '\\/')}",status="(\\d+)"\\} (\\d+)$`, 'gm'))) {
    statuses[status!] = Number(n);
  }
  return statuses;
}

describe('a request its client abandons', () => {
  beforeEach(() => void (lines.length = 0));

  it('an upload aborted mid-body is logged as 499 (no error line) and counted in /metrics as 499, never 500 or 503', async () => {
    const upload = cutOff(`/api/v1/imports?account_id=${acc.id}&object=contacts`, { 'content-type': 'text/csv' }, 'first_name,email\r\nAda,ada@example.com\r\n', 10 * 1024 * 1024);
    // Admitted, its body being read when the client goes: the caller holds a place among the uploads under way.
    const placeHeld = async () => {
      const places = await t.deps.uploads!.take([{ key: `caller:${acc.member.id}`, max: 1 }]);
      await places?.release();
      return places === null;
    };
    await expect.poll(placeHeld).toBe(true);
    upload.destroy();
    await expect.poll(() => requestLine('/api/v1/imports')?.status).toBe(499);
    expect(requestLine('/api/v1/imports')!.level).toBeLessThan(50);
    expect(lines.filter((l) => l.level >= 50).map((l) => `${l.msg}: ${l.err?.message} ${l.err?.stack}`)).toEqual([]);
    expect(await counted('/api/v1/imports')).toEqual({ 499: 1 });
  });

  it('a JSON body cut off mid-way is logged and counted as 499', async () => {
    const body = cutOff('/api/v1/contacts', { 'content-type': 'application/json' }, `{"account_id":"${acc.id}","first_`, 4096);
    // The server holds the connection, its headers sent: the app reads the body when the client goes.
    await expect.poll(() => new Promise<number>((resolve) => server.getConnections((_, n) => resolve(n)))).toBeGreaterThan(0);
    body.destroy();
    await expect.poll(() => requestLine('/api/v1/contacts')?.status).toBe(499);
    expect(lines.filter((l) => l.level >= 50).map((l) => `${l.msg}: ${l.err?.message} ${l.err?.stack}`)).toEqual([]);
    expect(await counted('/api/v1/contacts')).toEqual({ 499: 1 });
  });
});
