import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createUser, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t.close());

const key = () => unique('idem');
const contactBody = (firstName = 'Idem') => ({ account_id: acc.id, first_name: firstName, email: `${unique('i')}@example.com` });

describe('Idempotency-Key on POST /api/v1/contacts', () => {
  it('a retry with the same key and body replays the first answer without writing again', async () => {
    const user = await createUser(t);
    await t.db.teamMember.create({ data: { accountId: acc.id, userId: user.id } });
    const k = key();
    const body = contactBody();
    const first = await t.rest('POST', '/api/v1/contacts', { as: user, body, headers: { 'idempotency-key': k } });
    const again = await t.rest('POST', '/api/v1/contacts', { as: user, body, headers: { 'idempotency-key': k } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await t.db.contact.count({ where: { accountId: acc.id, email: body.email } })).toBe(1);
  });

  it('the same key with another body is a 422', async () => {
    const k = key();
    await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body: contactBody('One'), headers: { 'idempotency-key': k } });
    const other = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body: contactBody('Two'), headers: { 'idempotency-key': k } });
    expect(other.status).toBe(422);
    expect(other.body).toEqual({ error: 'Idempotency key reused with a different payload' });
  });

  it('requests racing with one key write once and all get the same answer', async () => {
    const k = key();
    const body = contactBody();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => t.rest('POST', '/api/v1/contacts', { as: acc.member, body, headers: { 'idempotency-key': k } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect(await t.db.contact.count({ where: { email: body.email } })).toBe(1);
  });

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

describe('Idempotency-Key on POST /api/v1/deals', () => {
  it('a retry replays the created deal', async () => {
    const k = key();
    const body = { account_id: acc.id, title: unique('Deal') };
    const a = await t.rest('POST', '/api/v1/deals', { as: acc.owner, body, headers: { 'idempotency-key': k } });
    const b = await t.rest('POST', '/api/v1/deals', { as: acc.owner, body, headers: { 'idempotency-key': k } });
    expect(b.body).toEqual(a.body);
    expect(await t.db.deal.count({ where: { title: body.title } })).toBe(1);
  });
});

describe('Idempotency-Key and honeypot on POST /api/v1/forms/{form_id}/submit', () => {
  let formId: string;
  beforeAll(async () => {
    const form = await t.db.leadForm.create({
      data: {
        accountId: acc.id,
        name: 'Contact us',
        honeypotField: 'website',
        fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 }] },
      },
    });
    formId = form.id;
  });

  it('a retried submission is recorded once and answers the same contact', async () => {
    const k = key();
    const body = { data: { email: `${unique('f')}@example.com` } };
    const opts = { body, clientIp: '203.0.113.50', headers: { 'idempotency-key': k } };
    const a = await t.rest('POST', `/api/v1/forms/${formId}/submit`, opts);
    const b = await t.rest('POST', `/api/v1/forms/${formId}/submit`, opts);
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    expect(await t.db.formSubmission.count({ where: { contactId: a.body.contact_id } })).toBe(1);
  });

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
