import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Prisma } from '../../src/generated/prisma/client.js';
import { once, SWEEP_BATCH } from '../../src/idempotency/idempotency.service.js';
import { Unlimited } from '../helpers/unlimited-store.js';
import { createAccount, createApiKey, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type RestResult, type TestApp } from '../helpers/app.js';
import { importCsv } from '../imports/helpers.js';

let t: TestApp;
let acc: TestAccount;
let formId: string;
beforeAll(async () => {
  t = await createTestApp({ store: new Unlimited() });
  acc = await createAccount(t);
  formId = (
    await t.db.leadForm.create({
      data: {
        accountId: acc.id,
        name: 'Contact us',
        honeypotField: 'website',
        fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 }] },
      },
    })
  ).id;
});
afterAll(() => t.close());

const key = () => unique('idem');
const PUBLIC_URL = 'https://93.184.215.14/hook'; // an address the webhook target guard allows; nothing is sent here
const contactBody = (firstName = 'Idem') => ({ account_id: acc.id, first_name: firstName, email: `${unique('i')}@example.com` });
let ipSeq = 0;
// The submit's keys are scoped per client IP: each test sends from its own address.
const nextIp = () => `203.0.113.${(++ipSeq % 40) + 100}`;

type Body = Record<string, any>;
type Endpoint = {
  /** A new request body, distinct from every other one. */
  body(): Body;
  send(body: Body, key: string, ip: string): Promise<RestResult>;
  /** How many records the write made for this body. */
  written(body: Body): Promise<number>;
  status: number;
  /** At most this many of a caller's requests are under way at once, the rest 429 (uploads: 2, docs/decisions.md §24). */
  underWay?: number;
};

const ENDPOINTS: [string, Endpoint][] = [
  ['POST /api/v1/contacts', {
    body: () => contactBody(),
    send: (body, k) => t.rest('POST', '/api/v1/contacts', { as: acc.member, body, headers: { 'idempotency-key': k } }),
    written: (body) => t.db.contact.count({ where: { accountId: acc.id, email: body.email } }),
    status: 201,
  }],
  ['POST /api/v1/deals', {
    body: () => ({ account_id: acc.id, title: unique('Deal'), value: 1200.5 }),
    send: (body, k) => t.rest('POST', '/api/v1/deals', { as: acc.member, body, headers: { 'idempotency-key': k } }),
    written: (body) => t.db.deal.count({ where: { accountId: acc.id, title: body.title } }),
    status: 201,
  }],
  ['POST /api/v1/forms/{form_id}/submit', {
    body: () => ({ data: { email: `${unique('f')}@example.com` } }),
    send: (body, k, ip) => t.rest('POST', `/api/v1/forms/${formId}/submit`, { body, clientIp: ip, headers: { 'idempotency-key': k } }),
    written: (body) => t.db.formSubmission.count({ where: { formId, contact: { email: body.data.email } } }),
    status: 200,
  }],
  // Its replay shows the signing secret again: the secret is opened from the endpoint's row, never stored with the answer.
  ['POST /api/v1/webhook_endpoints', {
    body: () => ({ account_id: acc.id, url: PUBLIC_URL, event_types: ['*'], description: unique('hook') }),
    send: (body, k) => t.rest('POST', '/api/v1/webhook_endpoints', { as: acc.owner, body, headers: { 'idempotency-key': k } }),
    written: (body) => t.db.webhookEndpoint.count({ where: { accountId: acc.id, description: body.description } }),
    status: 201,
  }],
  // The key is taken once the file is stored (queueImport): a retry's own copy of the file is dropped.
  ['POST /api/v1/imports', {
    body: () => ({ name: `${unique('file')}.csv`, csv: `first_name,last_name\r\nIdem,${unique('imp')}\r\n` }),
    send: (body, k) => importCsv(t, acc.member, acc.id, body.csv, {}, { 'x-file-name': body.name, 'idempotency-key': k }),
    written: (body) => t.db.import.count({ where: { accountId: acc.id, fileName: body.name } }),
    status: 202,
    underWay: 2,
  }],
];

describe.each(ENDPOINTS)('Idempotency-Key on %s', (_name, endpoint) => {
  it('a retry with the same key and body replays the first answer and writes once', async () => {
    const [k, ip, body] = [key(), nextIp(), endpoint.body()];
    const first = await endpoint.send(body, k, ip);
    const again = await endpoint.send(body, k, ip);
    expect(first.status).toBe(endpoint.status);
    expect({ status: again.status, body: again.body }).toEqual({ status: first.status, body: first.body });
    expect(await endpoint.written(body)).toBe(1);
  });

  it('the same key with another body is a 422 "Idempotency key reused with a different payload" and writes nothing', async () => {
    const [k, ip, body, other] = [key(), nextIp(), endpoint.body(), endpoint.body()];
    expect((await endpoint.send(body, k, ip)).status).toBe(endpoint.status);
    const r = await endpoint.send(other, k, ip);
    expect({ status: r.status, body: r.body }).toEqual({ status: 422, body: { error: 'Idempotency key reused with a different payload' } });
    expect(await endpoint.written(other)).toBe(0);
    expect(await endpoint.written(body)).toBe(1);
  });

  it('8 concurrent requests with one key write exactly once and all get the same answer (uploads past 2 under way: 429, then a retry replays it)', async () => {
    const [k, ip, body] = [key(), nextIp(), endpoint.body()];
    const answers = await Promise.all(Array.from({ length: 8 }, () => endpoint.send(body, k, ip)));
    // Beyond the requests a caller may have under way, the rest are 429 before anything is read.
    const admitted = answers.filter((a) => a.status !== 429 || !endpoint.underWay);
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    expect(admitted.map((a) => a.status)).toEqual(admitted.map(() => endpoint.status));
    const again = await endpoint.send(body, k, ip); // and a retry once they are answered replays the same
    for (const answer of [...admitted, again]) expect(answer.body).toEqual(admitted[0]!.body);
    expect(await endpoint.written(body)).toBe(1);
  });
});

// The writes that used to ignore the header (docs/decisions.md §4): each replays its first answer,
// changes once, and refuses the key for another record. Without a key each of these retries would
// write again: another event, another secret, or a 404 for the deleted endpoint.
describe('Idempotency-Key on writes by id: a retry answers as the first did and changes once', () => {
  const owner = (k: string) => ({ as: acc.owner, headers: { 'idempotency-key': k } });
  const endpoint = async () =>
    (await t.rest('POST', '/api/v1/webhook_endpoints', { as: acc.owner, body: { account_id: acc.id, url: PUBLIC_URL, event_types: ['*'] } })).body.data.endpoint.id as string;
  const eventsOf = (type: string, subjectId: string) => t.db.event.count({ where: { accountId: acc.id, type, subjectId } });

  it('PATCH /api/v1/webhook_endpoints/{id}: the retry answers the first answer and records one webhook_endpoint.updated', async () => {
    const [id, k] = [await endpoint(), key()];
    const send = () => t.rest('PATCH', `/api/v1/webhook_endpoints/${id}`, { ...owner(k), body: { description: 'Paused', enabled: false } });
    const [first, again] = [await send(), await send()];
    expect(first.status, first.text).toBe(200);
    expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: first.body });
    expect(await eventsOf('webhook_endpoint.updated', id)).toBe(1);
  });

  // The record is gone when the retry comes: its answer is found by who asked, the operation, the key and the input.
  it.each([
    ['webhook_endpoints', 'webhook_endpoint.deleted', endpoint],
    ['contacts', 'contact.deleted', async () => (await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body: contactBody() })).body.data.id as string],
  ] as const)('DELETE /api/v1/%s/{id}: the retry is the same 204, not a 404', async (path, event, make) => {
    const [id, k] = [await make(), key()];
    const send = () => t.rest('DELETE', `/api/v1/${path}/${id}`, owner(k));
    expect([(await send()).status, (await send()).status]).toEqual([204, 204]);
    expect(await eventsOf(event, id)).toBe(1);
    const other = key(); // without a stored answer for this caller and key, the gone record is the usual 404
    expect((await t.rest('DELETE', `/api/v1/${path}/${id}`, owner(other))).status).toBe(404);
  });

  it('rotateWebhookSecret: the retry shows the same new secret, the one the endpoint signs with', async () => {
    const [id, k] = [await endpoint(), key()];
    const doc = 'mutation ($id: ID!) { rotateWebhookSecret(id: $id) { endpoint { id } secret } }';
    const first = await t.gql(doc, { id }, owner(k));
    const again = await t.gql(doc, { id }, owner(k));
    expect(first.data.rotateWebhookSecret.secret).toMatch(/^whsec_/);
    expect(again.data).toEqual(first.data);
    const row = await t.db.webhookEndpoint.findUniqueOrThrow({ where: { id } });
    expect(t.deps.events.box!.open(row.secretCiphertext, id)).toBe(first.data.rotateWebhookSecret.secret);
    expect(await eventsOf('webhook_endpoint.updated', id)).toBe(1);
    // The kept answer (exported with the account) holds neither the secret nor its sealed copy.
    const kept = JSON.stringify(await t.db.idempotencyKey.findMany({ where: { key: k }, select: { result: true } }));
    expect(kept).toContain(id);
    for (const secret of [first.data.rotateWebhookSecret.secret, row.secretCiphertext]) expect(kept).not.toContain(secret);
  });

  it('DELETE /api/v1/imports/{id}: the retry answers the cancelled import; the same key on another import is a 422 and leaves it queued', async () => {
    const upload = async () => (await importCsv(t, acc.member, acc.id, 'first_name\r\nQueued\r\n')).body.data.id as string;
    const [one, two, k] = [await upload(), await upload(), key()];
    const cancel = (id: string) => t.rest('DELETE', `/api/v1/imports/${id}`, { as: acc.member, headers: { 'idempotency-key': k } });
    const [first, again] = [await cancel(one), await cancel(one)];
    expect(first.body.data.status, first.text).toBe('cancelled');
    expect({ status: again.status, body: again.body }).toEqual({ status: first.status, body: first.body });
    expect((await cancel(two)).status).toBe(422);
    expect((await t.db.import.findUniqueOrThrow({ where: { id: two } })).status).toBe('queued');
  });

  it('revokeApiKey: the retry answers the revoked key; the same key on another API key is a 422 and that key keeps working', async () => {
    const [first, second, k] = [await createApiKey(t, acc, ['CONTACTS_READ']), await createApiKey(t, acc, ['CONTACTS_READ']), key()];
    const doc = 'mutation ($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }';
    const a = await t.gql(doc, { id: first.id }, owner(k));
    const b = await t.gql(doc, { id: first.id }, owner(k));
    expect(a.data.revokeApiKey.revokedAt).not.toBeNull();
    expect(b.data).toEqual(a.data);
    const { secretHash } = await t.db.apiKey.findUniqueOrThrow({ where: { id: first.id } });
    const kept = JSON.stringify(await t.db.idempotencyKey.findMany({ where: { key: k }, select: { result: true } }));
    expect([kept.includes(first.id), kept.includes(secretHash)]).toEqual([true, false]); // never the hash the export leaves out
    expect(errorOf(await t.gql(doc, { id: second.id }, owner(k))).extensions?.code).toBe('IDEMPOTENCY_CONFLICT');
    expect((await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: second })).status).toBe(200);
  });

  it('setLeadFormActive: the retry answers the first answer; the same key with active: true is a 422 and the form stays inactive', async () => {
    const k = key();
    const doc = 'mutation ($id: ID!, $active: Boolean!) { setLeadFormActive(id: $id, active: $active) { id active } }';
    try {
      const first = await t.gql(doc, { id: formId, active: false }, owner(k));
      expect(first.data.setLeadFormActive).toEqual({ id: formId, active: false });
      expect((await t.gql(doc, { id: formId, active: false }, owner(k))).data).toEqual(first.data);
      expect(errorOf(await t.gql(doc, { id: formId, active: true }, owner(k))).extensions?.code).toBe('IDEMPOTENCY_CONFLICT');
      expect((await t.db.leadForm.findUniqueOrThrow({ where: { id: formId } })).active).toBe(false);
    } finally {
      await t.db.leadForm.update({ where: { id: formId }, data: { active: true } }); // the submit tests post to it
    }
  });
});

describe('Idempotency-Key on POST /api/v1/contacts: who may reuse a key, and its format', () => {
  it('keys are scoped per user: another user with the same key writes its own record', async () => {
    const k = key();
    const body = contactBody();
    const a = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body, headers: { 'idempotency-key': k } });
    const b = await t.rest('POST', '/api/v1/contacts', { as: acc.member, body, headers: { 'idempotency-key': k } });
    expect(a.body.data.id).not.toBe(b.body.data.id);
  });

  it('a malformed key is a 400 on idempotency_key and writes nothing', async () => {
    const body = contactBody();
    const r = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body, headers: { 'idempotency-key': 'x'.repeat(256) } });
    expect(r.status).toBe(400);
    expect(r.body.details).toHaveProperty('idempotency_key');
    expect(await t.db.contact.count({ where: { email: body.email } })).toBe(0);
  });

  it('the same key works through /graphql too (one rule, either door)', async () => {
    const k = key();
    const input = { accountId: acc.id, firstName: 'Gql', email: `${unique('g')}@example.com` };
    const doc = 'mutation($input: CreateContactInput!) { createContact(input: $input) { id } }';
    const a = await t.gql(doc, { input }, { as: acc.owner, headers: { 'idempotency-key': k } });
    const b = await t.gql(doc, { input }, { as: acc.owner, headers: { 'idempotency-key': k } });
    expect(a.data.createContact.id).toBe(b.data.createContact.id);
  });
});

describe('Idempotency-Key and honeypot on POST /api/v1/forms/{form_id}/submit', () => {
  it('a filled honeypot gets the ordinary answer, creates no contact and is kept apart as spam', async () => {
    const email = `${unique('bot')}@example.com`;
    const r = await t.rest('POST', `/api/v1/forms/${formId}/submit`, {
      body: { data: { email, website: 'http://spam.example' } },
      clientIp: '203.0.113.51',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, successMessage: "Thanks! We'll be in touch." });
    expect(await t.db.contact.count({ where: { email } })).toBe(0);
    const spam = await t.db.formSubmission.findFirstOrThrow({ where: { formId, isSpam: true } });
    expect(spam.contactId).toBeNull();
    expect(spam.data).toMatchObject({ email, website: 'http://spam.example' });
  });
});

describe('Idempotency-Key: the write and its stored answer commit together', () => {
  const claimFor = (k: string, email: string) => ({ accountId: acc.id, scope: `user:${acc.owner.id}`, operation: 'createContact', key: k, request: { email } });
  const createThen = (email: string, answer: (id: string) => unknown) => async (tx: Prisma.TransactionClient) =>
    answer((await tx.contact.create({ data: { accountId: acc.id, firstName: 'Atomic', email } })).id);

  it('when storing the answer fails after the write, the write is undone and the key freed: a retry writes exactly once', async () => {
    const [k, email] = [key(), `${unique('atomic')}@example.com`];
    // PostgreSQL's jsonb refuses a NUL character: the contact is inserted, then storing the answer fails.
    await expect(once(t.db, claimFor(k, email), createThen(email, (id) => ({ id, note: '\u0000' })))).rejects.toThrow();
    expect(await t.db.contact.count({ where: { email } })).toBe(0);
    expect(await t.db.idempotencyKey.count({ where: { key: k } })).toBe(0);

    const retry = await once(t.db, claimFor(k, email), createThen(email, (id) => ({ id })));
    const replay = await once(t.db, claimFor(k, email), createThen(email, (id) => ({ id })));
    expect(replay).toEqual(retry);
    expect(await t.db.contact.count({ where: { email } })).toBe(1);
  });
});

describe('Idempotency-Key housekeeping: expired keys do not pile up', () => {
  it('taking a key sweeps expired keys of every account and scope in bounded batches, and keeps live ones', async () => {
    // Its own app: the sweep runs at most once a minute per database client, and this one is new.
    const fresh = await createTestApp();
    try {
      const account = await createAccount(fresh);
      const row = (scope: string, ageMs: number) => ({
        accountId: account.id, scope, operation: 'submitLeadForm', key: key(), requestHash: '0'.repeat(64), createdAt: new Date(Date.now() - ageMs),
      });
      const DAY_MS = 24 * 60 * 60 * 1000;
      // Visitors' scopes never come back, so only a sweep can remove their keys.
      await fresh.db.idempotencyKey.createMany({
        data: Array.from({ length: SWEEP_BATCH + 1 }, (_, i) => row(`ip:198.51.100.${i % 250}:form:x`, DAY_MS + 60_000 + i)),
      });
      await fresh.db.idempotencyKey.create({ data: row('ip:198.51.100.1:form:live', DAY_MS - 60_000) });
      const expired = { accountId: account.id, createdAt: { lt: new Date(Date.now() - DAY_MS) } };
      const create = () =>
        fresh.rest('POST', '/api/v1/contacts', { as: account.owner, body: { account_id: account.id, first_name: 'Sweep' }, headers: { 'idempotency-key': key() } });

      expect((await create()).status).toBe(201);
      expect(await fresh.db.idempotencyKey.count({ where: expired })).toBe(1); // one batch, no more
      expect((await create()).status).toBe(201); // a full batch lets the next key sweep at once
      expect(await fresh.db.idempotencyKey.count({ where: expired })).toBe(0);
      expect(await fresh.db.idempotencyKey.count({ where: { accountId: account.id, scope: 'ip:198.51.100.1:form:live' } })).toBe(1);
    } finally {
      await fresh.close();
    }
  });
});

describe('Idempotency-Key expiry: a key lives 24 hours', () => {
  const DAY_MS = 24 * 60 * 60 * 1000;
  /** Moves a stored key's creation time back, as if the first request had been `ageMs` ago. */
  const age = (k: string, ageMs: number) =>
    t.db.idempotencyKey.updateMany({ where: { key: k }, data: { createdAt: new Date(Date.now() - ageMs) } });

  it('a key older than 24 hours is treated as new: the same request writes a second record', async () => {
    const k = key();
    const body = contactBody();
    const first = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body, headers: { 'idempotency-key': k } });
    expect((await age(k, DAY_MS + 60_000)).count).toBe(1);
    const later = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body, headers: { 'idempotency-key': k } });
    expect(later.status).toBe(201);
    expect(later.body.data.id).not.toBe(first.body.data.id);
    expect(await t.db.contact.count({ where: { email: body.email } })).toBe(2);
    // The expired key was replaced by the new one, which now replays in its turn.
    const again = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body, headers: { 'idempotency-key': k } });
    expect(again.body).toEqual(later.body);
    expect(await t.db.idempotencyKey.count({ where: { key: k } })).toBe(1);
  });

  it('a key just under 24 hours old still replays the first answer', async () => {
    const k = key();
    const body = contactBody();
    const first = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body, headers: { 'idempotency-key': k } });
    await age(k, DAY_MS - 60_000);
    const retry = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body, headers: { 'idempotency-key': k } });
    expect(retry.body).toEqual(first.body);
    expect(await t.db.contact.count({ where: { email: body.email } })).toBe(1);
  });

  it('an expired key may carry another body: a new request, not a 422', async () => {
    const k = key();
    await t.rest('POST', '/api/v1/deals', { as: acc.owner, body: { account_id: acc.id, title: unique('Old') }, headers: { 'idempotency-key': k } });
    await age(k, DAY_MS + 60_000);
    const title = unique('New');
    const r = await t.rest('POST', '/api/v1/deals', { as: acc.owner, body: { account_id: acc.id, title }, headers: { 'idempotency-key': k } });
    expect(r.status).toBe(201);
    expect(r.body.data.title).toBe(title);
  });

  it('an expired key on the public submit records a new submission', async () => {
    const form = await t.db.leadForm.create({
      data: { accountId: acc.id, name: 'Expiry', fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 }] } },
    });
    const k = key();
    const opts = { body: { data: { email: `${unique('exp')}@example.com` } }, clientIp: '203.0.113.60', headers: { 'idempotency-key': k } };
    const a = await t.rest('POST', `/api/v1/forms/${form.id}/submit`, opts);
    await age(k, DAY_MS + 60_000);
    const b = await t.rest('POST', `/api/v1/forms/${form.id}/submit`, opts);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.contact_id).toBe(a.body.contact_id); // the same e-mail finds the same contact
    expect(await t.db.formSubmission.count({ where: { formId: form.id } })).toBe(2);
  });
});

describe('Idempotency-Key scope on the public submit: per client IP and per form', () => {
  let formA: string;
  let formB: string;
  beforeAll(async () => {
    const make = (name: string) =>
      t.db.leadForm.create({
        data: { accountId: acc.id, name, fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 }] } },
      });
    [formA, formB] = [(await make('Scope A')).id, (await make('Scope B')).id];
  });
  const submit = (form: string, email: string, ip: string, k: string) =>
    t.rest('POST', `/api/v1/forms/${form}/submit`, { body: { data: { email } }, clientIp: ip, headers: { 'idempotency-key': k } });

  it('the same key and body from another client IP is another visitor: a second submission is recorded', async () => {
    const k = key();
    const email = `${unique('ip')}@example.com`;
    const a = await submit(formA, email, '203.0.113.70', k);
    const b = await submit(formA, email, '203.0.113.71', k);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await t.db.formSubmission.count({ where: { formId: formA, contact: { email } } })).toBe(2);
    expect(await t.db.formSubmission.findMany({ where: { formId: formA, contact: { email } }, select: { clientIp: true }, orderBy: { createdAt: 'asc' } }))
      .toEqual([{ clientIp: '203.0.113.70' }, { clientIp: '203.0.113.71' }]);
  });

  it('another body under the same key from another IP is no conflict (keys never cross visitors)', async () => {
    const k = key();
    const a = await submit(formA, `${unique('one')}@example.com`, '203.0.113.72', k);
    const b = await submit(formA, `${unique('two')}@example.com`, '203.0.113.73', k);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body.contact_id).not.toBe(a.body.contact_id);
  });

  it('the same key from one IP on two forms is two submissions: a key never replays another form\'s answer', async () => {
    const k = key();
    const email = `${unique('forms')}@example.com`;
    const a = await submit(formA, email, '203.0.113.74', k);
    const b = await submit(formB, email, '203.0.113.74', k);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await t.db.formSubmission.count({ where: { formId: formA, contact: { email } } })).toBe(1);
    expect(await t.db.formSubmission.count({ where: { formId: formB, contact: { email } } })).toBe(1);
  });

  it('the same key, IP and form with another body is a 422 and records nothing', async () => {
    const k = key();
    await submit(formA, `${unique('first')}@example.com`, '203.0.113.75', k);
    const before = await t.db.formSubmission.count({ where: { formId: formA } });
    const r = await submit(formA, `${unique('other')}@example.com`, '203.0.113.75', k);
    expect(r.status).toBe(422);
    expect(await t.db.formSubmission.count({ where: { formId: formA } })).toBe(before);
  });
});

describe('Replays say so: an answer replayed for an Idempotency-Key carries Idempotent-Replayed and is not charged again', () => {
  // Real limits here (the file's app lifts them): memory, or Redis when REDIS_URL is set.
  let limited: TestApp;
  let a: TestAccount;
  beforeAll(async () => {
    limited = await createTestApp();
    a = await createAccount(limited);
  });
  afterAll(() => limited?.close());
  const send = (method: string, path: string, k: string | null, body?: unknown) =>
    limited.rest(method, path, { as: a.owner, body, headers: k ? { 'idempotency-key': k } : {} });

  it('POST /api/v1/contacts: each replay says Idempotent-Replayed: true and leaves RateLimit-Remaining where the first answer left it', async () => {
    const k = key();
    const body = { account_id: a.id, first_name: 'Once', email: `${unique('replay')}@example.com` };
    const first = await send('POST', '/api/v1/contacts', k, body);
    expect([first.status, first.headers.get('idempotent-replayed'), first.headers.get('ratelimit-remaining')]).toEqual([201, null, '29']);
    for (let i = 0; i < 3; i++) {
      const replay = await send('POST', '/api/v1/contacts', k, body);
      expect([replay.status, replay.body]).toEqual([201, first.body]);
      expect([replay.headers.get('idempotent-replayed'), replay.headers.get('ratelimit-remaining')]).toEqual(['true', '29']);
    }
    // The next new call is the second one charged.
    const next = await send('POST', '/api/v1/contacts', key(), { account_id: a.id, first_name: 'Two' });
    expect([next.status, next.headers.get('idempotent-replayed'), next.headers.get('ratelimit-remaining')]).toEqual([201, null, '28']);
  });

  it('DELETE /api/v1/contacts/{id}: the retry of a delete (its record gone) says so and is not charged again', async () => {
    const id = (await send('POST', '/api/v1/contacts', null, { account_id: a.id, first_name: 'Gone' })).body.data.id;
    const k = key();
    const first = await send('DELETE', `/api/v1/contacts/${id}`, k);
    expect([first.status, first.headers.get('idempotent-replayed'), first.headers.get('ratelimit-remaining')]).toEqual([204, null, '29']);
    const replay = await send('DELETE', `/api/v1/contacts/${id}`, k);
    expect([replay.status, replay.headers.get('idempotent-replayed'), replay.headers.get('ratelimit-remaining')]).toEqual([204, 'true', '29']);
  });

  it('a reused key with another body is no replay: 422, no Idempotent-Replayed, and it is charged', async () => {
    const k = key();
    const first = await send('POST', '/api/v1/contacts', k, { account_id: a.id, first_name: 'Kept' });
    const other = await send('POST', '/api/v1/contacts', k, { account_id: a.id, first_name: 'Other' });
    expect([other.status, other.headers.get('idempotent-replayed')]).toEqual([422, null]);
    expect(Number(other.headers.get('ratelimit-remaining'))).toBe(Number(first.headers.get('ratelimit-remaining')) - 1);
  });

  it('GraphQL: a replayed createContact says so in extensions.idempotentReplayed (and the header), and is not charged against its limit again', async () => {
    const k = key();
    const doc = 'mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }';
    const input = { accountId: a.id, firstName: 'Gql', email: `${unique('gql')}@example.com` };
    const first = await limited.gql(doc, { input }, { as: a.owner, headers: { 'idempotency-key': k } });
    expect(first.errors).toBeUndefined();
    expect(first.extensions?.idempotentReplayed).toBeUndefined();
    const replay = await limited.gql(doc, { input }, { as: a.owner, headers: { 'idempotency-key': k } });
    expect(replay.data.createContact.id).toBe(first.data.createContact.id);
    expect(replay.extensions?.idempotentReplayed).toEqual(['createContact']);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    expect(replay.headers.get('ratelimit-remaining')).toBe(first.headers.get('ratelimit-remaining'));
  });
});
