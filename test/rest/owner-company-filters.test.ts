import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { restResource } from '../helpers/rest.js';

// GET /api/v1/contacts and /api/v1/deals filter by owner (owner_id=<id>|me|none) and by company
// (company_id=<id>): docs/decisions.md §26, docs/rest.md. The GraphQL side: test/graphql/owner-company-filters.test.ts.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

type Made = { owner: string[]; member: string[]; none: string[]; company: string[] };

const RESOURCES = {
  contacts: { path: '/api/v1/contacts', make: (accountId: string, i: number, data: Record<string, unknown>) => t.db.contact.create({ data: { accountId, firstName: `C${i}`, ...data } }), scope: 'CONTACTS_READ' },
  deals: { path: '/api/v1/deals', make: (accountId: string, i: number, data: Record<string, unknown>) => t.db.deal.create({ data: { accountId, title: `D${i}`, ...data } }), scope: 'DEALS_READ' },
} as const;

describe.each(Object.entries(RESOURCES))('GET %s by owner and company', (_name, resource) => {
  const { list } = restResource(() => t, resource.path);
  let acc: TestAccount;
  let company: { id: string };
  const made: Made = { owner: [], member: [], none: [], company: [] };
  const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((row) => row.id);

  beforeAll(async () => {
    acc = await createAccount(t);
    company = await t.db.company.create({ data: { accountId: acc.id, name: 'Acme' } });
    // Newest first: created one per second, so the expected order is the reverse of this one.
    const base = Date.UTC(2025, 0, 1);
    const plan: [keyof Made, Record<string, unknown>][] = [
      ['owner', { ownerId: acc.owner.id }], ['member', { ownerId: acc.member.id, companyId: company.id }], ['none', {}],
      ['owner', { ownerId: acc.owner.id, companyId: company.id }], ['none', { companyId: company.id }], ['owner', { ownerId: acc.owner.id }], ['member', { ownerId: acc.member.id }],
    ];
    for (const [i, [who, data]] of plan.entries()) {
      const row = await resource.make(acc.id, i, { ...data, createdAt: new Date(base + i * 1000) });
      made[who].unshift(row.id);
      if (data.companyId) made.company.unshift(row.id);
    }
    // Another account's rows of the same owner and company id never show.
    const other = await createAccount(t);
    await resource.make(other.id, 99, { ownerId: acc.owner.id });
  });

  it("owner_id=<a user's id> lists that user's records only, newest first, with their exact total", async () => {
    const r = await list(acc.id, acc.member, { owner_id: acc.owner.id });
    expect(r.status, r.text).toBe(200);
    expect([ids(r), r.body.total, r.body.next_cursor]).toEqual([made.owner, 3, null]);
  });

  it("owner_id=me is the calling person's records; owner_id=none those with no owner", async () => {
    const mine = await list(acc.id, acc.member, { owner_id: 'me' });
    expect([mine.status, ids(mine), mine.body.total]).toEqual([200, made.member, 2]);
    const ownersOwn = await list(acc.id, acc.owner, { owner_id: 'me' });
    expect([ids(ownersOwn), ownersOwn.body.total]).toEqual([made.owner, 3]);
    const none = await list(acc.id, acc.owner, { owner_id: 'none' });
    expect([none.status, ids(none), none.body.total]).toEqual([200, made.none, 2]);
  });

  it("company_id=<id> lists the company's records, and combines with owner_id (AND)", async () => {
    const r = await list(acc.id, acc.owner, { company_id: company.id });
    expect([r.status, ids(r), r.body.total]).toEqual([200, made.company, 3]);
    const both = await list(acc.id, acc.owner, { company_id: company.id, owner_id: 'none' });
    expect([ids(both), both.body.total]).toEqual([made.company.filter((id) => made.none.includes(id)), 1]);
  });

  it('a filtered page hands a cursor on through the filtered rows only, the total staying exact; `me` and the id are one list', async () => {
    const first = await list(acc.id, acc.owner, { owner_id: 'me', page_size: 2 });
    expect([ids(first), first.body.total]).toEqual([made.owner.slice(0, 2), 3]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const next = await list(acc.id, acc.owner, { owner_id: acc.owner.id, page_size: 2, cursor: first.body.next_cursor });
    expect([next.status, ids(next), next.body.total, next.body.next_cursor]).toEqual([200, made.owner.slice(2), 3, null]);
    // A cursor belongs to its filter: another owner's list refuses it, naming `cursor`.
    const elsewhere = await list(acc.id, acc.owner, { owner_id: 'none', page_size: 2, cursor: first.body.next_cursor });
    expect([elsewhere.status, Object.keys(elsewhere.body.details ?? {})]).toEqual([400, ['cursor']]);
  });

  it('a bad owner_id or company_id is a 400 Invalid query naming the parameter', async () => {
    const r = await list(acc.id, acc.owner, { owner_id: 'someone', company_id: 'acme' });
    expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { owner_id: ['Must be a UUID, me or none'], company_id: ['Must be a UUID'] } }]);
  });

  it('an API key asking for owner_id=me is a 400 naming owner_id (a key is no person); a user id or none it may give', async () => {
    const key = await createApiKey(t, acc, [resource.scope]);
    const me = await list(acc.id, key, { owner_id: 'me' });
    expect([me.status, me.body.error, Object.keys(me.body.details ?? {})]).toEqual([400, 'Invalid query', ['owner_id']]);
    const byId = await list(acc.id, key, { owner_id: acc.member.id });
    expect([byId.status, ids(byId)]).toEqual([200, made.member]);
    expect(ids(await list(acc.id, key, { owner_id: 'none' }))).toEqual(made.none);
  });
});
