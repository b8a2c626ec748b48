// The Prisma plugin's unused-query warning (src/graphql/builder.ts) is for a resolver that forgot to
// pass its `query` on. Where the rules know no selection was needed (src/graphql/rules.ts,
// answeredWithoutSelection), the relations asked for still come, through the plugin's fallback, and
// nothing is printed: a developer sees the warning only where there is something to fix.
import { randomUUID } from 'node:crypto';
import type { GraphQLResolveInfo } from 'graphql/index.js';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import { builder } from '../../src/graphql/builder.js';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;
let other: TestAccount;
const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
const unusedWarnings = () => warn.mock.calls.map((args) => String(args[0])).filter((line) => line.startsWith('Prisma query was unused'));

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  other = await createAccount(t);
});
afterAll(() => t?.close());
afterEach(() => warn.mockClear());

const DEAL = 'query ($id: ID!) { deal(id: $id) { id contact { id } } }';
const CREATE = 'mutation ($input: CreateDealInput!) { createDeal(input: $input) { id contact { id firstName } } }';
const MOVE = 'mutation ($id: ID!) { setDealStatus(id: $id, status: won) { id status contact { id } } }';

test('a record that is unknown or in another account answers null, with no unused-query warning', async () => {
  const theirs = await t.db.deal.create({ data: { accountId: other.id, title: 'Theirs' } });
  for (const id of [randomUUID(), theirs.id]) {
    const r = await t.gql(DEAL, { id }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    expect(r.data.deal).toBeNull();
  }
  expect(unusedWarnings()).toEqual([]);
});

test("a one-statement create answers the relations asked for, with no unused-query warning", async () => {
  const contact = await createContact(t, acc, { firstName: 'Grace' });
  const r = await t.gql(CREATE, { input: { accountId: acc.id, title: 'Linked', contactId: contact.id } }, { as: acc.member });
  expect(r.errors).toBeUndefined();
  expect(r.data.createDeal.contact).toEqual({ id: contact.id, firstName: 'Grace' });
  expect(unusedWarnings()).toEqual([]);
});

test("a retried write answered from its Idempotency-Key answers the relations asked for, with no unused-query warning", async () => {
  const contact = await createContact(t, acc);
  const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Retried', contactId: contact.id } });
  const headers = { 'idempotency-key': randomUUID() };
  const first = await t.gql(MOVE, { id: deal.id }, { as: acc.member, headers });
  const retry = await t.gql(MOVE, { id: deal.id }, { as: acc.member, headers });
  expect(retry.errors).toBeUndefined();
  expect(retry.data).toEqual(first.data);
  expect(retry.data.setDealStatus.contact).toEqual({ id: contact.id });
  expect(unusedWarnings()).toEqual([]);
});

test('a resolver that left a needed selection unread is still warned about, by field', () => {
  const onUnused = builder.options.prisma.onUnusedQuery as (info: GraphQLResolveInfo) => void;
  onUnused({ parentType: { name: 'Query' }, fieldName: 'forgetful' } as GraphQLResolveInfo);
  expect(unusedWarnings()).toEqual(['Prisma query was unused in resolver for Query.forgetful']);
});
