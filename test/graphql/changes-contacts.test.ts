import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';

// docs/decisions.md §12 through /graphql: updateContact, deleteContact, Query.contact.

const UPDATE = /* GraphQL */ `
  mutation ($id: ID!, $input: UpdateContactInput!, $at: DateTime) {
    updateContact(id: $id, input: $input, expectedUpdatedAt: $at) { id firstName lastName email phone company contactType source updatedAt }
  }
`;
const DELETE = 'mutation ($id: ID!) { deleteContact(id: $id) { id deletedAt } }';
const READ = 'query ($id: ID!) { contact(id: $id) { id firstName updatedAt } }';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const update = (id: string, input: Record<string, unknown>, at?: string, as = acc.member) => t.gql(UPDATE, { id, input, at }, { as });

describe('Mutation.updateContact', () => {
  test('absent fields stay, given ones change, null clears a nullable one; the answer is the written row', async () => {
    const c = await createContact(t, acc, { firstName: 'Ann', lastName: 'Lee', phone: '123', company: 'Co' });
    const r = await update(c.id, { firstName: '  Anna ', phone: null, contactType: 'client' });
    expect(r.errors).toBeUndefined();
    expect(r.data.updateContact).toMatchObject({ firstName: 'Anna', lastName: 'Lee', phone: null, company: 'Co', contactType: 'client', source: 'other' });
    const row = await t.db.contact.findUniqueOrThrow({ where: { id: c.id } });
    expect(row.updatedAt.toISOString()).toBe(r.data.updateContact.updatedAt);
    expect(row.updatedAt.getTime()).toBeGreaterThan(c.updatedAt.getTime() - 1);
  });

  test('null for a required field is Required; the create rules apply to new values (details per field)', async () => {
    const c = await createContact(t, acc);
    const error = errorOf(await update(c.id, { firstName: null, contactType: null, email: 'nope', phone: 'x'.repeat(51) }));
    expect(error.extensions?.code).toBe('BAD_USER_INPUT');
    expect(error.extensions?.details).toEqual({
      firstName: ['Required'],
      contactType: ['Required'],
      email: ['Must be a valid e-mail address'],
      phone: ['Must be at most 50 characters'],
    });
  });

  test('an empty input is BAD_USER_INPUT', async () => {
    const c = await createContact(t, acc);
    const error = errorOf(await update(c.id, {}));
    expect(error.extensions?.code).toBe('BAD_USER_INPUT');
    expect(error.extensions?.details).toEqual({ input: ['Must change at least one field'] });
  });

  test('a stale expectedUpdatedAt is CONFLICT with currentUpdatedAt, and nothing is written', async () => {
    const c = await createContact(t, acc, { firstName: 'Old' });
    const first = await update(c.id, { lastName: 'One' }, c.updatedAt.toISOString());
    expect(first.errors).toBeUndefined();
    const stale = await update(c.id, { firstName: 'Lost' }, c.updatedAt.toISOString());
    const error = errorOf(stale);
    expect(error.extensions?.code).toBe('CONFLICT');
    expect(error.extensions?.currentUpdatedAt).toBe(first.data.updateContact.updatedAt);
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: c.id } })).firstName).toBe('Old');
  });

  test('an unknown id and another account\'s contact are the same NOT_FOUND', async () => {
    const other = await createAccount(t);
    const foreign = await createContact(t, other, { firstName: 'Theirs' });
    for (const id of [randomUUID(), foreign.id]) {
      const error = errorOf(await update(id, { firstName: 'Mine' }));
      expect(error.extensions?.code).toBe('NOT_FOUND');
      expect(error.message).toBe('Not found');
    }
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: foreign.id } })).firstName).toBe('Theirs');
  });

  test('anonymous is UNAUTHENTICATED; an outsider is NOT_FOUND', async () => {
    const c = await createContact(t, acc);
    expect(errorOf(await update(c.id, { firstName: 'X' }, undefined, null as never)).extensions?.code).toBe('UNAUTHENTICATED');
    expect(errorOf(await update(c.id, { firstName: 'X' }, undefined, acc.outsider)).extensions?.code).toBe('NOT_FOUND');
  });

  test('an Idempotency-Key replays the first answer, typed as the first (dates, not strings)', async () => {
    const c = await createContact(t, acc);
    const headers = { 'idempotency-key': randomUUID() };
    const first = await t.gql(UPDATE, { id: c.id, input: { company: 'Once' } }, { as: acc.member, headers });
    await t.db.contact.update({ where: { id: c.id }, data: { company: 'Later' } });
    const again = await t.gql(UPDATE, { id: c.id, input: { company: 'Once' } }, { as: acc.member, headers });
    expect(again.errors).toBeUndefined();
    expect(again.data).toEqual(first.data);
  });
});

describe('Mutation.deleteContact', () => {
  test('removes the contact; its deals, invoices and submissions stay, unlinked', async () => {
    const c = await createContact(t, acc);
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Kept', contactId: c.id } });
    const invoice = await t.db.invoice.create({ data: { accountId: acc.id, contactId: c.id, invoiceNumber: randomUUID().slice(0, 12), amount: 5, dueDate: new Date('2030-01-01') } });
    const r = await t.gql(DELETE, { id: c.id }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    expect(r.data.deleteContact.id).toBe(c.id);
    expect(await t.db.contact.findUnique({ where: { id: c.id } })).toBeNull();
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).contactId).toBeNull();
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).contactId).toBeNull();
  });

  test('an unknown id is NOT_FOUND; a second delete of the same contact too', async () => {
    const c = await createContact(t, acc);
    expect((await t.gql(DELETE, { id: c.id }, { as: acc.member })).errors).toBeUndefined();
    expect(errorOf(await t.gql(DELETE, { id: c.id }, { as: acc.member })).extensions?.code).toBe('NOT_FOUND');
  });
});

describe('Query.contact', () => {
  test('a member reads it; unknown or another account\'s is null without an error', async () => {
    const c = await createContact(t, acc, { firstName: 'Seen' });
    expect((await t.gql(READ, { id: c.id }, { as: acc.member })).data.contact.firstName).toBe('Seen');
    const hidden = await t.gql(READ, { id: c.id }, { as: acc.outsider });
    expect(hidden.errors).toBeUndefined();
    expect(hidden.data.contact).toBeNull();
    expect((await t.gql(READ, { id: randomUUID() }, { as: acc.member })).data.contact).toBeNull();
  });
});

describe('concurrency (optimistic, atomic)', () => {
  test('50 concurrent updateContact with the same expectedUpdatedAt: exactly one succeeds, 49 CONFLICT', async () => {
    const c = await createContact(t, acc);
    const users = await Promise.all(Array.from({ length: 50 }, () => createUser(t)));
    await t.db.teamMember.createMany({ data: users.map((u) => ({ accountId: acc.id, userId: u.id })) });
    const at = c.updatedAt.toISOString();
    const results = await Promise.all(users.map((u, i) => update(c.id, { company: `Writer ${i}` }, at, u)));
    const won = results.filter((r) => !r.errors);
    const codes = results.filter((r) => r.errors).map((r) => r.errors![0]!.extensions?.code);
    expect(won).toHaveLength(1);
    expect(codes).toEqual(Array(49).fill('CONFLICT'));
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: c.id } })).company).toBe(won[0]!.data.updateContact.company);
  });
});
