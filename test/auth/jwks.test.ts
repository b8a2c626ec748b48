import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenVerifier, mintToken, TokenError } from '../../src/auth/token.js';

const SUB = '3f1c2b9e-6d4a-4c1e-9b7a-2e5f8d0c1a44';
const SECRET = 'test-secret-that-is-long-enough-0123456789';
const now = () => Math.floor(Date.now() / 1000);

type Pair = { privateKey: CryptoKey; publicKey: CryptoKey; kid: string; alg: string };
const pairs: Record<'rs' | 'es' | 'ed', Pair> = {} as never;
let server: Server;
let jwksUrl = '';
let jwksRequests = 0;

async function pair(alg: string, kid: string): Promise<Pair> {
  return { ...(await generateKeyPair(alg, { extractable: true })), kid, alg };
}

function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const s = createServer(handler);
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => {
    resolve({ server: s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/jwks.json` });
  }));
}
const close = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));

beforeAll(async () => {
  pairs.rs = await pair('RS256', 'rsa-1');
  pairs.es = await pair('ES256', 'ec-1');
  pairs.ed = await pair('EdDSA', 'ed-1');
  const keys: JWK[] = await Promise.all(Object.values(pairs).map(async (p) => ({ ...(await exportJWK(p.publicKey)), kid: p.kid, alg: p.alg, use: 'sig' })));
  ({ server, url: jwksUrl } = await listen((_req, res) => {
    jwksRequests += 1;
    res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys }));
  }));
});
afterAll(() => close(server));

function sign(p: Pair, claims: Record<string, unknown> = {}, kid: string | null = p.kid): Promise<string> {
  return new SignJWT({ sub: SUB, exp: now() + 300, ...claims }).setProtectedHeader({ alg: p.alg, ...(kid ? { kid } : {}) }).sign(p.privateKey);
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TokenError);
  return (error as TokenError).reason;
}

describe('createTokenVerifier with a JWKS', () => {
  it('accepts RS256, ES256 and EdDSA tokens, fetching the key set once per verifier', async () => {
    const verify = createTokenVerifier({ jwksUrl, cookieName: 'session' });
    const before = jwksRequests;
    for (const p of [pairs.rs, pairs.es, pairs.ed]) expect(await verify(await sign(p, { email: 'x@example.com' }))).toEqual({ sub: SUB, email: 'x@example.com' });
    expect(jwksRequests - before).toBe(1);
  });

  it('accepts a token without kid when exactly one key fits its alg', async () => {
    const verify = createTokenVerifier({ jwksUrl, cookieName: 'session' });
    expect(await verify(await sign(pairs.es, {}, null))).toEqual({ sub: SUB });
  });

  it('refuses a token signed by a key that is not in the set', async () => {
    const verify = createTokenVerifier({ jwksUrl, cookieName: 'session' });
    const stranger = await pair('RS256', 'rsa-1'); // same kid, different key
    expect(await reasonOf(verify(await sign(stranger)))).toBe('signature');
    expect(await reasonOf(verify(await sign(stranger, {}, 'unknown-kid')))).toBe('signature');
  });

  it('refuses an HS256 token signed with the RSA public key bytes when only JWKS is configured', async () => {
    const verify = createTokenVerifier({ jwksUrl, cookieName: 'session' });
    const pem = new TextEncoder().encode(await exportSPKI(pairs.rs.publicKey));
    const confused = await new SignJWT({ sub: SUB, exp: now() + 300 }).setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' }).sign(pem);
    expect(await reasonOf(verify(confused))).toBe('algorithm');
  });

  it('enforces issuer and exp on JWKS tokens too', async () => {
    const verify = createTokenVerifier({ jwksUrl, issuer: 'https://idp.example', cookieName: 'session' });
    expect(await reasonOf(verify(await sign(pairs.rs, { iss: 'https://evil.example' })))).toBe('claims');
    expect(await reasonOf(verify(await sign(pairs.rs, { iss: 'https://idp.example', exp: now() - 120 })))).toBe('expired');
  });

  it('with both secret and JWKS configured, picks the key by the token alg', async () => {
    const verify = createTokenVerifier({ jwtSecret: SECRET, jwksUrl, cookieName: 'session' });
    expect(await verify(await mintToken(SECRET, { sub: SUB }))).toEqual({ sub: SUB });
    expect(await verify(await sign(pairs.rs))).toEqual({ sub: SUB });
    // HS256 is allowed here, but only against the secret: the public key bytes still do not verify.
    const pem = new TextEncoder().encode(await exportSPKI(pairs.rs.publicKey));
    const confused = await new SignJWT({ sub: SUB, exp: now() + 300 }).setProtectedHeader({ alg: 'HS256' }).sign(pem);
    expect(await reasonOf(verify(confused))).toBe('signature');
  });

  it('without kid and several candidate keys (rotation), tries each key', async () => {
    const old = await pair('RS256', 'rsa-old');
    const keys = await Promise.all([old, pairs.rs].map(async (p) => ({ ...(await exportJWK(p.publicKey)), alg: p.alg })));
    const { server: rotating, url } = await listen((_req, res) => res.setHeader('content-type', 'application/json').end(JSON.stringify({ keys })));
    try {
      const verify = createTokenVerifier({ jwksUrl: url, cookieName: 'session' });
      expect(await verify(await sign(pairs.rs, {}, null))).toEqual({ sub: SUB });
      expect(await verify(await sign(old, {}, null))).toEqual({ sub: SUB });
      expect(await reasonOf(verify(await sign(await pair('RS256', 'x'), {}, null)))).toBe('signature');
    } finally {
      await close(rotating);
    }
  });

  it('reports keys_unavailable when the JWKS endpoint cannot be reached', async () => {
    const { server: gone, url } = await listen(() => undefined);
    await close(gone); // the port is now closed: connection refused
    const verify = createTokenVerifier({ jwksUrl: url, cookieName: 'session' });
    expect(await reasonOf(verify(await sign(pairs.rs)))).toBe('keys_unavailable');
  });

  it('reports keys_unavailable when the JWKS endpoint answers with an error', async () => {
    const { server: broken, url } = await listen((_req, res) => res.writeHead(500).end('oops'));
    try {
      const verify = createTokenVerifier({ jwksUrl: url, cookieName: 'session' });
      expect(await reasonOf(verify(await sign(pairs.rs)))).toBe('keys_unavailable');
    } finally {
      await close(broken);
    }
  });
});
