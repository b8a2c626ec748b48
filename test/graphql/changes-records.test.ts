import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type GqlResult, type TestApp } from '../helpers/app.js';

// docs/decisions.md §12 (docs/changes.md): update*/delete* of deals, invoices, stages, forms and the
// other records: their own rules, invalid input, stale expectedUpdatedAt. Access: test/security/access-matrix.test.ts.

let t: TestApp;
let acc: TestAccount;
let other: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
});
afterAll(() => t?.close());

const as = () => ({ as: acc.member });
const details = (r: GqlResult) => {
  const error = errorOf(r);
  expect(error.extensions?.code).toBe('BAD_USER_INPUT');
  return error.extensions?.details;
};
const code = (r: GqlResult) => errorOf(r).extensions?.code;

describe('Mutation.updateDeal / deleteDeal', () => {
  const UPDATE = 'mutation ($id: ID!, $input: UpdateDealInput!, $at: DateTime) { updateDeal(id: $id, input: $input, expectedUpdatedAt: $at) { id title value probability expectedCloseDate status contact { id } stage { id } updatedAt } }';

  test('changes what is given, clears with null, keeps its status; links only records of its account', async () => {
    const contact = await createContact(t, acc);
    const stage = await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'Won soon' } });
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Deal', contactId: contact.id, expectedCloseDate: new Date('2030-01-01') } });
    const r = await t.gql(UPDATE, { id: deal.id, input: { value: 10.5, stageId: stage.id, contactId: null, expectedCloseDate: null } }, as());
    expect(r.errors).toBeUndefined();
    expect(r.data.updateDeal).toMatchObject({ title: 'Deal', value: 10.5, status: 'open', contact: null, stage: { id: stage.id }, expectedCloseDate: null });
    const foreign = await createContact(t, other);
    expect(details(await t.gql(UPDATE, { id: deal.id, input: { contactId: foreign.id } }, as()))).toEqual({ contactId: ['Not found in this account'] });
  });

  test('one BAD_USER_INPUT names every failing field, the foreign contact too, as createDeal does; nothing is written', async () => {
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'All named' } });
    const foreign = await createContact(t, other);
    expect(details(await t.gql(UPDATE, { id: deal.id, input: { contactId: foreign.id, probability: 101, value: -5 } }, as()))).toEqual({
      contactId: ['Not found in this account'], probability: ['Must be from 0 to 100'], value: ['Must be from 0 to 9999999999.99'],
    });
    // Someone outside the deal's account learns nothing of the contact id (400 on the form, before the 404).
    expect(details(await t.gql(UPDATE, { id: deal.id, input: { contactId: foreign.id, probability: 101 } }, { as: other.member }))).toEqual({
      probability: ['Must be from 0 to 100'],
    });
    expect(await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).toMatchObject({ title: 'All named', contactId: null, probability: 50 });
  });

  test('the create rules apply to new values; null is Required for title, value and probability', async () => {
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Rules' } });
    expect(details(await t.gql(UPDATE, { id: deal.id, input: { title: null, value: 1.001, probability: null } }, as()))).toEqual({
      title: ['Required'], value: ['Must have at most two decimals'], probability: ['Required'],
    });
    expect(details(await t.gql(UPDATE, { id: deal.id, input: { title: '  ' } }, as()))).toEqual({ title: ['Required'] });
  });

  test('a stale expectedUpdatedAt is CONFLICT with currentUpdatedAt', async () => {
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Race' } });
    const first = await t.gql(UPDATE, { id: deal.id, input: { title: 'One' }, at: deal.updatedAt.toISOString() }, as());
    const stale = errorOf(await t.gql(UPDATE, { id: deal.id, input: { title: 'Two' }, at: deal.updatedAt.toISOString() }, as()));
    expect(stale.extensions).toMatchObject({ code: 'CONFLICT', currentUpdatedAt: first.data.updateDeal.updatedAt });
  });

  test('deleteDeal removes it; an unknown id is NOT_FOUND', async () => {
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Bye' } });
    expect((await t.gql('mutation ($id: ID!) { deleteDeal(id: $id) { id } }', { id: deal.id }, as())).data.deleteDeal.id).toBe(deal.id);
    expect(code(await t.gql('mutation ($id: ID!) { deleteDeal(id: $id) { id } }', { id: randomUUID() }, as()))).toBe('NOT_FOUND');
  });
});

describe('Mutation.updateInvoice / deleteInvoice: drafts only', () => {
  const UPDATE = 'mutation ($id: ID!, $input: UpdateInvoiceInput!, $at: DateTime) { updateInvoice(id: $id, input: $input, expectedUpdatedAt: $at) { id invoiceNumber amount dueDate updatedAt } }';
  const DELETE = 'mutation ($id: ID!) { deleteInvoice(id: $id) { id } }';
  const invoice = (status: 'draft' | 'sent' = 'draft', invoiceNumber = `N-${randomUUID().slice(0, 8)}`) =>
    t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber, amount: 5, dueDate: new Date('2030-01-31'), status } });

  test('a draft changes; its number stays unique in the account; null is Required for amount', async () => {
    const a = await invoice();
    const taken = await invoice();
    const r = await t.gql(UPDATE, { id: a.id, input: { amount: 7.25, dueDate: '2030-02-28' } }, as());
    expect(r.data.updateInvoice).toMatchObject({ amount: 7.25, dueDate: '2030-02-28' });
    expect(details(await t.gql(UPDATE, { id: a.id, input: { invoiceNumber: taken.invoiceNumber } }, as()))).toEqual({ invoiceNumber: ['Already used in this account'] });
    expect(details(await t.gql(UPDATE, { id: a.id, input: { amount: null, invoiceNumber: ' ' } }, as()))).toEqual({ amount: ['Required'], invoiceNumber: ['Required'] });
  });

  test('an invoice past draft is a billing record: update and delete are CONFLICT, and nothing changes', async () => {
    const sent = await invoice('sent');
    expect(code(await t.gql(UPDATE, { id: sent.id, input: { amount: 1 } }, as()))).toBe('CONFLICT');
    expect(code(await t.gql(DELETE, { id: sent.id }, as()))).toBe('CONFLICT');
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: sent.id } })).amount.toNumber()).toBe(5);
  });

  test('a stale expectedUpdatedAt is CONFLICT with currentUpdatedAt; a draft deletes', async () => {
    const a = await invoice();
    await t.gql(UPDATE, { id: a.id, input: { amount: 6 } }, as());
    expect(errorOf(await t.gql(UPDATE, { id: a.id, input: { amount: 8 }, at: a.updatedAt.toISOString() }, as())).extensions?.currentUpdatedAt).toBeTruthy();
    expect((await t.gql(DELETE, { id: a.id }, as())).errors).toBeUndefined();
    expect(code(await t.gql(DELETE, { id: a.id }, as()))).toBe('NOT_FOUND');
  });
});

describe('Mutation.updatePipelineStage / deletePipelineStage', () => {
  test('renames; null is Required; deleting moves its deals to moveDealsTo or unlinks them', async () => {
    const [from, to] = await Promise.all([
      t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'From' } }),
      t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'To' } }),
    ]);
    const r = await t.gql('mutation ($id: ID!) { updatePipelineStage(id: $id, input: { name: "Renamed", position: 3 }) { name position } }', { id: from.id }, as());
    expect(r.data.updatePipelineStage).toEqual({ name: 'Renamed', position: 3 });
    expect(details(await t.gql('mutation ($id: ID!) { updatePipelineStage(id: $id, input: { name: null }) { id } }', { id: from.id }, as()))).toEqual({ name: ['Required'] });
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Moves', stageId: from.id } });
    const foreign = await t.db.pipelineStage.create({ data: { accountId: other.id, name: 'Theirs' } });
    const DELETE = 'mutation ($id: ID!, $to: ID) { deletePipelineStage(id: $id, moveDealsTo: $to) { id } }';
    expect(details(await t.gql(DELETE, { id: from.id, to: foreign.id }, as()))).toEqual({ moveDealsTo: ['Not found in this account'] });
    expect(details(await t.gql(DELETE, { id: from.id, to: from.id }, as()))).toEqual({ moveDealsTo: ['Not found in this account'] });
    expect((await t.gql(DELETE, { id: from.id, to: to.id }, as())).errors).toBeUndefined();
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).stageId).toBe(to.id);
    expect((await t.gql(DELETE, { id: to.id }, as())).errors).toBeUndefined();
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).stageId).toBeNull();
  });
});

describe('Mutation.updateLeadForm / deleteLeadForm', () => {
  const form = () =>
    t.db.leadForm.create({
      data: { accountId: acc.id, name: 'Form', fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email', position: 0 }] } },
    });

  test('fields replace the form\'s fields under the create rules; the honeypot may not be a field', async () => {
    const f = await form();
    const UPDATE = 'mutation ($id: ID!, $input: UpdateLeadFormInput!) { updateLeadForm(id: $id, input: $input) { name fields { key } honeypotField } }';
    const r = await t.gql(UPDATE, { id: f.id, input: { name: 'New', fields: [{ key: 'name', label: 'Name', type: 'text', mapsTo: 'first_name' }] } }, as());
    expect(r.data.updateLeadForm).toEqual({ name: 'New', fields: [{ key: 'name' }], honeypotField: null });
    expect(details(await t.gql(UPDATE, { id: f.id, input: { fields: [{ key: 'x', label: 'X', type: 'text' }] } }, as()))).toEqual({ fields: ['A field must map to first_name or email'] });
    expect(details(await t.gql(UPDATE, { id: f.id, input: { honeypotField: 'name' } }, as()))).toEqual({ honeypotField: ['Must not be the key of a field people fill in'] });
    expect(details(await t.gql(UPDATE, { id: f.id, input: { fields: null, redirectUrl: 'ftp://x' } }, as()))).toEqual({
      fields: ['Required'], redirectUrl: ['Must be an absolute http or https URL'],
    });
  });

  test('a form with submissions is not deleted (CONFLICT); one without is', async () => {
    const used = await form();
    await t.db.formSubmission.create({ data: { accountId: acc.id, formId: used.id, data: { email: 'a@b.test' } } });
    const DELETE = 'mutation ($id: ID!) { deleteLeadForm(id: $id) { id } }';
    expect(code(await t.gql(DELETE, { id: used.id }, as()))).toBe('CONFLICT');
    expect(await t.db.formSubmission.count({ where: { formId: used.id } })).toBe(1);
    const unused = await form();
    expect((await t.gql(DELETE, { id: unused.id }, as())).errors).toBeUndefined();
    expect(await t.db.leadForm.findUnique({ where: { id: unused.id } })).toBeNull();
  });
});

describe('update*/delete* of proposals, contracts, galleries, bookings, workflows', () => {
  test('a booking still ends after it starts, judged against the stored other end', async () => {
    const b = await t.db.booking.create({ data: { accountId: acc.id, title: 'Call', startsAt: new Date('2030-01-01T09:00:00Z'), endsAt: new Date('2030-01-01T10:00:00Z') } });
    const UPDATE = 'mutation ($id: ID!, $input: UpdateBookingInput!) { updateBooking(id: $id, input: $input) { endsAt } }';
    expect(details(await t.gql(UPDATE, { id: b.id, input: { endsAt: '2030-01-01T08:00:00Z' } }, as()))).toEqual({ endsAt: ['Must be after startsAt'] });
    expect((await t.gql(UPDATE, { id: b.id, input: { endsAt: '2030-01-01T11:00:00Z' } }, as())).data.updateBooking.endsAt).toBe('2030-01-01T11:00:00.000Z');
  });

  test('a contact of another account is BAD_USER_INPUT; null clears the link; an empty input is refused', async () => {
    const contact = await createContact(t, acc);
    const p = await t.db.proposal.create({ data: { accountId: acc.id, title: 'P', contactId: contact.id, amount: 3 } });
    const UPDATE = 'mutation ($id: ID!, $input: UpdateProposalInput!) { updateProposal(id: $id, input: $input) { title amount contact { id } } }';
    const foreign = await createContact(t, other);
    expect(details(await t.gql(UPDATE, { id: p.id, input: { contactId: foreign.id } }, as()))).toEqual({ contactId: ['Not found in this account'] });
    expect(details(await t.gql(UPDATE, { id: p.id, input: { contactId: foreign.id, title: ' ' } }, as()))).toEqual({ contactId: ['Not found in this account'], title: ['Required'] });
    expect((await t.gql(UPDATE, { id: p.id, input: { contactId: null, amount: null } }, as())).data.updateProposal).toEqual({ title: 'P', amount: null, contact: null });
    expect(details(await t.gql(UPDATE, { id: p.id, input: {} }, as()))).toEqual({ input: ['Must change at least one field'] });
  });

  test('workflows, contracts and galleries change and delete; a deleted one is NOT_FOUND', async () => {
    const w = await t.db.workflow.create({ data: { accountId: acc.id, name: 'W' } });
    expect((await t.gql('mutation ($id: ID!) { updateWorkflow(id: $id, input: { active: false }) { active } }', { id: w.id }, as())).data.updateWorkflow.active).toBe(false);
    for (const [model, field] of [['contract', 'Contract'], ['gallery', 'Gallery']] as const) {
      const row = await (t.db[model] as unknown as { create(a: object): Promise<{ id: string }> }).create({ data: { accountId: acc.id, title: 'T' } });
      expect((await t.gql(`mutation ($id: ID!) { update${field}(id: $id, input: { title: "U" }) { title } }`, { id: row.id }, as())).errors).toBeUndefined();
      expect((await t.gql(`mutation ($id: ID!) { delete${field}(id: $id) { id } }`, { id: row.id }, as())).errors).toBeUndefined();
      expect(code(await t.gql(`mutation ($id: ID!) { delete${field}(id: $id) { id } }`, { id: row.id }, as()))).toBe('NOT_FOUND');
    }
  });
});

describe('Mutation.updateWebhookEndpoint', () => {
  const UPDATE = 'mutation ($id: ID!, $input: UpdateWebhookEndpointInput!, $at: DateTime) { updateWebhookEndpoint(id: $id, input: $input, expectedUpdatedAt: $at) { description updatedAt } }';

  test('a stale expectedUpdatedAt is CONFLICT with currentUpdatedAt, and nothing is written', async () => {
    const endpoint = await t.db.webhookEndpoint.create({
      data: { accountId: acc.id, url: 'https://93.184.215.14/hook', eventTypes: ['*'], description: 'Before', secretCiphertext: 'unused' },
    });
    const first = await t.gql(UPDATE, { id: endpoint.id, input: { description: 'One' }, at: endpoint.updatedAt.toISOString() }, { as: acc.owner });
    expect(first.errors).toBeUndefined();
    const stale = errorOf(await t.gql(UPDATE, { id: endpoint.id, input: { description: 'Two' }, at: endpoint.updatedAt.toISOString() }, { as: acc.owner }));
    expect(stale.extensions).toMatchObject({ code: 'CONFLICT', currentUpdatedAt: first.data.updateWebhookEndpoint.updatedAt });
    expect((await t.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpoint.id } })).description).toBe('One');
  });
});
