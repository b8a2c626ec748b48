/**
 * The embedded database belongs to one process (docs/faults.md "One process per DATA_DIR"): with a
 * server running on a DATA_DIR, a second server and a CLI command on it refuse at once, in one line
 * naming the holder's pid and command, exit 1; once the holder is dead, its stale lock is taken over.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killServer, ROOT, startServer, type ServerProcess } from '../../scripts/soak/services.js';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../src/db/lock.js';
import { TEST_METRICS_TOKEN, TEST_SECRET } from '../helpers/app.js';

/** Runs `node --import tsx <script> ...args` to its end: exit code and output. */
function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => void (stdout += d));
    proc.stderr.on('data', (d: Buffer) => void (stderr += d));
    proc.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a lock on DATA_DIR held by the process that opened the embedded database', () => {
  let dir: string;
  let server: ServerProcess;
  const env = () => ({ DATA_DIR: dir, AUTH_JWT_SECRET: TEST_SECRET, METRICS_TOKEN: TEST_METRICS_TOKEN, NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1' });
  const cli = () => run(['src/cli/index.ts', 'account:create', '--owner', randomUUID(), '--name', 'Locked'], env());

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'crm-lock-'));
    server = await startServer({ DATA_DIR: dir, AUTH_JWT_SECRET: TEST_SECRET });
  }, 240_000);
  afterAll(async () => {
    await killServer(server);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a second server on the same DATA_DIR refuses in one line naming the holder, exit 1', async () => {
    const second = await run(['src/main.ts'], env());
    expect(second.code).toBe(1);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`in use by pid ${server.proc.pid} (`);
    expect(lines[0]).toContain('src/main.ts');
    expect(second.stdout).not.toMatch(/listening/);
  }, 120_000);

  it('a CLI command on it refuses the same way, and writes nothing', async () => {
    const r = await cli();
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining(`in use by pid ${server.proc.pid} (`)]);
    expect(r.stdout).toBe('');
  }, 120_000);

  it('once the holder is dead (SIGKILL: no clean-up), its stale lock is taken over', async () => {
    await killServer(server);
    const r = await cli();
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/[0-9a-f-]{36}/);
  }, 120_000);
});

describe.runIf(existsSync('/proc/self/stat'))('a lock held by a zombie', () => {
  it("a holder that exited but is not yet reaped (a zombie: kill(pid, 0) still succeeds) is gone: its lock is taken over", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'crm-lock-zombie-'));
    // sh starts a child, then becomes `sleep`, which never reaps it: the child exits once its parent
    // is `sleep` (before that, sh itself might reap it), and stays a zombie.
    const child = 'while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.01; done';
    const parent = spawn('sh', ['-c', `sh -c '${child}' & echo $!; exec sleep 600`], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = (await once(parent.stdout, 'data')) as [Buffer];
      const pid = Number(line.toString().trim());
      const state = () => { const stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); return stat.charAt(stat.lastIndexOf(')') + 2); };
      await expect.poll(state, { timeout: 30_000 }).toBe('Z');
      expect(() => process.kill(pid, 0)).not.toThrow();
      writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid, command: 'node dist/src/main.js' }));

      const release = lockDataDir(dir);
      expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
      release();
      // A live holder still refuses: the parent (sleep) runs.
      writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: parent.pid, command: 'sleep' }));
      expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
    } finally {
      parent.kill('SIGKILL'); // init reaps the zombie with it
      await rm(dir, { recursive: true, force: true });
    }
  });
});
