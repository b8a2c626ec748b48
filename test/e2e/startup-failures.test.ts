/**
 * Every start-up failure a person can cause is one line on stderr naming what to fix, and exit 1
 * (docs/startup-errors.md): the real server process (`node --import tsx src/main.ts`), each case once.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { cloneDatabaseForProcess } from '../helpers/database.js';

vi.setConfig({ testTimeout: 120_000 }); // tsx compiles the app in each process; the machine may be busy

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const AS_ROOT = process.getuid?.() === 0;

type Outcome = { code: number | null; stderr: string[]; stdout: string };

/** Starts the server with only `env` (nothing leaks from this process) and waits for it to exit. */
async function start(env: Record<string, string>, opts: { asNobody?: boolean } = {}): Promise<Outcome> {
  const argv = [process.execPath, '--import', 'tsx', 'src/main.ts'];
  // root may write anywhere: the permission case runs as `nobody`, as a real deployment's user would.
  const [cmd, ...args] = opts.asNobody && AS_ROOT ? ['runuser', '-u', 'nobody', '--', ...argv] : argv;
  const child = spawn(cmd!, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'development', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => void (stdout += d));
  child.stderr.on('data', (d: Buffer) => void (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 100_000); // it must exit by itself; a listening server fails the test
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stderr: stderr.split('\n').filter(Boolean), stdout };
}

const freePort = async (): Promise<number> => {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
};

describe('start-up failures: one line on stderr naming the fix, exit 1', () => {
  let dir: string;
  beforeAll(async () => void (dir = await mkdtemp(path.join(tmpdir(), 'crm-startup-'))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('a bad configuration names each variable', async () => {
    const r = await start({ DATA_DIR: dir, PORT: 'abc' });
    expect(r).toMatchObject({ code: 1, stderr: ['config: PORT must be an integer from 0 to 65535 (got "abc")'] });
  });

  it('production without METRICS_TOKEN refuses to start, naming it: /metrics is never open on the API port', async () => {
    const r = await start({ DATA_DIR: dir, NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(32) });
    expect(r).toMatchObject({ code: 1, stderr: ['config: NODE_ENV=production needs METRICS_TOKEN (GET /metrics then asks for it as a bearer token)'] });
  });

  it('a port in use names PORT', async () => {
    const holder: Server = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const { port } = holder.address() as { port: number };
    const db = await cloneDatabaseForProcess(inject('template')); // migrated already: the failure comes quickly
    try {
      const r = await start({ DATA_DIR: dir, PORT: String(port), ...db.env });
      expect(r.code).toBe(1);
      expect(r.stderr).toEqual([`start: PORT ${port} is already in use on 127.0.0.1: stop the other process or set PORT to a free port`]);
    } finally {
      holder.close();
      await db.drop();
    }
  });

  it('an unreachable database names DATABASE_URL, without its password', async () => {
    const port = await freePort(); // nothing listens there
    const r = await start({ DATA_DIR: dir, DATABASE_URL: `postgresql://app:s3cret@127.0.0.1:${port}/crm` });
    expect(r.code).toBe(1);
    expect(r.stderr).toEqual([
      `start: DATABASE_URL postgresql://app:***@127.0.0.1:${port}/crm: nothing accepts connections at 127.0.0.1:${port}: start PostgreSQL there or fix DATABASE_URL`,
    ]);
    expect(r.stdout + r.stderr.join('\n')).not.toContain('s3cret');
  });

  it('a DATA_DIR this user may not write names DATA_DIR and the reason', async () => {
    const locked = path.join(dir, 'locked');
    await chmod(dir, 0o755); // the server's user may reach it, not write in it
    await mkdir(locked);
    await chmod(locked, 0o555);
    const r = await start({ DATA_DIR: path.join(locked, 'data') }, { asNobody: true });
    expect(r.code).toBe(1);
    expect(r.stderr).toEqual([
      `start: DATA_DIR ${path.join(locked, 'data')} is not a writable directory (permission denied): set DATA_DIR to one this user can write`,
    ]);
  });

  it('a DATA_DIR below a file names DATA_DIR and the reason', async () => {
    const file = path.join(dir, 'a-file');
    await writeFile(file, '');
    const r = await start({ DATA_DIR: path.join(file, 'data') });
    expect(r.code).toBe(1);
    expect(r.stderr).toEqual([
      `start: DATA_DIR ${path.join(file, 'data')} is not a writable directory (a file is in the way: it or a parent is not a directory): set DATA_DIR to one this user can write`,
    ]);
  });
});
