import { describe, expect, it } from 'vitest';
import { isAllowedOrigin, isCrossSite, isRefusedCrossSite, parseAllowedOrigins } from '../../src/http/origin.js';

const allowed = ['https://app.example.com', 'http://localhost:5173'];
const check = (headers: Record<string, string>) => isAllowedOrigin(new Headers(headers), allowed);

describe('isAllowedOrigin', () => {
  it('allows an Origin that exactly matches an allowed origin', () => {
    expect(check({ origin: 'https://app.example.com' })).toBe(true);
    expect(check({ origin: 'http://localhost:5173' })).toBe(true);
  });

  it('normalises case and default ports before comparing', () => {
    expect(check({ origin: 'HTTPS://APP.example.com:443' })).toBe(true);
  });

  it('refuses another host, a sub-domain look-alike, another scheme, or another port', () => {
    expect(check({ origin: 'https://evil.example.com' })).toBe(false);
    expect(check({ origin: 'https://app.example.com.evil.io' })).toBe(false);
    expect(check({ origin: 'http://app.example.com' })).toBe(false);
    expect(check({ origin: 'https://app.example.com:8443' })).toBe(false);
    expect(check({ origin: 'http://localhost:5174' })).toBe(false);
  });

  it('refuses the opaque "null" origin, without falling back to Referer', () => {
    expect(check({ origin: 'null' })).toBe(false);
    expect(check({ origin: 'null', referer: 'https://app.example.com/page' })).toBe(false);
  });

  it('falls back to the origin of Referer when Origin is absent', () => {
    expect(check({ referer: 'https://app.example.com/contacts?x=1' })).toBe(true);
    expect(check({ referer: 'https://evil.example.com/https://app.example.com' })).toBe(false);
  });

  it('refuses when neither Origin nor Referer is present, or they are garbage', () => {
    expect(check({})).toBe(false);
    expect(check({ origin: 'not a url' })).toBe(false);
    expect(check({ referer: 'not a url' })).toBe(false);
  });

  it('refuses everything when no origins are allowed', () => {
    expect(isAllowedOrigin(new Headers({ origin: 'https://app.example.com' }), [])).toBe(false);
  });
});

describe('isCrossSite (a request that runs a mutation without being a POST)', () => {
  const cross = (headers: Record<string, string>) => isCrossSite(new Headers(headers), allowed);

  it('is cross-site when the browser says so and no allowed Origin or Referer vouches for it', () => {
    expect(cross({ 'sec-fetch-site': 'cross-site' })).toBe(true);
    expect(cross({ 'sec-fetch-site': 'same-site' })).toBe(true);
    expect(cross({ 'sec-fetch-site': 'cross-site', referer: 'https://evil.example.com/page' })).toBe(true);
  });

  it('is cross-site when an Origin or Referer is sent and is not an allowed origin', () => {
    expect(cross({ origin: 'https://evil.example.com' })).toBe(true);
    expect(cross({ origin: 'null' })).toBe(true);
    expect(cross({ referer: 'https://evil.example.com/page' })).toBe(true);
  });

  it('is not cross-site typed into the address bar, same-origin, or with no evidence at all', () => {
    expect(cross({ 'sec-fetch-site': 'none' })).toBe(false);
    expect(cross({ 'sec-fetch-site': 'same-origin', referer: 'https://api.example.net/docs' })).toBe(false);
    expect(cross({})).toBe(false);
  });

  it('is not cross-site from an allowed origin, even one on another site', () => {
    expect(cross({ 'sec-fetch-site': 'cross-site', origin: 'https://app.example.com' })).toBe(false);
    expect(cross({ 'sec-fetch-site': 'cross-site', referer: 'http://localhost:5173/x' })).toBe(false);
  });
});

describe('isRefusedCrossSite (docs/decisions.md §1 for cookie-authenticated requests)', () => {
  const refused = (method: string, operation: 'query' | 'mutation' | undefined, headers: Record<string, string>) =>
    isRefusedCrossSite(new Request('https://api.example.net/x', { method, headers }), operation, allowed);

  it('a POST must prove an allowed origin, whatever it runs', () => {
    expect(refused('POST', 'query', {})).toBe(true);
    expect(refused('POST', undefined, { 'sec-fetch-site': 'none' })).toBe(true);
    expect(refused('POST', 'mutation', { origin: 'https://app.example.com' })).toBe(false);
  });

  it('a GET that runs a mutation is refused only when cross-site', () => {
    expect(refused('GET', 'mutation', { 'sec-fetch-site': 'cross-site' })).toBe(true);
    expect(refused('GET', 'mutation', { 'sec-fetch-site': 'none' })).toBe(false);
  });

  it('a GET that only reads is never refused', () => {
    expect(refused('GET', 'query', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example.com' })).toBe(false);
    expect(refused('GET', undefined, { 'sec-fetch-site': 'cross-site' })).toBe(false);
  });
});

describe('parseAllowedOrigins', () => {
  it('splits on commas, trims, normalises and de-duplicates', () => {
    expect(parseAllowedOrigins(' https://App.Example.com/ , http://localhost:5173,,https://app.example.com:443 ')).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
  });

  it('returns an empty list for an unset or blank value', () => {
    expect(parseAllowedOrigins(undefined)).toEqual([]);
    expect(parseAllowedOrigins('  ')).toEqual([]);
  });

  it('throws a clear message for an entry that is not an origin', () => {
    expect(() => parseAllowedOrigins('https://ok.example, app.example.com')).toThrow(/ALLOWED_ORIGINS: "app.example.com" is not an origin/);
    expect(() => parseAllowedOrigins('*')).toThrow(/"\*" is not an origin/);
    expect(() => parseAllowedOrigins('null')).toThrow(/"null" is not an origin/);
  });
});
