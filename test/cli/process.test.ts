// The real CLI in its own process (`npm run cli`), on a fresh embedded database in a temp DATA_DIR.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadOrCreateDevSecret } from '../../src/auth/dev-secret.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { openDatabase } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { DEMO, seedDemo } from '../../src/demo.js';

const root = path.resolve(import.meta.dirname, '../..');
let dataDir: string;

/** `npm run -s cli -- ...` with only DATA_DIR configured: no DATABASE_URL, no auth settings. */
async function npmCli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'AUTH_JWT_SECRET', 'AUTH_JWKS_URL', 'AUTH_JWT_ISSUER', 'AUTH_JWT_AUDIENCE']) delete env[name];
  try {
    const { stdout, stderr } = await promisify(execFile)('npm', ['run', '-s', 'cli', '--', ...args], { cwd: root, env, timeout: 170_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

// npm itself may warn about the environment's npmrc; the command's own lines are the rest.
const ownLines = (text: string) => text.split('\n').filter((line) => line && !line.startsWith('npm warn'));

/** The CLI started from `cwd` (tsx by path: `npm run` would switch to the project root). */
async function cliIn(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<string> {
  const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
  const { stdout } = await promisify(execFile)(tsx, [path.join(root, 'src/cli/index.ts'), ...args], { cwd, env, timeout: 170_000 });
  return stdout.trim();
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'crm-cli-process-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe('the CLI as a process', () => {
  it('token prints only a token, signed with the dev secret it keeps in DATA_DIR', async () => {
    const user = '3b241101-e2bb-4255-8caf-4136c566a962';
    const r = await npmCli('token', '--user', user, '--email', 'ops@example.com');
    expect(r.code).toBe(0);
    expect(ownLines(r.stderr)).toEqual([]);
    const lines = ownLines(r.stdout);
    expect(lines).toHaveLength(1);
    const verify = createTokenVerifier({ jwtSecret: await loadOrCreateDevSecret(dataDir), cookieName: 'session' });
    await expect(verify(lines[0]!)).resolves.toEqual({ sub: user, email: 'ops@example.com' });
  }, 180_000);

  it('a problem is one line on stderr, and a value an option cannot take exits 2 (a usage mistake)', async () => {
    const r = await npmCli('token', '--user', 'nobody');
    expect(r.code).toBe(2);
    expect(ownLines(r.stdout)).toEqual([]);
    expect(ownLines(r.stderr)).toEqual(['token: --user: Must be a UUID']);
  }, 180_000);

  it('export streams the account of the embedded database into a file', async () => {
    // Seeded in this process, then closed: PGlite's directory belongs to one process at a time.
    // The run's migrated PGlite template saves migrating again (a PostgreSQL run has none: migrate here).
    const template = inject('template');
    if (template.kind === 'pglite') await cp(template.dir, dataDir, { recursive: true });
    const db = await openDatabase({ dataDir });
    if (template.kind !== 'pglite') await applyMigrations(db);
    await seedDemo(db.prisma, await loadOrCreateDevSecret(dataDir));
    await db.close();

    const out = path.join(dataDir, 'demo-export.json');
    const r = await npmCli('export', '--account', DEMO.accountId, '--out', out);
    expect(ownLines(r.stderr)).toEqual([]);
    expect(r.code).toBe(0);
    expect(ownLines(r.stdout)).toEqual([expect.stringMatching(new RegExp(`^wrote ${out} \\(\\d+ bytes\\)$`))]);
    const doc = JSON.parse(await readFile(out, 'utf8'));
    expect(doc.export_metadata.account_id).toBe(DEMO.accountId);
    expect(doc.contacts.map((c: { email: string }) => c.email)).toContain('ada@example.com');
    expect(doc.forms.map((f: { id: string }) => f.id)).toEqual([DEMO.formId]);
    expect(doc.exports).toHaveLength(1);
  }, 180_000);

  it('reads .env in its working directory like the server, and the real environment wins', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'crm-cli-dotenv-'));
    try {
      const fromDotenv = path.join(cwd, 'from-dotenv');
      await writeFile(path.join(cwd, '.env'), `DATA_DIR=${fromDotenv}\n`);
      const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'development' };
      for (const name of ['DATA_DIR', 'DATABASE_URL', 'REDIS_URL', 'AUTH_JWT_SECRET', 'AUTH_JWKS_URL', 'AUTH_JWT_ISSUER', 'AUTH_JWT_AUDIENCE']) delete env[name];
      const user = '3b241101-e2bb-4255-8caf-4136c566a962';

      // token signs with the dev secret it keeps in DATA_DIR: the secret's place shows which DATA_DIR won.
      const token = await cliIn(cwd, env, 'token', '--user', user);
      const verify = createTokenVerifier({ jwtSecret: await loadOrCreateDevSecret(fromDotenv), cookieName: 'session' });
      await expect(verify(token)).resolves.toMatchObject({ sub: user });
      expect(existsSync(path.join(cwd, '.data'))).toBe(false);

      const real = path.join(cwd, 'from-environment');
      const again = await cliIn(cwd, { ...env, DATA_DIR: real }, 'token', '--user', user);
      const verifyReal = createTokenVerifier({ jwtSecret: await loadOrCreateDevSecret(real), cookieName: 'session' });
      await expect(verifyReal(again)).resolves.toMatchObject({ sub: user });
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  }, 180_000);
});
