/**
 * Client addresses are validated and the idempotency scope cannot overflow (docs/faults.md "Client
 * addresses"): a forwarded entry that is not an IP address falls back to the socket address, and
 * the scope is stored hashed, whatever its length.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientIpOf, limitAddress } from '../../src/http/client-ip.js';
import { once, scopeKey } from '../../src/idempotency/idempotency.service.js';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('clientIpOf', () => {
  const request = (xff?: string) => new Request('http://service.test/', { headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });
  const socket = { clientAddress: '192.0.2.9' };

  it('takes the address the outermost trusted proxy saw', () => {
    expect(clientIpOf(request('198.51.100.7, 10.0.0.1'), socket, 1)).toBe('10.0.0.1');
    expect(clientIpOf(request('198.51.100.7, 10.0.0.1'), socket, 2)).toBe('198.51.100.7');
    expect(clientIpOf(request('2001:db8::1'), socket, 1)).toBe('2001:db8::1');
  });

  it('an entry that is not an IP address falls back to the socket address', () => {
    for (const xff of ['x'.repeat(156), 'unknown', '198.51.100.7:8080', '1.2.3.4.5', '<script>', '2001:db8::1%eth0 ; DROP', ''])
      expect(clientIpOf(request(xff), socket, 1), xff).toBe('192.0.2.9');
    expect(clientIpOf(request(), socket, 1)).toBe('192.0.2.9');
  });

  it('fewer entries than trusted proxies: the socket address, never the left-most entry the client wrote', () => {
    expect(clientIpOf(request('198.51.100.7'), socket, 2)).toBe('192.0.2.9');
    expect(clientIpOf(request('198.51.100.7, 10.0.0.1'), socket, 3)).toBe('192.0.2.9');
  });

  it('with TRUST_PROXY=0 the header is ignored', () => {
    expect(clientIpOf(request('198.51.100.7'), socket, 0)).toBe('192.0.2.9');
  });
});

describe('limitAddress: what a per-address limit counts', () => {
  it('an IPv6 address by its /64, however spelt; IPv4 (and IPv4-mapped IPv6) as it is', () => {
    for (const ip of ['2001:db8:1:2::1', '2001:DB8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2:0::9', '2001:db8:1:2::1%eth0']) {
      expect(limitAddress(ip), ip).toBe('2001:db8:1:2::/64');
    }
    expect(limitAddress('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(limitAddress('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(limitAddress('198.51.100.7')).toBe('198.51.100.7');
  });
});

describe('a 156-character X-Forwarded-For with an Idempotency-Key', () => {
  let t: TestApp;
  let acc: TestAccount;
  let formId: string;
  beforeAll(async () => {
    t = await createTestApp();
    acc = await createAccount(t);
    formId = (
      await t.db.leadForm.create({
        data: { accountId: acc.id, name: 'Addr', fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 }] } },
      })
    ).id;
  });
  afterAll(() => t?.close());

  it('the submission is answered 200 (never a 500), recorded under the socket address, and its retry gets the same answer', async () => {
    const long = { 'x-forwarded-for': 'a'.repeat(156), 'idempotency-key': unique('key') };
    const body = { data: { email: `${unique('addr')}@example.com` }, metadata: { page: '/addr' } };
    const first = await t.rest('POST', `/api/v1/forms/${formId}/submit`, { body, headers: long });
    expect(first.status, first.text).toBe(200);
    const retry = await t.rest('POST', `/api/v1/forms/${formId}/submit`, { body, headers: long });
    expect(retry.status).toBe(200);
    expect(retry.body.contact_id).toBe(first.body.contact_id);
    const rows = await t.db.formSubmission.findMany({ where: { formId }, select: { clientIp: true } });
    expect(rows).toEqual([{ clientIp: '127.0.0.1' }]);
  });

  it('the scope is stored as its SHA-256, so a 10,000-character scope fits', async () => {
    const scope = `ip:${'x'.repeat(10_000)}`;
    const claim = { accountId: acc.id, scope, operation: 'probe', key: randomUUID(), request: { n: 1 } };
    expect(await once(t.db, claim, async () => ({ ok: 1 }))).toEqual({ ok: 1 });
    const stored = await t.db.idempotencyKey.findFirstOrThrow({ where: { key: claim.key } });
    expect(stored.scope).toBe(scopeKey(scope));
    expect(stored.scope).toMatch(/^[0-9a-f]{64}$/);
  });
});
