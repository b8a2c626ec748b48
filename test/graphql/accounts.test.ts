import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createApiKey, createContact, createUser, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type GqlResult, type TestApp, type TestUser, errorOf } from '../helpers/app.js';

// docs/decisions.md §9: Query.me · Query.account · Mutation.createAccount · Mutation.addTeamMember.

const ME = /* GraphQL */ `query Me { me { id email name accounts { id name } } }`;
const ACCOUNT = /* GraphQL */ `
  query Account($id: ID!) {
    account(id: $id) { id name owner { id } members { userId role user { id } } }
  }
`;
const CREATE = /* GraphQL */ `
  mutation CreateAccount($input: CreateAccountInput!) { createAccount(input: $input) { id name owner { id } } }
`;
const ADD = /* GraphQL */ `
  mutation AddTeamMember($input: AddTeamMemberInput!) {
    addTeamMember(input: $input) { accountId userId role email user { id email } }
  }
`;
const CONTACTS = /* GraphQL */ `query Contacts($accountId: ID!) { contacts(accountId: $accountId) { total } }`;

let t: TestApp;
let acc: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const expectCode = (result: GqlResult, code: string, message?: string) => {
  const error = errorOf(result);
  expect(error.extensions?.code).toBe(code);
  if (message) expect(error.message).toBe(message);
};
const expectDetails = (result: GqlResult, details: Record<string, string[]>) => {
  const error = errorOf(result);
  expect(error.extensions?.code).toBe('BAD_USER_INPUT');
  expect(error.extensions?.details).toEqual(details);
};

const createAccountAs = (as: TestUser | null, name: string) => t.gql(CREATE, { input: { name } }, { as });
const add = (as: TestUser | null, input: Record<string, unknown>, account: { id: string } = acc) =>
  t.gql(ADD, { input: { accountId: account.id, ...input } }, { as });

describe('Mutation.createAccount', () => {
  test('the caller becomes the owner, and the account shows in me { accounts }', async () => {
    const caller = await createUser(t);
    const result = await createAccountAs(caller, '  Studio North  ');
    expect(result.errors).toBeUndefined();
    expect(result.data.createAccount).toMatchObject({ name: 'Studio North', owner: { id: caller.id } });
    const me = await t.gql(ME, {}, { as: caller });
    expect(me.data.me.accounts).toEqual([{ id: result.data.createAccount.id, name: 'Studio North' }]);
  });

  test('a user creates at most 5 accounts an hour: the sixth is RATE_LIMITED with retryAfter and creates nothing, another user is not held back', async () => {
    const caller = await createUser(t);
    const created = await Promise.all(Array.from({ length: 6 }, (_, i) => createAccountAs(caller, `Limited ${i}`)));
    const refused = created.filter((r) => r.errors?.length);
    expect(created.filter((r) => r.data?.createAccount?.id)).toHaveLength(5);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.errors![0]).toMatchObject({ message: 'Rate limit exceeded', extensions: { code: 'RATE_LIMITED' } });
    expect(refused[0]!.errors![0]!.extensions!.retryAfter).toBeGreaterThan(60);
    expect(refused[0]!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await t.db.account.count({ where: { ownerId: caller.id } })).toBe(5);
    const other = await createAccountAs(await createUser(t), 'Not held back');
    expect(other.errors).toBeUndefined();
  });

  test('an anonymous caller is UNAUTHENTICATED and nothing is stored', async () => {
    const name = unique('Anonymous');
    expectCode(await createAccountAs(null, name), 'UNAUTHENTICATED', 'Unauthorized');
    expect(await t.db.account.count({ where: { name } })).toBe(0);
  });

  test('a blank name is BAD_USER_INPUT: Required', async () => {
    expectDetails(await createAccountAs(acc.owner, '   '), { name: ['Required'] });
  });

  test('a name over 200 characters is BAD_USER_INPUT on name', async () => {
    expectDetails(await createAccountAs(acc.owner, 'x'.repeat(201)), { name: ['Must be at most 200 characters'] });
  });
});

describe('Mutation.addTeamMember', () => {
  test('the owner adds a member, who can then read the account contacts', async () => {
    const account = await createAccount(t);
    await createContact(t, account);
    const newcomer = await createUser(t);
    expectCode(await t.gql(CONTACTS, { accountId: account.id }, { as: newcomer }), 'FORBIDDEN');
    const result = await add(account.owner, { userId: newcomer.id }, account);
    expect(result.errors).toBeUndefined();
    expect(result.data.addTeamMember).toMatchObject({ accountId: account.id, userId: newcomer.id, role: 'member', email: null });
    const contacts = await t.gql(CONTACTS, { accountId: account.id }, { as: newcomer });
    expect(contacts.errors).toBeUndefined();
    expect(contacts.data.contacts.total).toBe(1);
  });

  test("the e-mail given is kept on the membership only, never written over the user's own e-mail", async () => {
    const person = await createUser(t, { email: 'person@example.com' });
    await t.gql(ME, {}, { as: person }); // the token's e-mail is the person's own
    const result = await add(acc.owner, { userId: person.id, email: 'alias@owner-labels.test' });
    // The answer holds what the owner gave and the membership, never the person's own identity.
    expect(result.data.addTeamMember).toMatchObject({ email: 'alias@owner-labels.test', user: { id: person.id, email: null } });
    expect((await t.db.user.findUniqueOrThrow({ where: { id: person.id } })).email).toBe('person@example.com');
    expect((await t.gql(ME, {}, { as: person })).data.me.email).toBe('person@example.com');
  });

  test('a user id never seen before is recorded with no e-mail of its own', async () => {
    const userId = randomUUID();
    const result = await add(acc.owner, { userId, email: 'invitee@example.com' });
    expect(result.data.addTeamMember).toMatchObject({ userId, email: 'invitee@example.com', user: { id: userId, email: null } });
  });

  test('a team member who is not the owner is FORBIDDEN (owner only)', async () => {
    const userId = randomUUID();
    expectCode(await add(acc.member, { userId }), 'FORBIDDEN', 'Forbidden: only the account owner can do this');
    expect(await t.db.teamMember.count({ where: { userId } })).toBe(0);
  });

  test('an outsider is FORBIDDEN with no access to this account', async () => {
    expectCode(await add(acc.outsider, { userId: randomUUID() }), 'FORBIDDEN', 'Forbidden: no access to this account');
  });

  test('a userId that is not a UUID is BAD_USER_INPUT on userId', async () => {
    expectDetails(await add(acc.owner, { userId: 'someone' }), { userId: ['Must be a UUID'] });
  });

  test('the owner cannot be added as a member of their own account', async () => {
    expectDetails(await add(acc.owner, { userId: acc.owner.id }), { userId: ['Already the owner of this account'] });
  });

  test('an e-mail that is not an address is BAD_USER_INPUT on email', async () => {
    expectDetails(await add(acc.owner, { userId: randomUUID(), email: 'not-an-email' }), { email: ['Must be a valid e-mail address'] });
  });
});

// docs/decisions.md §26: the owner sets the account's name and default currency.
describe('Mutation.updateAccount', () => {
  const UPDATE = 'mutation ($id: ID!, $input: UpdateAccountInput!) { updateAccount(id: $id, input: $input) { id name defaultCurrency } }';

  test('the default currency is USD until the owner sets it; the owner changes name and currency (lower case upper-cased)', async () => {
    const own = await createAccount(t);
    expect((await t.gql('query ($id: ID!) { account(id: $id) { defaultCurrency } }', { id: own.id }, { as: own.member })).data?.account).toEqual({ defaultCurrency: 'USD' });
    const r = await t.gql(UPDATE, { id: own.id, input: { defaultCurrency: ' eur ' } }, { as: own.owner });
    expect(r.data?.updateAccount).toMatchObject({ id: own.id, defaultCurrency: 'EUR' });
    const renamed = await t.gql(UPDATE, { id: own.id, input: { name: 'Studio Ångström' } }, { as: own.owner });
    expect(renamed.data?.updateAccount).toEqual({ id: own.id, name: 'Studio Ångström', defaultCurrency: 'EUR' });
  });

  test('a member is FORBIDDEN (owner only), an outsider FORBIDDEN, an API key never; nothing changes', async () => {
    const own = await createAccount(t);
    expectCode(await t.gql(UPDATE, { id: own.id, input: { defaultCurrency: 'JPY' } }, { as: own.member }), 'FORBIDDEN');
    expectCode(await t.gql(UPDATE, { id: own.id, input: { defaultCurrency: 'JPY' } }, { as: own.outsider }), 'FORBIDDEN');
    const key = await createApiKey(t, own, ['CONTACTS_READ', 'CONTACTS_WRITE', 'INVOICES_READ', 'INVOICES_WRITE']);
    expectCode(await t.gql(UPDATE, { id: own.id, input: { defaultCurrency: 'JPY' } }, { as: key }), 'FORBIDDEN');
    expect((await t.db.account.findUniqueOrThrow({ where: { id: own.id } })).defaultCurrency).toBe('USD');
  });

  test('an unknown currency code is BAD_USER_INPUT naming it; an empty input names what to give', async () => {
    const own = await createAccount(t);
    expectDetails(await t.gql(UPDATE, { id: own.id, input: { defaultCurrency: 'XYZ' } }, { as: own.owner }), { defaultCurrency: ['Unknown ISO 4217 currency code: XYZ'] });
    expect(errorOf(await t.gql(UPDATE, { id: own.id, input: {} }, { as: own.owner })).extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('Query.account', () => {
  test('the owner and a member both read the account with its owner and members', async () => {
    for (const as of [acc.owner, acc.member]) {
      const result = await t.gql(ACCOUNT, { id: acc.id }, { as });
      expect(result.errors).toBeUndefined();
      expect(result.data.account).toMatchObject({ id: acc.id, owner: { id: acc.owner.id } });
      expect(result.data.account.members).toContainEqual({ userId: acc.member.id, role: 'member', user: { id: acc.member.id } });
    }
  });

  test('an outsider is FORBIDDEN', async () => {
    expectCode(await t.gql(ACCOUNT, { id: acc.id }, { as: acc.outsider }), 'FORBIDDEN', 'Forbidden: no access to this account');
  });

  test('an id that is not a UUID is BAD_USER_INPUT on id', async () => {
    expectDetails(await t.gql(ACCOUNT, { id: 'nope' }, { as: acc.owner }), { id: ['Must be a UUID'] });
  });

  test("another user's accounts list only accounts the caller can see too", async () => {
    const shared = await createAccount(t);
    const ownersOther = await t.db.account.create({ data: { name: unique('Private'), ownerId: shared.owner.id } });
    const result = await t.gql(
      'query ($id: ID!) { account(id: $id) { owner { accounts { id } } members { user { accounts { id } } } } }',
      { id: shared.id },
      { as: shared.member },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data.account.owner.accounts).toEqual([{ id: shared.id }]);
    expect(result.data.account.members[0].user.accounts).toEqual([{ id: shared.id }]);
    expect(JSON.stringify(result.data)).not.toContain(ownersOther.id);
  });
});

describe('Query.me', () => {
  test("returns the caller's id, e-mail and name and every account they own or belong to", async () => {
    const caller = await createUser(t, { email: 'me@example.com', name: 'Mia Example' });
    const owned = await t.db.account.create({ data: { name: 'Owned', ownerId: caller.id } });
    const joined = await createAccount(t);
    await t.db.teamMember.create({ data: { accountId: joined.id, userId: caller.id } });
    const result = await t.gql(ME, {}, { as: caller });
    expect(result.errors).toBeUndefined();
    expect(result.data.me).toMatchObject({ id: caller.id, email: 'me@example.com', name: 'Mia Example' });
    expect(result.data.me.accounts.map((a: { id: string }) => a.id).sort()).toEqual([owned.id, joined.id].sort());
  });

  test('an anonymous caller is UNAUTHENTICATED with no data', async () => {
    const result = await t.gql(ME, {}, { as: null });
    expectCode(result, 'UNAUTHENTICATED', 'Unauthorized');
    expect(result.data).toEqual({ me: null }); // the refused root field is null (decisions §9 amended)
  });
});
