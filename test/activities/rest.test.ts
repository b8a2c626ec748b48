import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §21 on REST: /api/v1/notes and /api/v1/tasks. Who may call each route:
// test/security/access-matrix.test.ts.

let t: TestApp;
let acc: TestAccount;
let contactId: string;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  contactId = (await createContact(t, acc)).id;
});
afterAll(() => t?.close());

describe('/api/v1/notes', () => {
  it('POST answers 201 with the body as given; GET, PATCH (If-Match) and DELETE work by id; GET lists filter by contact_id', async () => {
    const r = await t.rest('POST', '/api/v1/notes', { as: acc.member, body: { account_id: acc.id, body: '  **Hi**\n', contact_id: contactId } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.data).toMatchObject({ body: '  **Hi**\n', pinned: false, author_id: acc.member.id, contact_id: contactId, deal_id: null, company_id: null });
    const id = r.body.data.id as string;
    const one = await t.rest('GET', `/api/v1/notes/${id}`, { as: acc.member });
    expect([one.status, one.body.data]).toEqual([200, r.body.data]);
    const patched = await t.rest('PATCH', `/api/v1/notes/${id}`, { as: acc.member, body: { pinned: true }, headers: { 'if-match': one.headers.get('etag')! } });
    expect([patched.status, patched.body.data.pinned]).toEqual([200, true]);
    const list = await t.rest('GET', `/api/v1/notes?account_id=${acc.id}&contact_id=${contactId}`, { as: acc.member });
    expect(list.body.data.map((n: { id: string }) => n.id)).toContain(id);
    expect((await t.rest('DELETE', `/api/v1/notes/${id}`, { as: acc.member })).status).toBe(204);
    expect((await t.rest('GET', `/api/v1/notes/${id}`, { as: acc.member })).status).toBe(404);
  });

  it('a body over 10,000 characters and a target of another account are a 400 naming each field by its REST name', async () => {
    const elsewhere = await createAccount(t);
    const theirs = (await createContact(t, elsewhere)).id;
    const r = await t.rest('POST', '/api/v1/notes', { as: acc.member, body: { account_id: acc.id, body: 'x'.repeat(10_001), contact_id: theirs } });
    expect([r.status, r.body.details]).toEqual([400, { body: ['Must be at most 10000 characters'], contact_id: ['Not found in this account'] }]);
  });
});

describe('/api/v1/tasks', () => {
  it('POST, complete, reopen; lists filter by status, assignee_id and overdue', async () => {
    const due = new Date(Date.now() - 60_000).toISOString();
    const r = await t.rest('POST', '/api/v1/tasks', { as: acc.member, body: { account_id: acc.id, title: 'Call', due_at: due, assignee_id: acc.member.id, contact_id: contactId } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.data).toMatchObject({ title: 'Call', status: 'open', completed_at: null, assignee_id: acc.member.id, due_at: due });
    const id = r.body.data.id as string;
    const overdue = await t.rest('GET', `/api/v1/tasks?account_id=${acc.id}&overdue=true&assignee_id=${acc.member.id}`, { as: acc.member });
    expect(overdue.body.data.map((x: { id: string }) => x.id)).toEqual([id]);
    const done = await t.rest('POST', `/api/v1/tasks/${id}/complete`, { as: acc.member, body: {} });
    expect([done.status, done.body.data.status]).toEqual([200, 'done']);
    expect((await t.rest('GET', `/api/v1/tasks?account_id=${acc.id}&status=done`, { as: acc.member })).body.data.map((x: { id: string }) => x.id)).toEqual([id]);
    const open = await t.rest('POST', `/api/v1/tasks/${id}/reopen`, { as: acc.member, body: {} });
    expect([open.status, open.body.data.status, open.body.data.completed_at]).toEqual([200, 'open', null]);
  });

  it('an assignee who is not a member and a due date that is not a timestamp are a 400 naming each field', async () => {
    const r = await t.rest('POST', '/api/v1/tasks', { as: acc.member, body: { account_id: acc.id, title: 'x', contact_id: contactId, assignee_id: acc.outsider.id, due_at: 'soon' } });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.details ?? {}).sort()).toEqual(expect.arrayContaining(['due_at']));
    const member = await t.rest('POST', '/api/v1/tasks', { as: acc.member, body: { account_id: acc.id, title: 'x', contact_id: contactId, assignee_id: acc.outsider.id } });
    expect([member.status, member.body.details]).toEqual([400, { assignee_id: ['Not a member of this account'] }]);
  });
});
