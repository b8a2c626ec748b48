// docs/events.md "How delivery works": a crash mid-delivery leaves the lease to expire, and the
// message goes out again after a restart, with the same webhook-id.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, inject, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { emit } from '../../src/events/emit.js';
import { SYSTEM } from '../../src/events/types.js';
import { newSigningSecret, secretBox } from '../../src/webhooks/secret.js';
import { TEST_SECRET } from '../helpers/app.js';
import { cloneDatabaseForProcess } from '../helpers/database.js';
import { startReceiver } from './receiver.js';

vi.setConfig({ testTimeout: 300_000, hookTimeout: 120_000 });

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KEY = 'crash-test-webhook-key-crash-test-webhook-key';
const started: ChildProcess[] = [];

/** The real server (`node --import tsx src/main.ts`); resolves once it logs "listening". */
function startServer(env: Record<string, string>): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'test', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(proc);
  let output = '';
  return new Promise((resolve, reject) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      if (output.includes('"msg":"listening"')) resolve(proc);
    });
    proc.stderr!.on('data', (chunk: Buffer) => void (output += chunk));
    proc.once('exit', (code) => reject(new Error(`server exited (${code}):\n${output}`)));
  });
}

afterAll(() => {
  for (const proc of started) if (proc.exitCode === null) proc.kill('SIGKILL');
});

describe('a crash mid-delivery', () => {
  it('a server killed with SIGKILL while sending delivers the event after restart, with the same webhook-id', async () => {
    const database = await cloneDatabaseForProcess(inject('template'));
    let hang: () => void = () => {};
    const firstArrived = new Promise<void>((resolve) => (hang = resolve));
    // The first request never gets an answer: the server dies while waiting for it.
    const receiver = await startReceiver((n) => (n === 1 ? (hang(), new Promise<number>(() => {})) : 204));

    const secret = newSigningSecret();
    const db = await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR ?? '' });
    try {
      const owner = crypto.randomUUID();
      await db.prisma.user.create({ data: { id: owner } });
      const account = await db.prisma.account.create({ data: { name: 'Crash', ownerId: owner } });
      const id = crypto.randomUUID();
      await db.prisma.webhookEndpoint.create({
        data: { id, accountId: account.id, url: receiver.url, eventTypes: ['*'], secretCiphertext: secretBox(KEY).seal(secret, id) },
      });
      await db.prisma.$transaction((tx) => emit(tx, { type: 'account.created', accountId: account.id, actor: SYSTEM, object: account }));
    } finally {
      await db.close();
    }

    const env = { ...database.env, AUTH_JWT_SECRET: TEST_SECRET, WEBHOOK_SECRET_KEY: KEY, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_LEASE_MS: '1500', EVENT_POLL_MS: '50' };
    const first = await startServer(env);
    await firstArrived;
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));

    const second = await startServer(env);
    await receiver.waitFor(2);
    second.kill('SIGTERM');
    await new Promise((resolve) => second.once('exit', resolve));

    const [lost, delivered] = receiver.received;
    expect(delivered!.headers['webhook-id']).toBe(lost!.headers['webhook-id']);
    const event = new Webhook(secret).verify(delivered!.body, delivered!.headers as Record<string, string>) as { type: string };
    expect(event.type).toBe('account.created');
    await receiver.close();
    await database.drop();
  });
});
