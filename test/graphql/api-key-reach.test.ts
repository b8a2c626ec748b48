/**
 * What an API key reads through nested fields (docs/decisions.md §15, "Scopes reach through nested
 * fields"): a record of another kind needs that kind's scope, wherever the query reaches it; what
 * keys may never read (people, the account, webhooks, keys, the other records) stays closed; the
 * relations a record's own representation embeds (a deal's contact and stage, an invoice's contact,
 * an import's creator) come with the record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/errors.js';
import { createAccount, createApiKey, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;
let contactId: string;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  const contact = await createContact(t, acc, { firstName: 'Margaret', lastName: 'Hamilton' });
  contactId = contact.id;
  await t.db.deal.create({ data: { accountId: acc.id, title: 'Apollo', contactId } });
  await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: 'INV-1', amount: 10, dueDate: new Date('2030-01-01'), contactId } });
  await t.db.proposal.create({ data: { accountId: acc.id, title: 'Secret proposal', contactId } });
  await t.db.import.create({ data: { accountId: acc.id, object: 'contacts', headers: ['email'], columns: [], unknownColumns: [], createdById: acc.owner.id } });
});
afterAll(() => t?.close());

const contactsPage = (fields: string, as: TestUser) => t.gql(`query ($a: ID!) { contacts(accountId: $a) { nodes { id ${fields} } } }`, { a: acc.id }, { as });
/** Each error's path (joined) and the scope it names; the errors of one answer in path order. */
const refusals = (r: { errors?: { path?: readonly (string | number)[]; message: string; extensions?: Record<string, unknown> }[] }) =>
  (r.errors ?? []).map((e) => [e.path?.join('.'), e.extensions?.code, e.extensions?.requiredScope ?? e.message]).sort();

describe('a key reaches records of another kind only with their scope', () => {
  it("a CONTACTS_READ key is refused a contact's deals, invoices and timeline, each naming the scope it lacks", async () => {
    const key = await createApiKey(t, acc, ['CONTACTS_READ']);
    for (const [field, scope] of [['deals', 'DEALS_READ'], ['invoices', 'INVOICES_READ'], ['timeline', 'EVENTS_READ']] as const) {
      const r = await contactsPage(`${field}(first: 5) { totalCount nodes { id } }`, key);
      expect(r.data?.contacts ?? null, field).toBeNull();
      expect(refusals(r), field).toEqual([[`contacts.nodes.0.${field}`, 'FORBIDDEN', scope]]);
    }
  });

  it("the records keys may never read (proposals, contracts, galleries, bookings) are refused through a contact too", async () => {
    const key = await createApiKey(t, acc, ['CONTACTS_READ', 'DEALS_READ', 'INVOICES_READ', 'EVENTS_READ', 'FORMS_READ', 'IMPORTS', 'EXPORTS']);
    for (const field of ['proposals', 'contracts', 'galleries', 'bookings']) {
      const r = await contactsPage(`${field}(first: 5) { totalCount nodes { id } }`, key);
      expect(refusals(r), field).toEqual([[`contacts.nodes.0.${field}`, 'FORBIDDEN', MESSAGES.notForKeys]]);
    }
  });

  it('a key holding both scopes reads the nested list, and a person reads everything as before', async () => {
    const key = await createApiKey(t, acc, ['CONTACTS_READ', 'DEALS_READ']);
    const byKey = await contactsPage('deals(first: 5) { totalCount nodes { title } }', key);
    expect(byKey.errors).toBeUndefined();
    expect(byKey.data.contacts.nodes[0].deals).toEqual({ totalCount: 1, nodes: [{ title: 'Apollo' }] });
    const byOwner = await contactsPage('deals(first: 5) { totalCount } invoices(first: 5) { totalCount } proposals(first: 5) { totalCount }', acc.owner);
    expect(byOwner.errors).toBeUndefined();
    expect(byOwner.data.contacts.nodes[0]).toMatchObject({ deals: { totalCount: 1 }, invoices: { totalCount: 1 }, proposals: { totalCount: 1 } });
  });

  it("a deal's contact comes with the deal (its embedded relation), but not that contact's invoices", async () => {
    const key = await createApiKey(t, acc, ['DEALS_READ']);
    const deals = (fields: string) => t.gql(`query ($a: ID!) { deals(accountId: $a) { nodes { title contact { firstName ${fields} } stage { id } } } }`, { a: acc.id }, { as: key });
    const own = await deals('');
    expect(own.errors).toBeUndefined();
    expect(own.data.deals.nodes[0].contact).toEqual({ firstName: 'Margaret' });
    expect(refusals(await deals('invoices(first: 1) { totalCount }'))).toEqual([['deals.nodes.0.contact.invoices', 'FORBIDDEN', 'INVOICES_READ']]);
  });

  it("an import's creator is an id to a key, never a way to the account: User.accounts is refused", async () => {
    const key = await createApiKey(t, acc, ['IMPORTS']);
    const imports = (fields: string) => t.gql(`query ($a: ID!) { imports(accountId: $a) { createdBy { id ${fields} } } }`, { a: acc.id }, { as: key });
    const own = await imports('');
    expect(own.errors).toBeUndefined();
    expect(own.data.imports).toEqual([{ createdBy: { id: acc.owner.id } }]);
    // Refused at accounts, nothing under it runs; the account's keys and endpoints under up to 100
    // imports × 25 accounts would be over the cost ceiling (docs/graphql.md#cost-and-budget) and refused whole.
    const reach = await imports('accounts { id name }');
    expect(refusals(reach)).toEqual([['imports.0.createdBy.accounts', 'FORBIDDEN', MESSAGES.notForKeys]]);
    expect(JSON.stringify(reach.data)).not.toContain(acc.id);
  });
});
