import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { envelope } from '../../src/events/envelope.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';
import { whereFound as everywhere } from '../helpers/everywhere.js';

// docs/decisions.md §12: eraseContact removes every stored copy of a person's data, in one transaction.

const EMAIL = 'Zelda.Quixote+erase@Example.test';
const FIRST = 'Zeldarine';
const LAST = 'Quixotique';
const PHONE = '+44 7700 900 461';
const NEEDLES = [EMAIL.toLowerCase(), FIRST.toLowerCase(), LAST.toLowerCase(), PHONE];

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const key = () => ({ 'idempotency-key': randomUUID() });

const whereFound = (needles = NEEDLES) => everywhere(t.db, needles);

describe('Mutation.eraseContact', () => {
  test('a person seeded everywhere is found nowhere after erasure: not in the account export, not in any column of any table', async () => {
    // The contact, created with an Idempotency-Key: its stored answer holds the person.
    const created = await t.gql(
      'mutation ($input: CreateContactInput!) { createContact(input: $input) { id firstName lastName email phone } }',
      { input: { accountId: acc.id, firstName: FIRST, lastName: LAST, email: EMAIL, phone: PHONE } },
      { as: acc.member, headers: key() },
    );
    const contactId: string = created.data.createContact.id;
    await t.gql('mutation ($id: ID!) { updateContact(id: $id, input: { company: "Windmills" }) { id email phone } }', { id: contactId }, { as: acc.member, headers: key() });
    // A form, a submission linked to the contact (it carries the e-mail), and one left unlinked that carries it too.
    const form = await t.db.leadForm.create({
      data: {
        accountId: acc.id,
        name: 'Contact us',
        fields: {
          create: [
            { key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email', position: 0 },
            { key: 'name', label: 'Name', type: 'text', mapsTo: 'first_name', position: 1 },
            { key: 'tel', label: 'Phone', type: 'phone', mapsTo: 'phone', position: 2 },
          ],
        },
      },
    });
    const submitted = await t.rest('POST', `/api/v1/forms/${form.id}/submit`, {
      body: { data: { email: EMAIL, name: FIRST, tel: PHONE }, metadata: { referrer: `https://ref.example/?who=${FIRST}`, page: '/contact' } },
      headers: { ...key(), 'user-agent': `Browser (${LAST})` },
    });
    expect(submitted.status, submitted.text).toBe(200);
    expect(submitted.body.contact_id ?? submitted.body.contactId ?? contactId).toBe(contactId);
    const unlinked = await t.db.formSubmission.create({
      data: { accountId: acc.id, formId: form.id, data: { email: ` ${EMAIL.toUpperCase()} `, name: `${FIRST} ${LAST}`, tel: PHONE }, clientIp: '203.0.113.9', userAgent: 'Other' },
    });
    const unrelated = await t.db.formSubmission.create({ data: { accountId: acc.id, formId: form.id, data: { email: 'someone@else.test' }, clientIp: '203.0.113.10' } });
    // A deal and an invoice of the person: kept, unlinked. The deal's idempotent answer names the person.
    const deal = await t.gql(
      'mutation ($input: CreateDealInput!) { createDeal(input: $input) { id contact { id firstName lastName email } } }',
      { input: { accountId: acc.id, title: 'Windmill repair', contactId } },
      { as: acc.member, headers: key() },
    );
    const invoice = await t.db.invoice.create({ data: { accountId: acc.id, contactId, invoiceNumber: 'INV-ERASE', amount: 10, dueDate: new Date('2030-01-01') } });
    expect((await whereFound()).length).toBeGreaterThan(5);

    const member = errorOf(await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id: contactId }, { as: acc.member }));
    expect(member.extensions?.code).toBe('FORBIDDEN');

    const r = await t.gql(
      'mutation ($id: ID!) { eraseContact(id: $id) { contactId erasedAt submissionsErased dealsUnlinked invoicesUnlinked } }',
      { id: contactId },
      { as: acc.owner },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.eraseContact).toMatchObject({ contactId, submissionsErased: 2, dealsUnlinked: 1, invoicesUnlinked: 1 });

    expect(await whereFound()).toEqual([]);
    const exported = await t.rest('GET', `/api/v1/account/export?account_id=${acc.id}`, { as: acc.owner });
    expect(exported.status).toBe(200);
    for (const needle of NEEDLES) expect(exported.text.toLowerCase()).not.toContain(needle.toLowerCase());

    // What stays: the deal and the invoice (unlinked), the submissions' rows (emptied), others' data untouched.
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.data.createDeal.id } })).contactId).toBeNull();
    expect((await t.db.invoice.findUniqueOrThrow({ where: { id: invoice.id } })).contactId).toBeNull();
    expect(await t.db.formSubmission.findUniqueOrThrow({ where: { id: unlinked.id } })).toMatchObject({ data: {}, clientIp: null, userAgent: null, referrer: null, page: null });
    expect((await t.db.formSubmission.findUniqueOrThrow({ where: { id: unrelated.id } })).data).toEqual({ email: 'someone@else.test' });
    // The erasure is recorded, by contact id and counts only.
    const log = await t.db.erasureLog.findFirstOrThrow({ where: { accountId: acc.id, contactId } });
    expect(log).toMatchObject({ userId: acc.owner.id, submissionsErased: 2, dealsUnlinked: 1, invoicesUnlinked: 1 });
    expect(log.answersRemoved).toBeGreaterThanOrEqual(3);
    expect(exported.body.erasures.map((e: { contact_id: string }) => e.contact_id)).toContain(contactId);
  });

  test("another person's submission that carried the e-mail in an unmapped field keeps no copy: not its event, its webhook delivery or the export", async () => {
    const mine = await createAccount(t); // its own: the account export is once an hour per account
    const theirs = 'Yorick.Erased+other@Example.test';
    const person = await t.db.contact.create({ data: { accountId: mine.id, firstName: 'Yorick', email: theirs } });
    // A webhook for every event, so the submission's event is queued for delivery.
    await t.db.webhookEndpoint.create({ data: { accountId: mine.id, url: 'https://hooks.example.test/in', eventTypes: ['*'], secretCiphertext: 'sealed' } });
    const form = await t.db.leadForm.create({
      data: {
        accountId: mine.id,
        name: 'Refer a friend',
        fields: {
          create: [
            { key: 'email', label: 'Your e-mail', type: 'email', mapsTo: 'email', position: 0 },
            { key: 'name', label: 'Your name', type: 'text', mapsTo: 'first_name', position: 1 },
            { key: 'their_email', label: 'Their e-mail', type: 'email', position: 2 },
          ],
        },
      },
    });
    const submitted = await t.rest('POST', `/api/v1/forms/${form.id}/submit`, {
      body: { data: { email: 'bea.referrer@example.test', name: 'Bea', their_email: theirs } },
      headers: key(),
    });
    expect(submitted.status, submitted.text).toBe(200);
    const referrer: string = submitted.body.contact_id;
    expect(referrer).not.toBe(person.id);
    expect((await whereFound([theirs.toLowerCase()])).some((found) => found.startsWith('events.data'))).toBe(true);

    const r = await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { submissionsErased } }', { id: person.id }, { as: mine.owner });
    expect(r.errors).toBeUndefined();
    expect(r.data.eraseContact.submissionsErased).toBe(1);

    expect(await whereFound([theirs.toLowerCase()])).toEqual([]);
    const exported = await t.rest('GET', `/api/v1/account/export?account_id=${mine.id}`, { as: mine.owner });
    expect(exported.status).toBe(200);
    expect(exported.text.toLowerCase()).not.toContain(theirs.toLowerCase());
    // What a webhook delivery of the submission would send is built from the scrubbed event.
    const submittedEvents = await t.db.event.findMany({ where: { accountId: mine.id, type: 'form.submitted', contactId: referrer } });
    expect(submittedEvents).toHaveLength(1);
    expect(await t.db.webhookMessage.count({ where: { accountId: mine.id, eventId: submittedEvents[0]!.id } })).toBe(1);
    expect(JSON.stringify(envelope(submittedEvents[0]!)).toLowerCase()).not.toContain(theirs.toLowerCase());
    expect((submittedEvents[0]!.data as { object: object }).object).toEqual({ id: expect.any(String), contact_id: referrer, form_id: form.id });
    // The person who referred them is not erased.
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: referrer } })).email).toBe('bea.referrer@example.test');
  });

  test('an unknown contact or another account\'s is NOT_FOUND, and nothing is erased', async () => {
    const other = await createAccount(t);
    const theirs = await t.db.contact.create({ data: { accountId: other.id, firstName: 'Kept' } });
    for (const id of [randomUUID(), theirs.id]) {
      expect(errorOf(await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id }, { as: acc.owner })).extensions?.code).toBe('NOT_FOUND');
    }
    expect(await t.db.contact.findUnique({ where: { id: theirs.id } })).not.toBeNull();
  });
});
