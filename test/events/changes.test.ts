// docs/events.md and docs/decisions.md §13: the §12 changes (updates, deletes, erasure, team changes)
// each write their event in the change's own transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createMember, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const ok = async (p: Promise<{ errors?: unknown[]; data: any }>) => {
  const r = await p;
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data;
};
const eventsAbout = (subjectId: string) => t.db.event.findMany({ where: { subjectId }, orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] });
const typesOf = (accountId: string) => t.db.event.findMany({ where: { accountId }, orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }] }).then((es) => es.map((e) => e.type));

describe('updates and deletes', () => {
  it('an update carries the changed fields’ old values in previous; a delete carries the record as it was', async () => {
    const c = (await ok(t.gql('mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }',
      { i: { accountId: acc.id, firstName: 'Ada', company: 'Old Co' } }, { as: acc.member }))).createContact;
    await ok(t.gql('mutation ($id: ID!) { updateContact(id: $id, input: { company: "New Co", firstName: "Ada" }) { id } }', { id: c.id }, { as: acc.member }));
    await ok(t.gql('mutation ($id: ID!) { deleteContact(id: $id) { id } }', { id: c.id }, { as: acc.member }));
    const [created, updated, deleted] = await eventsAbout(c.id);
    expect(created!.type).toBe('contact.created');
    expect(updated).toMatchObject({ type: 'contact.updated', actorType: 'user', actorId: acc.member.id });
    // firstName was given but did not change: only company is in previous.
    expect(updated!.data).toEqual(expect.objectContaining({ object: expect.objectContaining({ company: 'New Co' }), previous: { company: 'Old Co' } }));
    expect(deleted).toMatchObject({ type: 'contact.deleted' });
    expect((deleted!.data as any).object).toMatchObject({ id: c.id, first_name: 'Ada', company: 'New Co' });
  });

  it('a refused update (stale expectedUpdatedAt) leaves no event', async () => {
    const c = (await ok(t.gql('mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: { accountId: acc.id, firstName: 'Stale' } }, { as: acc.member }))).createContact;
    const r = await t.gql('mutation ($id: ID!) { updateContact(id: $id, input: { company: "X" }, expectedUpdatedAt: "2000-01-01T00:00:00Z") { id } }', { id: c.id }, { as: acc.member });
    expect(r.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect((await eventsAbout(c.id)).map((e) => e.type)).toEqual(['contact.created']);
  });

  it('invoice.status_changed carries the old status; deleting a stage moves its deals with deal.updated', async () => {
    const inv = (await ok(t.gql('mutation ($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }', { i: { accountId: acc.id, amount: 5, dueDate: '2031-01-01' } }, { as: acc.member }))).createInvoice;
    await ok(t.gql('mutation ($id: ID!) { setInvoiceStatus(id: $id, status: sent) { id } }', { id: inv.id }, { as: acc.member }));
    const moved = (await eventsAbout(inv.id)).at(-1)!;
    expect(moved).toMatchObject({ type: 'invoice.status_changed', data: { object: { status: 'sent' }, previous: { status: 'draft' } } });

    const stage = (await ok(t.gql('mutation ($i: CreatePipelineStageInput!) { createPipelineStage(input: $i) { id } }', { i: { accountId: acc.id, name: unique('S') } }, { as: acc.member }))).createPipelineStage;
    const deal = (await ok(t.gql('mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId: acc.id, title: 'Staged', stageId: stage.id } }, { as: acc.member }))).createDeal;
    await ok(t.gql('mutation ($id: ID!) { deletePipelineStage(id: $id) { id } }', { id: stage.id }, { as: acc.member }));
    expect((await eventsAbout(deal.id)).map((e) => [e.type, (e.data as any).previous ?? null])).toEqual([
      ['deal.created', null],
      ['deal.updated', { stage_id: stage.id }],
    ]);
    expect((await eventsAbout(stage.id)).map((e) => e.type)).toEqual(['pipeline_stage.created', 'pipeline_stage.deleted']);
  });
});

describe('erasure', () => {
  it('eraseContact emits contact.erased with the id only and scrubs the person from earlier events', async () => {
    const c = (await ok(t.gql('mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }',
      { i: { accountId: acc.id, firstName: 'Erin', email: 'erin.erased@example.com' } }, { as: acc.member }))).createContact;
    await ok(t.gql('mutation ($id: ID!) { updateContact(id: $id, input: { lastName: "Erasable" }) { id } }', { id: c.id }, { as: acc.member }));
    await ok(t.gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id: c.id }, { as: acc.owner }));
    const events = await eventsAbout(c.id);
    expect(events.map((e) => e.type)).toEqual(['contact.created', 'contact.updated', 'contact.erased']);
    expect(events.at(-1)!.data).toEqual({ object: { id: c.id } });
    expect(JSON.stringify(events.map((e) => e.data))).not.toMatch(/Erin|erin\.erased|Erasable/);
  });
});

describe('team changes', () => {
  it('member.added, member.removed and ownership.transferred, each with its change', async () => {
    const account = await createAccount(t);
    const sam = await createMember(t, account.id);
    await ok(t.gql('mutation ($a: ID!, $u: ID!) { removeTeamMember(accountId: $a, userId: $u) { id } }', { a: account.id, u: account.member.id }, { as: account.owner }));
    await ok(t.gql('mutation ($a: ID!, $u: ID!) { transferOwnership(accountId: $a, userId: $u) { id } }', { a: account.id, u: sam.id }, { as: account.owner }));
    const events = await t.db.event.findMany({ where: { accountId: account.id, type: { in: ['member.removed', 'ownership.transferred'] } }, orderBy: { occurredAt: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['member.removed', 'ownership.transferred']);
    expect((events[0]!.data as any).object).toMatchObject({ user_id: account.member.id });
    expect(events[1]!.data).toMatchObject({ object: { owner_id: sam.id }, previous: { owner_id: account.owner.id } });
    await ok(t.gql('mutation ($a: ID!) { leaveAccount(accountId: $a) }', { a: account.id }, { as: account.owner }));
    expect((await typesOf(account.id)).at(-1)).toBe('member.removed');
  });
});
