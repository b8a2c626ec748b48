/**
 * API keys over GraphQL (docs/decisions.md §15): made and revoked by the owner with a session token,
 * shown once, stored as SHA-256, scoped per root field, acting for their own account only.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/errors.js';
import { createAccount, createApiKey, createContact, createMember, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp, type TestUser } from '../helpers/app.js';

const SECRET_SHAPE = /^crm_sk_[0-9A-Za-z]{8}_[0-9A-Za-z]{32,}$/;
const CREATE = 'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey { id name prefix scopes createdBy { id } expiresAt revokedAt } secret } }';
const REVOKE = 'mutation ($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }';
const LIST_KEYS = 'query ($id: ID!) { account(id: $id) { apiKeys { id name prefix scopes lastUsedAt revokedAt } } }';
const CONTACTS = 'query ($accountId: ID!) { contacts(accountId: $accountId) { nodes { id } total } }';
const CREATE_CONTACT = 'mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }';

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

const createKey = (acc: TestAccount, input: Record<string, unknown>, as: TestUser | null = acc.owner) =>
  t.gql(CREATE, { input: { accountId: acc.id, name: 'Website', scopes: ['CONTACTS_READ'], ...input } }, { as });
const listContacts = (accountId: string, as: TestUser) => t.gql(CONTACTS, { accountId }, { as });
const newContact = (accountId: string, as: TestUser) =>
  t.gql(CREATE_CONTACT, { input: { accountId, firstName: 'Ada', lastName: 'Lovelace', email: `ada-${Date.now()}-${Math.random()}@example.com` } }, { as });

describe('createApiKey', () => {
  let acc: TestAccount;
  beforeAll(async () => void (acc = await createAccount(t)));

  it('the owner gets crm_sk_<prefix>_<32+ base62> once; only its SHA-256 is stored', async () => {
    const r = await createKey(acc, { name: 'Website', scopes: ['CONTACTS_READ', 'DEALS_WRITE'] });
    expect(r.errors).toBeUndefined();
    const { apiKey, secret } = r.data.createApiKey;
    expect(secret).toMatch(SECRET_SHAPE);
    expect(secret.split('_')[2]).toBe(apiKey.prefix);
    expect(apiKey).toMatchObject({ name: 'Website', scopes: ['CONTACTS_READ', 'DEALS_WRITE'], createdBy: { id: acc.owner.id }, revokedAt: null });
    const row = await t.db.apiKey.findUniqueOrThrow({ where: { id: apiKey.id } });
    expect(row.secretHash).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(secret.split('_')[3]);
    // Account.apiKeys lists it, never with its secret.
    const list = await t.gql(LIST_KEYS, { id: acc.id }, { as: acc.owner });
    expect(list.data.account.apiKeys.map((k: { id: string }) => k.id)).toContain(apiKey.id);
    expect(JSON.stringify(list.data)).not.toContain(secret);
  });

  it('api_key.created and api_key.revoked are events, without the hash', async () => {
    const key = await createApiKey(t, acc, ['CONTACTS_READ']);
    await t.gql(REVOKE, { id: key.id }, { as: acc.owner });
    const events = await t.db.event.findMany({ where: { accountId: acc.id, subjectId: key.id }, orderBy: { occurredAt: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['api_key.created', 'api_key.revoked']);
    expect(events[0]).toMatchObject({ actorType: 'user', actorId: acc.owner.id });
    expect(JSON.stringify(events.map((e) => e.data))).not.toContain('secret_hash');
  });

  it('a member may not create, revoke or list keys (owner only)', async () => {
    expect(errorOf(await createKey(acc, {}, acc.member))).toMatchObject({ message: MESSAGES.ownerOnly, extensions: { code: 'FORBIDDEN' } });
    const key = await createApiKey(t, acc, ['CONTACTS_READ']);
    expect(errorOf(await t.gql(REVOKE, { id: key.id }, { as: acc.member })).extensions?.code).toBe('FORBIDDEN');
    expect(errorOf(await t.gql(LIST_KEYS, { id: acc.id }, { as: acc.member })).message).toBe(MESSAGES.ownerOnly);
  });

  it('an unknown scope is BAD_USER_INPUT on input.scopes', async () => {
    const e = errorOf(await createKey(acc, { scopes: ['CONTACTS_READ', 'EVERYTHING'] }));
    expect(e.extensions?.code).toBe('BAD_USER_INPUT');
    expect(Object.keys(e.extensions!.details!)).toEqual(['input.scopes.1']);
  });

  it('an empty scope list, a name over 100 characters and a past expiresAt are one BAD_USER_INPUT naming each field', async () => {
    const e = errorOf(await createKey(acc, { scopes: [], name: 'x'.repeat(101), expiresAt: '2020-01-01T00:00:00Z' }));
    expect(e.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      details: { scopes: ['At least one scope'], name: ['Must be at most 100 characters'], expiresAt: ['Must be in the future'] },
    });
  });
});

describe('authenticating with a key', () => {
  let acc: TestAccount;
  let reader: TestUser;
  beforeAll(async () => {
    acc = await createAccount(t);
    await createContact(t, acc);
    reader = await createApiKey(t, acc, ['CONTACTS_READ']);
  });

  it('a key with only CONTACTS_READ lists contacts', async () => {
    const r = await listContacts(acc.id, reader);
    expect(r.errors).toBeUndefined();
    expect(r.data.contacts.total).toBe(1);
  });

  it('a key with only CONTACTS_READ is refused createContact: FORBIDDEN with extensions.requiredScope', async () => {
    const e = errorOf(await newContact(acc.id, reader));
    expect(e).toMatchObject({
      message: 'Forbidden: this API key lacks the scope contacts:write',
      extensions: { code: 'FORBIDDEN', requiredScope: 'CONTACTS_WRITE' },
    });
    expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(1);
  });

  it("another account's accountId is the same 403 as for a user (no existence oracle)", async () => {
    const other = await createAccount(t);
    for (const accountId of [other.id, '00000000-0000-4000-8000-000000000000']) {
      expect(errorOf(await listContacts(accountId, reader))).toMatchObject({ message: MESSAGES.noAccess, extensions: { code: 'FORBIDDEN' } });
    }
  });

  it('a root field that declares no scope is refused to every key: members, webhooks, keys, the caller', async () => {
    const all = await createApiKey(t, acc, ['CONTACTS_READ', 'CONTACTS_WRITE', 'DEALS_READ', 'DEALS_WRITE', 'INVOICES_READ', 'INVOICES_WRITE', 'FORMS_READ', 'FORMS_WRITE', 'EVENTS_READ', 'IMPORTS', 'EXPORTS']);
    const stranger = await createMember(t, acc.id);
    const calls = [
      t.gql('{ me { id } }', {}, { as: all }),
      t.gql('mutation ($input: AddTeamMemberInput!) { addTeamMember(input: $input) { userId } }', { input: { accountId: acc.id, userId: stranger.id } }, { as: all }),
      t.gql('mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret } }', { input: { accountId: acc.id, url: 'https://example.com/hook', eventTypes: ['*'] } }, { as: all }),
      createKey(acc, {}, all),
      t.gql(REVOKE, { id: all.id }, { as: all }),
      t.gql(LIST_KEYS, { id: acc.id }, { as: all }),
    ];
    for (const r of await Promise.all(calls)) {
      expect(errorOf(r)).toMatchObject({ message: MESSAGES.notForKeys, extensions: { code: 'FORBIDDEN' } });
    }
  });

  it('an unknown, revoked or expired key is UNAUTHENTICATED', async () => {
    const revoked = await createApiKey(t, acc, ['CONTACTS_READ']);
    await t.gql(REVOKE, { id: revoked.id }, { as: acc.owner });
    const expiring = await createApiKey(t, acc, ['CONTACTS_READ']);
    await t.db.apiKey.update({ where: { id: expiring.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const unknown = { id: reader.id, token: `crm_sk_AAAAAAAA_${'B'.repeat(32)}` };
    const forged = { id: reader.id, token: `${reader.token.slice(0, -1)}${reader.token.endsWith('A') ? 'B' : 'A'}` };
    for (const key of [revoked, expiring, unknown, forged]) {
      expect(errorOf(await listContacts(acc.id, key))).toMatchObject({ message: 'Unauthorized', extensions: { code: 'UNAUTHENTICATED' } });
    }
  });

  it('a revoked key stops at once on the instance that revoked it', async () => {
    const key = await createApiKey(t, acc, ['CONTACTS_READ']);
    expect((await listContacts(acc.id, key)).errors).toBeUndefined(); // cached now
    await t.gql(REVOKE, { id: key.id }, { as: acc.owner });
    expect(errorOf(await listContacts(acc.id, key)).extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('a key is never read from a cookie', async () => {
    const r = await t.gql(CONTACTS, { accountId: acc.id }, { headers: { cookie: `session=${reader.token}` } });
    expect(errorOf(r).extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('a warm instance checks a key from memory, with no database round trip', async () => {
    const key = await createApiKey(t, acc, ['CONTACTS_READ']);
    expect((await listContacts(acc.id, key)).errors).toBeUndefined();
    // Were the row read again, this hash would refuse the secret; the trigger ignores this column.
    await t.db.apiKey.update({ where: { id: key.id }, data: { secretHash: '0'.repeat(64) } });
    expect((await listContacts(acc.id, key)).errors).toBeUndefined();
  });

  it('each key has its own rate-limit buckets, with the same numbers as a user', async () => {
    const other = await createApiKey(t, acc, ['CONTACTS_READ']);
    const limits = [];
    for (const caller of [reader, other, acc.owner]) {
      const first = await listContacts(acc.id, caller);
      const second = await listContacts(acc.id, caller);
      limits.push([first.headers.get('ratelimit-limit'), Number(first.headers.get('ratelimit-remaining')) - Number(second.headers.get('ratelimit-remaining'))]);
    }
    expect(limits).toEqual([['60', 1], ['60', 1], ['60', 1]]);
    const fresh = await createApiKey(t, acc, ['CONTACTS_READ']);
    expect((await listContacts(acc.id, fresh)).headers.get('ratelimit-remaining')).toBe('59'); // no one else's calls counted
  });

  it('lastUsedAt is written at most once a minute per key', async () => {
    const key = await createApiKey(t, acc, ['CONTACTS_READ']);
    await listContacts(acc.id, key);
    await t.deps.apiKeys.flush();
    const first = (await t.db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt;
    expect(first).toBeInstanceOf(Date);
    for (let i = 0; i < 3; i++) await listContacts(acc.id, key);
    await t.deps.apiKeys.flush();
    expect((await t.db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt).toEqual(first);
  });
});

describe('what a key does is the account\'s, not a person\'s', () => {
  it('changes made with a key carry actor {type: "api_key", id}', async () => {
    const acc = await createAccount(t);
    const writer = await createApiKey(t, acc, ['CONTACTS_WRITE']);
    const r = await newContact(acc.id, writer);
    expect(r.errors).toBeUndefined();
    const event = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'contact.created' } });
    expect(event).toMatchObject({ actorType: 'api_key', actorId: writer.id });
  });

  it('the member who made a key leaves the account and the key still works', async () => {
    const acc = await createAccount(t);
    const key = await createApiKey(t, acc, ['CONTACTS_READ']);
    // The owner made it; they hand the account over and leave.
    const handOver = await t.gql('mutation ($a: ID!, $u: ID!) { transferOwnership(accountId: $a, userId: $u) { id } }', { a: acc.id, u: acc.member.id }, { as: acc.owner });
    expect(handOver.errors).toBeUndefined();
    const left = await t.gql('mutation ($a: ID!) { leaveAccount(accountId: $a) }', { a: acc.id }, { as: acc.owner });
    expect(left.errors).toBeUndefined();
    expect(errorOf(await listContacts(acc.id, acc.owner)).extensions?.code).toBe('FORBIDDEN');
    expect((await listContacts(acc.id, key)).errors).toBeUndefined();
  });

  it('EXPORTS allows both exports, the account export too; the audit log names the key', async () => {
    const acc = await createAccount(t);
    const exporter = await createApiKey(t, acc, ['EXPORTS']);
    for (const field of ['exportContacts', 'exportAccount']) {
      const r = await t.gql(`mutation ($a: ID!) { ${field}(accountId: $a) { id } }`, { a: acc.id }, { as: exporter });
      expect(r.errors, field).toBeUndefined();
    }
    const rows = await t.db.exportLog.findMany({ where: { accountId: acc.id } });
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ apiKeyId: exporter.id, userId: null });
    const granted = await t.db.event.findMany({ where: { accountId: acc.id, type: 'export.granted' } });
    expect(granted.map((e) => [e.actorType, e.actorId])).toEqual([['api_key', exporter.id], ['api_key', exporter.id]]);
    // Without EXPORTS the account export is refused, naming the scope.
    const reader = await createApiKey(t, acc, ['CONTACTS_READ']);
    const e = errorOf(await t.gql('mutation ($a: ID!) { exportAccount(accountId: $a) { id } }', { a: acc.id }, { as: reader }));
    expect(e.extensions).toMatchObject({ code: 'FORBIDDEN', requiredScope: 'EXPORTS' });
  });
});
