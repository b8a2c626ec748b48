import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateDevSecret } from '../../src/auth/dev-secret.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'dev-secret-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

const mode = async (file: string) => (await stat(file)).mode & 0o777;

describe.skipIf(process.platform === 'win32')('loadOrCreateDevSecret', () => {
  it('creates a 32-byte base64url secret in <dataDir>/dev-jwt-secret with mode 0600, creating the directory', async () => {
    const dataDir = path.join(root, 'nested', '.data');
    const secret = await loadOrCreateDevSecret(dataDir);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const file = path.join(dataDir, 'dev-jwt-secret');
    expect((await readFile(file, 'utf8')).trim()).toBe(secret);
    expect(await mode(file)).toBe(0o600);
  });

  it('returns the same secret on later calls (persists across restarts)', async () => {
    const first = await loadOrCreateDevSecret(root);
    expect(await loadOrCreateDevSecret(root)).toBe(first);
  });

  it('gives concurrent first calls one shared secret', async () => {
    const secrets = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateDevSecret(root)));
    expect(new Set(secrets).size).toBe(1);
  });

  it('tightens a secret file whose mode was loosened', async () => {
    const secret = await loadOrCreateDevSecret(root);
    const file = path.join(root, 'dev-jwt-secret');
    await chmod(file, 0o644);
    expect(await loadOrCreateDevSecret(root)).toBe(secret);
    expect(await mode(file)).toBe(0o600);
  });

  it('refuses a secret file that holds too short a secret instead of using it', async () => {
    await writeFile(path.join(root, 'dev-jwt-secret'), 'short\n', { mode: 0o600 });
    await expect(loadOrCreateDevSecret(root)).rejects.toThrow(/delete it/);
  });
});
