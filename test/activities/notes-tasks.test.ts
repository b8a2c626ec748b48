import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';

// docs/decisions.md §21: notes and tasks on contacts, deals and companies.

const NOTE = 'id body pinned authorId contactId dealId companyId';
const TASK = 'id title status dueAt completedAt assigneeId contactId dealId companyId';
const CREATE_NOTE = `mutation ($input: CreateNoteInput!) { createNote(input: $input) { ${NOTE} } }`;
const UPDATE_NOTE = `mutation ($id: ID!, $input: UpdateNoteInput!) { updateNote(id: $id, input: $input) { ${NOTE} } }`;
const CREATE_TASK = `mutation ($input: CreateTaskInput!) { createTask(input: $input) { ${TASK} } }`;
const UPDATE_TASK = `mutation ($id: ID!, $input: UpdateTaskInput!) { updateTask(id: $id, input: $input) { ${TASK} } }`;
const COMPLETE = `mutation ($id: ID!) { completeTask(id: $id) { ${TASK} } }`;
const REOPEN = `mutation ($id: ID!) { reopenTask(id: $id) { ${TASK} } }`;

let t: TestApp;
let acc: TestAccount;
let contactId: string;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  contactId = (await createContact(t, acc)).id;
});
afterAll(() => t?.close());

const details = (r: unknown) => errorOf(r as never).extensions?.details;
const note = async (input: Record<string, unknown>, account = acc) => {
  const r = await t.gql(CREATE_NOTE, { input: { accountId: account.id, body: 'Called.', contactId, ...input } }, { as: account.owner });
  expect(r.errors).toBeUndefined();
  return r.data.createNote as { id: string; body: string; pinned: boolean };
};
const task = async (input: Record<string, unknown>, account = acc) => {
  const r = await t.gql(CREATE_TASK, { input: { accountId: account.id, title: 'Call back', contactId, ...input } }, { as: account.owner });
  expect(r.errors).toBeUndefined();
  return r.data.createTask as { id: string; status: string };
};
const eventsOf = (subjectId: string) => t.db.event.findMany({ where: { subjectId }, orderBy: { occurredAt: 'asc' }, select: { type: true, data: true } });

describe('a note body is Markdown stored exactly as given, at most 10,000 characters', () => {
  it('leading and trailing spaces and Markdown stay as written; the author is the caller', async () => {
    const body = '  # Call\n\n- **asked** for <b>a quote</b>  \n';
    const n = await note({ body });
    expect(n.body).toBe(body);
    expect((await t.db.note.findUniqueOrThrow({ where: { id: n.id } })).authorId).toBe(acc.owner.id);
  });

  it('10,000 characters pass (astral ones count once); 10,001 are a 400 on body and nothing is written', async () => {
    expect((await note({ body: '😀'.repeat(10_000) })).body).toHaveLength(20_000);
    const before = await t.db.note.count({ where: { accountId: acc.id } });
    const r = await t.gql(CREATE_NOTE, { input: { accountId: acc.id, body: 'x'.repeat(10_001), contactId } }, { as: acc.owner });
    expect(details(r)).toEqual({ body: ['Must be at most 10000 characters'] });
    expect(await t.db.note.count({ where: { accountId: acc.id } })).toBe(before);
  });
});

describe("a note needs a target of its own account; a task's targets are of its account, and it may have none", () => {
  it('a note with no target is a 400 naming contactId, dealId and companyId, on create and on an update clearing its last one', async () => {
    const message = ['Give a contact, a deal or a company (at least one)'];
    expect(details(await t.gql(CREATE_NOTE, { input: { accountId: acc.id, body: 'x' } }, { as: acc.owner }))).toEqual({ contactId: message, dealId: message, companyId: message });
    const n = await note({});
    expect(details(await t.gql(UPDATE_NOTE, { id: n.id, input: { contactId: null } }, { as: acc.owner }))).toEqual({ contactId: message, dealId: message, companyId: message });
  });

  it('a task may stand alone: a to-do of its assignee with no contact, deal or company, created so or left so by an update', async () => {
    const todo = await task({ contactId: null, assigneeId: acc.member.id, title: 'Renew the domain' });
    expect(todo).toMatchObject({ title: 'Renew the domain', assigneeId: acc.member.id, contactId: null, dealId: null, companyId: null });
    const linked = await task({});
    const cleared = await t.gql(UPDATE_TASK, { id: linked.id, input: { contactId: null } }, { as: acc.owner });
    expect(cleared.errors).toBeUndefined();
    expect(cleared.data.updateTask).toMatchObject({ contactId: null, dealId: null, companyId: null });
    expect((await t.rest('POST', '/api/v1/tasks', { as: acc.owner, body: { account_id: acc.id, title: 'Call the bank' } })).status).toBe(201);
  });

  it("another account's contact, deal or company is a 400 naming each field; an outsider assignee is a 400 on assigneeId", async () => {
    const elsewhere = await createAccount(t);
    const theirs = (await createContact(t, elsewhere)).id;
    const theirDeal = (await t.db.deal.create({ data: { accountId: elsewhere.id, title: 'D' } })).id;
    const r = await t.gql(CREATE_TASK, { input: { accountId: acc.id, title: 'x', contactId: theirs, dealId: theirDeal, companyId: randomUUID(), assigneeId: acc.outsider.id } }, { as: acc.owner });
    expect(details(r)).toEqual({
      contactId: ['Not found in this account'],
      dealId: ['Not found in this account'],
      companyId: ['Not found in this account'],
      assigneeId: ['Not a member of this account'],
    });
    expect(details(await t.gql(CREATE_NOTE, { input: { accountId: acc.id, body: 'x', contactId: theirs } }, { as: acc.owner }))).toEqual({ contactId: ['Not found in this account'] });
  });

  it('a note may point at a contact, a deal and a company at once', async () => {
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'D' } });
    const firm = await t.db.company.create({ data: { accountId: acc.id, name: 'F' } });
    expect(await note({ dealId: deal.id, companyId: firm.id })).toMatchObject({ contactId, dealId: deal.id, companyId: firm.id });
  });

  it('a due date that is not a timestamp is a 400 on dueAt', async () => {
    const r = await t.gql(CREATE_TASK, { input: { accountId: acc.id, title: 'x', contactId, dueAt: 'tomorrow' } }, { as: acc.owner });
    expect(errorOf(r).extensions?.code).toBe('BAD_USER_INPUT');
    expect(JSON.stringify(errorOf(r))).toContain('dueAt');
  });
});

describe('tasks are completed and reopened, each on the timeline', () => {
  it('completeTask sets done and completedAt (task.completed); reopenTask clears it (task.reopened); a repeat changes nothing', async () => {
    const { id } = await task({ assigneeId: acc.member.id });
    const done = (await t.gql(COMPLETE, { id }, { as: acc.member })).data.completeTask;
    expect(done.status).toBe('done');
    expect(done.completedAt).not.toBeNull();
    expect((await t.gql(COMPLETE, { id }, { as: acc.member })).data.completeTask.completedAt).toBe(done.completedAt);
    const open = (await t.gql(REOPEN, { id }, { as: acc.member })).data.reopenTask;
    expect(open).toMatchObject({ status: 'open', completedAt: null });
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(['task.created', 'task.completed', 'task.reopened']);
  });

  it("notes and tasks of a contact are on its timeline: created, updated, deleted", async () => {
    const c = (await createContact(t, acc)).id;
    const n = await note({ contactId: c });
    await t.gql(UPDATE_NOTE, { id: n.id, input: { pinned: true } }, { as: acc.owner });
    await t.gql('mutation ($id: ID!) { deleteNote(id: $id) { id } }', { id: n.id }, { as: acc.owner });
    const k = await task({ contactId: c });
    await t.gql(UPDATE_TASK, { id: k.id, input: { title: 'Renamed' } }, { as: acc.owner });
    await t.gql('mutation ($id: ID!) { deleteTask(id: $id) { id } }', { id: k.id }, { as: acc.owner });
    const r = await t.gql('query ($id: ID!) { contact(id: $id) { timeline(first: 20) { nodes { type } } } }', { id: c }, { as: acc.owner });
    expect(r.data.contact.timeline.nodes.map((e: { type: string }) => e.type).reverse()).toEqual([
      'note.created', 'note.updated', 'note.deleted', 'task.created', 'task.updated', 'task.deleted',
    ]);
  });
});

describe('lists: pinned notes first, tasks filtered', () => {
  it("a contact's notes list pinned notes first, then newest", async () => {
    const c = (await createContact(t, acc)).id;
    const a = await note({ contactId: c, body: 'a' });
    const b = await note({ contactId: c, body: 'b', pinned: true });
    const d = await note({ contactId: c, body: 'd' });
    const r = await t.gql('query ($id: ID!) { contact(id: $id) { notes(first: 10) { nodes { id } totalCount } } }', { id: c }, { as: acc.owner });
    expect(r.data.contact.notes.nodes.map((n: { id: string }) => n.id)).toEqual([b.id, d.id, a.id]);
    await t.gql(UPDATE_NOTE, { id: b.id, input: { pinned: false } }, { as: acc.owner });
    const again = await t.gql('query ($id: ID!) { contact(id: $id) { notes(first: 10) { nodes { id } } } }', { id: c }, { as: acc.owner });
    expect(again.data.contact.notes.nodes.map((n: { id: string }) => n.id)).toEqual([d.id, b.id, a.id]);
  });

  it('Account.tasks filters by assignee, status, due dates and overdue', async () => {
    const team = await createAccount(t);
    const c = (await createContact(t, team)).id;
    const past = new Date(Date.now() - 3_600_000).toISOString();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const late = await task({ contactId: c, dueAt: past, assigneeId: team.member.id }, team);
    const later = await task({ contactId: c, dueAt: future }, team);
    const doneLate = await task({ contactId: c, dueAt: past }, team);
    await t.gql(COMPLETE, { id: doneLate.id }, { as: team.owner });
    const ids = async (filter: object) => {
      const r = await t.gql('query ($a: ID!, $f: TaskFilter) { account(id: $a) { tasks(first: 10, filter: $f) { nodes { id } } } }', { a: team.id, f: filter }, { as: team.owner });
      expect(r.errors).toBeUndefined();
      return r.data.account.tasks.nodes.map((n: { id: string }) => n.id).sort();
    };
    expect(await ids({ overdue: true })).toEqual([late.id]);
    expect(await ids({ overdue: false })).toEqual([later.id, doneLate.id].sort());
    expect(await ids({ assigneeId: team.member.id })).toEqual([late.id]);
    expect(await ids({ status: 'done' })).toEqual([doneLate.id]);
    expect(await ids({ dueAfter: new Date().toISOString() })).toEqual([later.id]);
    expect(await ids({ dueBefore: new Date().toISOString(), status: 'open' })).toEqual([late.id]);
  });
});

describe('a leaving member’s open tasks become unassigned', () => {
  it('open tasks lose their assignee with task.updated naming the previous one; done tasks keep it', async () => {
    const team = await createAccount(t);
    const c = (await createContact(t, team)).id;
    const leaver = await createUser(t);
    await t.db.teamMember.create({ data: { accountId: team.id, userId: leaver.id } });
    const open = await task({ contactId: c, assigneeId: leaver.id }, team);
    const done = await task({ contactId: c, assigneeId: leaver.id }, team);
    await t.gql(COMPLETE, { id: done.id }, { as: team.owner });
    const r = await t.gql('mutation ($a: ID!) { leaveAccount(accountId: $a) }', { a: team.id }, { as: leaver });
    expect(r.errors).toBeUndefined();
    expect((await t.db.task.findUniqueOrThrow({ where: { id: open.id } })).assigneeId).toBeNull();
    expect((await t.db.task.findUniqueOrThrow({ where: { id: done.id } })).assigneeId).toBe(leaver.id);
    const updated = (await eventsOf(open.id)).find((e) => e.type === 'task.updated');
    expect((updated?.data as { previous?: object }).previous).toEqual({ assignee_id: leaver.id });
  });
});

describe('records going take their notes along', () => {
  it('deleting a contact deletes the notes about it alone; notes about more and tasks stay, unlinked', async () => {
    const c = (await createContact(t, acc)).id;
    const firm = await t.db.company.create({ data: { accountId: acc.id, name: 'F' } });
    const alone = await note({ contactId: c });
    const shared = await note({ contactId: c, companyId: firm.id });
    const k = await task({ contactId: c });
    const r = await t.gql('mutation ($id: ID!) { deleteContact(id: $id) { id } }', { id: c }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    expect(await t.db.note.findUnique({ where: { id: alone.id } })).toBeNull();
    expect(await t.db.note.findUniqueOrThrow({ where: { id: shared.id } })).toMatchObject({ contactId: null, companyId: firm.id });
    expect((await t.db.task.findUniqueOrThrow({ where: { id: k.id } })).contactId).toBeNull();
  });
});

describe('deleting a deal or a company lets go of its notes and tasks the same way', () => {
  it('the note about the deal alone goes, the note also about the company stays; deleting the company then takes that one', async () => {
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'D' } });
    const firm = await t.db.company.create({ data: { accountId: acc.id, name: 'F' } });
    const alone = await note({ contactId: undefined, dealId: deal.id });
    const shared = await note({ contactId: undefined, dealId: deal.id, companyId: firm.id });
    const k = await task({ contactId: undefined, dealId: deal.id, companyId: firm.id });
    expect((await t.gql('mutation ($id: ID!) { deleteDeal(id: $id) { id } }', { id: deal.id }, { as: acc.owner })).errors).toBeUndefined();
    expect(await t.db.note.findUnique({ where: { id: alone.id } })).toBeNull();
    expect(await t.db.note.findUniqueOrThrow({ where: { id: shared.id } })).toMatchObject({ dealId: null, companyId: firm.id });
    expect((await t.gql('mutation ($id: ID!) { deleteCompany(id: $id) { id } }', { id: firm.id }, { as: acc.owner })).errors).toBeUndefined();
    expect(await t.db.note.findUnique({ where: { id: shared.id } })).toBeNull();
    expect(await t.db.task.findUniqueOrThrow({ where: { id: k.id } })).toMatchObject({ dealId: null, companyId: null });
  });
});

describe('eraseContact deletes the notes about the person alone and unlinks their tasks', () => {
  it('a note about the person alone goes; one also about a deal stays without the contact; tasks stay, unlinked', async () => {
    const c = (await createContact(t, acc)).id;
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'D' } });
    const alone = await note({ contactId: c });
    const shared = await note({ contactId: c, dealId: deal.id });
    const k = await task({ contactId: c });
    const r = await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id: c }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    expect(await t.db.note.findUnique({ where: { id: alone.id } })).toBeNull();
    expect(await t.db.note.findUniqueOrThrow({ where: { id: shared.id } })).toMatchObject({ contactId: null, dealId: deal.id });
    expect((await t.db.task.findUniqueOrThrow({ where: { id: k.id } })).contactId).toBeNull();
  });
});
