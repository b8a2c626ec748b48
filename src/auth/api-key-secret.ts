import { createHash, randomInt, timingSafeEqual } from 'node:crypto';

/** Every secret starts so: how a bearer token is told apart from a session JWT (docs/decisions.md §15). */
export const SECRET_PREFIX = 'crm_sk_';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const PREFIX_LENGTH = 8;
/** 32 base62 characters: about 190 random bits, so a plain SHA-256 is a safe store. */
const RANDOM_LENGTH = 32;
const SHAPE = /^crm_sk_([0-9A-Za-z]{8})_([0-9A-Za-z]{32,128})$/;

// randomInt draws without modulo bias.
const base62 = (length: number) => Array.from({ length }, () => BASE62[randomInt(62)]).join('');

export const hashSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** A new secret and what is stored of it; the secret itself is shown once and kept nowhere. */
export function newSecret(): { secret: string; prefix: string; hash: string } {
  const prefix = base62(PREFIX_LENGTH);
  const secret = `${SECRET_PREFIX}${prefix}_${base62(RANDOM_LENGTH)}`;
  return { secret, prefix, hash: hashSecret(secret) };
}

export const looksLikeKey = (token: string): boolean => token.startsWith(SECRET_PREFIX);

/** The public prefix of a well-formed secret (the row to look up), else null. */
export const prefixOf = (secret: string): string | null => SHAPE.exec(secret)?.[1] ?? null;

/** Whether `secret` hashes to `storedHash`, in constant time (no early exit on the first difference). */
export function secretMatches(secret: string, storedHash: string): boolean {
  const given = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
