import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createApiKey, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';
import { countersAndRows } from '../helpers/record-counts.js';

// docs/decisions.md §22 (merge) through /graphql and REST: mergeContacts, mergeCompanies.

const MERGE = /* GraphQL */ `
  mutation ($primaryId: ID!, $duplicateIds: [ID!]!) {
    mergeContacts(primaryId: $primaryId, duplicateIds: $duplicateIds) { id firstName lastName email phone company companyId externalId updatedAt }
  }
`;
const MERGE_COMPANIES = /* GraphQL */ `
  mutation ($primaryId: ID!, $duplicateIds: [ID!]!) {
    mergeCompanies(primaryId: $primaryId, duplicateIds: $duplicateIds) { id name domain phone industry website }
  }
`;

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const merge = (primaryId: string, duplicateIds: string[], as = acc.member) => t.gql(MERGE, { primaryId, duplicateIds }, { as });
const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
const eventsOf = (accountId: string, type: string) => t.db.event.findMany({ where: { accountId, type }, orderBy: { occurredAt: 'asc' } });

describe('Mutation.mergeContacts', () => {
  test('the primary keeps its values; each empty field takes the first non-empty value among the duplicates, oldest first', async () => {
    const company = await t.db.company.create({ data: { accountId: acc.id, name: unique('Co') } });
    const primary = await createContact(t, acc, { firstName: 'Ann', lastName: null, email: 'ann@keep.test', phone: null, company: null, createdAt: at(3) });
    const newer = await createContact(t, acc, { firstName: 'Anne', lastName: 'Newer', email: 'x@newer.test', phone: '+1 555 0100', company: 'Newer Co', createdAt: at(2), externalId: unique('ext') });
    const older = await createContact(t, acc, { firstName: 'Annie', lastName: 'Older', email: 'y@older.test', phone: null, company: '  ', companyId: company.id, createdAt: at(1) });
    const r = await merge(primary.id, [newer.id, older.id]);
    expect(r.errors).toBeUndefined();
    expect(r.data.mergeContacts).toMatchObject({
      id: primary.id, firstName: 'Ann', email: 'ann@keep.test',
      lastName: 'Older', // oldest duplicate first
      phone: '+1 555 0100', // the older one has none: the next one's
      company: 'Newer Co', // a blank value is empty
      companyId: company.id,
      externalId: null, // another system's id is never taken over: the event names it
    });
    expect(await t.db.contact.count({ where: { id: { in: [newer.id, older.id] } } })).toBe(0);
  });

  test("custom field values: the primary keeps its own; each key it lacks takes the oldest duplicate's value that has one", async () => {
    await t.db.customField.createMany({ data: ['tier', 'region', 'score'].map((key, position) => ({ accountId: acc.id, object: 'CONTACT' as const, key, label: key, type: 'TEXT' as const, position })) });
    const primary = await createContact(t, acc, { firstName: 'P', customFields: { tier: 'gold' }, createdAt: at(3) });
    const newer = await createContact(t, acc, { firstName: 'N', customFields: { tier: 'tin', region: 'EU', score: 'new' }, createdAt: at(2) });
    const older = await createContact(t, acc, { firstName: 'O', customFields: { score: 'old' }, createdAt: at(1) });
    const r = await t.gql(`mutation ($p: ID!, $d: [ID!]!) { mergeContacts(primaryId: $p, duplicateIds: $d) { customFields } }`, { p: primary.id, d: [newer.id, older.id] }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    expect(r.data.mergeContacts.customFields).toEqual({ tier: 'gold', score: 'old', region: 'EU' });
  });

  test('every reference moves to the primary: deals, invoices, submissions, notes, tasks; a note about a duplicate alone stays, about the primary', async () => {
    const primary = await createContact(t, acc);
    const dup = await createContact(t, acc);
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'D', contactId: dup.id } });
    const invoice = await t.db.invoice.create({ data: { accountId: acc.id, contactId: dup.id, invoiceNumber: unique('INV'), amount: 10, dueDate: new Date('2027-01-01') } });
    const note = await t.db.note.create({ data: { accountId: acc.id, body: 'about the duplicate alone', contactId: dup.id } });
    const task = await t.db.task.create({ data: { accountId: acc.id, title: 'Call', contactId: dup.id, dealId: deal.id } });
    const form = await t.db.leadForm.create({ data: { accountId: acc.id, name: unique('Form') } });
    const submission = await t.db.formSubmission.create({ data: { accountId: acc.id, formId: form.id, contactId: dup.id, data: {} } });
    const before = deal.updatedAt;
    expect((await merge(primary.id, [dup.id])).errors).toBeUndefined();
    const movedDeal = await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } });
    expect(movedDeal.contactId).toBe(primary.id);
    expect(movedDeal.updatedAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).contactId).toBe(primary.id);
    expect(await t.db.note.findUniqueOrThrow({ where: { id: note.id } })).toMatchObject({ contactId: primary.id, body: 'about the duplicate alone' });
    expect(await t.db.task.findUniqueOrThrow({ where: { id: task.id } })).toMatchObject({ contactId: primary.id, dealId: deal.id });
    expect((await t.db.formSubmission.findUniqueOrThrow({ where: { id: submission.id } })).contactId).toBe(primary.id);
  });

  test('events: contact.deleted with merged_into for each duplicate, then contact.merged with merged_ids and their external ids', async () => {
    const other = await createAccount(t);
    const primary = await createContact(t, other);
    const a = await createContact(t, other, { createdAt: at(1), externalId: 'crm-a' });
    const b = await createContact(t, other, { createdAt: at(2) });
    expect((await merge(primary.id, [b.id, a.id], other.member)).errors).toBeUndefined();
    const deleted = await eventsOf(other.id, 'contact.deleted');
    expect(deleted.map((e) => e.subjectId)).toEqual([a.id, b.id]);
    for (const e of deleted) expect((e.data as any).merged_into).toBe(primary.id);
    expect((deleted[0]!.data as any).object).toMatchObject({ id: a.id, external_id: 'crm-a' });
    const [merged, ...more] = await eventsOf(other.id, 'contact.merged');
    expect(more).toEqual([]);
    expect(merged!.subjectId).toBe(primary.id);
    expect(merged!.data).toMatchObject({ object: { id: primary.id }, merged_ids: [a.id, b.id], merged_external_ids: ['crm-a', null] });
    expect(merged!).toMatchObject({ actorType: 'user', actorId: other.member.id });
  });

  test('counters stay exact after merges of contacts and of companies', async () => {
    const primary = await createContact(t, acc, { contactType: 'client' });
    const dups = await Promise.all([createContact(t, acc, { contactType: 'lead' }), createContact(t, acc, { contactType: 'client' })]);
    await t.db.deal.create({ data: { accountId: acc.id, title: 'Counted', contactId: dups[0].id, status: 'won' } });
    expect((await merge(primary.id, dups.map((d) => d.id))).errors).toBeUndefined();
    const c1 = await t.db.company.create({ data: { accountId: acc.id, name: unique('Counted') } });
    const c2 = await t.db.company.create({ data: { accountId: acc.id, name: unique('Counted') } });
    expect((await t.gql(MERGE_COMPANIES, { primaryId: c1.id, duplicateIds: [c2.id] }, { as: acc.member })).errors).toBeUndefined();
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
  });

  test('a repeat is harmless: merging already-merged ids answers NOT_FOUND and changes nothing; with its Idempotency-Key it answers the primary again', async () => {
    const primary = await createContact(t, acc, { lastName: null });
    const dup = await createContact(t, acc, { lastName: 'Filled' });
    const key = randomUUID();
    const send = () => t.rest('POST', `/api/v1/contacts/${primary.id}/merge`, { as: acc.member, body: { duplicate_ids: [dup.id] }, headers: { 'idempotency-key': key } });
    const first = await send();
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ id: primary.id, last_name: 'Filled' });
    const replay = await send();
    expect(replay.status).toBe(200);
    expect(replay.body.data).toEqual(first.body.data);
    const row = await t.db.contact.findUniqueOrThrow({ where: { id: primary.id } });
    const again = errorOf(await merge(primary.id, [dup.id]));
    expect(again.extensions?.code).toBe('NOT_FOUND');
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: primary.id } })).updatedAt).toEqual(row.updatedAt);
    expect(await t.db.event.count({ where: { type: 'contact.merged', subjectId: primary.id } })).toBe(1);
  });

  test("another account's primary or duplicate is the same NOT_FOUND as an unknown id, and nothing is written", async () => {
    const other = await createAccount(t);
    const theirs = await createContact(t, other);
    const primary = await createContact(t, acc);
    const mine = await createContact(t, acc);
    for (const [p, d] of [[primary.id, [theirs.id]], [primary.id, [mine.id, randomUUID()]], [theirs.id, [mine.id]], [randomUUID(), [mine.id]]] as const) {
      const error = errorOf(await merge(p, [...d]));
      expect(error.extensions?.code).toBe('NOT_FOUND');
    }
    expect(await t.db.contact.count({ where: { id: { in: [theirs.id, primary.id, mine.id] } } })).toBe(3);
    // The outsider (a member of another account) hears NOT_FOUND for this account's records too.
    expect(errorOf(await merge(primary.id, [mine.id], acc.outsider)).extensions?.code).toBe('NOT_FOUND');
  });

  test('1 to 10 duplicates, none repeated, not the primary: else a 400 naming duplicateIds (REST: duplicate_ids)', async () => {
    const primary = await createContact(t, acc);
    const dup = await createContact(t, acc);
    const cases: [string[], string][] = [
      [[], 'Give at least one duplicate'],
      [Array.from({ length: 11 }, () => randomUUID()), 'At most 10 duplicates'],
      [[dup.id, dup.id], 'Each duplicate once'],
      [[primary.id], 'Must not hold the primary'],
    ];
    for (const [ids, message] of cases) {
      const error = errorOf(await merge(primary.id, ids));
      expect(error.extensions?.code).toBe('BAD_USER_INPUT');
      expect(error.extensions?.details).toEqual({ duplicateIds: [message] });
    }
    const rest = await t.rest('POST', `/api/v1/contacts/${primary.id}/merge`, { as: acc.member, body: { duplicate_ids: [] } });
    expect(rest.status).toBe(400);
    expect(rest.body.details).toEqual({ duplicate_ids: ['Give at least one duplicate'] });
    expect(await t.db.contact.count({ where: { id: dup.id } })).toBe(1);
  });

  test('two merges racing over the same contacts: one wins, the other answers NOT_FOUND; nothing is lost or doubled', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await createContact(t, acc, { lastName: null });
      const b = await createContact(t, acc, { lastName: 'B' });
      const c = await createContact(t, acc, { phone: '123456789' });
      const deals = await Promise.all([a, b, c].map((x) => t.db.deal.create({ data: { accountId: acc.id, title: 'Race', contactId: x.id } })));
      const [one, two] = await Promise.all([merge(a.id, [b.id, c.id]), merge(c.id, [a.id, b.id], acc.owner)]);
      const answers = [one, two].map((r) => (r.errors ? r.errors[0]!.extensions?.code : 'ok')).sort();
      expect(answers).toEqual(['NOT_FOUND', 'ok']);
      const left = await t.db.contact.findMany({ where: { id: { in: [a.id, b.id, c.id] } } });
      expect(left).toHaveLength(1);
      const moved = await t.db.deal.findMany({ where: { id: { in: deals.map((d) => d.id) } } });
      expect(moved.map((d) => d.contactId)).toEqual([left[0]!.id, left[0]!.id, left[0]!.id]);
      expect(await t.db.event.count({ where: { type: 'contact.merged', subjectId: left[0]!.id } })).toBe(1);
    }
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
  });

  test('an API key needs contacts:write to merge', async () => {
    const reader = await createApiKey(t, acc, ['CONTACTS_READ']);
    const writer = await createApiKey(t, acc, ['CONTACTS_READ', 'CONTACTS_WRITE']);
    const primary = await createContact(t, acc);
    const dup = await createContact(t, acc);
    const refused = errorOf(await merge(primary.id, [dup.id], reader));
    expect(refused.extensions?.code).toBe('FORBIDDEN');
    expect((await merge(primary.id, [dup.id], writer)).errors).toBeUndefined();
    expect(await t.db.contact.count({ where: { id: dup.id } })).toBe(0);
  });

  test('REST POST /api/v1/contacts/{id}/merge answers the primary as GET does', async () => {
    const primary = await createContact(t, acc, { phone: null });
    const dup = await createContact(t, acc, { phone: '+44 20 7946 0000' });
    const r = await t.rest('POST', `/api/v1/contacts/${primary.id}/merge`, { as: acc.member, body: { duplicate_ids: [dup.id] } });
    expect(r.status).toBe(200);
    const read = await t.rest('GET', `/api/v1/contacts/${primary.id}`, { as: acc.member });
    expect(r.body.data).toEqual(read.body.data);
    expect(r.body.data.phone).toBe('+44 20 7946 0000');
    expect((await t.rest('POST', `/api/v1/contacts/${randomUUID()}/merge`, { as: acc.member, body: { duplicate_ids: [dup.id] } })).status).toBe(404);
  });
});

describe('Mutation.mergeCompanies', () => {
  test("a company's contacts, deals, notes and tasks move to the primary; its empty fields take the duplicates' (the domain too); the duplicates go", async () => {
    const primary = await t.db.company.create({ data: { accountId: acc.id, name: 'Acme', domain: null, industry: 'Tools' } });
    const dup = await t.db.company.create({ data: { accountId: acc.id, name: 'ACME Inc.', domain: `${unique('acme')}.test`, industry: 'Other', phone: '555' } });
    const contact = await createContact(t, acc, { companyId: dup.id });
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'D', companyId: dup.id } });
    const note = await t.db.note.create({ data: { accountId: acc.id, body: 'n', companyId: dup.id } });
    const task = await t.db.task.create({ data: { accountId: acc.id, title: 't', companyId: dup.id } });
    const r = await t.gql(MERGE_COMPANIES, { primaryId: primary.id, duplicateIds: [dup.id] }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    expect(r.data.mergeCompanies).toMatchObject({ id: primary.id, name: 'Acme', industry: 'Tools', domain: dup.domain, phone: '555' });
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: contact.id } })).companyId).toBe(primary.id);
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).companyId).toBe(primary.id);
    expect((await t.db.note.findUniqueOrThrow({ where: { id: note.id } })).companyId).toBe(primary.id);
    expect((await t.db.task.findUniqueOrThrow({ where: { id: task.id } })).companyId).toBe(primary.id);
    expect(await t.db.company.count({ where: { id: dup.id } })).toBe(0);
    const [merged] = await t.db.event.findMany({ where: { type: 'company.merged', subjectId: primary.id } });
    expect(merged!.data).toMatchObject({ merged_ids: [dup.id] });
    const deleted = await t.db.event.findFirstOrThrow({ where: { type: 'company.deleted', subjectId: dup.id } });
    expect((deleted.data as any).merged_into).toBe(primary.id);
  });

  test('an API key needs companies:write; REST POST /api/v1/companies/{id}/merge', async () => {
    const reader = await createApiKey(t, acc, ['COMPANIES_READ', 'CONTACTS_WRITE']);
    const writer = await createApiKey(t, acc, ['COMPANIES_WRITE']);
    const a = await t.db.company.create({ data: { accountId: acc.id, name: unique('K') } });
    const b = await t.db.company.create({ data: { accountId: acc.id, name: unique('K') } });
    expect((await t.rest('POST', `/api/v1/companies/${a.id}/merge`, { as: reader, body: { duplicate_ids: [b.id] } })).status).toBe(403);
    const r = await t.rest('POST', `/api/v1/companies/${a.id}/merge`, { as: writer, body: { duplicate_ids: [b.id] } });
    expect(r.status).toBe(200);
    expect(r.body.data.id).toBe(a.id);
    expect((await t.rest('POST', `/api/v1/companies/${a.id}/merge`, { as: writer, body: { duplicate_ids: [b.id] } })).status).toBe(404);
  });
});
