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

// docs/decisions.md §24, "Scopes hold on every path": what a key reads through a relation or an answer.
// Its own account: the owner's createApiKey budget (10 a minute) is the other tests'.
let own: TestAccount;
let ownContactId: string;
beforeAll(async () => {
  own = await createAccount(t);
  ownContactId = (await createContact(t, own, { firstName: 'Margaret', lastName: 'Hamilton' })).id;
  await t.db.deal.create({ data: { accountId: own.id, title: 'Apollo', contactId: ownContactId } });
  await t.db.invoice.create({ data: { accountId: own.id, invoiceNumber: 'INV-1', amount: 10, dueDate: new Date('2030-01-01'), contactId: ownContactId } });
});

describe("a deal's or invoice's contact shows a key without contacts:read its id and name only", () => {
  const CONTACT = 'contact { id firstName lastName email phone }';

  it("a deals:read key reads a deal's contact's id, first and last name; its e-mail and phone are refused naming CONTACTS_READ", async () => {
    const key = await createApiKey(t, own, ['DEALS_READ']);
    const r = await t.gql(`query ($a: ID!) { deals(accountId: $a) { nodes { ${CONTACT} } } }`, { a: own.id }, { as: key });
    expect(refusals(r)).toEqual([
      ['deals.nodes.0.contact.email', 'FORBIDDEN', 'CONTACTS_READ'],
      ['deals.nodes.0.contact.phone', 'FORBIDDEN', 'CONTACTS_READ'],
    ]);
    expect(r.data.deals.nodes[0].contact).toEqual({ id: ownContactId, firstName: 'Margaret', lastName: 'Hamilton', email: null, phone: null });
  });

  it("an invoices:read key is refused an invoice's contact's e-mail the same way, on the page and by id", async () => {
    const key = await createApiKey(t, own, ['INVOICES_READ']);
    const page = await t.gql(`query ($a: ID!) { invoices(accountId: $a) { nodes { id ${CONTACT} } } }`, { a: own.id }, { as: key });
    expect(refusals(page).map(([path, , scope]) => [path, scope])).toEqual([
      ['invoices.nodes.0.contact.email', 'CONTACTS_READ'],
      ['invoices.nodes.0.contact.phone', 'CONTACTS_READ'],
    ]);
    const byId = await t.gql(`query ($id: ID!) { invoice(id: $id) { contact { firstName email } } }`, { id: page.data.invoices.nodes[0].id }, { as: key });
    expect(refusals(byId)).toEqual([['invoice.contact.email', 'FORBIDDEN', 'CONTACTS_READ']]);
    expect(byId.data.invoice.contact).toEqual({ firstName: 'Margaret', email: null });
  });

  it("a field the contact cannot answer null for (contactType) refuses the contact: nothing of it shows beyond its name", async () => {
    const key = await createApiKey(t, own, ['DEALS_READ']);
    const r = await t.gql(`query ($a: ID!) { deals(accountId: $a) { nodes { title contact { id contactType createdAt } } } }`, { a: own.id }, { as: key });
    expect(refusals(r).map(([path, , scope]) => [path, scope])).toContainEqual(['deals.nodes.0.contact.contactType', 'CONTACTS_READ']);
    expect(r.data.deals.nodes[0]).toEqual({ title: 'Apollo', contact: null });
  });

  it("a deals:write key is refused the contact's e-mail in its own write's answer", async () => {
    // With deals:read: without it the answer shows only what the key sent (write-answers.test.ts).
    const key = await createApiKey(t, own, ['DEALS_WRITE', 'DEALS_READ']);
    const r = await t.gql(`mutation ($i: CreateDealInput!) { createDeal(input: $i) { title ${CONTACT} } }`, { i: { accountId: own.id, title: 'Gemini', contactId: ownContactId } }, { as: key });
    expect(refusals(r).map(([path, , scope]) => [path, scope])).toEqual([['createDeal.contact.email', 'CONTACTS_READ'], ['createDeal.contact.phone', 'CONTACTS_READ']]);
    expect(r.data.createDeal.contact.lastName).toBe('Hamilton');
  });

  it('a key with contacts:read too reads the whole contact, and a person as before', async () => {
    const key = await createApiKey(t, own, ['DEALS_READ', 'CONTACTS_READ']);
    for (const as of [key, own.member]) {
      const r = await t.gql(`query ($a: ID!) { deals(accountId: $a) { nodes { ${CONTACT} } } }`, { a: own.id }, { as });
      expect(r.errors).toBeUndefined();
      expect(r.data.deals.nodes[0].contact).toMatchObject({ id: ownContactId, email: expect.stringContaining('@') });
    }
  });
});

describe('a batch or upsert answered to a key without the read scope carries ids and statuses only', () => {
  it("a deals:write key upserting a deal it names by external id reads its id and status, not the deal nor its contact", async () => {
    const ext = `apollo-${ownContactId.slice(0, 8)}`;
    await t.db.deal.create({ data: { accountId: own.id, title: 'Skylab', externalId: ext, contactId: ownContactId } });
    const key = await createApiKey(t, own, ['DEALS_WRITE']);
    const upsert = (as: TestUser) =>
      t.gql('mutation ($a: ID!, $i: [BatchDealInput!]!) { upsertDeals(accountId: $a, inputs: $i) { unchanged items { index id status deal { title contact { email } } } } }', { a: own.id, i: [{ externalId: ext }] }, { as });
    const r = await upsert(key);
    expect(r.errors).toBeUndefined();
    const deal = await t.db.deal.findFirstOrThrow({ where: { accountId: own.id, externalId: ext } });
    expect(r.data.upsertDeals).toEqual({ unchanged: 1, items: [{ index: 0, id: deal.id, status: 'UNCHANGED', deal: null }] });
    const reader = await upsert(await createApiKey(t, own, ['DEALS_WRITE', 'DEALS_READ', 'CONTACTS_READ']));
    expect(reader.data.upsertDeals.items[0].deal).toEqual({ title: 'Skylab', contact: { email: expect.stringContaining('@') } });
  });

  it('a contacts:write key upserting by e-mail learns which contact holds it (id, UNCHANGED), never its fields', async () => {
    const { email } = await t.db.contact.findUniqueOrThrow({ where: { id: ownContactId } });
    const key = await createApiKey(t, own, ['CONTACTS_WRITE']);
    const r = await t.gql(
      'mutation ($a: ID!, $i: [BatchContactInput!]!) { upsertContacts(accountId: $a, matchOn: EMAIL, inputs: $i) { items { id status contact { firstName phone externalId } } } }',
      { a: own.id, i: [{ email }] },
      { as: key },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.upsertContacts.items).toEqual([{ id: ownContactId, status: 'UNCHANGED', contact: null }]);
    const created = await t.gql('mutation ($a: ID!) { createContacts(accountId: $a, inputs: [{firstName: "Neil"}]) { items { id status contact { id } } } }', { a: own.id }, { as: key });
    expect(created.data.createContacts.items).toEqual([{ id: expect.any(String), status: 'CREATED', contact: null }]);
  });
});
