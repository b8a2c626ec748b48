import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadDotenv } from '../../src/config.js';

// Every environment variable is checked at start; each problem is one line (docs/decisions.md §10).

const problems = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.split('\n');
  }
  return [];
};

describe('configuration', () => {
  it('invoice mail needs SMTP_URL and MAIL_FROM together, an smtp(s) URL and an address; production needs PUBLIC_URL with it', () => {
    expect(loadConfig({}).mail).toBeNull();
    expect(loadConfig({ SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'Billing <billing@example.com>' }).mail).toEqual({ smtpUrl: 'smtp://127.0.0.1:2525', from: 'Billing <billing@example.com>', retryBaseMs: 30_000 });
    expect(problems({ SMTP_URL: 'smtp://127.0.0.1:2525' })).toEqual(['SMTP_URL and MAIL_FROM go together: set both to send mail, or neither']);
    expect(problems({ SMTP_URL: 'http://mail', MAIL_FROM: 'billing' })).toEqual([
      'SMTP_URL must be a smtp: or smtps: URL',
      'MAIL_FROM must be an e-mail address, or "Name <address>" (got "billing")',
    ]);
    const production = { NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(32), METRICS_TOKEN: 'm'.repeat(16), SMTP_URL: 'smtps://mail.example.com', MAIL_FROM: 'billing@example.com' };
    expect(problems(production)).toEqual(["NODE_ENV=production with SMTP_URL needs PUBLIC_URL (the base of the invoice page's link in the mail)"]);
    expect(problems({ ...production, PUBLIC_URL: 'https://billing.example.com' })).toEqual([]);
  });

  it('defaults: 127.0.0.1:3000, cookie "session", log level info, introspection outside production', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ host: '127.0.0.1', port: 3000, production: false, logLevel: 'info', introspection: true });
    expect(config.auth.cookieName).toBe('session');
    expect(config.allowedOrigins).toEqual([]);
  });

  it('reports every problem at once, one line each, naming the variable', () => {
    const lines = problems({
      PORT: 'eighty',
      HOST: 'not a host!',
      AUTH_COOKIE_NAME: 'my session;',
      LOG_LEVEL: 'loud',
      NODE_ENV: 'staging',
      GRAPHQL_INTROSPECTION: 'yes',
      ALLOWED_ORIGINS: 'https://ok.example.com, not-an-origin, ftp//x',
      TRUST_PROXY: '-1',
      REDIS_URL: 'http://redis',
      AUTH_JWT_SECRET: 'short',
      METRICS_TOKEN: 'tiny',
    });
    const expected = ['PORT', 'HOST', 'AUTH_COOKIE_NAME', 'LOG_LEVEL', 'NODE_ENV', 'GRAPHQL_INTROSPECTION', 'TRUST_PROXY', 'REDIS_URL', 'AUTH_JWT_SECRET', 'METRICS_TOKEN'];
    for (const name of expected) expect(lines.filter((l) => l.startsWith(name)), name).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('ALLOWED_ORIGINS'))).toHaveLength(2); // one per bad entry
    expect(lines).toHaveLength(expected.length + 2);
    for (const line of lines) expect(line).not.toContain('\n');
  });

  it('never echoes a secret', () => {
    const lines = problems({ AUTH_JWT_SECRET: 'hunter2-secret', DATABASE_URL: 'mysql://user:pw-secret@db/x' });
    expect(lines.join(' ')).not.toContain('hunter2');
    expect(lines.join(' ')).not.toContain('pw-secret');
  });

  it('accepts IP addresses and host names for HOST', () => {
    for (const host of ['0.0.0.0', '::', '::1', 'localhost', 'api.internal', 'my-host-1']) expect(loadConfig({ HOST: host }).host).toBe(host);
  });

  it('accepts RFC 6265 cookie names and normalises allowed origins', () => {
    expect(loadConfig({ AUTH_COOKIE_NAME: '__Host-session' }).auth.cookieName).toBe('__Host-session');
    expect(loadConfig({ ALLOWED_ORIGINS: 'https://App.example.com:443/path, https://app.example.com' }).allowedOrigins).toEqual(['https://app.example.com']);
  });

  it('production needs an identity provider and a METRICS_TOKEN, and turns introspection (and GraphiQL) off', () => {
    expect(problems({ NODE_ENV: 'production' })).toEqual([
      'NODE_ENV=production needs AUTH_JWT_SECRET or AUTH_JWKS_URL',
      'NODE_ENV=production needs METRICS_TOKEN (GET /metrics then asks for it as a bearer token)',
    ]);
    const ready = { NODE_ENV: 'production', AUTH_JWT_SECRET: 'x'.repeat(32), METRICS_TOKEN: 'm'.repeat(16) };
    expect(loadConfig(ready).introspection).toBe(false);
    expect(loadConfig({ ...ready, GRAPHQL_INTROSPECTION: 'true' }).introspection).toBe(true);
    expect(loadConfig({ AUTH_JWT_SECRET: 'x'.repeat(32) }).metricsToken).toBeUndefined(); // development: /metrics open, as npm start serves it
  });

  it('CURSOR_SECRET is at least 32 characters; production with AUTH_JWKS_URL alone needs it (no secret to derive the cursor key from)', () => {
    expect(problems({ CURSOR_SECRET: 'short' })).toEqual(['CURSOR_SECRET must be at least 32 characters']);
    const jwks = { NODE_ENV: 'production', AUTH_JWKS_URL: 'https://idp.example/jwks.json', METRICS_TOKEN: 'm'.repeat(16) };
    expect(problems(jwks)).toEqual(['NODE_ENV=production with AUTH_JWKS_URL alone needs CURSOR_SECRET (the key that signs list cursors)']);
    expect(loadConfig({ ...jwks, CURSOR_SECRET: 'c'.repeat(32) }).cursorSecret).toBe('c'.repeat(32));
  });

  it('LOG_LEVEL takes pino levels', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
  });
});

describe('.env', () => {
  const file = (content: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'dotenv-'));
    writeFileSync(path.join(dir, '.env'), content);
    return path.join(dir, '.env');
  };

  it('fills in unset variables in development; a real variable wins', () => {
    const env: NodeJS.ProcessEnv = { PORT: '4000' };
    const set = loadDotenv(env, file('PORT=5000\nLOG_LEVEL=debug\n# a comment\nAUTH_COOKIE_NAME="sid"\n'));
    expect(set.sort()).toEqual(['AUTH_COOKIE_NAME', 'LOG_LEVEL']);
    expect(env).toEqual({ PORT: '4000', LOG_LEVEL: 'debug', AUTH_COOKIE_NAME: 'sid' });
  });

  it('is not read in production', () => {
    const env: NodeJS.ProcessEnv = { NODE_ENV: 'production' };
    expect(loadDotenv(env, file('AUTH_JWT_SECRET=from-dotenv-from-dotenv-from-dotenv\n'))).toEqual([]);
    expect(env.AUTH_JWT_SECRET).toBeUndefined();
  });

  it('a missing .env is fine', () => {
    expect(loadDotenv({}, path.join(tmpdir(), 'no-such-dir-xyz', '.env'))).toEqual([]);
  });
});

describe('start-up', () => {
  it('a bad environment stops the process with exit code 1 and one "config:" line per problem', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { PATH: process.env.PATH, NODE_ENV: 'production', HOST: 'bad host', LOG_LEVEL: 'loud' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n').filter((l) => l.startsWith('config: '));
    expect(lines).toEqual([
      'config: HOST must be an IP address or a host name (got "bad host")',
      'config: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      'config: NODE_ENV=production needs AUTH_JWT_SECRET or AUTH_JWKS_URL',
      'config: NODE_ENV=production needs METRICS_TOKEN (GET /metrics then asks for it as a bearer token)',
    ]);
  });
});
