import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/rest.md: a 400's `details` names every failing field, whichever step (types or the field's rules) found it.

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

describe('one 400 names every failing field', () => {
  it('POST /contacts with a blank name, a bad e-mail and an unknown type names all three', async () => {
    const r = await t.rest('POST', '/api/v1/contacts', {
      as: acc.owner,
      body: { account_id: acc.id, first_name: '', email: 'bad', contact_type: 'nope' },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Invalid payload');
    expect(Object.keys(r.body.details).sort()).toEqual(['contact_type', 'email', 'first_name']);
    expect(r.body.details.first_name).toEqual(['Required']);
    expect(r.body.details.email).toEqual(['Must be a valid e-mail address']);
    expect(r.body.details.contact_type[0]).toMatch(/^Must be one of: /);
  });

  it('a field refused by its type keeps that message alone (the rules do not add "Required" for it)', async () => {
    const r = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body: { account_id: acc.id, first_name: 5, phone: 'x'.repeat(51) } });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual({ first_name: ['Expected a string'], phone: ['Must be at most 50 characters'] });
  });

  it('POST /deals with an unknown field, a bad value and a blank title names all three', async () => {
    const r = await t.rest('POST', '/api/v1/deals', { as: acc.owner, body: { account_id: acc.id, title: ' ', value: -1, owner: 'x' } });
    expect(r.status).toBe(400);
    expect(r.body.details).toMatchObject({ owner: ['Unknown field'], title: ['Required'] });
    expect(r.body.details.value[0]).toMatch(/^Must be from 0 to/);
  });

  it('GET /contacts with a bad page and a too-long search names both under "Invalid query"', async () => {
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&page=abc&search=${'s'.repeat(201)}`, { as: acc.owner });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid query', details: { page: ['Must be an integer'], search: ['Must be at most 200 characters'] } });
  });

  // The rules judge the others as the resolver would get them (graphql-js's coercion): a valid enum
  // value or timestamp beside a refused field is not named with it.
  it('GET /contacts with a bad page_size names page_size alone, not the valid created_since, type or sort beside it', async () => {
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&page_size=abc&created_since=2026-01-01T00:00:00Z&type=client&sort=updated_at&order=asc`, { as: acc.owner });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid query', details: { page_size: ['Must be an integer'] } });
  });

  it('POST /imports with an unknown match_on names match_on alone, not the valid object beside it', async () => {
    const r = await t.rest('POST', `/api/v1/imports?account_id=${acc.id}&object=contacts&match_on=phone`, {
      as: acc.owner, rawBody: 'First Name\r\nAda\r\n', headers: { 'content-type': 'text/csv' },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid query', details: { match_on: ['Must be one of: domain, email, external_id, none'] } });
  });

  it('POST /webhook_endpoints with an unknown event type and an ftp URL names both (the URL is judged beside the form)', async () => {
    const r = await t.rest('POST', '/api/v1/webhook_endpoints', { as: acc.owner, body: { account_id: acc.id, url: 'ftp://hooks.example', event_types: ['nope'] } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: 'Invalid payload',
      details: { 'event_types.0': ['Unknown event type (docs/events.md lists them)'], url: ['Must be an http or https URL'] },
    });
  });
});

// The steps before the field's rules (a route's variant key, the REST reader) and the rules' own
// stages (the form, the Idempotency-Key header, a public field's checks against its target) each
// add to the one 400: none of them answers alone while another field also fails.
describe('one 400 names every failing field, whichever step refused first', () => {
  const MALFORMED_KEY = { 'idempotency-key': 'héllo' };
  const KEY_MESSAGE = ['Must be 1 to 255 printable ASCII characters'];
  let ip = 0;
  const nextIp = () => `192.0.2.${++ip}`;

  it('POST /contacts/batch with an unknown mode also names the bad account_id, an unknown key, all_or_nothing and records', async () => {
    const r = await t.rest('POST', '/api/v1/contacts/batch', {
      as: acc.owner,
      body: { account_id: 'bad', mode: 'merge', records: [{ first_name: 'q' }], extra: 1 },
    });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: 'Invalid payload',
      details: { mode: ['Must be one of: create, upsert'], account_id: ['Must be a UUID'], extra: ['Unknown field'] },
    });
    const envelope = await t.rest('POST', '/api/v1/deals/batch', {
      as: acc.owner,
      body: { account_id: acc.id, mode: 'merge', all_or_nothing: 'yes', records: 'x' },
    });
    expect(envelope.body).toEqual({
      error: 'Invalid payload',
      details: { mode: ['Must be one of: create, upsert'], all_or_nothing: ['Expected true or false'], records: ['Expected an array'] },
    });
  });

  it('an unknown mode names only what every mode refuses: a key one mode takes is not an unknown field, nor one mode requires missing', async () => {
    const r = await t.rest('POST', '/api/v1/contacts/batch', {
      as: acc.owner,
      body: { account_id: 'bad', mode: 'merge', match_on: 'email', records: [{ first_name: 'q' }] },
    });
    expect(r.body).toEqual({ error: 'Invalid payload', details: { mode: ['Must be one of: create, upsert'], account_id: ['Must be a UUID'] } });
  });

  it('a malformed Idempotency-Key is named with the body fields the reader refuses and those the rules refuse', async () => {
    const both = await t.rest('POST', '/api/v1/deals', { as: acc.owner, headers: MALFORMED_KEY, body: { account_id: acc.id, title: '', extra: 1 } });
    expect(both.status).toBe(400);
    expect(both.body).toEqual({
      error: 'Invalid payload',
      details: { extra: ['Unknown field'], title: ['Required'], idempotency_key: KEY_MESSAGE },
    });
    const rulesOnly = await t.rest('POST', '/api/v1/deals', { as: acc.owner, headers: MALFORMED_KEY, body: { account_id: acc.id, title: '' } });
    expect(rulesOnly.body).toEqual({ error: 'Invalid payload', details: { title: ['Required'], idempotency_key: KEY_MESSAGE } });
    expect(await t.db.deal.count({ where: { accountId: acc.id } })).toBe(0);
  });

  it('a malformed Idempotency-Key is a 400 before the 403: an outsider hears the payload problem, as for any field', async () => {
    const r = await t.rest('POST', '/api/v1/deals', { as: acc.outsider, headers: MALFORMED_KEY, body: { account_id: acc.id, title: 'Fine' } });
    expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { idempotency_key: KEY_MESSAGE } }]);
  });

  it('a malformed Idempotency-Key is named with the failing input on /graphql too (one rule, either door)', async () => {
    const r = await t.gql(
      'mutation ($input: CreateDealInput!) { createDeal(input: $input) { id } }',
      { input: { accountId: acc.id, title: ' ', value: -1 } },
      { as: acc.owner, headers: MALFORMED_KEY },
    );
    expect(r.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(Object.keys(r.errors![0]!.extensions!.details!).sort()).toEqual(['idempotency_key', 'title', 'value']);
  });

  describe('the public form submit', () => {
    let formId: string;
    beforeAll(async () => {
      const fields = [
        { key: 'name', label: 'Name', type: 'text', required: true, mapsTo: 'first_name', position: 0 },
        { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 1 },
      ] as const;
      formId = (await t.db.leadForm.create({ data: { accountId: acc.id, name: 'Details', fields: { create: [...fields] } } })).id;
    });
    const BAD_VALUES = { name: ['Required'], email: ['Must be a valid e-mail address'] };

    it('an unknown top-level key is named with the values the form refuses', async () => {
      const r = await t.rest('POST', `/api/v1/forms/${formId}/submit`, { clientIp: nextIp(), body: { data: { name: '', email: 'bad' }, extra: 1 } });
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { extra: ['Unknown field'], ...BAD_VALUES } }]);
    });

    it('a malformed Idempotency-Key is named with the values the form refuses, on REST and on /graphql', async () => {
      const r = await t.rest('POST', `/api/v1/forms/${formId}/submit`, { clientIp: nextIp(), headers: MALFORMED_KEY, body: { data: { name: '', email: 'bad' } } });
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { ...BAD_VALUES, idempotency_key: KEY_MESSAGE } }]);
      const g = await t.gql(
        'mutation ($formId: ID!, $data: JSON!) { submitLeadForm(formId: $formId, data: $data) { success } }',
        { formId, data: { name: '', email: 'bad' } },
        { clientIp: nextIp(), headers: MALFORMED_KEY },
      );
      expect(g.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { ...BAD_VALUES, idempotency_key: KEY_MESSAGE } });
      expect(await t.db.formSubmission.count({ where: { formId } })).toBe(0);
    });
  });
});
