import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §21 on REST: /api/v1/companies, and company_id / owner_id on contacts and deals.
// Who may call each route: test/security/access-matrix.test.ts.

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const post = (body: Record<string, unknown>) => t.rest('POST', '/api/v1/companies', { as: acc.member, body: { account_id: acc.id, ...body } });

describe('/api/v1/companies', () => {
  it('POST answers 201 with the company, its domain normalised; GET by id answers it with an ETag; PATCH and DELETE change it', async () => {
    const r = await post({ name: 'Acme', domain: 'https://www.ACME-rest.com/', industry: 'Tools', owner_id: acc.owner.id });
    expect(r.status, r.text).toBe(201);
    expect(r.body.data).toMatchObject({ name: 'Acme', domain: 'acme-rest.com', industry: 'Tools', owner_id: acc.owner.id, external_id: null });
    const id = r.body.data.id as string;
    const one = await t.rest('GET', `/api/v1/companies/${id}`, { as: acc.member });
    expect([one.status, one.body.data]).toEqual([200, r.body.data]);
    const patched = await t.rest('PATCH', `/api/v1/companies/${id}`, { as: acc.member, body: { owner_id: null }, headers: { 'if-match': one.headers.get('etag')! } });
    expect([patched.status, patched.body.data.owner_id]).toEqual([200, null]);
    expect((await t.rest('DELETE', `/api/v1/companies/${id}`, { as: acc.member })).status).toBe(204);
    expect((await t.rest('GET', `/api/v1/companies/${id}`, { as: acc.member })).status).toBe(404);
  });

  it('a duplicate domain is a 400 on domain', async () => {
    await post({ name: 'One', domain: 'dup-rest.com' });
    const r = await post({ name: 'Two', domain: 'DUP-REST.com/' });
    expect([r.status, r.body.details]).toEqual([400, { domain: ['Already used by another company'] }]);
  });

  it('GET pages newest first with the true total; a page past the end is empty; cursors walk every company once', async () => {
    const own = await createAccount(t);
    for (let i = 0; i < 5; i++) {
      expect((await t.rest('POST', '/api/v1/companies', { as: own.owner, body: { account_id: own.id, name: `Co ${i}` } })).status).toBe(201);
    }
    const page = (q: string) => t.rest('GET', `/api/v1/companies?account_id=${own.id}&${q}`, { as: own.member });
    const first = await page('page_size=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 5, page: 1, page_size: 2 });
    expect(first.body.data.map((c: { name: string }) => c.name)).toEqual(['Co 4', 'Co 3']);
    expect((await page('page=4&page_size=2')).body).toMatchObject({ data: [], total: 5 });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await page(`page_size=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...r.body.data.map((c: { name: string }) => c.name));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(['Co 4', 'Co 3', 'Co 2', 'Co 1', 'Co 0']);
    const byName = await page('order=asc&search=co%201');
    expect(byName.body.data.map((c: { name: string }) => c.name)).toEqual(['Co 1']);
  });
});

describe('contacts and deals on REST carry company_id and owner_id', () => {
  it('POST /contacts links by e-mail domain; a company of another account is a 400 on company_id; an outsider owner a 400 on owner_id', async () => {
    const host = `${randomUUID().slice(0, 8)}.example.net`;
    const company = (await post({ name: 'Linked', domain: host })).body.data.id as string;
    const created = await t.rest('POST', '/api/v1/contacts', { as: acc.member, body: { account_id: acc.id, first_name: 'Ada', email: `ada@${host}` } });
    expect(created.status, created.text).toBe(201);
    const read = await t.rest('GET', `/api/v1/contacts/${created.body.data.id}`, { as: acc.member });
    expect(read.body.data).toMatchObject({ company_id: company, owner_id: null });

    const elsewhere = await createAccount(t);
    const theirs = await t.rest('POST', '/api/v1/companies', { as: elsewhere.owner, body: { account_id: elsewhere.id, name: 'Theirs' } });
    const refused = await t.rest('POST', '/api/v1/deals', {
      as: acc.member,
      body: { account_id: acc.id, title: 'X', company_id: theirs.body.data.id, owner_id: acc.outsider.id },
    });
    expect([refused.status, refused.body.details]).toEqual([400, { company_id: ['Not found in this account'], owner_id: ['Not a member of this account'] }]);
  });
});
