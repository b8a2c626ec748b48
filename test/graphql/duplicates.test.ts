import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createApiKey, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';
import { groupsOf, oldestFirst } from '../../src/contacts/duplicates.js';

// docs/decisions.md §22 (duplicates): Account.duplicateContacts, Account.duplicateCompanies, their
// root fields by account id and REST's GET /api/v1/{contacts,companies}/duplicates.

const GROUPS = /* GraphQL */ `
  query ($id: ID!, $first: Int) {
    account(id: $id) { duplicateContacts(first: $first) { contacts { id } score reasons } }
  }
`;
const COMPANY_GROUPS = /* GraphQL */ `
  query ($id: ID!) { account(id: $id) { duplicateCompanies { companies { id } score reasons } } }
`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const groupsIn = async (acc: TestAccount, first?: number) => {
  const r = await t.gql(GROUPS, { id: acc.id, first }, { as: acc.member });
  expect(r.errors).toBeUndefined();
  return (r.data.account.duplicateContacts as { contacts: { id: string }[]; score: number; reasons: string[] }[]).map((g) => ({ ...g, ids: g.contacts.map((c) => c.id) }));
};
const person = (acc: TestAccount, data: Record<string, unknown>) => createContact(t, acc, { email: null, phone: null, company: null, ...data });

describe('Account.duplicateContacts', () => {
  test('e-mail: the same address whatever its case and +tag is one group (reason email); unrelated contacts are in none', async () => {
    const acc = await createAccount(t);
    const a = await person(acc, { firstName: 'Ann', lastName: 'One', email: 'Ann.Lee@Example.com' });
    const b = await person(acc, { firstName: 'Zed', lastName: 'Two', email: 'ann.lee+news@example.COM' });
    await person(acc, { firstName: 'Bob', lastName: 'Other', email: 'bob@example.com' });
    await person(acc, { firstName: 'Cy', lastName: 'Else', email: 'ann.leex@example.com' });
    const groups = await groupsIn(acc);
    expect(groups).toEqual([expect.objectContaining({ ids: [a.id, b.id], reasons: ['email'] })]);
  });

  test('phone: digits only, the last 9 equal (a country code aside) is one group (reason phone)', async () => {
    const acc = await createAccount(t);
    const a = await person(acc, { firstName: 'Pia', phone: '+49 (030) 1234-5678' });
    const b = await person(acc, { firstName: 'Quentin', phone: '030 12345678' });
    await person(acc, { firstName: 'Rae', phone: '030 12345679' });
    await person(acc, { firstName: 'Sol', phone: '12' });
    await person(acc, { firstName: 'Tim', phone: '1 2' });
    expect(await groupsIn(acc)).toEqual([expect.objectContaining({ ids: [a.id, b.id], reasons: ['phone'] })]);
  });

  test('name: trigram similarity ≥ 0.85 within the same company or e-mail domain; not across companies, nor by free mail', async () => {
    const acc = await createAccount(t);
    const company = await t.db.company.create({ data: { accountId: acc.id, name: unique('Co') } });
    const a = await person(acc, { firstName: 'Jonathan', lastName: 'Smithers', companyId: company.id });
    const b = await person(acc, { firstName: 'jonathan', lastName: 'Smithers ', companyId: company.id });
    // Same name, another company: not a candidate.
    await person(acc, { firstName: 'Jonathan', lastName: 'Smithers', company: 'Elsewhere Ltd' });
    // Same e-mail domain.
    const c = await person(acc, { firstName: 'Margaret', lastName: 'Hamilton', email: 'mh@nasa.test' });
    const d = await person(acc, { firstName: 'Margaret', lastName: 'Hamiltonn', email: 'margaret@nasa.test' });
    // Free mail says nothing: the same names at gmail.com are no group.
    await person(acc, { firstName: 'Alan', lastName: 'Turing', email: 'alan1@gmail.com' });
    await person(acc, { firstName: 'Alan', lastName: 'Turing', email: 'alan2@gmail.com' });
    // Dissimilar names in one company.
    await person(acc, { firstName: 'Grace', lastName: 'Hopper', companyId: company.id });
    const groups = await groupsIn(acc);
    expect(groups.map((g) => ({ ids: g.ids, reasons: g.reasons })).sort((x, y) => oldestFirst(x.ids[0]!, y.ids[0]!))).toEqual([
      { ids: [a.id, b.id], reasons: ['name'] },
      { ids: [c.id, d.id], reasons: ['name'] },
    ]);
  });

  test('best score first: more reasons score higher; first limits the groups; a group holds at most 10 contacts, oldest first', async () => {
    const acc = await createAccount(t);
    const both = [await person(acc, { firstName: 'X', email: 'x@both.test', phone: '555 111 222 333' }), await person(acc, { firstName: 'Y', email: 'X@both.test', phone: '111222333' })];
    const many = [];
    for (let i = 0; i < 12; i++) many.push(await person(acc, { firstName: `P${i}`, email: `many+${i}@crowd.test`, createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) }));
    const phoneOnly = [await person(acc, { firstName: 'Z1', phone: '0700 000 001' }), await person(acc, { firstName: 'Z2', phone: '700000001' })];
    const groups = await groupsIn(acc);
    expect(groups.map((g) => g.reasons)).toEqual([['email', 'phone'], ['email'], ['phone']]);
    expect(groups[0]!.ids).toEqual(both.map((c) => c.id));
    expect(groups[1]!.ids).toEqual(many.slice(0, 10).map((c) => c.id));
    expect(groups[2]!.ids).toEqual(phoneOnly.map((c) => c.id));
    expect(groups[0]!.score).toBeGreaterThan(groups[1]!.score);
    expect(groups[1]!.score).toBeGreaterThan(groups[2]!.score);
    expect(await groupsIn(acc, 1)).toHaveLength(1);
    const error = errorOf(await t.gql(GROUPS, { id: acc.id, first: 101 }, { as: acc.member }));
    expect(error.extensions?.code).toBe('BAD_USER_INPUT');
  });

  test('groups that share a contact are one group with both reasons', async () => {
    // The grouping itself, apart from the database: e-mail links a-b, phone b-c.
    const groups = groupsOf([{ reason: 'email', ids: ['b', 'a'] }, { reason: 'phone', ids: ['c', 'b'] }, { reason: 'name', ids: ['x', 'y'], similarity: 0.9 }], oldestFirst, 25);
    expect(groups.map((g) => [g.ids, g.reasons])).toEqual([[['a', 'b', 'c'], ['email', 'phone']], [['x', 'y'], ['name']]]);
  });

  test("another account's contacts are never in a group", async () => {
    const acc = await createAccount(t);
    const other = await createAccount(t);
    await person(acc, { firstName: 'Mine', email: 'same@shared.test' });
    await person(other, { firstName: 'Theirs', email: 'same@shared.test' });
    expect(await groupsIn(acc)).toEqual([]);
  });

  test('REST GET /api/v1/contacts/duplicates: {data: [groups]}; an API key needs contacts:read', async () => {
    const acc = await createAccount(t);
    const a = await person(acc, { firstName: 'R1', email: 'rest@dup.test' });
    const b = await person(acc, { firstName: 'R2', email: 'REST@dup.test' });
    const r = await t.rest('GET', `/api/v1/contacts/duplicates?account_id=${acc.id}`, { as: acc.member });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([{ contacts: [expect.objectContaining({ id: a.id, first_name: 'R1' }), expect.objectContaining({ id: b.id })], score: expect.any(Number), reasons: ['email'] }]);
    const reader = await createApiKey(t, acc, ['CONTACTS_READ']);
    const other = await createApiKey(t, acc, ['DEALS_READ']);
    expect((await t.rest('GET', `/api/v1/contacts/duplicates?account_id=${acc.id}`, { as: reader })).status).toBe(200);
    expect((await t.rest('GET', `/api/v1/contacts/duplicates?account_id=${acc.id}`, { as: other })).status).toBe(403);
    expect((await t.rest('GET', `/api/v1/contacts/duplicates?account_id=${acc.id}`, { as: acc.outsider })).status).toBe(403);
  });
});

describe('Account.duplicateCompanies', () => {
  test("domain: a company's domain and another's website host are one group; similar names (legal forms aside) are one group", async () => {
    const acc = await createAccount(t);
    const domain = `${unique('acme')}.test`;
    const a = await t.db.company.create({ data: { accountId: acc.id, name: 'Acme Tools', domain } });
    const b = await t.db.company.create({ data: { accountId: acc.id, name: 'Something Else', website: `https://www.${domain}/about` } });
    const c = await t.db.company.create({ data: { accountId: acc.id, name: 'Globex Corporation' } });
    const d = await t.db.company.create({ data: { accountId: acc.id, name: 'GLOBEX, Inc.' } });
    await t.db.company.create({ data: { accountId: acc.id, name: 'Initech' } });
    const r = await t.gql(COMPANY_GROUPS, { id: acc.id }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    const groups = r.data.account.duplicateCompanies.map((g: any) => ({ ids: g.companies.map((x: any) => x.id), reasons: g.reasons }));
    expect(groups).toEqual([{ ids: [a.id, b.id], reasons: ['domain'] }, { ids: [c.id, d.id], reasons: ['name'] }]);
  });

  test('REST GET /api/v1/companies/duplicates; an API key needs companies:read', async () => {
    const acc = await createAccount(t);
    await t.db.company.create({ data: { accountId: acc.id, name: 'Umbrella' } });
    await t.db.company.create({ data: { accountId: acc.id, name: 'Umbrella Ltd' } });
    const r = await t.rest('GET', `/api/v1/companies/duplicates?account_id=${acc.id}`, { as: acc.member });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0].companies).toHaveLength(2);
    const reader = await createApiKey(t, acc, ['COMPANIES_READ']);
    const other = await createApiKey(t, acc, ['CONTACTS_READ']);
    expect((await t.rest('GET', `/api/v1/companies/duplicates?account_id=${acc.id}`, { as: reader })).status).toBe(200);
    expect((await t.rest('GET', `/api/v1/companies/duplicates?account_id=${acc.id}`, { as: other })).status).toBe(403);
  });
});

describe('names compared only where their trigrams allow it (prisma/migrations/20261129180000_duplicate_keys_in_index)', () => {
  // similarNames skips a pair whose trigram counts and sketches (dedupe_trigrams, dedupe_sketch)
  // bound its similarity below the threshold: the bound must hold for every pair, or a group is lost.
  test('one name twice is a pair (similarity 1), unless it has no letter or digit: similarity() puts such names at 0', async () => {
    const acc = await createAccount(t);
    const company = await t.db.company.create({ data: { accountId: acc.id, name: unique('Same') } });
    const same = (firstName: string) => t.db.contact.create({ data: { accountId: acc.id, firstName, lastName: null, companyId: company.id } });
    const a = await same('Ida Twice');
    const b = await same('ida twice');
    await same('--');
    await same('--');
    expect(await groupsIn(acc)).toEqual([expect.objectContaining({ ids: [a.id, b.id], reasons: ['name'], score: 0.6 })]);
  });

  test('the bound is never below similarity(), so no pair at 0.85 or above is skipped (4,000 pairs: slips, swaps, case, accents, CJK)', async () => {
    let seed = 72;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const letters = [...'abcdefghijklmnopqrstuvwxyzéüßøå漢字 -\'.'];
    const word = () => Array.from({ length: 2 + Math.floor(random() * 9) }, () => pick(letters.slice(0, 26))).join('');
    const edit = (s: string) => {
      const at = Math.floor(random() * (s.length + 1));
      const kind = Math.floor(random() * 5);
      if (kind === 0) return s.slice(0, at) + pick(letters) + s.slice(at); // insert
      if (kind === 1) return s.slice(0, at) + s.slice(at + 1); // delete
      if (kind === 2) return s.slice(0, at) + pick(letters) + s.slice(at + 1); // replace
      if (kind === 3) return s.split(' ').reverse().join(' '); // words swapped
      return s.toUpperCase();
    };
    const a: string[] = [];
    const b: string[] = [];
    for (let i = 0; i < 4000; i++) {
      const name = random() < 0.1 ? word() : `${word()} ${word()}${random() < 0.2 ? ` ${word()}` : ''}`;
      let other = name;
      for (let e = Math.floor(random() * 4); e > 0; e--) other = edit(other);
      a.push(name.toLowerCase());
      b.push(random() < 0.1 ? word() : other.toLowerCase());
    }
    const [row] = await t.db.$queryRaw<{ pairs: number; close: number; missed: number; above: number }[]>`
      WITH p AS (
        SELECT x, y, similarity(x, y) AS sim,
               least(dedupe_trigrams(x) - bit_count((dedupe_sketch(x) & ~dedupe_sketch(y))::bit(64)),
                     dedupe_trigrams(y) - bit_count((dedupe_sketch(y) & ~dedupe_sketch(x))::bit(64))) AS common,
               dedupe_trigrams(x) + dedupe_trigrams(y) AS total
          FROM unnest(${a}::text[], ${b}::text[]) AS u(x, y))
      SELECT count(*)::int AS pairs, count(*) FILTER (WHERE sim >= 0.85)::int AS close,
             count(*) FILTER (WHERE sim >= 0.85 AND NOT 100 * common >= 85 * (total - common))::int AS missed,
             count(*) FILTER (WHERE total > common AND sim > common::float8 / (total - common) + 1e-6)::int AS above
        FROM p`;
    expect(row!.pairs).toBe(4000);
    expect(row!.close).toBeGreaterThan(500); // the check is not empty
    expect([row!.missed, row!.above]).toEqual([0, 0]);
  });

  test('a name is compared with the 4 names after it in its company (NEIGHBOURS), dissimilar ones between included, not with the 5th', async () => {
    // In name order: "ann lee", the fillers, then "ann leee" (similarity 8/9 with "ann lee"); the
    // fillers are like neither nor each other. Each neighbour's bound is its own column: the 4th
    // must pass while the 1st to 3rd fail it.
    const fillers = ['ann leea qwerty', 'ann leeb zxcvbn', 'ann leec poiuyt', 'ann leed mnbvcx'];
    const inCompany = async (between: number) => {
      const acc = await createAccount(t);
      const company = await t.db.company.create({ data: { accountId: acc.id, name: unique('Neighbours') } });
      const named = (firstName: string) => t.db.contact.create({ data: { accountId: acc.id, firstName, lastName: null, companyId: company.id } });
      const first = await named('Ann Lee');
      for (const filler of fillers.slice(0, between)) await named(filler);
      const last = await named('Ann Leee');
      return { groups: await groupsIn(acc), ids: [first.id, last.id] };
    };
    const fourth = await inCompany(3);
    expect(fourth.groups).toEqual([expect.objectContaining({ ids: fourth.ids, reasons: ['name'], score: 0.533 })]);
    expect((await inCompany(4)).groups).toEqual([]);
  });
});
