import { SignJWT, base64url } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTokenVerifier, mintToken, parseCookies, readToken, TokenError } from '../../src/auth/token.js';

const SECRET = 'test-secret-that-is-long-enough-0123456789';
const SUB = '3f1c2b9e-6d4a-4c1e-9b7a-2e5f8d0c1a44';
const now = () => Math.floor(Date.now() / 1000);
const key = (secret = SECRET) => new TextEncoder().encode(secret);
const verify = createTokenVerifier({ jwtSecret: SECRET, cookieName: 'session' });

/** Signs arbitrary claims with HS256 so each test can break exactly one rule. */
function sign(claims: Record<string, unknown>, secret = SECRET): Promise<string> {
  return new SignJWT({ sub: SUB, exp: now() + 300, ...claims }).setProtectedHeader({ alg: 'HS256' }).sign(key(secret));
}

async function reasonOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(TokenError);
  return (error as TokenError).reason;
}

describe('readToken', () => {
  it('prefers the Authorization bearer token over the cookie', () => {
    const headers = new Headers({ authorization: 'Bearer abc.def.ghi', cookie: 'session=xyz' });
    expect(readToken(headers, 'session')).toEqual({ token: 'abc.def.ghi', source: 'bearer' });
  });

  it('accepts the Bearer scheme case-insensitively', () => {
    expect(readToken(new Headers({ authorization: 'bearer tok' }), 'session')).toEqual({ token: 'tok', source: 'bearer' });
  });

  it('reads the cookie by its configured name only', () => {
    const headers = new Headers({ cookie: 'session=wrong; sid=right' });
    expect(readToken(headers, 'sid')).toEqual({ token: 'right', source: 'cookie' });
    expect(readToken(new Headers({ cookie: 'session=x' }), 'sid')).toBeNull();
  });

  it('falls back to the cookie when Authorization is not a bearer token', () => {
    const headers = new Headers({ authorization: 'Basic dXNlcjpwYXNz', cookie: 'session=tok' });
    expect(readToken(headers, 'session')).toEqual({ token: 'tok', source: 'cookie' });
  });

  it('returns null when no token is present (or the cookie is empty)', () => {
    expect(readToken(new Headers(), 'session')).toBeNull();
    expect(readToken(new Headers({ cookie: 'session=' }), 'session')).toBeNull();
    expect(readToken(new Headers({ authorization: 'Bearer ' }), 'session')).toBeNull();
  });
});

describe('parseCookies', () => {
  it('handles several cookies, quoted values, "=" inside values and percent-encoding', () => {
    const cookies = parseCookies('a=1; b="quoted value"; c=x=y==; d=%7Bjson%7D; e=%E0%A4%A; junk; =nameless');
    expect(Object.fromEntries(cookies)).toEqual({ a: '1', b: 'quoted value', c: 'x=y==', d: '{json}', e: '%E0%A4%A' });
  });

  it('keeps the first of two cookies with the same name', () => {
    expect(parseCookies('session=first; session=second').get('session')).toBe('first');
  });
});

describe('createTokenVerifier with a shared secret (HS256)', () => {
  it('accepts a minted token and keeps string email/name claims, lower-casing the sub', async () => {
    const token = await mintToken(SECRET, { sub: SUB.toUpperCase(), email: 'a@example.com', name: 'Ann' });
    expect(await verify(token)).toEqual({ sub: SUB, email: 'a@example.com', name: 'Ann' });
  });

  it('ignores email/name claims that are not strings', async () => {
    expect(await verify(await sign({ email: 42, name: { first: 'x' } }))).toEqual({ sub: SUB });
  });

  it('refuses a malformed token', async () => {
    expect(await reasonOf(verify('not-a-jwt'))).toBe('malformed');
    expect(await reasonOf(verify('a.b.c'))).toBe('malformed');
  });

  it('refuses a token signed with another secret', async () => {
    expect(await reasonOf(verify(await sign({}, 'another-secret-that-is-long-enough-xyz')))).toBe('signature');
  });

  it('refuses a token whose payload was altered after signing', async () => {
    const [header, , signature] = (await sign({})).split('.');
    const forged = base64url.encode(JSON.stringify({ sub: '00000000-0000-4000-8000-000000000000', exp: now() + 300 }));
    expect(await reasonOf(verify(`${header}.${forged}.${signature}`))).toBe('signature');
  });

  it('refuses a token expired beyond the 30 s clock tolerance', async () => {
    expect(await reasonOf(verify(await sign({ exp: now() - 60 })))).toBe('expired');
  });

  it('accepts a token expired within the 30 s clock tolerance', async () => {
    expect(await verify(await sign({ exp: now() - 10 }))).toEqual({ sub: SUB });
  });

  describe('a token it has accepted (remembered, so the next requests skip the signature check)', () => {
    afterEach(() => vi.useRealTimers());

    it('is refused once it expires beyond the tolerance, as a token seen for the first time would be', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const remembering = createTokenVerifier({ jwtSecret: SECRET, cookieName: 'session' });
      const token = await sign({ exp: now() + 20 });
      expect(await remembering(token)).toEqual({ sub: SUB });
      vi.setSystemTime(Date.now() + 45_000); // 25 s past exp: within the 30 s tolerance
      expect(await remembering(token)).toEqual({ sub: SUB });
      vi.setSystemTime(Date.now() + 10_000); // 35 s past exp
      expect(await reasonOf(remembering(token))).toBe('expired');
    });

    it('answers the same claims without verifying again, for at most a minute', async () => {
      vi.useFakeTimers({ toFake: ['Date'] });
      const remembering = createTokenVerifier({ jwtSecret: SECRET, cookieName: 'session' });
      const token = await sign({ exp: now() + 3600, email: 'a@example.com' });
      const verifySpy = vi.spyOn(globalThis.crypto.subtle, 'verify');
      await remembering(token);
      await remembering(token);
      expect(verifySpy).toHaveBeenCalledTimes(1);
      vi.setSystemTime(Date.now() + 61_000);
      expect(await remembering(token)).toEqual({ sub: SUB, email: 'a@example.com' });
      expect(verifySpy).toHaveBeenCalledTimes(2);
      verifySpy.mockRestore();
    });
  });

  it('refuses a token whose nbf is in the future (beyond tolerance)', async () => {
    expect(await reasonOf(verify(await sign({ nbf: now() + 120 })))).toBe('not_yet_valid');
  });

  it('refuses a token without exp', async () => {
    const token = await new SignJWT({ sub: SUB }).setProtectedHeader({ alg: 'HS256' }).sign(key());
    expect(await reasonOf(verify(token))).toBe('claims');
  });

  it('refuses a sub that is not a UUID, or no sub at all', async () => {
    expect(await reasonOf(verify(await sign({ sub: 'user-1' })))).toBe('claims');
    expect(await reasonOf(verify(await sign({ sub: undefined })))).toBe('claims');
  });

  it('refuses an unsigned alg:none token', async () => {
    const enc = (value: object) => base64url.encode(JSON.stringify(value));
    const unsigned = `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ sub: SUB, exp: now() + 300 })}.`;
    expect(await reasonOf(verify(unsigned))).toBe('algorithm');
  });

  it('refuses HS384 even with the right secret (allow-list is HS256 only)', async () => {
    const token = await new SignJWT({ sub: SUB, exp: now() + 300 }).setProtectedHeader({ alg: 'HS384' }).sign(key());
    expect(await reasonOf(verify(token))).toBe('algorithm');
  });
});

describe('issuer and audience', () => {
  const strict = createTokenVerifier({ jwtSecret: SECRET, issuer: 'https://idp.example', audience: 'crm', cookieName: 's' });

  it('accepts the configured issuer and audience', async () => {
    const token = await mintToken(SECRET, { sub: SUB, issuer: 'https://idp.example', audience: 'crm' });
    expect(await strict(token)).toEqual({ sub: SUB });
  });

  it('refuses a wrong issuer', async () => {
    expect(await reasonOf(strict(await sign({ iss: 'https://evil.example', aud: 'crm' })))).toBe('claims');
  });

  it('refuses a wrong or missing audience', async () => {
    expect(await reasonOf(strict(await sign({ iss: 'https://idp.example', aud: 'other' })))).toBe('claims');
    expect(await reasonOf(strict(await sign({ iss: 'https://idp.example' })))).toBe('claims');
  });
});

describe('mintToken', () => {
  it('honours expiresIn', async () => {
    const token = await mintToken(SECRET, { sub: SUB, expiresIn: '2h' });
    const payload = JSON.parse(new TextDecoder().decode(base64url.decode(token.split('.')[1]!))) as { exp: number; iat: number };
    expect(payload.exp - payload.iat).toBe(7200);
  });
});

it('createTokenVerifier refuses a configuration without any key source', () => {
  expect(() => createTokenVerifier({ cookieName: 'session' })).toThrow(/jwtSecret or jwksUrl/);
});
