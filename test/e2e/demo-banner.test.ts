/**
 * `npm start` on PostgreSQL (DATABASE_URL) with the development sign-in (docs/build-and-start.md):
 * the database is never seeded unasked, but the start says how to get a token: the command that
 * seeds the demo account when there is none, the demo owner's token when there is one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { loadOrCreateDevSecret } from '../../src/auth/dev-secret.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { openDatabase } from '../../src/db/client.js';
import { DEMO, SEED_DEMO_COMMAND, seedDemo, seedDemoCommand } from '../../src/demo.js';
import { cloneDatabaseForProcess } from '../helpers/database.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { startServer, stopServer, type ServerProcess } from '../helpers/server-process.js';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 }); // tsx compiles the app in each process; the machine may be busy

describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('npm start on PostgreSQL with the development sign-in', () => {
  let dataDir: string;
  let database: Awaited<ReturnType<typeof cloneDatabaseForProcess>>;
  let server: ServerProcess | undefined;
  const start = async () => (server = await startServer({ ...database.env, DATA_DIR: dataDir, NODE_ENV: 'development' }));

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'crm-demo-banner-'));
    database = await cloneDatabaseForProcess(inject('template'));
  });
  afterAll(async () => {
    await stopServer(server);
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('without the demo account, the start names the one command that seeds it, with its DATABASE_URL, and seeds nothing itself', async () => {
    const s = await start();
    // The server's DATA_DIR, HOST and PORT come from its real environment (no .env): the command carries them.
    const command = seedDemoCommand(database.env.DATABASE_URL!, { env: { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0' }, fromDotenv: [] });
    expect(command).toMatch(/^DATA_DIR='.+' HOST='127\.0\.0\.1' PORT='0' DATABASE_URL='postgres(ql)?:\/\/.+' npm run cli -- seed demo$/);
    await expect.poll(() => s.output()).toContain(`No demo account in this database. To create it and get a token for its owner: ${command}`);
    expect(s.output()).not.toContain('export TOKEN=');
    await stopServer(s);
    const db = await openDatabase({ databaseUrl: database.env.DATABASE_URL!, dataDir: '', poolMax: 1 });
    try {
      expect(await db.prisma.account.count({ where: { id: DEMO.accountId } })).toBe(0);
    } finally {
      await db.close();
    }
  });

  it('with the demo account, the start prints a token for its owner that the server accepts', async () => {
    const db = await openDatabase({ databaseUrl: database.env.DATABASE_URL!, dataDir: '', poolMax: 1 });
    try {
      await seedDemo(db.prisma, await loadOrCreateDevSecret(dataDir)); // what `seed demo` does
    } finally {
      await db.close();
    }
    const s = await start();
    await expect.poll(() => /export TOKEN=(\S+)/.exec(s.output())?.[1]).toBeTruthy();
    const token = /export TOKEN=(\S+)/.exec(s.output())![1]!;
    const verify = createTokenVerifier({ jwtSecret: await loadOrCreateDevSecret(dataDir), cookieName: 'session' });
    await expect(verify(token)).resolves.toMatchObject({ sub: DEMO.ownerId });
    const answer = await fetch(`${s.baseUrl}/api/v1/contacts?account_id=${DEMO.accountId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(200);
    expect(s.output()).not.toContain(SEED_DEMO_COMMAND);
  });
});
