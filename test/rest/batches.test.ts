// docs/decisions.md §16: POST /api/v1/contacts/batch and POST /api/v1/deals/batch (beyond the contract).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, createMember, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const post = (path: string, body: unknown, as: TestUser = acc.member, headers: Record<string, string> = {}) => t.rest('POST', path, { as, body, headers });
const contacts = (body: Record<string, unknown>, as?: TestUser, headers?: Record<string, string>) =>
  post('/api/v1/contacts/batch', { account_id: acc.id, ...body }, as, headers);

describe('POST /api/v1/contacts/batch', () => {
  it('answers 200 {data: [{index, status, id, data | details}], created, updated, unchanged, failed}; data is the list item', async () => {
    const ext = unique('rest');
    const r = await contacts({ mode: 'create', records: [{ first_name: 'Ada', external_id: ext }, { first_name: '' }] });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['created', 'data', 'failed', 'unchanged', 'updated']);
    expect(r.body).toMatchObject({ created: 1, updated: 0, unchanged: 0, failed: 1 });
    expect(r.body.data[0]).toMatchObject({ index: 0, status: 'created', data: { first_name: 'Ada', external_id: ext, contact_type: 'lead', source: 'other' } });
    expect(Object.keys(r.body.data[0]).sort()).toEqual(['data', 'id', 'index', 'status']);
    expect(r.body.data[0].id).toBe(r.body.data[0].data.id);
    expect(r.body.data[1]).toEqual({ index: 1, status: 'failed', details: { first_name: ['Required'] } });
  });

  it('an unknown field, a wrong JSON type, an external_id over 255 and a duplicate key fail their own item by REST name; the valid ones are written', async () => {
    const name = unique('Valid');
    const ext = unique('dup');
    const r = await contacts({
      mode: 'upsert',
      match_on: 'external_id',
      records: [
        { first_name: name, external_id: ext },
        { first_name: 'X', external_id: unique('x'), account_id: randomUUID(), favourite: 'blue' },
        { first_name: 42, external_id: unique('y') },
        { first_name: 'Long', external_id: 'e'.repeat(256) },
        { first_name: 'Again', external_id: ext },
      ],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.map((i: { status: string }) => i.status)).toEqual(['created', 'failed', 'failed', 'failed', 'failed']);
    expect(r.body.data[1].details).toEqual({ account_id: ['Unknown field'], favourite: ['Unknown field'] });
    expect(r.body.data[2].details).toEqual({ first_name: ['Expected a string'] });
    expect(r.body.data[3].details).toEqual({ external_id: ['Must be at most 255 characters'] });
    expect(r.body.data[4].details).toEqual({ external_id: ['Duplicate in this batch'] });
    expect(await t.db.contact.count({ where: { accountId: acc.id, firstName: name } })).toBe(1);
    expect(await t.db.contact.count({ where: { accountId: acc.id, firstName: { in: ['X', 'Long', 'Again'] } } })).toBe(0);
  });

  it('all_or_nothing: a record the reader refuses writes nothing, and every record reports failed', async () => {
    const name = unique('Nothing');
    const r = await contacts({ all_or_nothing: true, records: [{ first_name: name }, { first_name: name, nickname: 'n' }] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ created: 0, failed: 2 });
    expect(r.body.data[0].details).toEqual({ all_or_nothing: ['Not written: another record of the batch failed'] });
    expect(r.body.data[1].details).toEqual({ nickname: ['Unknown field'] });
    expect(await t.db.contact.count({ where: { firstName: name } })).toBe(0);
  });

  it('upsert by e-mail updates the oldest match case-insensitively, only the given fields', async () => {
    const email = `${unique('rest')}@example.com`;
    const c = await createContact(t, acc, { email, firstName: 'Kept', company: 'Before' });
    const r = await contacts({ mode: 'upsert', match_on: 'email', records: [{ email: email.toUpperCase(), company: 'After' }] });
    expect(r.body.data[0]).toMatchObject({ status: 'updated', data: { id: c.id, first_name: 'Kept', company: 'After' } });
  });

  it('an invalid envelope is a 400 naming it: no records, 101 records, a record that is not an object, an unknown mode or match_on', async () => {
    const refused = async (body: Record<string, unknown>) => {
      const r = await contacts(body, await createMember(t, acc.id));
      expect(r.status, r.text).toBe(400);
      expect(r.body.error).toBe('Invalid payload');
      return r.body.details;
    };
    expect(await refused({ records: [] })).toEqual({ records: ['Must have 1 to 100 records'] });
    expect(await refused({ records: Array.from({ length: 101 }, () => ({ first_name: 'M' })) })).toEqual({ records: ['Must have 1 to 100 records'] });
    expect(await refused({})).toEqual({ records: ['Required'] });
    expect(await refused({ records: [{ first_name: 'A' }, 'B'] })).toEqual({ 'records.1': ['Expected an object'] });
    expect(await refused({ mode: 'merge', records: [{ first_name: 'A' }] })).toEqual({ mode: ['Must be one of: create, upsert'] });
    expect(await refused({ mode: 'upsert', match_on: 'phone', records: [{ first_name: 'A' }] })).toEqual({ match_on: ['Must be one of: email, external_id'] });
  });

  it('an outsider is a 403 and writes nothing; no token is a 401', async () => {
    const name = unique('Outsider');
    const r = await contacts({ records: [{ first_name: name }] }, acc.outsider);
    expect(r.status).toBe(403);
    expect(await t.db.contact.count({ where: { firstName: name } })).toBe(0);
    expect((await t.rest('POST', '/api/v1/contacts/batch', { body: { account_id: acc.id, records: [{ first_name: 'A' }] } })).status).toBe(401);
  });

  it('Idempotency-Key: a retry gets the first answer and writes nothing again', async () => {
    const name = unique('Once');
    const headers = { 'idempotency-key': unique('key') };
    const first = await contacts({ records: [{ first_name: name }] }, acc.member, headers);
    const second = await contacts({ records: [{ first_name: name }] }, acc.member, headers);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await t.db.contact.count({ where: { firstName: name } })).toBe(1);
  });

  it('30 batches a minute per user, contacts and deals alike: the 31st is a 429 and writes nothing', async () => {
    const user = await createMember(t, acc.id);
    for (let i = 0; i < 15; i++) expect((await contacts({ records: [{ first_name: 'Limit' }] }, user)).status).toBe(200);
    for (let i = 0; i < 15; i++) expect((await post('/api/v1/deals/batch', { account_id: acc.id, records: [{ title: 'Limit' }] }, user)).status).toBe(200);
    const name = unique('Over');
    expect((await contacts({ records: [{ first_name: name }] }, user)).status).toBe(429);
    expect(await t.db.contact.count({ where: { firstName: name } })).toBe(0);
  });
});

describe('POST /api/v1/deals/batch', () => {
  it('another account\'s contact_id fails that item on contact_id; upsert matches on external_id', async () => {
    const theirs = await createContact(t, await createAccount(t));
    const ext = unique('deal');
    const r = await post('/api/v1/deals/batch', { account_id: acc.id, records: [{ title: 'Ok', value: 12.5, external_id: ext }, { title: 'Smuggled', contact_id: theirs.id }] });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data[0]).toMatchObject({ status: 'created', data: { title: 'Ok', value: 12.5, status: 'open', external_id: ext } });
    expect(r.body.data[1]).toEqual({ index: 1, status: 'failed', details: { contact_id: ['Not found in this account'] } });
    const up = await post('/api/v1/deals/batch', { account_id: acc.id, mode: 'upsert', records: [{ external_id: ext, probability: 90 }] });
    expect(up.body).toMatchObject({ updated: 1, data: [{ status: 'updated', data: { title: 'Ok', probability: 90 } }] });
  });

  it('accepts "match_on": "external_id", as the contacts\' envelope does, and refuses "email" naming match_on', async () => {
    const ext = unique('deal');
    const body = (match_on: string) => ({ account_id: acc.id, mode: 'upsert', match_on, records: [{ title: 'Synced', external_id: ext }] });
    const r = await post('/api/v1/deals/batch', body('external_id'));
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ created: 1, data: [{ status: 'created', data: { title: 'Synced', external_id: ext } }] });
    const refused = await post('/api/v1/deals/batch', body('email'));
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body.details)).toEqual(['match_on']);
    expect(await t.db.deal.count({ where: { accountId: acc.id, externalId: ext } })).toBe(1);
  });
});
