/**
 * A write whose connection breaks in flight is answered by what the database holds (docs/faults.md,
 * "A write in doubt"): the service talks to PostgreSQL (a cluster this file creates) through a
 * proxy that cuts one connection at a chosen moment, either after PostgreSQL committed and answered
 * (the answer never reaches the service) or before the statement reaches it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { freePort, killServer, missingServices, PrivatePostgres, startServer, type ServerProcess } from '../../scripts/soak/services.js';
import { TEST_SECRET } from '../helpers/app.js';
import { skipIfMissing } from '../helpers/prerequisites.js';
import { ownerGql } from './service.js';

/** When the proxy cuts a connection whose request names the marker: after the server's answer to it, or instead of sending it. */
type Cut = { marker: string; when: 'after-commit' | 'before-send' };

/** A TCP proxy to PostgreSQL that cuts the first connection carrying `cut.marker`, as set at the time. */
async function cuttingProxy(target: number): Promise<{ port: number; cut: (c: Cut) => void; close: () => void }> {
  let armed: Cut | null = null;
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    let cutting = false;
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk) => {
      if (armed && chunk.includes(armed.marker)) {
        const { when } = armed;
        armed = null;
        if (when === 'before-send') return end();
        cutting = true;
      }
      upstream.write(chunk);
    });
    // The server's answer comes after its COMMIT (an implicit transaction ends at Sync, before
    // ReadyForQuery), so cutting here loses the answer of a write that committed.
    upstream.on('data', (chunk) => (cutting ? end() : client.write(chunk)));
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, cut: (c) => void (armed = c), close: () => server.close() };
}

describe.skipIf(skipIfMissing(missingServices()))('a write whose database connection breaks in flight', () => {
  let dir: string;
  let postgres: PrivatePostgres;
  let proxy: Awaited<ReturnType<typeof cuttingProxy>>;
  let server: ServerProcess;
  let accountId: string;
  let token: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'crm-in-doubt-'));
    postgres = await PrivatePostgres.create(dir);
    proxy = await cuttingProxy(postgres.port);
    server = await startServer({ DATABASE_URL: postgres.url.replace(`:${postgres.port}/`, `:${proxy.port}/`), AUTH_JWT_SECRET: TEST_SECRET });
    token = await mintToken(TEST_SECRET, { sub: randomUUID() });
    accountId = (await ownerGql(server.baseUrl, token, 'mutation { createAccount(input: { name: "In doubt" }) { id } }')).createAccount.id;
  }, 240_000);
  afterAll(async () => {
    await killServer(server);
    proxy?.close();
    postgres?.stop('immediate');
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 120_000);

  const create = (firstName: string) =>
    fetch(`${server.baseUrl}/api/v1/contacts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: accountId, first_name: firstName }),
    });
  const stored = (firstName: string) => postgres.query<{ id: string }>('SELECT id FROM contacts WHERE account_id = $1 AND first_name = $2', [accountId, firstName]);

  it('committed, its answer lost: 201 with the stored contact', async () => {
    const name = `Committed ${randomUUID()}`;
    proxy.cut({ marker: name, when: 'after-commit' });
    const r = await create(name);
    const body = (await r.json()) as { data: { id: string; first_name: string } };
    const rows = await stored(name);
    expect(rows).toHaveLength(1);
    expect([r.status, body.data.id, body.data.first_name]).toEqual([201, rows[0]!.id, name]);
  });

  it('never sent: 503 and nothing stored', async () => {
    const name = `Unsent ${randomUUID()}`;
    proxy.cut({ marker: name, when: 'before-send' });
    const r = await create(name);
    expect(r.status).toBe(503);
    expect(await stored(name)).toEqual([]);
  });
});
