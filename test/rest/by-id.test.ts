import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createApiKey, createContact, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §12, REST beyond the contract: GET/PATCH/DELETE /api/v1/contacts/{id} and
// /api/v1/deals/{id}, GET /api/v1/invoices/{id} (docs/rest.md). Every answer is checked against
// the OpenAPI document by t.rest().

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const NOT_FOUND = { status: 404, body: { error: 'Not found' } };
const answer = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body });

describe('GET /api/v1/contacts/{id}', () => {
  test('answers {data} with the list item\'s fields plus updated_at, and its version as ETag', async () => {
    const c = await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace', phone: '123' });
    const r = await t.rest('GET', `/api/v1/contacts/${c.id}`, { as: acc.member });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      id: c.id, custom_fields: {}, first_name: 'Ada', last_name: 'Lovelace', email: c.email, phone: '123', company: null,
      contact_type: 'lead', source: 'other', external_id: null, company_id: null, owner_id: null, created_at: c.createdAt.toISOString(), updated_at: c.updatedAt.toISOString(),
    });
    expect(r.headers.get('etag')).toBe(`"${c.updatedAt.toISOString()}"`);
  });

  test('If-None-Match naming the current version (or *) is a 304 without a body; an older one reads the record', async () => {
    const c = await createContact(t, acc);
    const path = `/api/v1/contacts/${c.id}`;
    const etag = (await t.rest('GET', path, { as: acc.member })).headers.get('etag')!;
    for (const held of [etag, `W/${etag}`, `"2000-01-01T00:00:00.000Z", ${etag}`, '*']) {
      const r = await t.rest('GET', path, { as: acc.member, headers: { 'if-none-match': held } });
      expect([held, r.status, r.text ?? '']).toEqual([held, 304, '']);
      expect(r.headers.get('etag')).toBe(held.startsWith('W/') ? `W/${etag}` : etag);
    }
    expect((await t.rest('PATCH', path, { body: { first_name: 'Changed' }, as: acc.member })).status).toBe(200);
    const changed = await t.rest('GET', path, { as: acc.member, headers: { 'if-none-match': etag } });
    expect([changed.status, changed.body.data.first_name]).toEqual([200, 'Changed']);
    expect(changed.headers.get('etag')).not.toBe(etag);
    const outsider = await t.rest('GET', path, { as: await createUser(t), headers: { 'if-none-match': '*' } });
    expect(answer(outsider)).toEqual(NOT_FOUND);
  });

  test('unknown, another account\'s, or asked by an outsider: the same 404', async () => {
    const other = await createAccount(t);
    const theirs = await createContact(t, other);
    expect(answer(await t.rest('GET', `/api/v1/contacts/${randomUUID()}`, { as: acc.member }))).toEqual(NOT_FOUND);
    expect(answer(await t.rest('GET', `/api/v1/contacts/${theirs.id}`, { as: acc.member }))).toEqual(NOT_FOUND);
    const mine = await createContact(t, acc);
    expect(answer(await t.rest('GET', `/api/v1/contacts/${mine.id}`, { as: acc.outsider }))).toEqual(NOT_FOUND);
    expect((await t.rest('GET', `/api/v1/contacts/${mine.id}`)).status).toBe(401);
  });

  test('an id that is not a UUID names nothing: the same 404', async () => {
    expect(answer(await t.rest('GET', '/api/v1/contacts/not-a-uuid', { as: acc.member }))).toEqual(NOT_FOUND);
    expect(answer(await t.rest('PATCH', '/api/v1/contacts/123', { as: acc.member, body: { company: 'X' } }))).toEqual(NOT_FOUND);
    expect((await t.rest('GET', '/api/v1/contacts/not-a-uuid')).status).toBe(401);
  });

  test('GET /api/v1/contacts/export is still the export, not a contact', async () => {
    const r = await t.rest('GET', `/api/v1/contacts/export?account_id=${acc.id}`, { as: acc.member });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/csv');
  });
});

describe('PATCH /api/v1/contacts/{id}', () => {
  test('takes the update input in snake_case: absent unchanged, null cleared; answers the record and its new ETag', async () => {
    const c = await createContact(t, acc, { firstName: 'Old', company: 'Co', phone: '1' });
    const r = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { first_name: 'New', phone: null, contact_type: 'client' } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toMatchObject({ id: c.id, first_name: 'New', phone: null, company: 'Co', contact_type: 'client' });
    expect(r.headers.get('etag')).toBe(`"${r.body.data.updated_at}"`);
  });

  test('If-Match with the current ETag applies; a stale one is 412 and nothing is written', async () => {
    const c = await createContact(t, acc, { firstName: 'Versioned' });
    const etag = (await t.rest('GET', `/api/v1/contacts/${c.id}`, { as: acc.member })).headers.get('etag')!;
    const first = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { company: 'First' }, headers: { 'if-match': etag } });
    expect(first.status, first.text).toBe(200);
    const stale = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { company: 'Second' }, headers: { 'if-match': etag } });
    expect(answer(stale)).toEqual({ status: 412, body: { error: 'Precondition failed' } });
    const junk = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { company: 'Third' }, headers: { 'if-match': '"not-a-version"' } });
    expect(junk.status).toBe(412);
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: c.id } })).company).toBe('First');
    const any = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { company: 'Any' }, headers: { 'if-match': '*' } });
    expect(any.status).toBe(200);
  });

  test('invalid values are a 400 with details per field (snake_case); unknown fields and an empty body too', async () => {
    const c = await createContact(t, acc);
    // No mass assignment: a field the update input lacks is refused by name before anything else is judged.
    const r = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { first_name: 'Ok', id: randomUUID(), updated_at: '2000-01-01T00:00:00Z' } });
    expect(answer(r)).toEqual({ status: 400, body: { error: 'Invalid payload', details: { id: ['Unknown field'], updated_at: ['Unknown field'] } } });
    const bad = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { first_name: null, email: 'nope' } });
    expect(bad.body.details).toEqual({ first_name: ['Required'], email: ['Must be a valid e-mail address'] });
    const empty = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: {} });
    expect(answer(empty)).toEqual({ status: 400, body: { error: 'Invalid payload', details: { body: ['Must change at least one field'] } } });
  });

  test('unknown or not visible: 404, and nothing is written', async () => {
    const c = await createContact(t, acc, { firstName: 'Mine' });
    expect(answer(await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.outsider, body: { first_name: 'Theirs' } }))).toEqual(NOT_FOUND);
    expect(answer(await t.rest('PATCH', `/api/v1/contacts/${randomUUID()}`, { as: acc.member, body: { first_name: 'X' } }))).toEqual(NOT_FOUND);
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: c.id } })).firstName).toBe('Mine');
  });

  test('an Idempotency-Key replays the first answer', async () => {
    const c = await createContact(t, acc);
    const headers = { 'idempotency-key': randomUUID() };
    const first = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { company: 'Once' }, headers });
    await t.db.contact.update({ where: { id: c.id }, data: { company: 'Changed since' } });
    const again = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { company: 'Once' }, headers });
    expect(answer(again)).toEqual(answer(first));
  });

  test('30 PATCH a minute per user; the 31st is 429', async () => {
    const user = await createUser(t);
    await t.db.teamMember.create({ data: { accountId: acc.id, userId: user.id } });
    const c = await createContact(t, acc);
    for (let i = 0; i < 30; i++) expect((await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: user, body: { company: `N${i}` } })).status).toBe(200);
    const limited = await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: user, body: { company: 'Too many' } });
    expect(answer(limited)).toEqual({ status: 429, body: { error: 'Rate limit exceeded' } });
  });
});

describe('DELETE /api/v1/contacts/{id}', () => {
  test('204 with no body; the contact is gone, its deals stay unlinked; again is 404', async () => {
    const c = await createContact(t, acc);
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Stays', contactId: c.id } });
    const r = await t.rest('DELETE', `/api/v1/contacts/${c.id}`, { as: acc.member });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).contactId).toBeNull();
    expect(answer(await t.rest('DELETE', `/api/v1/contacts/${c.id}`, { as: acc.member }))).toEqual(NOT_FOUND);
    expect(answer(await t.rest('GET', `/api/v1/contacts/${c.id}`, { as: acc.member }))).toEqual(NOT_FOUND);
  });

  test('a cookie-authenticated DELETE from another site is refused', async () => {
    const c = await createContact(t, acc);
    const r = await t.rest('DELETE', `/api/v1/contacts/${c.id}`, {
      headers: { cookie: `session=${acc.member.token}`, origin: 'https://evil.example' },
    });
    expect(answer(r)).toEqual({ status: 403, body: { error: 'Forbidden: cross-site request' } });
    expect(await t.db.contact.findUnique({ where: { id: c.id } })).not.toBeNull();
  });
});

describe('/api/v1/deals/{id}', () => {
  test('GET answers the list item plus updated_at; PATCH changes it; a contact of another account is a 400 on contact_id', async () => {
    const contact = await createContact(t, acc, { firstName: 'Grace', lastName: 'Hopper' });
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Compiler', contactId: contact.id, value: 12.5 } });
    const got = await t.rest('GET', `/api/v1/deals/${deal.id}`, { as: acc.member });
    expect(got.body.data).toEqual({
      id: deal.id, custom_fields: {}, title: 'Compiler', value: 12.5, probability: 50, status: 'open', expected_close_date: null, external_id: null, company_id: null, owner_id: null,
      contacts: { id: contact.id, first_name: 'Grace', last_name: 'Hopper' }, pipeline_stages: null, updated_at: deal.updatedAt.toISOString(),
    });
    const patched = await t.rest('PATCH', `/api/v1/deals/${deal.id}`, {
      as: acc.member, body: { value: 99.99, expected_close_date: '2030-02-28', contact_id: null }, headers: { 'if-match': got.headers.get('etag')! },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data).toMatchObject({ value: 99.99, expected_close_date: '2030-02-28', contacts: null });
    const other = await createContact(t, await createAccount(t));
    const smuggled = await t.rest('PATCH', `/api/v1/deals/${deal.id}`, { as: acc.member, body: { contact_id: other.id } });
    expect(answer(smuggled)).toEqual({ status: 400, body: { error: 'Invalid payload', details: { contact_id: ['Not found in this account'] } } });
    const invalid = await t.rest('PATCH', `/api/v1/deals/${deal.id}`, { as: acc.member, body: { probability: 101, title: null } });
    expect(invalid.body.details).toEqual({ probability: ['Must be from 0 to 100'], title: ['Required'] });
  });

  test('DELETE answers 204; an outsider gets 404', async () => {
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Gone' } });
    expect(answer(await t.rest('DELETE', `/api/v1/deals/${deal.id}`, { as: acc.outsider }))).toEqual(NOT_FOUND);
    expect((await t.rest('DELETE', `/api/v1/deals/${deal.id}`, { as: acc.member })).status).toBe(204);
    expect(await t.db.deal.findUnique({ where: { id: deal.id } })).toBeNull();
  });
});

describe('GET /api/v1/events/{id}', () => {
  test('needs no account_id, like every other read by id: unknown, another account\'s or asked by an outsider is the same 404', async () => {
    const c = await createContact(t, acc);
    await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { company: 'Evented' } });
    const event = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'contact.updated', subjectId: c.id } });
    const one = await t.rest('GET', `/api/v1/events/${event.id}`, { as: acc.member });
    expect(one.status, one.text).toBe(200);
    expect(one.body.data).toMatchObject({ id: event.id, type: 'contact.updated', account_id: acc.id });
    expect((await t.rest('GET', `/api/v1/events/${event.id}?account_id=${acc.id}`, { as: acc.member })).body).toEqual(one.body);
    const gql = await t.gql('query ($id: ID!) { event(id: $id) { id type } }', { id: event.id }, { as: acc.member });
    expect(gql.data).toEqual({ event: { id: event.id, type: 'contact.updated' } });
    expect(answer(await t.rest('GET', `/api/v1/events/${randomUUID()}`, { as: acc.member }))).toEqual(NOT_FOUND);
    expect(answer(await t.rest('GET', `/api/v1/events/${event.id}`, { as: acc.outsider }))).toEqual(NOT_FOUND);
    const other = await createAccount(t);
    expect(answer(await t.rest('GET', `/api/v1/events/${event.id}`, { as: other.owner }))).toEqual(NOT_FOUND);
    expect((await t.rest('GET', `/api/v1/events/${event.id}`)).status).toBe(401);
  });

  test('an API key reads its own account\'s event by id with events:read, and the kinds its scopes read', async () => {
    const c = await createContact(t, acc);
    await t.rest('PATCH', `/api/v1/contacts/${c.id}`, { as: acc.member, body: { company: 'Keyed' } });
    const event = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'contact.updated', subjectId: c.id } });
    expect((await t.rest('GET', `/api/v1/events/${event.id}`, { as: await createApiKey(t, acc, ['EVENTS_READ', 'CONTACTS_READ']) })).status).toBe(200);
    expect(answer(await t.rest('GET', `/api/v1/events/${event.id}`, { as: await createApiKey(t, acc, ['EVENTS_READ']) }))).toEqual(NOT_FOUND);
    expect((await t.rest('GET', `/api/v1/events/${event.id}`, { as: await createApiKey(t, acc, ['CONTACTS_READ']) })).status).toBe(403);
  });
});

describe('GET /api/v1/invoices/{id}', () => {
  test('answers the list item plus updated_at and an ETag; 120 a minute per user', async () => {
    const invoice = await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: 'INV-BYID', amount: 10.5, dueDate: new Date('2030-01-31') } });
    const r = await t.rest('GET', `/api/v1/invoices/${invoice.id}`, { as: acc.member });
    expect(r.body.data).toEqual({
      id: invoice.id, custom_fields: {}, invoice_number: 'INV-BYID', amount: 10.5, status: 'draft', due_date: '2030-01-31', external_id: null, contacts: null,
      created_at: invoice.createdAt.toISOString(), updated_at: invoice.updatedAt.toISOString(),
      // docs/decisions.md §20: an invoice from amount alone has no lines and subtotal = total = amount.
      currency: 'USD', lines: [], subtotal: 10.5, discount_total: 0, tax_total: 0, total: 10.5, amount_paid: 0, amount_due: 10.5, memo: null, paid_at: null,
      issued_at: null, hosted_url: null, // a draft has not been issued: no client's page yet
    });
    expect(r.headers.get('etag')).toBe(`"${invoice.updatedAt.toISOString()}"`);
    const user = await createUser(t);
    await t.db.teamMember.create({ data: { accountId: acc.id, userId: user.id } });
    for (let i = 0; i < 120; i++) expect((await t.rest('GET', `/api/v1/invoices/${invoice.id}`, { as: user })).status).toBe(200);
    expect((await t.rest('GET', `/api/v1/invoices/${invoice.id}`, { as: user })).status).toBe(429);
  });

  test('a path with another method answers 405 with Allow', async () => {
    const r = await t.rest('PUT', `/api/v1/invoices/${randomUUID()}`, { as: acc.member, body: { amount: 1 } });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('GET, PATCH, DELETE');
  });
});
