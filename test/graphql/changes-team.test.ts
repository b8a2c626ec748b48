import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp, type TestUser } from '../helpers/app.js';

// docs/decisions.md §12: removeTeamMember, leaveAccount, transferOwnership; addTeamMember reveals nobody.

const REMOVE = 'mutation ($a: ID!, $u: ID!) { removeTeamMember(accountId: $a, userId: $u) { id members { userId } } }';
const LEAVE = 'mutation ($a: ID!) { leaveAccount(accountId: $a) }';
const TRANSFER = 'mutation ($a: ID!, $u: ID!) { transferOwnership(accountId: $a, userId: $u) { id owner { id } members { userId } } }';
const ADD = 'mutation ($input: AddTeamMemberInput!) { addTeamMember(input: $input) { accountId userId email user { id email name } } }';

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

const codeOf = (r: { errors?: { extensions?: { code?: string } }[] }) => r.errors?.[0]?.extensions?.code;
const ownerOf = async (accountId: string) => (await t.db.account.findUniqueOrThrow({ where: { id: accountId } })).ownerId;
const memberIds = async (accountId: string) => (await t.db.teamMember.findMany({ where: { accountId } })).map((m) => m.userId).sort();

describe('Mutation.removeTeamMember', () => {
  let acc: TestAccount;
  beforeAll(async () => void (acc = await createAccount(t)));

  test('the owner removes a member', async () => {
    const extra = await createUser(t);
    await t.db.teamMember.create({ data: { accountId: acc.id, userId: extra.id } });
    const r = await t.gql(REMOVE, { a: acc.id, u: extra.id }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    expect(r.data.removeTeamMember.members.map((m: { userId: string }) => m.userId)).not.toContain(extra.id);
  });

  test('a member is FORBIDDEN (owner only); an outsider FORBIDDEN; anonymous UNAUTHENTICATED; nothing changes', async () => {
    const before = await memberIds(acc.id);
    expect(errorOf(await t.gql(REMOVE, { a: acc.id, u: acc.member.id }, { as: acc.member })).message).toBe('Forbidden: only the account owner can do this');
    expect(codeOf(await t.gql(REMOVE, { a: acc.id, u: acc.member.id }, { as: acc.outsider }))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(REMOVE, { a: acc.id, u: acc.member.id }, { as: null }))).toBe('UNAUTHENTICATED');
    expect(await memberIds(acc.id)).toEqual(before);
  });

  test('the owner cannot be removed; a user who is not a member is NOT_FOUND; a bad id is BAD_USER_INPUT', async () => {
    expect(errorOf(await t.gql(REMOVE, { a: acc.id, u: acc.owner.id }, { as: acc.owner })).extensions?.details).toEqual({
      userId: ['The owner cannot be removed; transfer ownership first'],
    });
    expect(codeOf(await t.gql(REMOVE, { a: acc.id, u: randomUUID() }, { as: acc.owner }))).toBe('NOT_FOUND');
    expect(errorOf(await t.gql(REMOVE, { a: acc.id, u: 'nope' }, { as: acc.owner })).extensions?.details).toEqual({ userId: ['Must be a UUID'] });
  });
});

describe('Mutation.leaveAccount', () => {
  test('a member leaves and loses access; the owner cannot leave (CONFLICT); an outsider is FORBIDDEN', async () => {
    const acc = await createAccount(t);
    expect(errorOf(await t.gql(LEAVE, { a: acc.id }, { as: acc.owner })).extensions?.code).toBe('CONFLICT');
    expect(codeOf(await t.gql(LEAVE, { a: acc.id }, { as: acc.outsider }))).toBe('FORBIDDEN');
    const r = await t.gql(LEAVE, { a: acc.id }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    expect(r.data.leaveAccount).toBe(true);
    expect(await memberIds(acc.id)).toEqual([]);
    expect(codeOf(await t.gql(LEAVE, { a: acc.id }, { as: acc.member }))).toBe('FORBIDDEN');
  });
});

describe('Mutation.transferOwnership', () => {
  test('the owner hands the account to a member and stays on as a member', async () => {
    const acc = await createAccount(t);
    const r = await t.gql(TRANSFER, { a: acc.id, u: acc.member.id }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    expect(r.data.transferOwnership.owner.id).toBe(acc.member.id);
    expect(await ownerOf(acc.id)).toBe(acc.member.id);
    expect(await memberIds(acc.id)).toEqual([acc.owner.id]);
    // The old owner is now a member: owner-only fields refuse them.
    expect(codeOf(await t.gql(TRANSFER, { a: acc.id, u: acc.owner.id }, { as: acc.owner }))).toBe('FORBIDDEN');
  });

  test('only to a member: anyone else is BAD_USER_INPUT on userId; a member may not transfer', async () => {
    const acc = await createAccount(t);
    expect(errorOf(await t.gql(TRANSFER, { a: acc.id, u: acc.outsider.id }, { as: acc.owner })).extensions?.details).toEqual({
      userId: ['Not a member of this account'],
    });
    expect(codeOf(await t.gql(TRANSFER, { a: acc.id, u: acc.member.id }, { as: acc.member }))).toBe('FORBIDDEN');
    expect(await ownerOf(acc.id)).toBe(acc.owner.id);
  });

  test('20 concurrent transfers and removals leave exactly one owner, who is a member of record', async () => {
    const acc = await createAccount(t);
    const members: TestUser[] = await Promise.all(Array.from({ length: 10 }, () => createUser(t)));
    await t.db.teamMember.createMany({ data: members.map((m) => ({ accountId: acc.id, userId: m.id })) });
    const calls = members.flatMap((m) => [
      t.gql(TRANSFER, { a: acc.id, u: m.id }, { as: acc.owner }),
      t.gql(REMOVE, { a: acc.id, u: m.id }, { as: acc.owner }),
    ]);
    const results = await Promise.all(calls);
    for (const r of results) expect(['FORBIDDEN', 'BAD_USER_INPUT', 'NOT_FOUND', undefined]).toContain(codeOf(r));
    const transfers = results.filter((r, i) => i % 2 === 0 && !r.errors);
    expect(transfers.length).toBeLessThanOrEqual(1);
    const owner = await ownerOf(acc.id);
    const everyone = [acc.owner.id, ...members.map((m) => m.id)];
    expect(everyone).toContain(owner);
    const rows = await memberIds(acc.id);
    expect(rows).not.toContain(owner); // the owner is the account's owner_id, never also a member row
    if (owner !== acc.owner.id) expect(rows).toContain(acc.owner.id);
    expect(await t.db.user.findUnique({ where: { id: owner } })).not.toBeNull();
  });
});

describe('Mutation.addTeamMember reveals nothing about the user added', () => {
  test("another account's owner added by id: the answer holds the given label and the membership, not their e-mail or name", async () => {
    const acc = await createAccount(t);
    const stranger = await createUser(t, { email: 'secret-owner@example.com', name: 'Secret Owner' });
    await t.gql('query { me { id } }', {}, { as: stranger });
    const r = await t.gql(ADD, { input: { accountId: acc.id, userId: stranger.id } }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    expect(r.data.addTeamMember).toEqual({ accountId: acc.id, userId: stranger.id, email: null, user: { id: stranger.id, email: null, name: null } });
    const members = await t.gql('query ($id: ID!) { account(id: $id) { members { user { email name } } owner { email } } }', { id: acc.id }, { as: acc.owner });
    expect(JSON.stringify(members.data)).not.toContain('secret-owner@example.com');
    expect(JSON.stringify(members.data)).not.toContain('Secret Owner');
  });
});
