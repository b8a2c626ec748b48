/**
 * A query sent again runs compiled (src/plugins/use-compiled-execution.ts, docs/fields.md): it answers as its
 * first run did, refusals and their words included.
 */
import { parse } from 'graphql/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilable } from '../../src/plugins/use-compiled-execution.js';
import { createAccount, createApiKey, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  const contact = await createContact(t, acc, { firstName: 'Margaret', lastName: 'Hamilton' });
  await t.db.deal.create({ data: { accountId: acc.id, title: 'Apollo', contactId: contact.id } });
});
afterAll(() => t?.close());

describe('a repeated query answers as its first run', () => {
  it("a deal's contact shows a deals:read key its name and refuses its e-mail naming CONTACTS_READ, on every run", async () => {
    const key = await createApiKey(t, acc, ['DEALS_READ']);
    const query = 'query ($a: ID!) { deals(accountId: $a) { nodes { title contact { firstName lastName email } } } }';
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await t.gql(query, { a: acc.id }, { as: key }));
    for (const r of runs) {
      expect(r.data.deals.nodes[0]).toEqual({ title: 'Apollo', contact: { firstName: 'Margaret', lastName: 'Hamilton', email: null } });
      expect(r.errors?.map((e) => [e.path?.join('.'), e.extensions?.code, e.extensions?.requiredScope])).toEqual([['deals.nodes.0.contact.email', 'FORBIDDEN', 'CONTACTS_READ']]);
    }
  });

  it('a document of two queries runs the one named, however often each is sent', async () => {
    const document = 'query Deals($a: ID!) { deals(accountId: $a) { nodes { title } } } query Contacts($a: ID!) { contacts(accountId: $a) { nodes { firstName } } }';
    for (let i = 0; i < 2; i++) {
      for (const [operationName, expected] of [['Deals', { deals: { nodes: [{ title: 'Apollo' }] } }], ['Contacts', { contacts: { nodes: [{ firstName: 'Margaret' }] } }]] as const) {
        const response = await fetch(`${t.baseUrl}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${acc.owner.token}` },
          body: JSON.stringify({ query: document, operationName, variables: { a: acc.id } }),
        });
        expect(await response.json()).toMatchObject({ data: expected });
      }
    }
  });
});

describe('which documents run compiled', () => {
  it('a query of one operation does, with or without fragments; two operations, a mutation or a subscription do not', () => {
    expect(compilable(parse('query { deals(accountId: "a") { nodes { title } } }'))).toBe(true);
    expect(compilable(parse('query Q { deals(accountId: "a") { nodes { ...D } } } fragment D on Deal { title contact { ...C } } fragment C on Contact { firstName }'))).toBe(true);
    expect(compilable(parse('query A { viewer { id } } query B { viewer { id } }'))).toBe(false);
    expect(compilable(parse('mutation { deleteDeal(id: "x") { id } }'))).toBe(false);
    expect(compilable(parse('subscription { accountEvents(accountId: "a") { id } }'))).toBe(false);
  });

  it('a query with fragments answers as its first run, refusals included, on every run', async () => {
    const key = await createApiKey(t, acc, ['DEALS_READ']);
    const query = 'query ($a: ID!) { deals(accountId: $a) { nodes { ...Deal } } } fragment Deal on Deal { title contact { ...Person } } fragment Person on Contact { firstName email }';
    for (let i = 0; i < 3; i++) {
      const r = await t.gql(query, { a: acc.id }, { as: key });
      expect(r.data.deals.nodes[0]).toEqual({ title: 'Apollo', contact: { firstName: 'Margaret', email: null } });
      expect(r.errors?.map((e) => [e.path?.join('.'), e.extensions?.code])).toEqual([['deals.nodes.0.contact.email', 'FORBIDDEN']]);
    }
  });
});
