/**
 * docs/decisions.md §16: external ids on contacts, deals and invoices; batches and upserts of
 * contacts and deals through the one set-based write path (src/batches/).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';

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
