import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createApiKey, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// ContactFilter / DealFilter `ownerId` (a user's id, `me`, `none`) and `companyId`, on the connections
// and the pages (docs/decisions.md §26). REST's owner_id / company_id: test/rest/owner-company-filters.test.ts.

let t: TestApp;
let acc: TestAccount;
let company: { id: string };
const made = { owner: [] as string[], member: [] as string[], none: [] as string[], company: [] as string[] };
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  company = await t.db.company.create({ data: { accountId: acc.id, name: 'Acme' } });
  const base = Date.UTC(2025, 0, 1);
  const plan = [{ ownerId: acc.owner.id }, { ownerId: acc.member.id, companyId: company.id }, {}, { ownerId: acc.owner.id, companyId: company.id }] as { ownerId?: string; companyId?: string }[];
  for (const [i, data] of plan.entries()) {
    const createdAt = new Date(base + i * 1000);
    const contact = await t.db.contact.create({ data: { accountId: acc.id, firstName: `C${i}`, ...data, createdAt } });
    await t.db.deal.create({ data: { id: contact.id.replace(/^.{8}/, 'dea10000'), accountId: acc.id, title: `D${i}`, ...data, createdAt } });
    const who = data.ownerId === acc.owner.id ? 'owner' : data.ownerId ? 'member' : 'none';
    made[who].unshift(contact.id);
    if (data.companyId) made.company.unshift(contact.id);
  }
});
afterAll(() => t?.close());

const asDeal = (ids: string[]) => ids.map((id) => id.replace(/^.{8}/, 'dea10000'));

describe('ContactFilter and DealFilter: ownerId and companyId', () => {
  test("Account.contacts and Account.deals filter by ownerId (a user's id, me, none) and companyId, totalCount exact", async () => {
    const Q = `query ($a: ID!, $f: ContactFilter, $g: DealFilter) { account(id: $a) { contacts(filter: $f) { totalCount nodes { id } } deals(filter: $g) { totalCount nodes { id } } } }`;
    for (const [filter, expected] of [
      [{ ownerId: acc.owner.id }, made.owner],
      [{ ownerId: 'me' }, made.member],
      [{ ownerId: 'none' }, made.none],
      [{ companyId: company.id }, made.company],
      [{ companyId: company.id, ownerId: 'me' }, made.member],
    ] as const) {
      const r = await t.gql(Q, { a: acc.id, f: filter, g: filter }, { as: acc.member });
      expect(r.errors, JSON.stringify(filter)).toBeUndefined();
      expect(r.data.account.contacts).toEqual({ totalCount: expected.length, nodes: expected.map((id) => ({ id })) });
      expect(r.data.account.deals).toEqual({ totalCount: expected.length, nodes: asDeal(expected).map((id) => ({ id })) });
    }
  });

  test('Query.contacts and Query.deals take ownerId and companyId; a bad value is BAD_USER_INPUT naming each', async () => {
    const Q = `query ($a: ID!, $o: ID, $c: ID) { contacts(accountId: $a, ownerId: $o, companyId: $c) { total nodes { id } } deals(accountId: $a, ownerId: $o, companyId: $c) { total nodes { id } } }`;
    const r = await t.gql(Q, { a: acc.id, o: 'me', c: company.id }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    expect(r.data.contacts).toEqual({ total: 1, nodes: [{ id: made.owner[0] }] });
    expect(r.data.deals).toEqual({ total: 1, nodes: [{ id: asDeal(made.owner)[0] }] });
    const bad = await t.gql(`query ($a: ID!) { contacts(accountId: $a, ownerId: "nobody", companyId: "acme") { total } }`, { a: acc.id }, { as: acc.owner });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { ownerId: ['Must be a UUID, me or none'], companyId: ['Must be a UUID'] } });
  });

  test('an API key asking for ownerId me is BAD_USER_INPUT naming ownerId: a key is no person', async () => {
    const key = await createApiKey(t, acc, ['CONTACTS_READ', 'DEALS_READ']);
    const page = await t.gql(`query ($a: ID!) { deals(accountId: $a, ownerId: "me") { total } }`, { a: acc.id }, { as: key });
    expect(page.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { ownerId: [expect.any(String)] } });
  });
});
