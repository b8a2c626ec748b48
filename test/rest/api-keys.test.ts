/**
 * API keys on REST (docs/decisions.md §15): the same rules as /graphql (src/graphql/rules.ts), in
 * the contract's bodies; every answer is also checked against the OpenAPI document (test helper).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;
let reader: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  await createContact(t, acc);
  reader = await createApiKey(t, acc, ['CONTACTS_READ']);
});
afterAll(() => t?.close());

const newContact = (accountId: string) => ({ account_id: accountId, first_name: 'Grace', last_name: 'Hopper', email: `grace-${Date.now()}@example.com` });

describe('GET /api/v1/contacts with an API key', () => {
  it('a key with only contacts:read lists contacts', async () => {
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: reader });
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(1);
  });

  it("another account's account_id is the same 403 as §2", async () => {
    const other = await createAccount(t);
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${other.id}`, { as: reader });
    expect(r).toMatchObject({ status: 403, body: { error: 'Forbidden: no access to this account' } });
  });

  it('an unknown, revoked or expired key is 401 {"error":"Unauthorized"}', async () => {
    const revoked = await createApiKey(t, acc, ['CONTACTS_READ']);
    await t.gql('mutation ($id: ID!) { revokeApiKey(id: $id) { id } }', { id: revoked.id }, { as: acc.owner });
    const expired = await createApiKey(t, acc, ['CONTACTS_READ']);
    await t.db.apiKey.update({ where: { id: expired.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const unknown = { id: reader.id, token: `crm_sk_ZZZZZZZZ_${'q'.repeat(40)}` };
    for (const key of [revoked, expired, unknown]) {
      const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: key });
      expect(r.status).toBe(401);
      expect(r.text).toBe('{"error":"Unauthorized"}');
    }
  });

  it('a key sent as the session cookie is 401: keys are bearer only', async () => {
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { headers: { cookie: `session=${reader.token}` } });
    expect(r.status).toBe(401);
  });
});

describe('POST /api/v1/contacts with an API key', () => {
  it('a key with only contacts:read is refused 403 with the scope named', async () => {
    const r = await t.rest('POST', '/api/v1/contacts', { as: reader, body: newContact(acc.id) });
    expect(r.status).toBe(403);
    expect(r.text).toBe('{"error":"Forbidden: this API key lacks the scope contacts:write"}');
  });

  it('a key with contacts:write creates the contact', async () => {
    const writer = await createApiKey(t, acc, ['CONTACTS_WRITE']);
    const r = await t.rest('POST', '/api/v1/contacts', { as: writer, body: newContact(acc.id) });
    expect(r.status).toBe(201);
  });

  it('bad input is 400 before the scope\'s 403 (decisions §2), named as REST names it', async () => {
    const r = await t.rest('POST', '/api/v1/contacts', { as: reader, body: { account_id: acc.id, last_name: 'X' } });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.details)).toContain('first_name');
  });
});

describe('exports with an API key', () => {
  it('an EXPORTS key downloads the account export; the audit log records the key as actor', async () => {
    const exporter = await createApiKey(t, acc, ['EXPORTS']);
    const r = await t.rest('GET', `/api/v1/account/export?account_id=${acc.id}`, { as: exporter });
    expect(r.status).toBe(200);
    expect(r.body.api_keys.map((k: { id: string }) => k.id)).toContain(exporter.id);
    expect(r.text).not.toContain('secret_hash');
    const log = await t.db.exportLog.findFirstOrThrow({ where: { accountId: acc.id, apiKeyId: exporter.id } });
    expect(log.userId).toBeNull();
    const event = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'export.granted', subjectId: log.id } });
    expect(event).toMatchObject({ actorType: 'api_key', actorId: exporter.id });
  });

  it('a key without EXPORTS is refused the contacts CSV with the scope named', async () => {
    const r = await t.rest('GET', `/api/v1/contacts/export?account_id=${acc.id}`, { as: reader });
    expect(r).toMatchObject({ status: 403, body: { error: 'Forbidden: this API key lacks the scope exports' } });
  });
});

// docs/decisions.md §24, "Scopes hold on every path": the side doors a one-scope key must not open.
describe('what a key reads through an embedded contact or a batch answer', () => {
  // Its own account: the owner's createApiKey budget (10 a minute) is the other tests'.
  let acc: TestAccount;
  beforeAll(async () => void (acc = await createAccount(t)));

  it("GET /api/v1/deals and /invoices embed the contact as id, first_name, last_name only, to a key without contacts:read", async () => {
    const contact = await createContact(t, acc, { firstName: 'Katherine', lastName: 'Johnson', phone: '555' });
    await t.db.deal.create({ data: { accountId: acc.id, title: 'Orbit', contactId: contact.id } });
    await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: `INV-${contact.id.slice(0, 8)}`, amount: 1, dueDate: new Date('2030-01-01'), contactId: contact.id } });
    for (const [path, scope] of [['deals', 'DEALS_READ'], ['invoices', 'INVOICES_READ']]) {
      const r = await t.rest('GET', `/api/v1/${path}?account_id=${acc.id}&contact_id=${contact.id}`, { as: await createApiKey(t, acc, [scope!]) });
      expect(r.status, r.text).toBe(200);
      expect(r.body.data[0].contacts).toEqual({ id: contact.id, first_name: 'Katherine', last_name: 'Johnson' });
    }
  });

  it('a deals:write key upserting by external_id gets index, status and id, not the deal nor its contact, which GET refuses it', async () => {
    const contact = await createContact(t, acc);
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Hidden', externalId: `ext-${contact.id}`, contactId: contact.id } });
    const writer = await createApiKey(t, acc, ['DEALS_WRITE']);
    expect((await t.rest('GET', `/api/v1/deals/${deal.id}`, { as: writer })).status).toBe(403);
    const r = await t.rest('POST', '/api/v1/deals/batch', { as: writer, body: { account_id: acc.id, mode: 'upsert', records: [{ external_id: deal.externalId }] } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toEqual([{ index: 0, status: 'unchanged', id: deal.id }]);
    expect(r.text).not.toContain(contact.email!);
  });

  it('a contacts:write key upserting by e-mail gets index, status and id, never the contact it matched', async () => {
    const contact = await createContact(t, acc, { phone: '+1 555 0100', externalId: 'crm-secret' });
    const writer = await createApiKey(t, acc, ['CONTACTS_WRITE']);
    const r = await t.rest('POST', '/api/v1/contacts/batch', { as: writer, body: { account_id: acc.id, mode: 'upsert', match_on: 'email', records: [{ email: contact.email }, { first_name: 'New', email: `new-${contact.id}@example.com` }] } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toEqual([{ index: 0, status: 'unchanged', id: contact.id }, { index: 1, status: 'created', id: expect.any(String) }]);
    expect(r.text).not.toContain('crm-secret');
  });

  it('a key with the read scope too gets each item\'s data beside its id, as a person does', async () => {
    const contact = await createContact(t, acc);
    const both = await createApiKey(t, acc, ['CONTACTS_WRITE', 'CONTACTS_READ']);
    const r = await t.rest('POST', '/api/v1/contacts/batch', { as: both, body: { account_id: acc.id, mode: 'upsert', match_on: 'email', records: [{ email: contact.email }] } });
    expect(r.body.data).toEqual([{ index: 0, status: 'unchanged', id: contact.id, data: expect.objectContaining({ id: contact.id, email: contact.email }) }]);
  });
});

describe('the OpenAPI document', () => {
  it('declares both schemes and each operation\'s scope', async () => {
    const doc = (await t.rest('GET', '/api/v1/openapi.json')).body;
    expect(Object.keys(doc.components.securitySchemes)).toEqual(expect.arrayContaining(['bearerAuth', 'sessionCookie', 'apiKey']));
    const list = doc.paths['/api/v1/contacts'].get;
    expect(list.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }, { apiKey: ['contacts:read'] }]);
    expect(list['x-api-key-scope']).toBe('contacts:read');
    expect(doc.paths['/api/v1/contacts'].post['x-api-key-scope']).toBe('contacts:write');
    expect(doc.paths['/api/v1/account/export'].get['x-api-key-scope']).toBe('exports');
    expect(doc.paths['/api/v1/forms/{form_id}/submit'].post.security).toEqual([]);
    expect(doc.info.description).toContain('Authorization: Bearer crm_sk_');
  });
});
