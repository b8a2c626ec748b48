import { randomUUID } from 'node:crypto';
import { mintToken } from '../../src/auth/token.js';
import type { Prisma } from '../../src/generated/prisma/client.js';
import { TEST_SECRET, type TestApp, type TestUser } from '../helpers/app.js';

/** Random unique values everywhere, so test files never depend on each other's rows. */
export const unique = (prefix = 'x'): string => `${prefix}-${randomUUID().slice(0, 8)}`;

export async function createUser(t: TestApp, claims: { email?: string; name?: string } = {}): Promise<TestUser> {
  const id = randomUUID();
  await t.db.user.create({ data: { id, email: claims.email ?? `${unique('user')}@example.com`, name: claims.name ?? null } });
  return { id, token: await mintToken(TEST_SECRET, { sub: id, ...claims }) };
}

export type TestAccount = { id: string; owner: TestUser; member: TestUser; outsider: TestUser };

/** An account with its owner, one team member, and an outsider who belongs elsewhere. */
export async function createAccount(t: TestApp, name = unique('Account')): Promise<TestAccount> {
  const [owner, member, outsider] = await Promise.all([createUser(t), createUser(t), createUser(t)]);
  const account = await t.db.account.create({ data: { name, ownerId: owner.id } });
  await t.db.teamMember.create({ data: { accountId: account.id, userId: member.id } });
  const elsewhere = await t.db.account.create({ data: { name: unique('Elsewhere'), ownerId: outsider.id } });
  void elsewhere;
  return { id: account.id, owner, member, outsider };
}

export function createContact(t: TestApp, account: { id: string }, overrides: Partial<Prisma.ContactUncheckedCreateInput> = {}) {
  return t.db.contact.create({
    data: { accountId: account.id, firstName: unique('First'), lastName: 'Tester', email: `${unique('c')}@example.com`, ...overrides },
  });
}

/** A new team member of the account: a caller with a rate-limit budget of its own. */
export async function createMember(t: TestApp, accountId: string): Promise<TestUser> {
  const user = await createUser(t);
  await t.db.teamMember.create({ data: { accountId, userId: user.id } });
  return user;
}

/**
 * An API key of the account, made by its owner through createApiKey (docs/decisions.md §15): a
 * caller whose `token` is the secret and whose `id` is the key's.
 */
export async function createApiKey(t: TestApp, account: TestAccount, scopes: string[], extra: { name?: string; expiresAt?: string } = {}): Promise<TestUser> {
  const r = await t.gql(
    'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey { id } secret } }',
    { input: { accountId: account.id, name: extra.name ?? unique('Key'), scopes, ...(extra.expiresAt ? { expiresAt: extra.expiresAt } : {}) } },
    { as: account.owner },
  );
  if (!r.data?.createApiKey) throw new Error(`createApiKey failed: ${JSON.stringify(r.errors)}`);
  return { id: r.data.createApiKey.apiKey.id, token: r.data.createApiKey.secret };
}
