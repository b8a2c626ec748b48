import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §18: the owner's webhook endpoints on REST, each route onto its GraphQL field.
// Who may call each route: test/security/access-matrix.test.ts.

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const PUBLIC_URL = 'https://93.184.215.14/hook'; // an address the target guard allows; nothing is sent here
const create = (body: Record<string, unknown>) => t.rest('POST', '/api/v1/webhook_endpoints', { as: acc.owner, body: { account_id: acc.id, ...body } });

describe('/api/v1/webhook_endpoints', () => {
  it('POST answers 201 with the endpoint and its signing secret; no other answer shows the secret', async () => {
    const r = await create({ url: PUBLIC_URL, event_types: ['contact.created'], description: 'CRM sync' });
    expect(r.status, r.text).toBe(201);
    expect(r.body.data.secret).toMatch(/^whsec_/);
    expect(r.body.data.endpoint).toMatchObject({ url: PUBLIC_URL, event_types: ['contact.created'], description: 'CRM sync', enabled: true, disabled_reason: null });
    const id = r.body.data.endpoint.id as string;

    const list = await t.rest('GET', `/api/v1/webhook_endpoints?account_id=${acc.id}`, { as: acc.owner });
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: { id: string }) => e.id)).toContain(id);
    const one = await t.rest('GET', `/api/v1/webhook_endpoints/${id}`, { as: acc.owner });
    expect([one.status, one.body.data]).toEqual([200, r.body.data.endpoint]);
    expect(one.headers.get('etag')).toBe(`"${one.body.data.updated_at}"`);
    for (const answer of [list.text, one.text]) expect(answer).not.toContain(r.body.data.secret);
  });

  it('an address the target guard refuses is a 400 on url, and nothing is stored', async () => {
    const before = await t.db.webhookEndpoint.count({ where: { accountId: acc.id } });
    const r = await create({ url: 'http://169.254.169.254/latest', event_types: ['*'] });
    expect([r.status, r.body.error, Object.keys(r.body.details)]).toEqual([400, 'Invalid payload', ['url']]);
    expect(await t.db.webhookEndpoint.count({ where: { accountId: acc.id } })).toBe(before);
  });

  it('PATCH changes the endpoint; DELETE answers 204, then 404', async () => {
    const id = (await create({ url: PUBLIC_URL, event_types: ['*'] })).body.data.endpoint.id as string;
    const patched = await t.rest('PATCH', `/api/v1/webhook_endpoints/${id}`, { as: acc.owner, body: { enabled: false, description: 'Paused' } });
    expect([patched.status, patched.body.data.enabled, patched.body.data.description]).toEqual([200, false, 'Paused']);
    expect((await t.rest('DELETE', `/api/v1/webhook_endpoints/${id}`, { as: acc.owner })).status).toBe(204);
    const again = await t.rest('DELETE', `/api/v1/webhook_endpoints/${id}`, { as: acc.owner });
    expect([again.status, again.body]).toEqual([404, { error: 'Not found' }]);
  });

  it('PATCH with If-Match applies only to that version: a stale or unparseable ETag is 412 and nothing is written; * matches any', async () => {
    const id = (await create({ url: PUBLIC_URL, event_types: ['*'], description: 'Versioned' })).body.data.endpoint.id as string;
    const etag = (await t.rest('GET', `/api/v1/webhook_endpoints/${id}`, { as: acc.owner })).headers.get('etag')!;
    const patch = (description: string, ifMatch: string) =>
      t.rest('PATCH', `/api/v1/webhook_endpoints/${id}`, { as: acc.owner, body: { description }, headers: { 'if-match': ifMatch } });
    const first = await patch('First', etag);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('etag')).toBe(`"${first.body.data.updated_at}"`);
    expect(first.headers.get('etag')).not.toBe(etag);
    for (const refused of [etag, '"garbage"']) {
      const r = await patch('Second', refused);
      expect([r.status, r.body]).toEqual([412, { error: 'Precondition failed' }]);
    }
    expect((await t.db.webhookEndpoint.findUniqueOrThrow({ where: { id } })).description).toBe('First');
    expect((await patch('Any', '*')).status).toBe(200);
  });

  it("another account's endpoint and an unknown id are the same 404", async () => {
    const other = await createAccount(t);
    const theirs = await t.rest('POST', '/api/v1/webhook_endpoints', { as: other.owner, body: { account_id: other.id, url: PUBLIC_URL, event_types: ['*'] } });
    for (const id of [theirs.body.data.endpoint.id as string, randomUUID()]) {
      const r = await t.rest('GET', `/api/v1/webhook_endpoints/${id}`, { as: acc.owner });
      expect([r.status, r.body]).toEqual([404, { error: 'Not found' }]);
    }
  });
});
