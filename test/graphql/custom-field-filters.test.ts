import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, createMember, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp, type TestUser } from '../helpers/app.js';

// docs/custom-fields.md#filters (docs/decisions.md §23): lists of contacts, deals, companies and
// invoices filtered and ordered by the account's own fields, through the page (Query.contacts, REST's
// GET list) and the connections (Account.contacts), with exact totals and stable cursors.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const DEFINE = /* GraphQL */ `
  mutation ($accountId: ID!, $input: CreateCustomFieldInput!) { createCustomField(accountId: $accountId, input: $input) { id } }
`;
async function define(acc: TestAccount, input: Record<string, unknown>): Promise<string> {
  const r = await t.gql(DEFINE, { accountId: acc.id, input: { object: 'CONTACT', label: String(input.key), type: 'TEXT', ...input } }, { as: acc.owner });
  expect(r.errors).toBeUndefined();
  return r.data.createCustomField.id;
}

const PAGE = /* GraphQL */ `
  query ($accountId: ID!, $customFields: [CustomFieldCondition!], $sortCustomField: String, $sort: ListSort, $order: OrderDirection, $pageSize: Int, $cursor: String) {
    contacts(accountId: $accountId, customFields: $customFields, sortCustomField: $sortCustomField, sort: $sort, order: $order, pageSize: $pageSize, cursor: $cursor) {
      nodes { firstName } total nextCursor
    }
  }
`;
const CONNECTION = /* GraphQL */ `
  query ($id: ID!, $filter: ContactFilter, $orderBy: ContactOrder, $first: Int, $after: String, $last: Int, $before: String) {
    account(id: $id) {
      contacts(filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {
        totalCount nodes { firstName } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      }
    }
  }
`;

type Seeded = { acc: TestAccount; ids: Record<string, string> };

/**
 * An account with one field of each kind a filter treats apart, and contacts named after what
 * they hold (c5 holds nothing); another account defines `tier` too and has a gold contact.
 */
async function seeded(): Promise<Seeded> {
  const acc = await createAccount(t);
  await define(acc, { key: 'score', type: 'NUMBER' });
  await define(acc, { key: 'renewal', type: 'DATE' });
  await define(acc, { key: 'tier', type: 'SELECT', options: ['gold', 'silver', 'bronze'] });
  await define(acc, { key: 'tags', type: 'MULTI_SELECT', options: ['a', 'b', 'c'] });
  await define(acc, { key: 'note', type: 'TEXT' });
  await define(acc, { key: 'vip', type: 'BOOLEAN' });
  const rows: Record<string, Record<string, unknown>> = {
    c1: { score: 10, renewal: '2027-01-01', tier: 'gold', tags: ['a', 'b'], note: 'Hello World', vip: true },
    c2: { score: 20, renewal: '2027-06-15', tier: 'silver', tags: ['b'], note: 'hello there', vip: false },
    c3: { score: 20, renewal: '2026-12-31', tier: 'gold', tags: ['c'], note: '100%_done' },
    c4: { score: -5.5, tier: 'bronze', note: '100 percent done' },
    c5: {},
    c6: { score: 30, renewal: '2028-02-29', tags: ['a'] },
    c7: { note: 'WORLD peace' },
  };
  const ids: Record<string, string> = {};
  for (const [name, customFields] of Object.entries(rows)) ids[name] = (await createContact(t, acc, { firstName: name, email: `${name}@filters.test`, customFields: customFields as never })).id; // no random e-mail a name search could match
  const other = await createAccount(t);
  await define(other, { key: 'tier', type: 'SELECT', options: ['gold'] });
  await define(other, { key: 'score', type: 'NUMBER' });
  await createContact(t, other, { firstName: 'elsewhere', customFields: { tier: 'gold', score: 15 } });
  return { acc, ids };
}

let s: Seeded;
beforeAll(async () => {
  s = await seeded();
});

/** The page's first names (in order) and total, as a fresh member of the account reads them (its own rate-limit budget). */
async function page(variables: Record<string, unknown>, as?: TestUser) {
  const r = await t.gql(PAGE, { accountId: s.acc.id, pageSize: 100, ...variables }, { as: as ?? (await createMember(t, s.acc.id)) });
  expect(r.errors).toBeUndefined();
  return { names: r.data.contacts.nodes.map((n: { firstName: string }) => n.firstName), total: r.data.contacts.total, next: r.data.contacts.nextCursor };
}
async function connection(variables: Record<string, unknown>) {
  const r = await t.gql(CONNECTION, { id: s.acc.id, ...variables }, { as: s.acc.member });
  expect(r.errors).toBeUndefined();
  const c = r.data.account.contacts;
  return { names: c.nodes.map((n: { firstName: string }) => n.firstName), total: c.totalCount, pageInfo: c.pageInfo };
}
async function rest(query: string) {
  const r = await t.rest('GET', `/api/v1/contacts?account_id=${s.acc.id}&page_size=100&${query}`, { as: await createMember(t, s.acc.id) });
  return { status: r.status, body: r.body, names: r.status === 200 ? r.body.data.map((c: { first_name: string }) => c.first_name) : [], total: r.body.total };
}

/** The same conditions through the page, the connection and REST answer these rows (any order: newest first) and this total. */
async function expectEverywhere(conditions: Record<string, unknown>[], query: string, expected: string[]) {
  const sorted = [...expected].sort();
  const viaPage = await page({ customFields: conditions });
  expect([viaPage.names.sort(), viaPage.total]).toEqual([sorted, expected.length]);
  const viaConnection = await connection({ filter: { customFields: conditions }, first: 100 });
  expect([viaConnection.names.sort(), viaConnection.total]).toEqual([sorted, expected.length]);
  const viaRest = await rest(query);
  expect(viaRest.status, JSON.stringify(viaRest.body)).toBe(200);
  expect([viaRest.names.sort(), viaRest.total]).toEqual([sorted, expected.length]);
}

describe('conditions: exact rows and totals, GraphQL and REST', () => {
  test('eq and in match a value, or any of several (REST: cf.<key>=a,b)', async () => {
    await expectEverywhere([{ key: 'tier', eq: 'gold' }], 'cf.tier=gold', ['c1', 'c3']);
    await expectEverywhere([{ key: 'tier', in: ['gold', 'bronze'] }], 'cf.tier=gold,bronze', ['c1', 'c3', 'c4']);
    await expectEverywhere([{ key: 'score', eq: 20 }], 'cf.score=20', ['c2', 'c3']);
    await expectEverywhere([{ key: 'vip', eq: true }], 'cf.vip=true', ['c1']);
  });

  test('MULTI_SELECT eq means "holds this option"; in holds any of them', async () => {
    await expectEverywhere([{ key: 'tags', eq: 'a' }], 'cf.tags=a', ['c1', 'c6']);
    await expectEverywhere([{ key: 'tags', in: ['b', 'c'] }], 'cf.tags=b,c', ['c1', 'c2', 'c3']);
  });

  test('gt, gte, lt and lte compare a NUMBER as a number (REST text read as one)', async () => {
    await expectEverywhere([{ key: 'score', gt: 10 }], 'cf.score.gt=10', ['c2', 'c3', 'c6']);
    await expectEverywhere([{ key: 'score', gte: 20, lt: 30 }], 'cf.score.gte=20&cf.score.lt=30', ['c2', 'c3']);
    await expectEverywhere([{ key: 'score', lte: 9.5 }], 'cf.score.lte=9.5', ['c4']);
  });

  test('gt, gte, lt and lte compare a DATE as a day', async () => {
    await expectEverywhere([{ key: 'renewal', gte: '2027-01-01', lt: '2028-01-01' }], 'cf.renewal.gte=2027-01-01&cf.renewal.lt=2028-01-01', ['c1', 'c2']);
    await expectEverywhere([{ key: 'renewal', gt: '2027-06-15' }], 'cf.renewal.gt=2027-06-15', ['c6']);
    await expectEverywhere([{ key: 'renewal', lte: '2026-12-31' }], 'cf.renewal.lte=2026-12-31', ['c3']);
  });

  test('contains is a case-insensitive substring in which % and _ match themselves', async () => {
    await expectEverywhere([{ key: 'note', contains: 'WORLD' }], 'cf.note.contains=world', ['c1', 'c7']);
    await expectEverywhere([{ key: 'note', contains: '%_' }], 'cf.note.contains=%25_', ['c3']);
  });

  test('isSet true and false split the records by whether they hold a value', async () => {
    await expectEverywhere([{ key: 'score', isSet: true }], 'cf.score.is_set=true', ['c1', 'c2', 'c3', 'c4', 'c6']);
    await expectEverywhere([{ key: 'score', isSet: false }], 'cf.score.is_set=false', ['c5', 'c7']);
  });

  test('conditions on several keys all hold, beside the list’s other filters', async () => {
    await expectEverywhere([{ key: 'tier', eq: 'gold' }, { key: 'score', gt: 15 }], 'cf.tier=gold&cf.score.gt=15', ['c3']);
    const r = await rest(`cf.tier=gold&search=c1`);
    expect([r.names, r.total]).toEqual([['c1'], 1]);
  });

  test("another account's field of the same key never leaks into the list", async () => {
    const viaRest = await rest('cf.tier=gold&cf.score.is_set=true');
    expect(viaRest.names.sort()).toEqual(['c1', 'c3']);
    const viaPage = await page({ customFields: [{ key: 'score', gt: 14, lt: 16 }] });
    expect([viaPage.names, viaPage.total]).toEqual([[], 0]);
  });
});

describe('refusals', () => {
  const problem = (r: Parameters<typeof errorOf>[0]) => errorOf(r).extensions!;

  test('an unknown or archived key is BAD_USER_INPUT naming it (REST: 400 Invalid query on cf.<key>)', async () => {
    const acc = await createAccount(t);
    const legacy = await define(acc, { key: 'legacy' });
    await t.gql('mutation ($id: ID!) { updateCustomField(id: $id, input: { archived: true }) { id } }', { id: legacy }, { as: acc.owner });
    for (const key of ['nope', 'legacy']) {
      const r = await t.gql(PAGE, { accountId: acc.id, customFields: [{ key, eq: 'x' }] }, { as: acc.member });
      expect(problem(r)).toMatchObject({ code: 'BAD_USER_INPUT', details: { [`customFields.${key}`]: ['Unknown field'] } });
      const c = await t.gql(CONNECTION, { id: acc.id, filter: { customFields: [{ key, isSet: true }] } }, { as: acc.member });
      expect(problem(c)).toMatchObject({ code: 'BAD_USER_INPUT', details: { [`customFields.${key}`]: ['Unknown field'] } });
      const viaRest = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&cf.${key}=x`, { as: acc.member });
      expect([viaRest.status, viaRest.body]).toEqual([400, { error: 'Invalid query', details: { [`cf.${key}`]: ['Unknown field'] } }]);
      const sorted = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&sort=cf.${key}`, { as: acc.member });
      expect([sorted.status, sorted.body]).toEqual([400, { error: 'Invalid query', details: { sort: ['Unknown field'] } }]);
      const ordered = await t.gql(CONNECTION, { id: acc.id, orderBy: { customField: key, direction: 'ASC' } }, { as: acc.member });
      expect(problem(ordered).details).toEqual({ 'orderBy.customField': ['Unknown field'] });
    }
  });

  test("a list's in conditions take at most 100 values together (each is a clause of its statement); the one past them is named, REST alike", async () => {
    const values = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i);
    const within = await t.gql(PAGE, { accountId: s.acc.id, customFields: [{ key: 'score', in: values(60) }, { key: 'score', in: values(40, 60) }] }, { as: s.acc.member });
    expect(within.errors).toBeUndefined();
    const past = await t.gql(PAGE, { accountId: s.acc.id, customFields: [{ key: 'score', in: values(60) }, { key: 'note', in: values(41).map(String) }] }, { as: s.acc.member });
    expect(problem(past)).toMatchObject({ code: 'BAD_USER_INPUT', details: { 'customFields.note.in': ["At most 100 values in all of a list's in conditions"] } });
    const viaRest = await rest(`cf.score=${values(101).join(',')}`);
    expect([viaRest.status, viaRest.body]).toEqual([400, { error: 'Invalid query', details: { 'cf.score': ["At most 100 values in all of a list's in conditions"] } }]);
  });

  test('an operator the field’s type does not take, or a value not of its type, is refused on that key and operator', async () => {
    const customFields = [{ key: 'note', gt: 'a' }, { key: 'score', contains: '1' }, { key: 'tier', eq: 'platinum' }, { key: 'renewal', lt: '2027-02-30' }, { key: 'vip' }];
    const r = await t.gql(PAGE, { accountId: s.acc.id, customFields }, { as: s.acc.member });
    expect(problem(r)).toMatchObject({
      code: 'BAD_USER_INPUT',
      details: {
        'customFields.note.gt': ['gt, gte, lt and lte compare NUMBER and DATE fields; note is TEXT'],
        'customFields.score.contains': ['contains reads TEXT, EMAIL, URL and PHONE fields; score is NUMBER'],
        'customFields.tier.eq': ['Must be one of: bronze, gold, silver'],
        'customFields.renewal.lt': ['Must be a real date in the form YYYY-MM-DD'],
        'customFields.vip': ['Give at least one of eq, in, gt, gte, lt, lte, contains, isSet'],
      },
    });
    const viaRest = await rest('cf.score.gt=many&cf.vip.is_set=maybe&cf.tier.between=a&cf.tags=z');
    expect([viaRest.status, viaRest.body]).toEqual([400, {
      error: 'Invalid query',
      details: {
        'cf.vip.is_set': ['Expected true or false'],
        'cf.tier.between': ['Unknown filter: give cf.<key>, or cf.<key>.gt, .gte, .lt, .lte, .contains, .is_set'],
      },
    }]);
    const typed = await rest('cf.score.gt=many&cf.tags=z');
    expect([typed.status, typed.body]).toEqual([400, { error: 'Invalid query', details: { 'cf.score.gt': ['Expected a number'], 'cf.tags': ['Must be one of: a, b, c'] } }]);
  });

  test('an order takes a field or a custom field, exactly one; a MULTI_SELECT orders nothing', async () => {
    const both = await t.gql(CONNECTION, { id: s.acc.id, orderBy: { field: 'CREATED_AT', customField: 'score', direction: 'ASC' } }, { as: s.acc.member });
    expect(problem(both).details).toEqual({ orderBy: ['Give field or customField, exactly one'] });
    const neither = await t.gql(CONNECTION, { id: s.acc.id, orderBy: { direction: 'ASC' } }, { as: s.acc.member });
    expect(problem(neither).details).toEqual({ orderBy: ['Give field or customField, exactly one'] });
    const twice = await t.gql(PAGE, { accountId: s.acc.id, sort: 'UPDATED_AT', sortCustomField: 'score' }, { as: s.acc.member });
    expect(problem(twice).details).toEqual({ sortCustomField: ['Give sort or sortCustomField, not both'] });
    const multi = await rest('sort=cf.tags');
    expect([multi.status, multi.body.details]).toEqual([400, { sort: ['A MULTI_SELECT field does not order a list'] }]);
  });
});

describe('ordering by a custom field', () => {
  /** The seeded contacts holding a value, by value then id, in `direction`; then those holding none, by id in `direction`. */
  function expectedOrder(direction: 'ASC' | 'DESC', values: Record<string, unknown>) {
    const sign = direction === 'ASC' ? 1 : -1;
    const cmp = (a: unknown, b: unknown) => (a === b ? 0 : (a as number) < (b as number) ? -1 : 1);
    const byId = (a: string, b: string) => sign * cmp(s.ids[a], s.ids[b]);
    const names = Object.keys(s.ids);
    const held = names.filter((n) => values[n] !== undefined).sort((a, b) => sign * cmp(values[a], values[b]) || byId(a, b));
    return [...held, ...names.filter((n) => values[n] === undefined).sort(byId)];
  }
  const SCORES = { c1: 10, c2: 20, c3: 20, c4: -5.5, c6: 30 };
  const RENEWALS = { c1: '2027-01-01', c2: '2027-06-15', c3: '2026-12-31', c6: '2028-02-29' };

  test.each(['ASC', 'DESC'] as const)('%s: records without a value come last, ties by id (page, connection, REST)', async (direction) => {
    const expected = expectedOrder(direction, SCORES);
    expect((await page({ sortCustomField: 'score', order: direction })).names).toEqual(expected);
    expect((await connection({ orderBy: { customField: 'score', direction }, first: 100 })).names).toEqual(expected);
    const viaRest = await rest(`sort=cf.score&order=${direction.toLowerCase()}`);
    expect([viaRest.names, viaRest.total]).toEqual([expected, 7]);
    expect((await page({ sortCustomField: 'renewal', order: direction })).names).toEqual(expectedOrder(direction, RENEWALS));
  });

  test.each(['ASC', 'DESC'] as const)('%s: walking every page by cursor returns each record exactly once, in order', async (direction) => {
    const expected = expectedOrder(direction, SCORES);
    const member = await createMember(t, s.acc.id);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const p = await page({ sortCustomField: 'score', order: direction, pageSize: 2, ...(cursor ? { cursor } : {}) }, member);
      walked.push(...p.names);
      cursor = p.next;
    } while (cursor);
    expect(walked).toEqual(expected);
    // The connection forward, then backward from the end.
    const forward: string[] = [];
    let after: string | null = null;
    for (;;) {
      const c = await connection({ orderBy: { customField: 'score', direction }, first: 2, ...(after ? { after } : {}) });
      forward.push(...c.names);
      if (!c.pageInfo.hasNextPage) break;
      after = c.pageInfo.endCursor;
    }
    expect(forward).toEqual(expected);
    const backward: string[] = [];
    let before: string | null = null;
    for (;;) {
      const c = await connection({ orderBy: { customField: 'score', direction }, last: 2, ...(before ? { before } : {}) });
      backward.unshift(...c.names);
      if (!c.pageInfo.hasPreviousPage) break;
      before = c.pageInfo.startCursor;
    }
    expect(backward).toEqual(expected);
  });

  test('a filtered and ordered page walks by cursor with the total of the filter', async () => {
    const member = await createMember(t, s.acc.id);
    const first = await page({ sortCustomField: 'score', order: 'DESC', pageSize: 1, customFields: [{ key: 'score', isSet: true }] }, member);
    expect([first.names, first.total]).toEqual([['c6'], 5]);
    const second = await page({ sortCustomField: 'score', order: 'DESC', pageSize: 1, cursor: first.next, customFields: [{ key: 'score', isSet: true }] }, member);
    expect(second.total).toBe(5);
    // A cursor of another filter or order is refused, not followed.
    const elsewhere = await t.gql(PAGE, { accountId: s.acc.id, sortCustomField: 'renewal', order: 'DESC', pageSize: 1, cursor: first.next }, { as: member });
    expect(errorOf(elsewhere).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { cursor: ['The cursor belongs to another ordering, filter or account'] } });
  });
});

describe('a NUMBER range and order follow every write (custom_field_numbers, docs/custom-fields.md#which-index-serves-what)', () => {
  test('after updates, a cleared value, a batch and a delete, the range total and the order are the rows as they stand', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'score', type: 'NUMBER' });
    await define(acc, { key: 'other', type: 'NUMBER' });
    const ids: Record<string, string> = {};
    for (const [name, customFields] of Object.entries({ n1: { score: 1, other: 100 }, n2: { score: 2 }, n3: {}, n4: { score: 3, other: 1 } })) {
      ids[name] = (await createContact(t, acc, { firstName: name, email: `${name}@numbers.test`, customFields: customFields as never })).id;
    }
    const as = { as: acc.owner };
    expect((await t.rest('PATCH', `/api/v1/contacts/${ids.n1}`, { body: { custom_fields: { score: 50 } }, ...as })).status).toBe(200);
    expect((await t.rest('PATCH', `/api/v1/contacts/${ids.n4}`, { body: { custom_fields: { score: null } }, ...as })).status).toBe(200);
    expect((await t.rest('PATCH', `/api/v1/contacts/${ids.n3}`, { body: { first_name: 'n3' }, ...as })).status).toBe(200);
    const batch = await t.rest('POST', '/api/v1/contacts/batch', { body: { account_id: acc.id, mode: 'create', records: [{ first_name: 'n5', custom_fields: { score: 2 } }] }, ...as });
    expect(batch.status).toBe(200);
    expect((await t.rest('DELETE', `/api/v1/contacts/${ids.n2}`, as)).status).toBe(204);
    const list = async (query: string) => {
      const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&page_size=100&${query}`, as);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return { names: r.body.data.map((c: { first_name: string }) => c.first_name), total: r.body.total };
    };
    const range = await list('cf.score.gte=2&cf.score.lt=100');
    expect([range.names.sort(), range.total]).toEqual([['n1', 'n5'], 2]);
    expect((await list('cf.score.gt=0')).total).toBe(2);
    expect((await list('cf.other.gte=1')).total).toBe(2); // n4's other value stays when only its score is cleared
    const byScore = ['n5', 'n1'];
    const none = ['n3', 'n4'].sort((a, b) => (ids[a]! < ids[b]! ? -1 : 1));
    expect((await list('sort=cf.score&order=asc')).names).toEqual([...byScore, ...none]);
    expect((await list('sort=cf.score&order=desc')).names).toEqual([...byScore.reverse(), ...none.reverse()]);
  });
});

describe('a choice field\'s equality total follows every write (custom_field_counts, docs/custom-fields.md#which-index-serves-what)', () => {
  test('after creates, changes, a cleared value, a batch, trash, restore, a merge and an erasure, each value\'s total is its rows', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'tier', type: 'SELECT', options: ['gold', 'silver'] });
    await define(acc, { key: 'tags', type: 'MULTI_SELECT', options: ['a', 'b'] });
    await define(acc, { key: 'vip', type: 'BOOLEAN' });
    const other = await createAccount(t);
    await define(other, { key: 'tier', type: 'SELECT', options: ['gold'] });
    await createContact(t, other, { firstName: 'elsewhere', customFields: { tier: 'gold' } });
    const ids: Record<string, string> = {};
    const seed = { k1: { tier: 'gold', tags: ['a', 'b'], vip: true }, k2: { tier: 'gold', tags: ['a'] }, k3: { tier: 'silver', vip: false }, k4: { tier: 'gold' }, k5: { tags: ['b'] }, k6: { tier: 'silver' } };
    for (const [name, customFields] of Object.entries(seed)) {
      ids[name] = (await createContact(t, acc, { firstName: name, email: `${name}@counts.test`, customFields: customFields as never })).id;
    }
    const as = { as: acc.owner };
    const ok = async (r: Promise<{ status: number; body: unknown }>, status = 200) => {
      const answer = await r;
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    };
    await ok(t.rest('PATCH', `/api/v1/contacts/${ids.k1}`, { body: { custom_fields: { tier: 'silver', tags: ['b'] } }, ...as }));
    await ok(t.rest('PATCH', `/api/v1/contacts/${ids.k3}`, { body: { custom_fields: { tier: null, vip: true } }, ...as }));
    await ok(t.rest('PATCH', `/api/v1/contacts/${ids.k6}`, { body: { first_name: 'k6' }, ...as }));
    await ok(t.rest('POST', '/api/v1/contacts/batch', { body: { account_id: acc.id, mode: 'create', records: [{ first_name: 'k7', custom_fields: { tier: 'gold', tags: ['a', 'b'] } }, { first_name: 'k8', custom_fields: { vip: false } }] }, ...as }));
    await ok(t.rest('DELETE', `/api/v1/contacts/${ids.k2}`, as), 204);
    await ok(t.rest('DELETE', `/api/v1/contacts/${ids.k4}`, as), 204);
    await ok(t.rest('POST', `/api/v1/contacts/${ids.k4}/restore`, { body: {}, ...as }));
    await ok(t.rest('POST', `/api/v1/contacts/${ids.k6}/merge`, { body: { duplicate_ids: [ids.k1] }, ...as }));
    const erased = await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { __typename } }', { id: ids.k5 }, as);
    expect(erased.errors).toBeUndefined();
    // Standing now: k3 {vip: true}, k4 {tier: gold}, k6 {tier: silver, tags: [b] from the merged k1, vip: true}, k7 {gold, [a, b]}, k8 {vip: false}.
    const expected: [string, string[]][] = [
      ['cf.tier=gold', ['k4', 'k7']],
      ['cf.tier=silver', ['k6']],
      ['cf.tier=gold,silver', ['k4', 'k6', 'k7']],
      ['cf.tags=a', ['k7']],
      ['cf.tags=b', ['k6', 'k7']],
      ['cf.vip=true', ['k3', 'k6']],
      ['cf.vip=false', ['k8']],
    ];
    for (const [query, names] of expected) {
      const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&page_size=100&${query}`, as);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect([query, r.body.data.map((c: { first_name: string }) => c.first_name).sort(), r.body.total]).toEqual([query, names, names.length]);
    }
  });
});

describe('deals, companies and invoices', () => {
  test('each list filters and orders by its own fields, REST and GraphQL alike', async () => {
    const acc = await createAccount(t);
    for (const object of ['DEAL', 'COMPANY', 'INVOICE']) await define(acc, { object, key: 'ref', type: 'NUMBER' });
    await define(acc, { key: 'ref', type: 'TEXT' }); // the contacts' `ref` is another field
    const made: Record<string, string[]> = { deals: [], companies: [], invoices: [] };
    for (const ref of [3, 1, 2]) {
      made.deals!.push((await t.rest('POST', '/api/v1/deals', { as: acc.member, body: { account_id: acc.id, title: `D${ref}`, value: 1, custom_fields: { ref } } })).body.data.id);
      made.companies!.push((await t.rest('POST', '/api/v1/companies', { as: acc.member, body: { account_id: acc.id, name: unique(`C${ref}`), custom_fields: { ref } } })).body.data.id);
      made.invoices!.push((await t.rest('POST', '/api/v1/invoices', { as: acc.member, body: { account_id: acc.id, amount: 5, due_date: '2030-01-01', custom_fields: { ref } } })).body.data.id);
    }
    for (const list of ['deals', 'companies', 'invoices']) {
      made[list]!.push((await t.rest('POST', `/api/v1/${list}`, { as: acc.member, body: list === 'deals' ? { account_id: acc.id, title: 'none', value: 1 } : list === 'companies' ? { account_id: acc.id, name: unique('none') } : { account_id: acc.id, amount: 5, due_date: '2030-01-01' } })).body.data.id);
      const [three, one, two, none] = made[list]!;
      const sorted = await t.rest('GET', `/api/v1/${list}?account_id=${acc.id}&sort=cf.ref&order=desc`, { as: acc.member });
      expect([sorted.status, sorted.body.data?.map((r: { id: string }) => r.id)], list).toEqual([200, [three, two, one, none]]);
      const filtered = await t.rest('GET', `/api/v1/${list}?account_id=${acc.id}&cf.ref.gte=2`, { as: acc.member });
      expect([filtered.body.data.map((r: { id: string }) => r.id).sort(), filtered.body.total], list).toEqual([[three, two].sort(), 2]);
      const type = { deals: 'Deal', companies: 'Company', invoices: 'Invoice' }[list];
      const r = await t.gql(
        `query ($id: ID!, $filter: ${type}Filter, $orderBy: ${type}Order) { account(id: $id) { ${list}(filter: $filter, orderBy: $orderBy, first: 10) { totalCount nodes { id } } } }`,
        { id: acc.id, filter: { customFields: [{ key: 'ref', lt: 3 }] }, orderBy: { customField: 'ref', direction: 'ASC' } },
        { as: acc.member },
      );
      expect(r.errors, list).toBeUndefined();
      expect([r.data.account[list].nodes.map((n: { id: string }) => n.id), r.data.account[list].totalCount], list).toEqual([[one, two], 2]);
    }
  });
});

describe('the OpenAPI document', () => {
  test('the four lists state the cf.* parameters and sort=cf.<key>, and no variable REST does not read', async () => {
    const doc = (await t.rest('GET', '/api/v1/openapi.json')).body;
    for (const list of ['contacts', 'deals', 'companies', 'invoices']) {
      const parameters = doc.paths[`/api/v1/${list}`].get.parameters as { name: string; style?: string; explode?: boolean; schema: Record<string, any> }[];
      const names = parameters.map((p) => p.name);
      expect(names, list).not.toContain('custom_fields');
      expect(names, list).not.toContain('sort_custom_field');
      const cf = parameters.find((p) => p.name === 'cf')!;
      expect([cf.style, cf.explode, cf.schema.type], list).toEqual(['form', true, 'object']);
      const pattern = new RegExp(cf.schema.propertyNames.pattern);
      expect(['cf.tier', 'cf.score.gte', 'cf.note.contains', 'cf.vip.is_set'].every((n) => pattern.test(n)), list).toBe(true);
      expect(['tier', 'cf.tier.between', 'cf.Tier'].some((n) => pattern.test(n)), list).toBe(false);
      const sort = parameters.find((p) => p.name === 'sort')!;
      expect(sort.schema.anyOf[1].pattern, list).toBe('^cf\\.[a-z][a-z0-9_]{0,49}$');
    }
    expect(doc.paths['/api/v1/notes'].get.parameters.map((p: { name: string }) => p.name)).not.toContain('cf');
  });
});
