import { webcrypto } from 'node:crypto';
import { createRemoteJWKSet, errors, jwtVerify, SignJWT } from 'jose';
import type { JWTPayload, JWTVerifyGetKey, JWTVerifyOptions } from 'jose';
import { isStorableText, isUuid } from '../validation.js';

export type AuthConfig = { jwtSecret?: string; jwksUrl?: string; issuer?: string; audience?: string; cookieName: string };
export type TokenClaims = { sub: string; email?: string; name?: string };
export type TokenSource = 'bearer' | 'cookie';
export type TokenErrorReason =
  'malformed' | 'signature' | 'expired' | 'not_yet_valid' | 'claims' | 'algorithm' | 'keys_unavailable';

export class TokenError extends Error {
  override name = 'TokenError';
  constructor(readonly reason: TokenErrorReason, options?: { cause?: unknown }) {
    super(`Token rejected: ${reason}`, options);
  }
}

// Allow-lists per key source: an HMAC algorithm is never tried against JWKS keys (algorithm
// confusion) and `none` is in neither list. Ed25519 is the newer name for EdDSA over Ed25519.
const SECRET_ALGS = ['HS256'];
const JWKS_ALGS = ['RS256', 'ES256', 'EdDSA', 'Ed25519'];
const CLOCK_TOLERANCE_S = 30;

/** Authorization: Bearer wins; the cookie is only a fallback (docs/decisions.md §1). */
export function readToken(headers: Headers, cookieName: string): { token: string; source: TokenSource } | null {
  const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(headers.get('authorization') ?? '')?.[1];
  if (bearer) return { token: bearer, source: 'bearer' };
  const cookie = parseCookies(headers.get('cookie') ?? '').get(cookieName);
  return cookie ? { token: cookie, source: 'cookie' } : null;
}

/** RFC 6265 cookie header: `a=1; b="q"; c=x=y`. The first occurrence of a name wins, as browsers send the most specific first. */
export function parseCookies(header: string): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name && !cookies.has(name)) cookies.set(name, decode(value));
  }
  return cookies;
}

// A value that is not valid percent-encoding is kept as sent rather than dropped.
const decode = (value: string): string => {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
};

export function createTokenVerifier(config: AuthConfig): (token: string) => Promise<TokenClaims> {
  const secret = config.jwtSecret ? new TextEncoder().encode(config.jwtSecret) : undefined;
  // Imported once: handed raw bytes, jose imports the key again for every token it verifies.
  let hmacKey: Promise<webcrypto.CryptoKey> | undefined;
  const secretKey = () => (hmacKey ??= webcrypto.subtle.importKey('raw', secret!, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']));
  // One JWKS per verifier: jose caches the keys and refetches on an unknown `kid` (with a cooldown).
  const jwks = config.jwksUrl ? createRemoteJWKSet(new URL(config.jwksUrl)) : undefined;
  if (!secret && !jwks) throw new TypeError('createTokenVerifier needs jwtSecret or jwksUrl');
  const algorithms = [...(secret ? SECRET_ALGS : []), ...(jwks ? JWKS_ALGS : [])];
  const options: JWTVerifyOptions = {
    algorithms,
    requiredClaims: ['exp'],
    clockTolerance: CLOCK_TOLERANCE_S,
    ...(config.issuer ? { issuer: config.issuer } : {}),
    ...(config.audience ? { audience: config.audience } : {}),
  };
  // jose checks `alg` against the allow-list before asking for a key, so the key follows the alg.
  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (SECRET_ALGS.includes(header.alg)) return secretKey();
    try {
      return await jwks!(header, token);
    } catch (error) {
      if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) throw error;
      throw new TokenError('keys_unavailable', { cause: error }); // fetch failed, timed out, bad JWKS document
    }
  };

  const verified = new VerifiedTokens();
  return async (token) => {
    const known = verified.get(token);
    if (known) return known;
    let payload: JWTPayload;
    try {
      payload = (await jwtVerify(token, getKey, options)).payload;
    } catch (error) {
      // No `kid` and several keys fit (e.g. during rotation): try each candidate.
      if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw toTokenError(error);
      payload = await tryEach(token, error, options);
    }
    const claims = toClaims(payload);
    verified.add(token, claims, (payload.exp! + CLOCK_TOLERANCE_S) * 1000);
    return claims;
  };
}

/**
 * Tokens this verifier has accepted, so a client's next requests with the same token skip the
 * signature check (webcrypto's HMAC through jose was 6 % of a list request's CPU under load).
 * An entry lasts until the token would expire for jwtVerify, and at most a minute, so a key that is
 * rotated out of the JWKS stops being honoured within a minute as it would after jose's own cache.
 * Only successes are kept, bounded (oldest first out), so invalid tokens cannot fill it.
 */
class VerifiedTokens {
  private readonly entries = new Map<string, { claims: TokenClaims; until: number }>();
  constructor(private readonly capacity = 10_000, private readonly ttlMs = 60_000) {}

  get(token: string): TokenClaims | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (Date.now() < entry.until) return entry.claims;
    this.entries.delete(token);
    return undefined;
  }

  add(token: string, claims: TokenClaims, expiresAt: number): void {
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(token, { claims, until: Math.min(expiresAt, Date.now() + this.ttlMs) });
  }
}

async function tryEach(token: string, candidates: errors.JWKSMultipleMatchingKeys, options: JWTVerifyOptions): Promise<JWTPayload> {
  let last: unknown = new errors.JWSSignatureVerificationFailed();
  for await (const key of candidates) {
    try {
      return (await jwtVerify(token, key, options)).payload;
    } catch (error) {
      last = error;
    }
  }
  throw toTokenError(last);
}

function toTokenError(error: unknown): TokenError {
  if (error instanceof TokenError) return error;
  const reason: TokenErrorReason =
    error instanceof errors.JWTExpired ? 'expired'
    : error instanceof errors.JWTClaimValidationFailed ? (error.claim === 'nbf' && error.reason === 'check_failed' ? 'not_yet_valid' : 'claims')
    : error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported ? 'algorithm'
    : error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JWKSNoMatchingKey
      || error instanceof errors.JWKSMultipleMatchingKeys ? 'signature'
    : 'malformed';
  return new TokenError(reason, { cause: error });
}

const fits = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length <= max && isStorableText(value);

function toClaims(payload: JWTPayload): TokenClaims {
  if (typeof payload.sub !== 'string' || !isUuid(payload.sub)) throw new TokenError('claims');
  // Lower-case so the id compares equal to what Postgres returns for a uuid column.
  const claims: TokenClaims = { sub: payload.sub.toLowerCase() };
  // The identity provider vouches for who the caller is, not for the shape of its profile claims:
  // one the users table cannot hold (too long, NUL) is left out rather than failing every request.
  if (fits(payload.email, 254)) claims.email = payload.email;
  if (fits(payload.name, 200)) claims.name = payload.name;
  return claims;
}

/** HS256 token for the dev server, CLI and tests. */
export async function mintToken(
  secret: string,
  claims: TokenClaims & { expiresIn?: string; issuer?: string; audience?: string },
): Promise<string> {
  const jwt = new SignJWT({
    ...(claims.email !== undefined ? { email: claims.email } : {}),
    ...(claims.name !== undefined ? { name: claims.name } : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(claims.expiresIn ?? '1h');
  if (claims.issuer) jwt.setIssuer(claims.issuer);
  if (claims.audience) jwt.setAudience(claims.audience);
  return jwt.sign(new TextEncoder().encode(secret));
}

/**
 * The `WWW-Authenticate` value of an answer that needs a token (RFC 9110 §11.6.1, RFC 6750 §3):
 * `Bearer`, plus `error="invalid_token"` when the request carried one (header or cookie) that was refused.
 */
export function bearerChallenge(headers: Headers, cookieName: string): string {
  return readToken(headers, cookieName) ? 'Bearer error="invalid_token"' : 'Bearer';
}
