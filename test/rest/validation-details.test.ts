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
    expect(r.body).toEqual({ error: 'Invalid query', details: { match_on: ['Must be one of: email, external_id, none'] } });
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
