/**
 * The request-level protocol of /graphql (docs/decisions.md §9 amended, §11; docs/graphql.md):
 * partial results, automatic persisted queries, GET, trusted documents and batching.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

describe('partial results (decisions §9 amended)', () => {
  it('a refused root field is null with its error; the other root fields of the document answer', async () => {
    const foreign = await createAccount(t);
    const r = await t.gql('query ($a: ID!) { me { id } contacts(accountId: $a) { total } }', { a: foreign.id }, { as: acc.owner });
    expect(r.data).toEqual({ me: { id: acc.owner.id }, contacts: null });
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]).toMatchObject({ path: ['contacts'], extensions: { code: 'FORBIDDEN' } });
  });

  it('six aliased exportContacts with a limit of 5: five get their tickets, the sixth is RATE_LIMITED, five audit rows', async () => {
    const fresh = await createAccount(t);
    const calls = Array.from({ length: 6 }, (_, i) => `e${i}: exportContacts(accountId: $a) { id fileName }`).join(' ');
    const r = await t.gql(`mutation ($a: ID!) { ${calls} }`, { a: fresh.id }, { as: fresh.owner });
    const tickets = Object.values(r.data as Record<string, { id: string } | null>).filter((ticket) => ticket !== null);
    expect(tickets).toHaveLength(5);
    expect(r.data.e5).toBeNull();
    expect(r.errors).toHaveLength(1);
    expect(r.errors![0]).toMatchObject({ path: ['e5'], extensions: { code: 'RATE_LIMITED' } });
    const rows = await t.db.exportLog.findMany({ where: { accountId: fresh.id } });
    expect(rows.map((row) => row.id).sort()).toEqual(tickets.map((ticket) => ticket.id).sort());
  });

  it('a mutation that fails writes nothing, and the mutations after it in the document still run', async () => {
    const fresh = await createAccount(t);
    const r = await t.gql(
      `mutation ($a: ID!) {
        bad: createContact(input: { accountId: $a, firstName: "" }) { id }
        good: createContact(input: { accountId: $a, firstName: "Grace" }) { id }
      }`,
      { a: fresh.id },
      { as: fresh.owner },
    );
    expect(r.data.bad).toBeNull();
    expect(r.errors).toMatchObject([{ path: ['bad'], extensions: { code: 'BAD_USER_INPUT' } }]);
    const contacts = await t.db.contact.findMany({ where: { accountId: fresh.id }, select: { id: true, firstName: true } });
    expect(contacts).toEqual([{ id: r.data.good.id, firstName: 'Grace' }]);
  });
});
