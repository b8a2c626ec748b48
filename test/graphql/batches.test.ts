/**
 * docs/decisions.md §16: external ids on contacts, deals and invoices; batches and upserts of
 * contacts and deals through the one set-based write path (src/writes/).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { roundTrips } from '../helpers/round-trips.js';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

describe('external_id', () => {
  test('is set on create and update, shown on Contact, Deal and Invoice, and filtered on exactly', async () => {
    const ext = unique('crm');
    const created = await t.gql(
      'mutation($i: CreateContactInput!) { createContact(input: $i) { id externalId } }',
      { i: { accountId: acc.id, firstName: 'Ada', externalId: ext } },
      { as: acc.member },
    );
    expect(created.data.createContact.externalId).toBe(ext);
    const id = created.data.createContact.id as string;
    await createContact(t, acc, { externalId: `${ext}-other` });

    const byFilter = await t.gql(
      'query($a: ID!, $e: String) { contacts(accountId: $a, externalId: $e) { total nodes { id } } account(id: $a) { contacts(first: 5, filter: { externalId: $e }) { totalCount nodes { id } } } }',
      { a: acc.id, e: ext },
      { as: acc.member },
    );
    expect(byFilter.data.contacts).toEqual({ total: 1, nodes: [{ id }] });
    expect(byFilter.data.account.contacts).toEqual({ totalCount: 1, nodes: [{ id }] });

    const updated = await t.gql('mutation($id: ID!) { updateContact(id: $id, input: { externalId: null }) { externalId } }', { id }, { as: acc.member });
    expect(updated.data.updateContact.externalId).toBeNull();

    const deal = await t.gql('mutation($i: CreateDealInput!) { createDeal(input: $i) { id externalId } }', { i: { accountId: acc.id, title: 'D', externalId: ext } }, { as: acc.member });
    expect(deal.data.createDeal.externalId).toBe(ext); // unique per type: a contact may hold the same id
    const invoice = await t.gql(
      'mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { id externalId } }',
      { i: { accountId: acc.id, amount: 1, dueDate: '2030-01-01', externalId: ext } },
      { as: acc.member },
    );
    expect(invoice.data.createInvoice.externalId).toBe(ext);
    const lists = await t.gql(
      'query($a: ID!, $e: String) { deals(accountId: $a, externalId: $e) { total } invoices(accountId: $a, externalId: $e) { total } }',
      { a: acc.id, e: ext },
      { as: acc.member },
    );
    expect(lists.data).toEqual({ deals: { total: 1 }, invoices: { total: 1 } });
  });

  test('a blank externalId filter is a BAD_USER_INPUT on externalId, on the page and the connection alike', async () => {
    const page = await t.gql('query($a: ID!) { contacts(accountId: $a, externalId: " ") { total } }', { a: acc.id }, { as: acc.member });
    expect(errorOf(page).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { externalId: ['Must not be blank'] } });
    const connection = await t.gql('query($a: ID!) { account(id: $a) { deals(filter: { externalId: "" }) { totalCount } } }', { a: acc.id }, { as: acc.member });
    expect(errorOf(connection).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { externalId: ['Must not be blank'] } });
  });

  test('an external_id another record of the account holds is a BAD_USER_INPUT on externalId, on create and update alike', async () => {
    const ext = unique('taken');
    await createContact(t, acc, { externalId: ext });
    const other = await createContact(t, acc);
    const create = await t.gql('mutation($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: { accountId: acc.id, firstName: 'B', externalId: ext } }, { as: acc.member });
    expect(errorOf(create).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { externalId: ['Already used in this account'] } });
    const update = await t.gql('mutation($id: ID!, $e: String) { updateContact(id: $id, input: { externalId: $e }) { id } }', { id: other.id, e: ext }, { as: acc.member });
    expect(errorOf(update).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { externalId: ['Already used in this account'] } });

    await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: unique('INV'), amount: 1, dueDate: new Date('2030-01-01'), externalId: ext } });
    const invoice = await t.gql(
      'mutation($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }',
      { i: { accountId: acc.id, amount: 1, dueDate: '2030-01-01', externalId: ext } },
      { as: acc.member },
    );
    expect(errorOf(invoice).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { externalId: ['Already used in this account'] } });
  });

  test('an external_id over 255 characters is refused on externalId; another account may hold the same one', async () => {
    const long = await t.gql('mutation($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: { accountId: acc.id, firstName: 'L', externalId: 'x'.repeat(256) } }, { as: acc.member });
    expect(errorOf(long).extensions).toMatchObject({ details: { externalId: ['Must be at most 255 characters'] } });
    const ext = unique('shared');
    await createContact(t, acc, { externalId: ext });
    const other = await createAccount(t);
    const r = await t.gql('mutation($i: CreateContactInput!) { createContact(input: $i) { externalId } }', { i: { accountId: other.id, firstName: 'O', externalId: ext } }, { as: other.member });
    expect(r.data.createContact.externalId).toBe(ext);
  });
});

const CONTACT_FIELDS = 'index status details contact { id firstName lastName email company externalId contactType }';
const createContacts = (accountId: string, inputs: unknown[], allOrNothing = false, as = acc.member) =>
  t.gql(`mutation($a: ID!, $i: [BatchContactInput!]!, $all: Boolean) { r: createContacts(accountId: $a, inputs: $i, allOrNothing: $all) { created updated unchanged failed items { ${CONTACT_FIELDS} } } }`, { a: accountId, i: inputs, all: allOrNothing }, { as });
const upsertContacts = (accountId: string, matchOn: 'EMAIL' | 'EXTERNAL_ID', inputs: unknown[], as = acc.member) =>
  t.gql(`mutation($a: ID!, $m: ContactMatch!, $i: [BatchContactInput!]!) { r: upsertContacts(accountId: $a, matchOn: $m, inputs: $i) { created updated unchanged failed items { ${CONTACT_FIELDS} } } }`, { a: accountId, m: matchOn, i: inputs }, { as });
const eventsOf = (subjectId: string) => t.db.event.findMany({ where: { subjectId }, orderBy: { occurredAt: 'asc' } });

describe('createContacts', () => {
  test('each valid item is CREATED with its contact.created event; a failing one names every field by its REST name and writes nothing of itself', async () => {
    const ext = unique('ext');
    const r = await createContacts(acc.id, [
      { firstName: 'Ada', externalId: ext },
      { firstName: 'x'.repeat(101), externalId: 'e'.repeat(256), email: 'not-an-address' },
      { firstName: 'Grace', contactType: 'client' },
    ]);
    expect(r.errors).toBeUndefined();
    expect(r.data.r).toMatchObject({ created: 2, updated: 0, unchanged: 0, failed: 1 });
    const [ada, bad, grace] = r.data.r.items;
    expect(ada).toMatchObject({ index: 0, status: 'CREATED', details: null, contact: { firstName: 'Ada', externalId: ext, contactType: 'lead' } });
    expect(bad).toEqual({
      index: 1, status: 'FAILED', contact: null,
      details: { first_name: ['Must be at most 100 characters'], external_id: ['Must be at most 255 characters'], email: ['Must be a valid e-mail address'] },
    });
    expect(grace).toMatchObject({ index: 2, status: 'CREATED', contact: { firstName: 'Grace', contactType: 'client' } });
    const events = await eventsOf(ada.contact.id);
    expect(events.map((e) => e.type)).toEqual(['contact.created']);
    expect((events[0]!.data as { object: Record<string, unknown> }).object).toMatchObject({ id: ada.contact.id, first_name: 'Ada', external_id: ext });
    expect(await t.db.contact.count({ where: { accountId: acc.id, firstName: 'x'.repeat(100) } })).toBe(0);
  });

  test('allOrNothing: one failure writes nothing and every item reports FAILED', async () => {
    const name = unique('AllOrNothing');
    const r = await createContacts(acc.id, [{ firstName: name }, { firstName: '' }], true);
    expect(r.data.r).toMatchObject({ created: 0, failed: 2 });
    expect(r.data.r.items.map((i: { status: string }) => i.status)).toEqual(['FAILED', 'FAILED']);
    expect(r.data.r.items[1].details).toEqual({ first_name: ['Required'] });
    expect(r.data.r.items[0].details).toEqual({ all_or_nothing: ['Not written: another record of the batch failed'] });
    expect(await t.db.contact.count({ where: { firstName: name } })).toBe(0);
  });

  test('allOrNothing: an external id taken in the database is found by the write, and the whole batch rolls back', async () => {
    const ext = unique('taken');
    await createContact(t, acc, { externalId: ext });
    const name = unique('Rolled');
    const r = await createContacts(acc.id, [{ firstName: name }, { firstName: name, externalId: ext }], true);
    expect(r.data.r).toMatchObject({ created: 0, failed: 2 });
    expect(r.data.r.items[1].details).toEqual({ external_id: ['Already used in this account'] });
    expect(await t.db.contact.count({ where: { firstName: name } })).toBe(0);
    expect(await t.db.event.count({ where: { accountId: acc.id, type: 'contact.created', data: { path: ['object', 'first_name'], equals: name } } })).toBe(0);
  });

  test('two items with one external id: the later one is FAILED with "Duplicate in this batch"; a taken one is "Already used in this account"', async () => {
    const ext = unique('dup');
    const taken = unique('taken');
    await createContact(t, acc, { externalId: taken });
    const r = await createContacts(acc.id, [{ firstName: 'A', externalId: ext }, { firstName: 'B', externalId: ext }, { firstName: 'C', externalId: taken }]);
    expect(r.data.r.items.map((i: { status: string }) => i.status)).toEqual(['CREATED', 'FAILED', 'FAILED']);
    expect(r.data.r.items[1].details).toEqual({ external_id: ['Duplicate in this batch'] });
    expect(r.data.r.items[2].details).toEqual({ external_id: ['Already used in this account'] });
  });

  test('0 or 101 inputs are a BAD_USER_INPUT on inputs; an outsider is FORBIDDEN and writes nothing', async () => {
    expect(errorOf(await createContacts(acc.id, [])).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { inputs: ['Must have 1 to 100 records'] } });
    const many = Array.from({ length: 101 }, () => ({ firstName: 'Many' }));
    expect(errorOf(await createContacts(acc.id, many)).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { inputs: ['Must have 1 to 100 records'] } });
    const name = unique('Outsider');
    expect(errorOf(await createContacts(acc.id, [{ firstName: name }], false, acc.outsider)).extensions?.code).toBe('FORBIDDEN');
    expect(await t.db.contact.count({ where: { firstName: name } })).toBe(0);
  });
});

describe('upsertContacts', () => {
  test('by EMAIL: matches case-insensitively (the oldest if several), updates only the given fields, UNCHANGED when nothing differs, creates when nothing matches', async () => {
    const email = `${unique('up')}@example.com`;
    const oldest = await createContact(t, acc, { firstName: 'Old', email, company: 'Keep', createdAt: new Date('2020-01-01') });
    const newer = await createContact(t, acc, { firstName: 'New', email: email.toUpperCase() });
    const fresh = `${unique('fresh')}@example.com`;
    const r = await upsertContacts(acc.id, 'EMAIL', [
      { email: email.toUpperCase(), lastName: 'Changed' },
      { email: fresh, firstName: 'Fresh' },
    ]);
    expect(r.errors).toBeUndefined();
    expect(r.data.r).toMatchObject({ created: 1, updated: 1, unchanged: 0, failed: 0 });
    expect(r.data.r.items[0]).toMatchObject({ status: 'UPDATED', contact: { id: oldest.id, firstName: 'Old', lastName: 'Changed', company: 'Keep' } });
    expect(r.data.r.items[1]).toMatchObject({ status: 'CREATED', contact: { email: fresh, firstName: 'Fresh' } });
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: newer.id } })).lastName).toBe('Tester');
    const updated = (await eventsOf(oldest.id)).find((e) => e.type === 'contact.updated')!;
    expect((updated.data as { previous: unknown }).previous).toEqual({ email, last_name: 'Tester' });

    const again = await upsertContacts(acc.id, 'EMAIL', [{ email: email.toUpperCase(), lastName: 'Changed' }]);
    expect(again.data.r).toMatchObject({ unchanged: 1, updated: 0 });
    expect(again.data.r.items[0]).toMatchObject({ status: 'UNCHANGED', contact: { id: oldest.id } });
  });

  test('by EXTERNAL_ID: matches exactly; no key is a FAILED item on it; two items with one key: the later is FAILED', async () => {
    const ext = unique('Ext');
    const existing = await createContact(t, acc, { externalId: ext, firstName: 'Before' });
    const r = await upsertContacts(acc.id, 'EXTERNAL_ID', [
      { externalId: ext, firstName: 'After' },
      { externalId: ext.toLowerCase() === ext ? `${ext}-B` : ext.toLowerCase(), firstName: 'Other' },
      { firstName: 'NoKey' },
      { externalId: ext, firstName: 'Twice' },
    ]);
    expect(r.data.r.items.map((i: { status: string }) => i.status)).toEqual(['UPDATED', 'CREATED', 'FAILED', 'FAILED']);
    expect(r.data.r.items[0].contact).toMatchObject({ id: existing.id, firstName: 'After' });
    expect(r.data.r.items[2].details).toEqual({ external_id: ['Required'] });
    expect(r.data.r.items[3].details).toEqual({ external_id: ['Duplicate in this batch'] });
  });

  test('by EMAIL: two items with one address (any case): the later is FAILED with "Duplicate in this batch" on email', async () => {
    const email = `${unique('twice')}@example.com`;
    const r = await upsertContacts(acc.id, 'EMAIL', [{ email, firstName: 'One' }, { email: email.toUpperCase(), firstName: 'Two' }]);
    expect(r.data.r.items.map((i: { status: string }) => i.status)).toEqual(['CREATED', 'FAILED']);
    expect(r.data.r.items[1].details).toEqual({ email: ['Duplicate in this batch'] });
  });

  test('a new record needs what a create needs: no first name is FAILED on first_name', async () => {
    const r = await upsertContacts(acc.id, 'EMAIL', [{ email: `${unique('nofirst')}@example.com` }]);
    expect(r.data.r.items[0]).toMatchObject({ status: 'FAILED', details: { first_name: ['Required'] } });
  });
});

const DEAL_FIELDS = 'index status details deal { id title value probability status externalId contact { id } }';

describe('createDeals and upsertDeals', () => {
  test('a contact or stage of another account fails that item on contact_id / stage_id, beside its other problems; the others are written', async () => {
    const other = await createAccount(t);
    const theirs = await createContact(t, other);
    const mine = await createContact(t, acc);
    const r = await t.gql(
      `mutation($a: ID!, $i: [BatchDealInput!]!) { r: createDeals(accountId: $a, inputs: $i) { created failed items { ${DEAL_FIELDS} } } }`,
      { a: acc.id, i: [{ title: 'Mine', contactId: mine.id, value: 10.5 }, { title: 'Theirs', contactId: theirs.id }, { title: '', probability: 120, contactId: theirs.id }] },
      { as: acc.member },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.r).toMatchObject({ created: 1, failed: 2 });
    expect(r.data.r.items[0]).toMatchObject({ status: 'CREATED', deal: { title: 'Mine', value: 10.5, probability: 50, status: 'open', contact: { id: mine.id } } });
    expect(r.data.r.items[1]).toMatchObject({ status: 'FAILED', details: { contact_id: ['Not found in this account'] } });
    // Every failing field at once: its own rules and the link to another account.
    expect(r.data.r.items[2]).toMatchObject({ status: 'FAILED', details: { title: ['Required'], probability: ['Must be from 0 to 100'], contact_id: ['Not found in this account'] } });
  });

  test('upsertDeals matches on externalId: updates only the given fields, UNCHANGED when nothing differs, creates otherwise', async () => {
    const ext = unique('deal');
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Before', value: 100, externalId: ext } });
    const upsert = (inputs: unknown[]) =>
      t.gql(`mutation($a: ID!, $i: [BatchDealInput!]!) { r: upsertDeals(accountId: $a, inputs: $i) { created updated unchanged failed items { ${DEAL_FIELDS} } } }`, { a: acc.id, i: inputs }, { as: acc.member });
    const r = await upsert([{ externalId: ext, value: 250.25 }, { externalId: `${ext}-new`, title: 'New' }]);
    expect(r.data.r).toMatchObject({ created: 1, updated: 1 });
    expect(r.data.r.items[0].deal).toMatchObject({ id: deal.id, title: 'Before', value: 250.25 });
    const updated = (await eventsOf(deal.id)).find((e) => e.type === 'deal.updated')!;
    expect(updated.data).toMatchObject({ object: { value: 250.25, title: 'Before' }, previous: { value: 100 } });
    expect((await upsert([{ externalId: ext, value: 250.25, title: 'Before' }])).data.r).toMatchObject({ unchanged: 1, updated: 0 });
  });
});

describe('deleteContacts', () => {
  test('removes the account\'s contacts with their contact.deleted events; their deals stay, unlinked; an id the account does not hold fails', async () => {
    const a = await createContact(t, acc);
    const b = await createContact(t, acc);
    const theirs = await createContact(t, await createAccount(t));
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Linked', contactId: a.id } });
    const r = await t.gql(
      'mutation($a: ID!, $ids: [ID!]!) { deleteContacts(accountId: $a, ids: $ids) { deleted failed items { index id deleted details } } }',
      { a: acc.id, ids: [a.id, b.id, theirs.id] },
      { as: acc.member },
    );
    expect(r.data.deleteContacts).toMatchObject({ deleted: 2, failed: 1 });
    expect(r.data.deleteContacts.items[2]).toEqual({ index: 2, id: theirs.id, deleted: false, details: { id: ['Not found in this account'] } });
    expect(await t.db.contact.count({ where: { id: { in: [a.id, b.id] } } })).toBe(0);
    expect(await t.db.contact.count({ where: { id: theirs.id } })).toBe(1);
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).contactId).toBeNull();
    expect((await eventsOf(a.id)).map((e) => e.type)).toContain('contact.deleted');
  });
});

// Counted on pg's client (every round trip: BEGIN and COMMIT too); the embedded database's adapter
// runs a transaction's statements where no spy sees them, so this needs PostgreSQL.
describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('a set-based write: round trips do not grow with the batch', () => {
  const statements = roundTrips;
  const ok = async (r: Promise<{ errors?: unknown; data: any }>) => {
    const result = await r;
    expect(result.errors).toBeUndefined();
    return result.data;
  };

  test('upserting 100 contacts by e-mail costs the statements of upserting one; creating 100 those of creating one', async () => {
    const batchOf = (n: number) => Array.from({ length: n }, () => ({ email: `${unique('rt')}@example.com`, firstName: 'Round', externalId: unique('rt') }));
    // Warm: the caller known, the schema's caches filled.
    await ok(upsertContacts(acc.id, 'EMAIL', batchOf(1)));
    const one = await statements(() => ok(upsertContacts(acc.id, 'EMAIL', batchOf(1))));
    const hundred = await statements(() => ok(upsertContacts(acc.id, 'EMAIL', batchOf(100))));
    expect(hundred).toBe(one);
    expect(one).toBe(6); // access, BEGIN, lock, read, write (the companies of the e-mails' domains found in it, docs/decisions.md §21), COMMIT
    const created = await statements(() => ok(createContacts(acc.id, batchOf(100))));
    expect(created).toBe(await statements(() => ok(createContacts(acc.id, batchOf(1)))));
    expect(created).toBe(2); // access, then the one INSERT of the records (the companies of the e-mails' domains found in it), their events and webhook messages: no transaction
  });

  test('createContact without an Idempotency-Key is one statement beside the access check, its e-mail domain\'s company found in it: no transaction', async () => {
    await ok(t.gql('mutation($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: { accountId: acc.id, firstName: 'Warm' } }, { as: acc.member }));
    for (const email of [null, `${unique('one')}@example.com`]) {
      const n = await statements(() => ok(t.gql('mutation($i: CreateContactInput!) { createContact(input: $i) { id firstName } }', { i: { accountId: acc.id, firstName: 'One', email } }, { as: acc.member })));
      expect(n).toBe(2); // access, then INSERT ... RETURNING with its event (was 5: access, BEGIN, INSERT, event, COMMIT)
    }
  });
});
