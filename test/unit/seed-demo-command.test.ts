import { describe, expect, it } from 'vitest';
import { DEMO, seedDemoCommand, signInHint } from '../../src/demo.js';

// A start on PostgreSQL without the demo account prints the command that seeds it (src/demo.ts):
// run as printed, it must reach that database, not the embedded one.
describe('the seed command a start on PostgreSQL prints', () => {
  it('carries the DATABASE_URL the service runs on', () => {
    expect(seedDemoCommand('postgresql://postgres@127.0.0.1:5432/test')).toBe("DATABASE_URL='postgresql://postgres@127.0.0.1:5432/test' npm run cli -- seed demo");
  });

  it('never prints the password: <password> stands in its place', () => {
    const command = seedDemoCommand('postgresql://crm:s3cr%40t@db.example:6432/crm?sslmode=require');
    expect(command).toBe("DATABASE_URL='postgresql://crm:<password>@db.example:6432/crm?sslmode=require' npm run cli -- seed demo");
    expect(command).not.toContain('s3cr');
  });

  it('carries the DATA_DIR (the dev secret) and PORT the real environment set, not those .env sets (the CLI reads it too)', () => {
    const env = { DATA_DIR: '/srv/crm data', PORT: '3917', HOST: '127.0.0.1' };
    expect(seedDemoCommand('postgresql://postgres@127.0.0.1:5432/test', { env, fromDotenv: ['HOST'] })).toBe(
      "DATA_DIR='/srv/crm data' PORT='3917' DATABASE_URL='postgresql://postgres@127.0.0.1:5432/test' npm run cli -- seed demo",
    );
  });
});

// With AUTH_JWT_SECRET set the start said no word on tokens (issue 74): it says how to make one.
describe('the sign-in hint of a start with AUTH_JWT_SECRET or AUTH_JWKS_URL', () => {
  const SECRET = 'a-secret-of-at-least-thirty-two-chars!';
  const pg = { auth: { jwtSecret: SECRET }, databaseUrl: 'postgresql://postgres@127.0.0.1:5432/crm' };

  it('on PostgreSQL without the demo account: the seed command with its DATABASE_URL, and the token command', () => {
    const hint = signInHint(pg, false, { env: { AUTH_JWT_SECRET: SECRET }, fromDotenv: [] });
    expect(hint).toContain("demo account and its owner's token: DATABASE_URL='postgresql://postgres@127.0.0.1:5432/crm' npm run cli -- seed demo");
    expect(hint).toContain("any user's token: npm run cli -- token --user <user uuid>");
  });

  it('with the demo account: the token command for its owner', () => {
    expect(signInHint(pg, true, { env: {}, fromDotenv: ['AUTH_JWT_SECRET'] })).toContain(`demo owner's token: npm run cli -- token --user ${DEMO.ownerId}`);
  });

  it('says the CLI needs the secret, issuer and audience the real environment gave the server, never their values', () => {
    const env = { AUTH_JWT_SECRET: SECRET, AUTH_JWT_ISSUER: 'https://id.example', AUTH_JWT_AUDIENCE: 'crm' };
    const hint = signInHint(pg, false, { env, fromDotenv: ['AUTH_JWT_AUDIENCE'] });
    expect(hint).toContain('The CLI needs the same AUTH_JWT_SECRET, AUTH_JWT_ISSUER as this server: export them in its shell');
    expect(hint).not.toContain(SECRET);
    expect(signInHint(pg, false, { env, fromDotenv: ['AUTH_JWT_SECRET', 'AUTH_JWT_ISSUER', 'AUTH_JWT_AUDIENCE'] })).not.toContain('The CLI needs');
  });

  it('on the embedded database: the seed command, once the server is stopped', () => {
    expect(signInHint({ auth: { jwtSecret: SECRET } }, false, { env: {}, fromDotenv: [] })).toContain(
      "demo account and its owner's token (stop this server first: the embedded database is one process's): npm run cli -- seed demo",
    );
  });

  it('with AUTH_JWKS_URL alone: tokens come from the identity provider', () => {
    expect(signInHint({ auth: { jwksUrl: 'https://id.example/jwks' } }, false, { env: {}, fromDotenv: [] })).toContain('tokens come from your identity provider (AUTH_JWKS_URL)');
  });
});
