import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateDevSecret } from '../../src/auth/dev-secret.js';
import { createTokenVerifier } from '../../src/auth/token.js';
import { loadConfig } from '../../src/config.js';
import { TEST_SECRET } from '../helpers/app.js';
import { cli } from './cli-io.js';

const USER = '0f0e0d0c-0b0a-4908-8706-050403020100';
const config = loadConfig({ AUTH_JWT_SECRET: TEST_SECRET });
const dirs: string[] = [];

afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

describe('npm run cli -- token', () => {
  it('prints one token the server accepts for that user, with e-mail and name, valid 7 days by default', async () => {
    const run = await cli(['token', '--user', USER.toUpperCase(), '--email', 'ada@example.com', '--name', 'Ada'], { config });
    expect(run).toMatchObject({ code: 0, err: [] });
    expect(run.out).toHaveLength(1);
    const claims = await createTokenVerifier(config.auth)(run.out[0]!);
    expect(claims).toEqual({ sub: USER, email: 'ada@example.com', name: 'Ada' });
    const { exp, iat } = decodeJwt(run.out[0]!);
    expect(exp! - iat!).toBe(7 * 86_400);
  });

  it('--expires sets the lifetime', async () => {
    const run = await cli(['token', '--user', USER, '--expires', '30m'], { config });
    const { exp, iat } = decodeJwt(run.out[0]!);
    expect(exp! - iat!).toBe(1800);
  });

  it('carries a configured issuer and audience, which the server then requires', async () => {
    const strict = loadConfig({ AUTH_JWT_SECRET: TEST_SECRET, AUTH_JWT_ISSUER: 'https://idp.example', AUTH_JWT_AUDIENCE: 'crm' });
    const run = await cli(['token', '--user', USER], { config: strict });
    await expect(createTokenVerifier(strict.auth)(run.out[0]!)).resolves.toEqual({ sub: USER });
  });

  it('with no auth configured it signs with the development secret in DATA_DIR (created if missing)', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'crm-cli-token-'));
    dirs.push(dataDir);
    const run = await cli(['token', '--user', USER], { config: loadConfig({ DATA_DIR: dataDir }) });
    expect(run.code).toBe(0);
    expect((await stat(path.join(dataDir, 'dev-jwt-secret'))).mode & 0o077).toBe(0);
    const secret = await loadOrCreateDevSecret(dataDir);
    await expect(createTokenVerifier({ jwtSecret: secret, cookieName: 'session' })(run.out[0]!)).resolves.toEqual({ sub: USER });
  });

  it('refuses to sign when tokens come from an identity provider (JWKS only)', async () => {
    const run = await cli(['token', '--user', USER], { config: loadConfig({ AUTH_JWKS_URL: 'https://idp.example/jwks.json' }) });
    expect(run.code).toBe(1);
    expect(run.out).toEqual([]);
    expect(run.err).toEqual([
      'token: AUTH_JWKS_URL is set without AUTH_JWT_SECRET: tokens come from your identity provider, this command cannot sign one',
    ]);
  });

  it('a missing --user or an unknown option is a usage line and exit 2', async () => {
    for (const argv of [['token'], ['token', '--user', USER, '--admin']]) {
      const run = await cli(argv, { config });
      expect(run.code).toBe(2);
      expect(run.err).toHaveLength(1);
      expect(run.err[0]).toMatch(/^token: (--user is required|Unknown option '--admin') \(usage: npm run cli -- token --user <uuid>/);
    }
  });

  it('each invalid value is one line naming its flag; a value a flag cannot take is a usage mistake, exit 2', async () => {
    const run = await cli(['token', '--user', 'ada', '--email', 'nope', '--expires', 'forever'], { config });
    expect(run.code).toBe(2);
    expect(run.err).toEqual([
      'token: --user: Must be a UUID',
      'token: --email: Must be a valid e-mail address',
      'token: --expires: Must be a number and a unit: s, m, h, d or w (e.g. 30m, 12h, 7d)',
    ]);
  });
});

describe('npm run cli', () => {
  it('without a command it prints the usage of every command and exits 2; help exits 0', async () => {
    const none = await cli([], { config });
    expect(none.code).toBe(2);
    const help = await cli(['help'], { config });
    expect(help.code).toBe(0);
    for (const name of ['token', 'account:create', 'member:add', 'form:create', 'migrate', 'seed', 'export']) {
      expect(none.err.join('\n')).toContain(`  ${name} `);
      expect(help.out.join('\n')).toContain(`  ${name} `);
    }
  });

  it('an unknown command is one line and exit 2', async () => {
    expect(await cli(['frobnicate'], { config })).toEqual({
      code: 2, out: [], err: ['unknown command "frobnicate"; run `npm run cli -- help` for the list'],
    });
  });
});
