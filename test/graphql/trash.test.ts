import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createApiKey, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';
import { countersAndRows } from '../helpers/record-counts.js';
import type pg from 'pg';
import { purgeTrash } from '../../src/trash/purge.js';
import { accountExportStream } from '../../src/exports/account-json.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

// docs/decisions.md §22 (trash), docs/trash.md, through /graphql and REST: a delete moves a contact,
// deal or company to the trash; every read leaves it out; restore<Type> brings it back with its links;
// Account.trash lists it; the purge removes it after the retention; an erasure never passes through it.

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const RESTORE = (type: string, fields: string) => /* GraphQL */ `mutation ($id: ID!) { restore${type}(id: $id) { ${fields} } }`;
const restoreContact = (id: string, as = acc.member) => t.gql(RESTORE('Contact', 'id firstName email companyId externalId updatedAt'), { id }, { as });
const deleteContact = (id: string, as = acc.member) => t.gql(`mutation ($id: ID!) { deleteContact(id: $id) { id } }`, { id }, { as });
const deleteDeal = (id: string, as = acc.member) => t.gql(`mutation ($id: ID!) { deleteDeal(id: $id) { id } }`, { id }, { as });
const deleteCompany = (id: string, as = acc.member) => t.gql(`mutation ($id: ID!) { deleteCompany(id: $id) { id } }`, { id }, { as });
const TRASH = /* GraphQL */ `
  query ($id: ID!, $types: [TrashType!], $first: Int, $after: String) {
    account(id: $id) { trash(types: $types, first: $first, after: $after) { totalCount nodes { id type name deletedAt expiresAt } pageInfo { hasNextPage endCursor } } }
  }
`;
const trashOf = async (account: TestAccount, variables: Record<string, unknown> = {}) => (await t.gql(TRASH, { id: account.id, ...variables }, { as: account.member })).data.account.trash;
const eventsOf = (accountId: string, type: string, subjectId: string) => t.db.event.findMany({ where: { accountId, type, subjectId } });

describe('deleting moves to the trash, and every read leaves the record out', () => {
  test('a deleted contact: by id 404, gone from the list, its total, search, the CSV export and duplicate groups; Account.trash lists it', async () => {
    const own = await createAccount(t);
    const email = `${unique('gone')}@trash.test`;
    const gone = await createContact(t, own, { firstName: 'Zebulon', lastName: 'Trashed', email, externalId: unique('ext') });
    const twin = await createContact(t, own, { firstName: 'Zeb', email: email.toUpperCase() });
    const kept = await createContact(t, own, { firstName: 'Kept' });
    const groups = async () => (await t.gql(`query ($id: ID!) { account(id: $id) { duplicateContacts { contacts { id } } } }`, { id: own.id }, { as: own.member })).data.account.duplicateContacts;
    expect(await groups()).toHaveLength(1);

    expect((await deleteContact(gone.id, own.member)).errors).toBeUndefined();

    expect((await t.rest('GET', `/api/v1/contacts/${gone.id}`, { as: own.member })).status).toBe(404);
    expect((await t.gql(`query ($id: ID!) { contact(id: $id) { id } }`, { id: gone.id }, { as: own.member })).data.contact).toBeNull();
    const list = await t.rest('GET', `/api/v1/contacts?account_id=${own.id}`, { as: own.member });
    expect(list.body.data.map((c: { id: string }) => c.id).sort()).toEqual([twin.id, kept.id].sort());
    expect(list.body.total).toBe(2);
    const search = await t.gql(`query ($a: ID!) { search(accountId: $a, query: "Zebulon") { id } }`, { a: own.id }, { as: own.member });
    expect(search.data.search).toEqual([]);
    const csv = await t.rest('GET', `/api/v1/contacts/export?account_id=${own.id}`, { as: own.owner });
    expect(csv.status).toBe(200);
    expect(csv.text).toContain('Kept');
    expect(csv.text).not.toContain('Zebulon');
    expect(await groups()).toEqual([]);
    // Only the trash holds it, with its name and when it goes for good (TRASH_RETENTION_DAYS, 30 by default).
    const trash = await trashOf(own);
    expect(trash.totalCount).toBe(1);
    const [item] = trash.nodes;
    expect(item).toMatchObject({ id: gone.id, type: 'contact', name: 'Zebulon Trashed' });
    expect(new Date(item.expiresAt).getTime() - new Date(item.deletedAt).getTime()).toBe(30 * 24 * 3600 * 1000);
    expect(await t.db.contact.count({ where: { id: gone.id } })).toBe(0);
  });

  test("a deleted contact is in no report, and neither a form's match by e-mail nor a batch's by external id finds it", async () => {
    const own = await createAccount(t);
    const email = `${unique('match')}@trash.test`;
    const externalId = unique('ext');
    const gone = await createContact(t, own, { email, externalId, contactType: 'vendor', source: 'referral' });
    const count = (list: { key: string; count: number }[], key: string) => list.find((k) => k.key === key)?.count ?? 0;
    const counted = async () => {
      const report = await t.rest('GET', `/api/v1/reports/contacts?account_id=${own.id}`, { as: own.member });
      return [count(report.body.data.by_type, 'vendor'), count(report.body.data.by_source, 'referral')];
    };
    expect(await counted()).toEqual([1, 1]);
    await deleteContact(gone.id, own.member);
    expect(await counted()).toEqual([0, 0]);
    const batch = await t.rest('POST', '/api/v1/contacts/batch', {
      as: own.member, body: { account_id: own.id, mode: 'upsert', match_on: 'external_id', records: [{ first_name: 'Again', external_id: externalId }] },
    });
    expect(batch.body.data[0]).toMatchObject({ status: 'created' });
    expect(batch.body.data[0].id).not.toBe(gone.id);
    const form = await t.gql(
      'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }',
      { input: { accountId: own.id, name: unique('Form'), fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] } },
      { as: own.owner },
    );
    const submitted = await t.rest('POST', `/api/v1/forms/${form.data.createLeadForm.id}/submit`, { body: { data: { email } }, clientIp: '10.9.8.7' });
    expect(submitted.status, submitted.text).toBe(200);
    expect(submitted.body.contact_id).not.toBe(gone.id);
    // Restoring it now: its external id was taken by the batch's new contact (docs/trash.md#restoring).
    expect(errorOf(await restoreContact(gone.id, own.member)).extensions?.details).toEqual({ externalId: ['Already used in this account'] });
  });

  test('a deleted deal and company: gone from their lists and totals, and from the account export (JSON) with the deleted contact', async () => {
    const own = await createAccount(t);
    const made = async (path: string, body: Record<string, unknown>) => {
      const r = await t.rest('POST', path, { as: own.member, body: { account_id: own.id, ...body } });
      expect(r.status, r.text).toBe(201);
      return r.body.data.id as string;
    };
    const contact = (await createContact(t, own, { firstName: 'Exported', lastName: 'Never' })).id;
    const kept = (await createContact(t, own, { firstName: 'Stays' })).id;
    const deal = await made('/api/v1/deals', { title: unique('Gone deal'), value: 10 });
    const keptDeal = await made('/api/v1/deals', { title: unique('Kept deal'), value: 5 });
    const company = await made('/api/v1/companies', { name: unique('Gone Co') });
    const keptCompany = await made('/api/v1/companies', { name: unique('Kept Co') });
    expect((await deleteDeal(deal, own.member)).errors).toBeUndefined();
    expect((await deleteCompany(company, own.member)).errors).toBeUndefined();
    expect((await deleteContact(contact, own.member)).errors).toBeUndefined();
    for (const [path, live] of [['/api/v1/deals', keptDeal], ['/api/v1/companies', keptCompany]] as const) {
      const list = await t.rest('GET', `${path}?account_id=${own.id}`, { as: own.member });
      expect(list.status, list.text).toBe(200);
      expect([list.body.data.map((r: { id: string }) => r.id), list.body.total]).toEqual([[live], 1]);
    }
    const doc = JSON.parse(await new Response(accountExportStream(t.db, own.id, new Date())).text());
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
    expect([ids(doc.contacts), ids(doc.deals), ids(doc.companies)]).toEqual([[kept], [keptDeal], [keptCompany]]);
  });

  test('the batch delete (deleteContacts) moves each contact to the trash too', async () => {
    const a = await createContact(t, acc);
    const b = await createContact(t, acc);
    const r = await t.gql(`mutation ($a: ID!, $ids: [ID!]!) { deleteContacts(accountId: $a, ids: $ids) { deleted } }`, { a: acc.id, ids: [a.id, b.id] }, { as: acc.member });
    expect(r.data.deleteContacts.deleted).toBe(2);
    expect(await t.db.trashItem.count({ where: { recordId: { in: [a.id, b.id] } } })).toBe(2);
    expect((await restoreContact(a.id)).data.restoreContact.id).toBe(a.id);
  });

  test('Account.trash pages newest first and filters by types', async () => {
    const own = await createAccount(t);
    const contact = await createContact(t, own, { firstName: 'C' });
    const deal = await t.db.deal.create({ data: { accountId: own.id, title: 'The deal' } });
    const company = await t.db.company.create({ data: { accountId: own.id, name: 'The company' } });
    await deleteContact(contact.id, own.member);
    await deleteDeal(deal.id, own.member);
    await deleteCompany(company.id, own.member);
    const first = await trashOf(own, { first: 2 });
    expect(first.nodes.map((n: { name: string }) => n.name)).toEqual(['The company', 'The deal']);
    expect(first.totalCount).toBe(3);
    const next = await trashOf(own, { first: 2, after: first.pageInfo.endCursor });
    expect(next.nodes.map((n: { type: string }) => n.type)).toEqual(['contact']);
    const deals = await trashOf(own, { types: ['deal'] });
    expect(deals.nodes).toEqual([expect.objectContaining({ id: deal.id, type: 'deal' })]);
  });
});

describe('restore', () => {
  test('a contact comes back with its deals, invoices, submissions, notes (those about it alone too), tasks and its company; counters stay exact', async () => {
    const company = await t.db.company.create({ data: { accountId: acc.id, name: unique('Co') } });
    const contact = await createContact(t, acc, { companyId: company.id, externalId: unique('ext') });
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'D', contactId: contact.id } });
    const invoice = await t.db.invoice.create({ data: { accountId: acc.id, contactId: contact.id, invoiceNumber: unique('INV'), amount: 10, dueDate: new Date('2027-01-01') } });
    const alone = await t.db.note.create({ data: { accountId: acc.id, body: 'about the contact alone', contactId: contact.id } });
    const shared = await t.db.note.create({ data: { accountId: acc.id, body: 'about both', contactId: contact.id, dealId: deal.id } });
    const task = await t.db.task.create({ data: { accountId: acc.id, title: 'Call', contactId: contact.id } });
    const form = await t.db.leadForm.create({ data: { accountId: acc.id, name: unique('Form') } });
    const submission = await t.db.formSubmission.create({ data: { accountId: acc.id, formId: form.id, contactId: contact.id, data: {} } });

    expect((await deleteContact(contact.id)).errors).toBeUndefined();
    expect(await t.db.note.count({ where: { id: alone.id } })).toBe(0);
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).contactId).toBeNull();

    const r = await restoreContact(contact.id);
    expect(r.errors).toBeUndefined();
    expect(r.data.restoreContact).toMatchObject({ id: contact.id, firstName: contact.firstName, companyId: company.id, externalId: contact.externalId });
    expect(new Date(r.data.restoreContact.updatedAt).getTime()).toBeGreaterThan(contact.updatedAt.getTime());
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).contactId).toBe(contact.id);
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).contactId).toBe(contact.id);
    expect((await t.db.formSubmission.findUniqueOrThrow({ where: { id: submission.id } })).contactId).toBe(contact.id);
    expect(await t.db.note.findUniqueOrThrow({ where: { id: alone.id } })).toMatchObject({ body: 'about the contact alone', contactId: contact.id });
    expect(await t.db.note.findUniqueOrThrow({ where: { id: shared.id } })).toMatchObject({ contactId: contact.id, dealId: deal.id });
    expect((await t.db.task.findUniqueOrThrow({ where: { id: task.id } })).contactId).toBe(contact.id);
    expect(await t.db.trashItem.count({ where: { recordId: contact.id } })).toBe(0);
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
  });

  test('events: *.deleted as ever, then contact.restored, deal.restored and company.restored with the record as it is back', async () => {
    const contact = await createContact(t, acc);
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Evented' } });
    const company = await t.db.company.create({ data: { accountId: acc.id, name: unique('Evented') } });
    await deleteContact(contact.id);
    await deleteDeal(deal.id);
    await deleteCompany(company.id);
    expect(await eventsOf(acc.id, 'contact.deleted', contact.id)).toHaveLength(1);
    expect((await restoreContact(contact.id)).errors).toBeUndefined();
    expect((await t.gql(RESTORE('Deal', 'id title'), { id: deal.id }, { as: acc.member })).data.restoreDeal).toEqual({ id: deal.id, title: 'Evented' });
    expect((await t.gql(RESTORE('Company', 'id name'), { id: company.id }, { as: acc.member })).data.restoreCompany).toEqual({ id: company.id, name: company.name });
    for (const [type, id] of [['contact.restored', contact.id], ['deal.restored', deal.id], ['company.restored', company.id]] as const) {
      const events = await eventsOf(acc.id, type, id);
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ object: { id } });
      expect(events[0]!.actorId).toBe(acc.member.id);
    }
  });

  test('a link whose target is itself gone stays empty, and comes back when that target is restored in its turn', async () => {
    const contact = await createContact(t, acc);
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Linked', contactId: contact.id } });
    await deleteDeal(deal.id);
    await deleteContact(contact.id);
    const back = await t.gql(RESTORE('Deal', 'id contact { id }'), { id: deal.id }, { as: acc.member });
    expect(back.errors).toBeUndefined();
    expect(back.data.restoreDeal).toEqual({ id: deal.id, contact: null });
    expect((await restoreContact(contact.id)).errors).toBeUndefined();
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).contactId).toBe(contact.id);
    // The other order: the contact first, then the deal that was in the trash when the contact came back.
    await deleteContact(contact.id);
    await deleteDeal(deal.id);
    expect((await restoreContact(contact.id)).errors).toBeUndefined();
    expect((await t.gql(RESTORE('Deal', 'contact { id }'), { id: deal.id }, { as: acc.member })).data.restoreDeal.contact).toEqual({ id: contact.id });
  });

  test("a company comes back with its contacts and deals linked again; a contact's own link to it, from the trash, too", async () => {
    const company = await t.db.company.create({ data: { accountId: acc.id, name: unique('Linked Co') } });
    const contact = await createContact(t, acc, { companyId: company.id });
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Co deal', companyId: company.id } });
    await deleteCompany(company.id);
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: contact.id } })).companyId).toBeNull();
    expect((await t.gql(RESTORE('Company', 'id'), { id: company.id }, { as: acc.member })).errors).toBeUndefined();
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: contact.id } })).companyId).toBe(company.id);
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).companyId).toBe(company.id);
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
  });

  test("a contact comes back with its custom fields' values (docs/decisions.md §23): the whole row is kept", async () => {
    const own = await createAccount(t);
    const defined = await t.gql(
      'mutation ($a: ID!, $input: CreateCustomFieldInput!) { createCustomField(accountId: $a, input: $input) { id } }',
      { a: own.id, input: { object: 'CONTACT', key: 'tier', label: 'Tier', type: 'TEXT' } },
      { as: own.owner },
    );
    expect(defined.errors).toBeUndefined();
    const created = await t.gql('mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }', { input: { accountId: own.id, firstName: 'Tiered', customFields: { tier: 'gold' } } }, { as: own.member });
    const id = created.data.createContact.id;
    await deleteContact(id, own.member);
    const back = await t.gql(RESTORE('Contact', 'id customFields'), { id }, { as: own.member });
    expect(back.data.restoreContact).toEqual({ id, customFields: { tier: 'gold' } });
  });

  test('a row linked elsewhere since the delete keeps its new link', async () => {
    const contact = await createContact(t, acc);
    const other = await createContact(t, acc);
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Moved on', contactId: contact.id } });
    await deleteContact(contact.id);
    await t.db.deal.update({ where: { id: deal.id }, data: { contactId: other.id } });
    await restoreContact(contact.id);
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).contactId).toBe(other.id);
  });

  test('an id not in the trash is NOT_FOUND (REST 404): unknown, live, already restored, or in another account', async () => {
    const live = await createContact(t, acc);
    const other = await createAccount(t);
    const theirs = await createContact(t, other);
    await deleteContact(theirs.id, other.member);
    for (const id of [randomUUID(), live.id, theirs.id]) {
      expect(errorOf(await restoreContact(id)).extensions?.code).toBe('NOT_FOUND');
      expect((await t.rest('POST', `/api/v1/contacts/${id}/restore`, { as: acc.member, body: {} })).status).toBe(404);
    }
    const gone = await createContact(t, acc);
    await deleteContact(gone.id);
    expect((await restoreContact(gone.id)).errors).toBeUndefined();
    expect(errorOf(await restoreContact(gone.id)).extensions?.code).toBe('NOT_FOUND');
    // A deal's id is not a contact: restoreContact does not bring back a trashed deal.
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Not a contact' } });
    await deleteDeal(deal.id);
    expect(errorOf(await restoreContact(deal.id)).extensions?.code).toBe('NOT_FOUND');
    expect(await t.db.trashItem.count({ where: { recordId: { in: [theirs.id, deal.id] } } })).toBe(2);
  });

  test('a unique value taken since (an external id, a domain) is a 400 naming the field (TAKEN); nothing is written', async () => {
    const externalId = unique('ext');
    const contact = await createContact(t, acc, { externalId });
    await deleteContact(contact.id);
    await createContact(t, acc, { externalId });
    const error = errorOf(await restoreContact(contact.id));
    expect(error.extensions?.code).toBe('BAD_USER_INPUT');
    expect(error.extensions?.details).toEqual({ externalId: ['Already used in this account'] });
    expect(await t.db.trashItem.count({ where: { recordId: contact.id } })).toBe(1);
    const taken = await t.rest('POST', `/api/v1/contacts/${contact.id}/restore`, { as: acc.member, body: {} });
    expect(taken.status).toBe(400);
    expect(taken.body.details).toEqual({ external_id: ['Already used in this account'] });

    const domain = `${unique('d')}.example`;
    const company = await t.db.company.create({ data: { accountId: acc.id, name: 'Domain', domain } });
    await deleteCompany(company.id);
    await t.db.company.create({ data: { accountId: acc.id, name: 'Took it', domain } });
    const rest = await t.rest('POST', `/api/v1/companies/${company.id}/restore`, { as: acc.member, body: {} });
    expect(rest.status).toBe(400);
    expect(rest.body.details).toEqual({ domain: ['Already used in this account'] });
  });

  test('an API key needs the write scope of the record to restore it (contacts:write, deals:write, companies:write)', async () => {
    const reader = await createApiKey(t, acc, ['CONTACTS_READ', 'DEALS_WRITE']);
    const writer = await createApiKey(t, acc, ['CONTACTS_READ', 'CONTACTS_WRITE']);
    const contact = await createContact(t, acc);
    await deleteContact(contact.id);
    const refused = errorOf(await restoreContact(contact.id, reader));
    expect(refused.extensions?.code).toBe('FORBIDDEN');
    expect((await t.rest('POST', `/api/v1/contacts/${contact.id}/restore`, { as: reader, body: {} })).status).toBe(403);
    const rest = await t.rest('POST', `/api/v1/contacts/${contact.id}/restore`, { as: writer, body: {} });
    expect(rest.status).toBe(200);
    expect(rest.body.data).toMatchObject({ id: contact.id, first_name: contact.firstName });
  });

  test('REST: DELETE then POST /api/v1/<collection>/{id}/restore brings a deal and a company back', async () => {
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Over REST' } });
    const company = await t.db.company.create({ data: { accountId: acc.id, name: unique('REST Co') } });
    expect((await t.rest('DELETE', `/api/v1/deals/${deal.id}`, { as: acc.member })).status).toBe(204);
    expect((await t.rest('DELETE', `/api/v1/companies/${company.id}`, { as: acc.member })).status).toBe(204);
    expect((await t.rest('GET', `/api/v1/deals/${deal.id}`, { as: acc.member })).status).toBe(404);
    const d = await t.rest('POST', `/api/v1/deals/${deal.id}/restore`, { as: acc.member, body: {} });
    expect(d.status).toBe(200);
    expect(d.body.data).toMatchObject({ id: deal.id, title: 'Over REST' });
    const c = await t.rest('POST', `/api/v1/companies/${company.id}/restore`, { as: acc.member, body: {} });
    expect(c.status).toBe(200);
    expect(c.body.data).toMatchObject({ id: company.id, name: company.name });
    expect((await t.rest('GET', `/api/v1/deals/${deal.id}`, { as: acc.member })).status).toBe(200);
  });
});

describe('the purge', () => {
  test('removes what was deleted more than TRASH_RETENTION_DAYS ago, in bounded batches, and nothing younger; it emits nothing', async () => {
    const own = await createAccount(t);
    const old = await Promise.all([1, 2, 3].map(() => createContact(t, own)));
    const young = await createContact(t, own);
    for (const c of [...old, young]) await deleteContact(c.id, own.member);
    const deletedAt = new Date('2026-01-01T00:00:00Z');
    await t.db.trashItem.updateMany({ where: { recordId: { in: old.map((c) => c.id) } }, data: { deletedAt } });
    const events = await t.db.event.count({ where: { accountId: own.id } });
    // 30 days less a second after: nothing yet.
    const early = await purgeTrash(t.db, { retentionDays: 30, now: new Date(deletedAt.getTime() + 30 * 86_400_000 - 1000) });
    expect(await t.db.trashItem.count({ where: { accountId: own.id } })).toBe(4);
    expect(early.lockedOut).toBe(false);
    const run = await purgeTrash(t.db, { retentionDays: 30, batchSize: 2, now: new Date(deletedAt.getTime() + 30 * 86_400_000 + 1000) });
    expect(run.purged).toBeGreaterThanOrEqual(3);
    expect(run.batches).toBeGreaterThanOrEqual(2);
    expect((await t.db.trashItem.findMany({ where: { accountId: own.id } })).map((i) => i.recordId)).toEqual([young.id]);
    expect(errorOf(await restoreContact(old[0]!.id, own.member)).extensions?.code).toBe('NOT_FOUND');
    expect(await t.db.event.count({ where: { accountId: own.id } })).toBe(events);
  });
  test.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('one instance at a time: while another holds the purge\'s lock, a run is locked out and removes nothing', async () => {
    const own = await createAccount(t);
    const old = await createContact(t, own);
    await deleteContact(old.id, own.member);
    await t.db.trashItem.updateMany({ where: { recordId: old.id }, data: { deletedAt: new Date('2026-01-01T00:00:00Z') } });
    const other = await (t.deps.db.pool as pg.Pool).connect();
    try {
      await other.query(`SELECT pg_advisory_lock(hashtextextended('trash:purge', 0))`);
      expect(await purgeTrash(t.db, { retentionDays: 30 })).toEqual({ purged: 0, batches: 0, lockedOut: true });
      expect(await t.db.trashItem.count({ where: { recordId: old.id } })).toBe(1);
    } finally {
      await other.query(`SELECT pg_advisory_unlock(hashtextextended('trash:purge', 0))`);
      other.release();
    }
    expect((await purgeTrash(t.db, { retentionDays: 30 })).lockedOut).toBe(false);
    expect(await t.db.trashItem.count({ where: { recordId: old.id } })).toBe(0);
  });
});

describe('what never passes through the trash', () => {
  test('eraseContact deletes for real; erasing a contact in the trash removes that copy too', async () => {
    const live = await createContact(t, acc, { email: `${unique('erase')}@trash.test` });
    const erase = (id: string) => t.gql(`mutation ($id: ID!) { eraseContact(id: $id) { contactId } }`, { id }, { as: acc.owner });
    expect((await erase(live.id)).data.eraseContact.contactId).toBe(live.id);
    expect(await t.db.trashItem.count({ where: { recordId: live.id } })).toBe(0);
    expect(await t.db.contact.count({ where: { id: live.id } })).toBe(0);

    const trashed = await createContact(t, acc, { email: `${unique('erase')}@trash.test` });
    await deleteContact(trashed.id);
    expect((await erase(trashed.id)).data.eraseContact.contactId).toBe(trashed.id);
    expect(await t.db.trashItem.count({ where: { recordId: trashed.id } })).toBe(0);
    expect(await t.db.erasureLog.count({ where: { contactId: trashed.id } })).toBe(1);
    expect(errorOf(await restoreContact(trashed.id)).extensions?.code).toBe('NOT_FOUND');
    // Its earlier events keep ids only, contact.deleted's copy of the person too.
    const [deleted] = await eventsOf(acc.id, 'contact.deleted', trashed.id);
    expect(deleted!.data).toEqual({ object: { id: trashed.id } });
  });

  test('a merge deletes its duplicates for real, not to the trash', async () => {
    const primary = await createContact(t, acc);
    const dup = await createContact(t, acc);
    const r = await t.gql(`mutation ($p: ID!, $d: [ID!]!) { mergeContacts(primaryId: $p, duplicateIds: $d) { id } }`, { p: primary.id, d: [dup.id] }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    expect(await t.db.trashItem.count({ where: { recordId: dup.id } })).toBe(0);
  });
});
