import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type GqlResult, type TestApp, errorOf } from '../helpers/app.js';

// docs/decisions.md §9 through /graphql: Mutation.createContact's input rules and Query.contacts' filters and paging.

const CREATE = /* GraphQL */ `
  mutation CreateContact($input: CreateContactInput!) {
    createContact(input: $input) { id firstName lastName email phone company contactType source }
  }
`;
const LIST = /* GraphQL */ `
  query Contacts($accountId: ID!, $page: Int, $pageSize: Int, $search: String, $type: ContactType) {
    contacts(accountId: $accountId, page: $page, pageSize: $pageSize, search: $search, type: $type) {
      total page pageSize nodes { id }
    }
  }
`;

let t: TestApp;
let acc: TestAccount;
let listed: TestAccount;
/** The listed account's contacts, newest first. */
let ids: { ann: string; bob: string; cid: string };

beforeAll(async () => {
  t = await createTestApp();
  [acc, listed] = await Promise.all([createAccount(t), createAccount(t)]);
  // Distinct creation times so newest-first order is fixed.
  const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute));
  const cid = await createContact(t, listed, { firstName: 'Cid', lastName: 'Moss', email: 'cid@example.com', createdAt: at(1) });
  const bob = await createContact(t, listed, { firstName: 'Bob', lastName: 'Stone', email: 'bob@example.com', contactType: 'client', createdAt: at(2) });
  const ann = await createContact(t, listed, { firstName: 'Ann', lastName: 'Lee', email: 'ann@studio.test', createdAt: at(3) });
  ids = { ann: ann.id, bob: bob.id, cid: cid.id };
});
afterAll(() => t?.close());

const expectDetails = (result: GqlResult, details: Record<string, string[]>) => {
  const error = errorOf(result);
  expect(error.extensions?.code).toBe('BAD_USER_INPUT');
  expect(error.extensions?.details).toEqual(details);
};

const create = (input: Record<string, unknown>) => t.gql(CREATE, { input: { accountId: acc.id, ...input } }, { as: acc.member });
const list = (args: Record<string, unknown> = {}) => t.gql(LIST, { accountId: listed.id, ...args }, { as: listed.member });
const listedIds = (result: GqlResult) => result.data.contacts.nodes.map((n: { id: string }) => n.id);

describe('Mutation.createContact', () => {
  test('contactType defaults to lead and source to other; blank optional fields become null', async () => {
    const result = await create({ firstName: '  Dana  ', lastName: ' ', email: '', company: null });
    expect(result.errors).toBeUndefined();
    expect(result.data.createContact).toMatchObject({
      firstName: 'Dana', lastName: null, email: null, phone: null, company: null, contactType: 'lead', source: 'other',
    });
  });

  test('a blank firstName is BAD_USER_INPUT: Required', async () => {
    expectDetails(await create({ firstName: '   ' }), { firstName: ['Required'] });
  });

  test('an email that is not an address is BAD_USER_INPUT on email', async () => {
    expectDetails(await create({ firstName: 'Eve', email: 'eve-at-example' }), { email: ['Must be a valid e-mail address'] });
  });

  test('each text field has its length limit: firstName 100, lastName 100, phone 50, company 200', async () => {
    const result = await create({ firstName: 'f'.repeat(101), lastName: 'l'.repeat(101), phone: '1'.repeat(51), company: 'c'.repeat(201) });
    expectDetails(result, {
      firstName: ['Must be at most 100 characters'],
      lastName: ['Must be at most 100 characters'],
      phone: ['Must be at most 50 characters'],
      company: ['Must be at most 200 characters'],
    });
  });

  test('a value outside the ContactType enum is refused by GraphQL before the resolver runs', async () => {
    const firstName = unique('Enum');
    const result = await create({ firstName, contactType: 'vip' });
    // A variable that does not coerce: BAD_USER_INPUT, its message under its path (decisions §9 amended).
    expect(errorOf(result).extensions?.code).toBe('BAD_USER_INPUT');
    expect(Object.values(errorOf(result).extensions?.details ?? {}).flat().join('\n')).toMatch(/"vip".*ContactType/);
    expect(result.data ?? null).toBeNull();
    expect(await t.db.contact.count({ where: { firstName } })).toBe(0);
  });
});

describe('Query.contacts', () => {
  test('page defaults to 1 and pageSize to 25, newest first', async () => {
    const result = await list();
    expect(result.data.contacts).toMatchObject({ total: 3, page: 1, pageSize: 25 });
    expect(listedIds(result)).toEqual([ids.ann, ids.bob, ids.cid]);
  });

  test('search matches first name, last name or e-mail, case-insensitively', async () => {
    expect(listedIds(await list({ search: 'ANN' }))).toEqual([ids.ann]);
    expect(listedIds(await list({ search: 'stone' }))).toEqual([ids.bob]);
    expect(listedIds(await list({ search: 'studio.TEST' }))).toEqual([ids.ann]);
  });

  test('type keeps only contacts of that contactType', async () => {
    const result = await list({ type: 'client' });
    expect([result.data.contacts.total, listedIds(result)]).toEqual([1, [ids.bob]]);
  });

  test('page and pageSize slice the list; total counts them all', async () => {
    const result = await list({ page: 2, pageSize: 2 });
    expect(result.data.contacts).toMatchObject({ total: 3, page: 2, pageSize: 2 });
    expect(listedIds(result)).toEqual([ids.cid]);
  });

  test('pageSize 0 and 101 are BAD_USER_INPUT on pageSize', async () => {
    expectDetails(await list({ pageSize: 0 }), { pageSize: ['Must be from 1 to 100'] });
    expectDetails(await list({ pageSize: 101 }), { pageSize: ['Must be from 1 to 100'] });
  });

  test('page 0 is BAD_USER_INPUT on page', async () => {
    expectDetails(await list({ page: 0 }), { page: ['Must be at least 1'] });
  });

  test('a search over 200 characters is BAD_USER_INPUT on search', async () => {
    expectDetails(await list({ search: 's'.repeat(201) }), { search: ['Must be at most 200 characters'] });
  });
});
