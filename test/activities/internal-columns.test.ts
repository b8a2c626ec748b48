import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_COLUMNS } from '../../src/db/internal-columns.js';
import { accountExportStream, COLLECTIONS } from '../../src/exports/account-json.js';
import { stored } from '../../src/idempotency/idempotency.service.js';
import { snakeCase } from '../../src/names.js';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §26 "No secret leaves in an export": internal columns (sort keys, leases,
// counters' slots; src/db/internal-columns.ts) reach no answer, no stored replay and no export.
// A pinned note's listed_at (created_at + 10,000 years) made every idempotent write of one a 500.

let t: TestApp;
let acc: TestAccount;
let contactId: string;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  contactId = (await createContact(t, acc)).id;
});
afterAll(() => t?.close());

const key = () => ({ 'idempotency-key': `k-${Math.random().toString(36).slice(2)}` });

describe('a pinned note written with an Idempotency-Key', () => {
  it('POST /api/v1/notes answers 201 and its retry replays the same answer', async () => {
    const headers = key();
    const body = { account_id: acc.id, body: 'Pinned', pinned: true, contact_id: contactId };
    const first = await t.rest('POST', '/api/v1/notes', { as: acc.member, body, headers });
    expect(first.status, first.text).toBe(201);
    expect(first.body.data).toMatchObject({ pinned: true });
    expect(first.body.data).not.toHaveProperty('listed_at');
    const retry = await t.rest('POST', '/api/v1/notes', { as: acc.member, body, headers });
    expect([retry.status, retry.headers.get('idempotent-replayed'), retry.body]).toEqual([201, 'true', first.body]);
    expect(await t.db.note.count({ where: { accountId: acc.id, body: 'Pinned' } })).toBe(1);
  });

  it('PATCH /api/v1/notes/{id} pinning it answers 200 and its retry replays the same answer', async () => {
    const note = await t.rest('POST', '/api/v1/notes', { as: acc.member, body: { account_id: acc.id, body: 'To pin', contact_id: contactId } });
    const headers = key();
    const first = await t.rest('PATCH', `/api/v1/notes/${note.body.data.id}`, { as: acc.member, body: { pinned: true }, headers });
    expect(first.status, first.text).toBe(200);
    expect(first.body.data.pinned).toBe(true);
    const retry = await t.rest('PATCH', `/api/v1/notes/${note.body.data.id}`, { as: acc.member, body: { pinned: true }, headers });
    expect([retry.status, retry.headers.get('idempotent-replayed'), retry.body]).toEqual([200, 'true', first.body]);
  });

  it('GraphQL createNote answers without error and its retry replays the same answer', async () => {
    const headers = key();
    const query = `mutation ($input: CreateNoteInput!) { createNote(input: $input) { id body pinned createdAt updatedAt } }`;
    const variables = { input: { accountId: acc.id, body: 'Pinned by GraphQL', pinned: true, contactId } };
    const first = await t.gql(query, variables, { as: acc.member, headers });
    expect(first.errors).toBeUndefined();
    expect(first.data.createNote.pinned).toBe(true);
    const retry = await t.gql(query, variables, { as: acc.member, headers });
    expect([retry.errors, retry.data]).toEqual([undefined, first.data]);
  });
});

describe('internal columns', () => {
  it('a stored replay keeps no internal column, and a date no ISO string can hold does not fail it', () => {
    const row = { id: 'n1', accountId: 'a', body: 'x', pinned: true, authorId: null, contactId: null, dealId: null, companyId: null, listedAt: new Date(Number.NaN), createdAt: new Date(0), updatedAt: new Date(0) };
    expect(stored(row)).toEqual({ id: 'n1', accountId: 'a', body: 'x', pinned: true, authorId: null, contactId: null, dealId: null, companyId: null, createdAt: { $date: '1970-01-01T00:00:00.000Z' }, updatedAt: { $date: '1970-01-01T00:00:00.000Z' } });
    expect(stored({ when: new Date(Number.NaN), later: new Date(Date.UTC(12026, 0, 1)) })).toEqual({ when: { $date: null }, later: { $date: '+012026-01-01T00:00:00.000Z' } });
    // A field public in one model and internal in another (attempts: an invoice mail's, an import's) stays where it is public.
    expect(stored({ id: 'm', attempts: 2, status: 'sent', to: 'a@b.c' })).toMatchObject({ attempts: 2 });
  });

  it('the account export carries no internal column (listed_at of a pinned note included)', async () => {
    const own = await createAccount(t);
    const contact = (await createContact(t, own)).id;
    const pinned = await t.rest('POST', '/api/v1/notes', { as: own.member, body: { account_id: own.id, body: 'Pinned', pinned: true, contact_id: contact }, headers: key() });
    expect(pinned.status, pinned.text).toBe(201);
    const text = await new Response(accountExportStream(t.db, own.id, new Date())).text();
    const doc = JSON.parse(text);
    expect(doc.notes).toHaveLength(1);
    expect(doc.idempotency_keys).toHaveLength(1);
    expect(text).not.toContain('listed_at');
    expect(text).not.toContain('listedAt'); // nor in the answer the idempotency key keeps
    // Every internal column of an exported table is left out of its collection.
    for (const { table, fields } of INTERNAL_COLUMNS) {
      const collection = COLLECTIONS.find((c) => c.table === table);
      if (collection) for (const field of fields) expect(collection.omit, `${table}.${field}`).toContain(snakeCase(field));
    }
    for (const record of doc.notes) expect(Object.keys(record)).not.toContain('listed_at');
    expect(text).not.toMatch(/"\+?\d{5,}-\d\d-\d\dT/); // no year past 9999 anywhere
  });
});
