// docs/decisions.md §26 "Imports read other CRMs' files without a mapping": the files HubSpot,
// Pipedrive, Salesforce, Google Contacts and Outlook export (test/fixtures/imports/, as each writes
// them: header order, quoting, dates, a BOM where it writes one) import with no `mapping` and no
// `value_mapping`, every field the file carries filled; a deals file links its contact by e-mail and
// its stage by name (docs/imports.md#other-systems-files).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import type { Prisma } from '../../src/generated/prisma/client.js';
import { dayOf, inputOf, pastTimeOf, planColumns } from '../../src/imports/columns.js';
import { resolveReferences } from '../../src/imports/references.js';
import type { Judged } from '../../src/writes/batch.service.js';
import { drain, importBytes, importCsv } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const fixture = (name: string) => readFileSync(new URL(`../fixtures/imports/${name}`, import.meta.url));

/** Imports `file` into `acc` (a new account unless given) with no mapping and runs it to its end: the import as GET answers it. */
async function imported(file: string | Buffer, params: Record<string, string> = {}, acc?: TestAccount) {
  acc ??= await createAccount(t);
  const r = typeof file === 'string' ? await importCsv(t, acc.member, acc.id, file, params) : await importBytes(t, acc.member, acc.id, file, params);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  await drain(t);
  const done = (await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: acc.member })).body.data;
  const errors = await t.db.importError.findMany({ where: { importId: done.id }, orderBy: { line: 'asc' }, select: { line: true, details: true } });
  return { acc, done, errors };
}

const contactsOf = (acc: TestAccount) =>
  t.db.contact.findMany({
    where: { accountId: acc.id }, orderBy: { firstName: 'asc' },
    select: { firstName: true, lastName: true, email: true, phone: true, company: true, contactType: true, source: true, externalId: true, createdAt: true },
  });

const dealsOf = (acc: TestAccount) =>
  t.db.deal.findMany({
    where: { accountId: acc.id }, orderBy: { title: 'asc' },
    select: { title: true, value: true, probability: true, expectedCloseDate: true, externalId: true, createdAt: true, contact: { select: { email: true } }, stage: { select: { name: true } } },
  });

/** Every listed field of every record holds a value: what "every field found filled" means. */
const allFilled = (records: Record<string, unknown>[], fields: string[]) =>
  expect(records.flatMap((record) => fields.filter((field) => record[field] === null || record[field] === undefined || record[field] === '').map((field) => `${String(record.firstName ?? record.title)}.${field}`))).toEqual([]);

const at = (iso: string) => new Date(iso);

describe("contacts as each system exports them, with no mapping", () => {
  it('HubSpot: Record ID, Phone Number, Company Name, Lifecycle Stage, Original Source and Create Date fill their fields; lifecycle stages are contact types by synonym', async () => {
    const { done, acc } = await imported(fixture('hubspot-contacts.csv'), { match_on: 'external_id' });
    expect(done).toMatchObject({ status: 'completed', created: 4, failed: 0, unknown_columns: ['Lead Status', 'Contact owner', 'Last Activity Date'] });
    const contacts = await contactsOf(acc);
    allFilled(contacts, ['firstName', 'lastName', 'email', 'phone', 'company', 'contactType', 'source', 'externalId']);
    expect(contacts).toEqual([
      { firstName: 'Brian', lastName: 'Halligan', email: 'bh@hubspot.example', phone: '+1 617 555 0100', company: 'HubSpot, Inc.', contactType: 'client', source: 'referral', externalId: '51', createdAt: at('2023-01-05T10:12:00Z') },
      { firstName: 'Dharmesh', lastName: 'Shah', email: 'ds@hubspot.example', phone: '+1 617 555 0101', company: 'HubSpot, Inc.', contactType: 'lead', source: 'website', externalId: '52', createdAt: at('2023-01-06T09:00:00Z') },
      { firstName: 'Kipp', lastName: 'Bodnar', email: 'kb@hubspot.example', phone: '+1 617 555 0102', company: 'HubSpot "Marketing"', contactType: 'lead', source: 'social_media', externalId: '53', createdAt: at('2023-01-07T11:30:00Z') },
      { firstName: 'Yamini', lastName: 'Rangan', email: 'yr@hubspot.example', phone: '+1 617 555 0103', company: 'HubSpot, Inc.', contactType: 'lead', source: 'advertising', externalId: '54', createdAt: at('2023-02-14T08:05:00Z') },
    ]);
  });

  it('Pipedrive persons: Person - First name, Email, Phone, Organization, Label, ID and Person created fill their fields', async () => {
    const { done, acc } = await imported(fixture('pipedrive-persons.csv'));
    expect(done).toMatchObject({ status: 'completed', created: 3, failed: 0, unknown_columns: ['Person - Name', 'Person - Owner', 'Person - Update time'] });
    const contacts = await contactsOf(acc);
    allFilled(contacts, ['firstName', 'lastName', 'email', 'phone', 'company', 'contactType', 'externalId']);
    expect(contacts).toMatchObject([
      { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@engines.example', phone: '+44 20 7946 0000', company: 'Analytical Engines', contactType: 'lead', externalId: '101', createdAt: at('2024-01-15T09:32:10Z') },
      { firstName: 'Alan', company: 'Bletchley Park', contactType: 'lead', externalId: '103' },
      { firstName: 'Charles', company: 'Difference Engines, Ltd', contactType: 'client', externalId: '102', createdAt: at('2024-01-16T11:00:00Z') },
    ]);
  });

  it('Salesforce report: Contact ID, Account Name, Lead Source and Created Date (M/D/YYYY) fill their fields; lead sources are sources by synonym', async () => {
    const { done, acc } = await imported(fixture('salesforce-contacts.csv'));
    expect(done).toMatchObject({ status: 'completed', created: 3, failed: 0, unknown_columns: ['Title', 'Mailing City', 'Contact Owner'] });
    const contacts = await contactsOf(acc);
    allFilled(contacts, ['firstName', 'lastName', 'email', 'phone', 'company', 'source', 'externalId']);
    expect(contacts).toMatchObject([
      { firstName: 'Bret', company: 'Sierra', source: 'cold_outreach', externalId: '0035g00000XyZaDAAV', createdAt: at('2023-12-24T00:00:00Z') },
      { firstName: 'Marc', lastName: 'Benioff', email: 'marc@sf.example', phone: '(415) 555-0100', company: 'Salesforce', source: 'website', externalId: '0035g00000XyZaBAAV', createdAt: at('2024-01-15T00:00:00Z') },
      { firstName: 'Parker', source: 'referral', createdAt: at('2024-02-03T00:00:00Z') },
    ]);
  });

  it('Google Contacts, both of its CSV formats: E-mail 1 - Value, Phone 1 - Value, Organization Name (Given Name, Family Name, Organization 1 - Name in the older one) fill their fields', async () => {
    const { done, acc } = await imported(fixture('google-contacts.csv'));
    expect(done).toMatchObject({ status: 'completed', created: 2, failed: 0 });
    expect(done.unknown_columns).toEqual(expect.arrayContaining(['E-mail 2 - Value', 'Phone 2 - Value', 'Organization Title', 'Labels']));
    const contacts = await contactsOf(acc);
    allFilled(contacts, ['firstName', 'lastName', 'email', 'phone', 'company']);
    expect(contacts).toMatchObject([
      { firstName: 'Larry', lastName: 'Page', email: 'larry@google.example', phone: '+1 650 555 0101', company: 'Google' },
      { firstName: 'Sergey', lastName: 'Brin', email: 'sergey@google.example', phone: '+1 650 555 0102', company: 'Alphabet' },
    ]);
    const legacy = await imported(fixture('google-contacts-legacy.csv'));
    expect(legacy.done).toMatchObject({ status: 'completed', created: 1, failed: 0 });
    expect(await contactsOf(legacy.acc)).toMatchObject([{ firstName: 'Sundar', lastName: 'Pichai', email: 'sundar@google.example', phone: '+1 650 555 0104', company: 'Google' }]);
  });

  it('Outlook (UTF-8 with a BOM, every cell quoted): E-mail Address, Business Phone and Company fill their fields; its Mobile Phone beside Business Phone is ignored, not a second phone column', async () => {
    const file = fixture('outlook-contacts.csv');
    expect([...file.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const { done, acc } = await imported(file);
    expect(done).toMatchObject({ status: 'completed', created: 2, failed: 0 });
    expect(done.unknown_columns).toEqual(expect.arrayContaining(['Mobile Phone', 'E-mail 2 Address', 'Job Title']));
    const contacts = await contactsOf(acc);
    allFilled(contacts, ['firstName', 'lastName', 'email', 'phone', 'company']);
    expect(contacts).toMatchObject([
      { firstName: 'Amy', lastName: 'Hood', email: 'amy@microsoft.example', phone: '+1 425 555 0101', company: 'Microsoft' },
      { firstName: 'Satya', lastName: 'Nadella', email: 'satya@microsoft.example', phone: '+1 425 555 0100', company: 'Microsoft' },
    ]);
  });
});

describe('deals as each system exports them, with no mapping', () => {
  const stages = (acc: TestAccount, names: string[]) =>
    t.db.pipelineStage.createMany({ data: names.map((name, position) => ({ accountId: acc.id, name, position })) });

  it('Pipedrive: the deals link the persons imported before by Person - Email (any case) and their stages by Deal - Stage (any case)', async () => {
    const { acc } = await imported(fixture('pipedrive-persons.csv'));
    await stages(acc, ['Qualified', 'Contact Made', 'Proposal Made', 'Negotiations Started']);
    const { done } = await imported(fixture('pipedrive-deals.csv'), { object: 'deals', match_on: 'external_id' }, acc);
    expect(done).toMatchObject({ status: 'completed', created: 3, failed: 0 });
    expect(done.unknown_columns).toEqual(['Deal - Creator', 'Deal - Owner', 'Deal - Currency', 'Deal - Organization', 'Deal - Pipeline', 'Deal - Contact person', 'Deal - Status']);
    const deals = await dealsOf(acc);
    allFilled(deals, ['title', 'value', 'probability', 'expectedCloseDate', 'externalId', 'contact', 'stage']);
    expect(deals.map((d) => ({ ...d, value: d.value.toString(), probability: Number(d.probability) }))).toEqual([
      { title: 'Analytical Engine deal', value: '25000', probability: 60, expectedCloseDate: at('2024-05-31T00:00:00Z'), externalId: '7', createdAt: at('2024-02-01T09:00:00Z'), contact: { email: 'ada@engines.example' }, stage: { name: 'Qualified' } },
      { title: 'Bombe maintenance', value: '1200', probability: 90, expectedCloseDate: at('2024-03-01T00:00:00Z'), externalId: '9', createdAt: at('2024-02-05T16:00:00Z'), contact: { email: 'alan@bletchley.example' }, stage: { name: 'Negotiations Started' } },
      { title: 'Difference Engine No. 2, rebuild', value: '8000.5', probability: 30, expectedCloseDate: at('2024-07-15T00:00:00Z'), externalId: '8', createdAt: at('2024-02-03T10:30:00Z'), contact: { email: 'charles@engines.example' }, stage: { name: 'Proposal Made' } },
    ]);
  });

  it('HubSpot: Deal Name, Deal Stage, Amount, Close Date (with its 00:00), Record ID and Create Date fill their fields', async () => {
    const acc = await createAccount(t);
    await stages(acc, ['Appointment Scheduled', 'Closed Won']);
    const { done } = await imported(fixture('hubspot-deals.csv'), { object: 'deals' }, acc);
    expect(done).toMatchObject({ status: 'completed', created: 2, failed: 0, unknown_columns: ['Pipeline', 'Deal owner', 'Deal Type'] });
    const deals = await dealsOf(acc);
    allFilled(deals, ['title', 'value', 'expectedCloseDate', 'externalId', 'stage']);
    expect(deals).toMatchObject([
      { title: 'HubSpot renewal 2024', expectedCloseDate: at('2024-06-30T00:00:00Z'), externalId: '9001', createdAt: at('2024-01-10T14:22:00Z'), stage: { name: 'Appointment Scheduled' } },
      { title: 'Marketing Hub upgrade', expectedCloseDate: at('2024-03-31T00:00:00Z'), externalId: '9002', stage: { name: 'Closed Won' } },
    ]);
    expect(deals.map((d) => d.value.toString())).toEqual(['12000', '4500.5']);
  });

  it('Salesforce report: Opportunity Name, Amount, Stage, Close Date (M/D/YYYY), Probability (%), Opportunity ID and Created Date fill their fields', async () => {
    const acc = await createAccount(t);
    await stages(acc, ['Prospecting', 'Value Proposition']);
    const { done } = await imported(fixture('salesforce-opportunities.csv'), { object: 'deals' }, acc);
    expect(done).toMatchObject({ status: 'completed', created: 2, failed: 0, unknown_columns: ['Account Name', 'Lead Source', 'Opportunity Owner'] });
    const deals = await dealsOf(acc);
    allFilled(deals, ['title', 'value', 'probability', 'expectedCloseDate', 'externalId', 'stage']);
    expect(deals.map((d) => ({ ...d, value: d.value.toString(), probability: Number(d.probability) }))).toEqual([
      { title: 'Salesforce - 500 seats', value: '150000', probability: 10, expectedCloseDate: at('2024-06-30T00:00:00Z'), externalId: '0065g00000AbCdEAAV', createdAt: at('2024-01-20T00:00:00Z'), contact: null, stage: { name: 'Prospecting' } },
      { title: 'Sierra - pilot', value: '25000', probability: 50, expectedCloseDate: at('2024-03-31T00:00:00Z'), externalId: '0065g00000AbCdFAAV', createdAt: at('2024-02-01T00:00:00Z'), contact: null, stage: { name: 'Value Proposition' } },
    ]);
  });
});

describe('deals link their contact and stage by what other systems carry', () => {
  it('contact_external_id links the contact holding that external id; an e-mail or a stage name no record of the account has fails its row naming contact_email or stage_name', async () => {
    const acc = await createAccount(t);
    const other = await createAccount(t);
    await createContact(t, acc, { firstName: 'Ada', email: 'ada@example.com', externalId: 'crm-1' });
    await createContact(t, other, { firstName: 'Eve', email: 'eve@example.com' });
    await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'Won', position: 0 } });
    await t.db.pipelineStage.create({ data: { accountId: other.id, name: 'Lost', position: 0 } });
    const { done, errors } = await imported(
      'title,contact_external_id,contact_email,stage_name\r\nBy id,crm-1,,WON\r\nNo such person,,eve@example.com,Won\r\nNo such stage,crm-1,,Lost\r\nBoth unknown,crm-2,,Nowhere\r\n',
      { object: 'deals' }, acc,
    );
    expect(done).toMatchObject({ status: 'completed', created: 1, failed: 3, unknown_columns: [] });
    expect(errors).toEqual([
      { line: 3, details: { contact_email: ['No contact of the account has this e-mail'] } },
      { line: 4, details: { stage_name: ['No pipeline stage of the account has this name'] } },
      { line: 5, details: { contact_external_id: ['No contact of the account has this external id'], stage_name: ['No pipeline stage of the account has this name'] } },
    ]);
    expect(await dealsOf(acc)).toMatchObject([{ title: 'By id', contact: { email: 'ada@example.com' }, stage: { name: 'Won' } }]);
  });

  it("a chunk's references are found in one statement, whatever its number of rows", async () => {
    const acc = await createAccount(t);
    await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'Open', position: 0 } });
    const contacts = [];
    for (const email of ['p0@example.com', 'p1@example.com']) contacts.push(await createContact(t, acc, { firstName: 'P', email }));
    const rows = Array.from({ length: 200 }, (_, i) => ({ contactEmail: `P${i % 3}@example.com`, stageName: i % 2 ? 'open' : 'Closed' }));
    const judged: Judged[] = rows.map((_, index) => ({ index, data: { title: `Deal ${index}` } }));
    let statements = 0;
    const tx = { $queryRaw: (...args: Parameters<typeof t.db.$queryRaw>) => (statements++, t.db.$queryRaw(...args)) } as unknown as Prisma.TransactionClient;
    await resolveReferences(tx, acc.id, judged, rows);
    expect(statements).toBe(1);
    expect(judged[1]).toEqual({ index: 1, data: { title: 'Deal 1', contactId: contacts[1]!.id, stageId: expect.any(String) } });
    expect(judged[0]).toMatchObject({ details: { stage_name: ['No pipeline stage of the account has this name'] } });
    expect(judged[5]).toMatchObject({ details: { contact_email: ['No contact of the account has this e-mail'] } });
  });
});

describe('values and keys as other systems write them', () => {
  it('enum values match whatever their case (Lead, CUSTOMER → client, Past Client) and through the documented synonyms; a value none of them names fails its row by name', async () => {
    const { done, acc, errors } = await imported(
      'First Name,Contact Type,Source\r\nA,Lead,WEBSITE\r\nB,CUSTOMER,Social Media\r\nC,Past Client,word of mouth\r\nD,Supplier,Advertisement\r\nE,former customer,cold_outreach\r\nF,Prospect,Organic Search\r\nG,Martian,web\r\n',
    );
    expect(done).toMatchObject({ created: 6, failed: 1 });
    expect(errors).toEqual([{ line: 8, details: { contact_type: [expect.stringContaining('Must be one of')] } }]);
    expect((await contactsOf(acc)).map((c) => [c.firstName, c.contactType, c.source])).toEqual([
      ['A', 'lead', 'website'], ['B', 'client', 'social_media'], ['C', 'past_client', 'referral'], ['D', 'vendor', 'advertising'], ['E', 'past_client', 'cold_outreach'], ['F', 'lead', 'website'],
    ]);
  });

  it('match_on=external_id creates the rows that have no external id, and updates those whose id a record holds', async () => {
    const acc = await createAccount(t);
    await createContact(t, acc, { firstName: 'Old', email: 'old@example.com', externalId: 'x-1' });
    const { done, errors } = await imported('First Name,Email,External Id\r\nRenamed,old@example.com,x-1\r\nNew,new@example.com,\r\nAnother,another@example.com,\r\nKeyed,keyed@example.com,x-2\r\nTwice,twice@example.com,x-2\r\n', { match_on: 'external_id' }, acc);
    expect(done).toMatchObject({ status: 'completed', created: 3, updated: 1, failed: 1 });
    expect(errors).toEqual([{ line: 6, details: { external_id: ['Duplicate in this file (line 5)'] } }]);
    expect((await contactsOf(acc)).map((c) => [c.firstName, c.externalId])).toEqual([['Another', null], ['Keyed', 'x-2'], ['New', null], ['Renamed', 'x-1']]);
  });

  it('created_at is kept from the file when it is a real time not in the future; an impossible or future one leaves the record created now, and an update never changes it', async () => {
    const acc = await createAccount(t);
    await createContact(t, acc, { firstName: 'Kept', externalId: 'k-1' });
    const before = Date.now();
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const { done } = await imported(
      `First Name,External Id,Created\r\nPast,p-1,2020-02-29T12:00:00+02:00\r\nImpossible,p-2,2021-02-30\r\nFuture,p-3,${future}\r\nNotATime,p-4,yesterday\r\nKept,k-1,2001-01-01\r\n`,
      { match_on: 'external_id' }, acc,
    );
    expect(done).toMatchObject({ status: 'completed', created: 4, unchanged: 1, failed: 0 });
    const byName = Object.fromEntries((await contactsOf(acc)).map((c) => [c.firstName, c.createdAt.getTime()]));
    expect(byName.Past).toBe(Date.parse('2020-02-29T10:00:00Z'));
    for (const name of ['Impossible', 'Future', 'NotATime']) expect(byName[name]).toBeGreaterThanOrEqual(before - 1000);
    expect(byName.Kept).toBeLessThan(before + 60_000);
    expect(byName.Kept).not.toBe(Date.parse('2001-01-01T00:00:00Z'));
  });
});

describe('headers and cells as other systems write them', () => {
  it("a header naming a field by its own name wins over another system's header for it, which is listed as unknown; two of one rank are a 400 naming the field", () => {
    expect(planColumns('contacts', ['First Name', 'Phone Number', 'Phone', 'Mobile Phone'], {}, null)).toMatchObject({ columns: ['firstName', null, 'phone', null], unknown: ['Phone Number', 'Mobile Phone'] });
    // Outlook: Business Phone is listed before anything else that means a phone.
    expect(planColumns('contacts', ['First Name', 'E-mail Address', 'Business Phone'], {}, null)).toMatchObject({ columns: ['firstName', 'email', 'phone'], unknown: [] });
    expect(planColumns('contacts', ['first_name', 'Email', 'e-mail address', 'EMAIL'], {}, null)).toEqual({ details: { email: ['More than one column'] } });
    // A column `mapping` names ranks with the field's own name.
    expect(planColumns('contacts', ['First Name', 'Email', 'Work mail'], { 'Work mail': 'email' }, null)).toEqual({ details: { email: ['More than one column'] } });
    // A deal's stage and contact by other systems' headers are the reference columns, not the ids.
    expect(planColumns('deals', ['Deal - Title', 'Deal - Stage', 'Person - Email', 'stage_id'], {}, null)).toMatchObject({ columns: ['title', 'stageName', 'contactEmail', 'stageId'], unknown: [] });
  });

  it('a day with / is month first in a , file and day first in a ; file; with . day first; impossible days and times are none; a creation time in the future is none', () => {
    expect(dayOf('1/15/2024')).toEqual(at('2024-01-15T00:00:00Z'));
    expect(dayOf('15/01/2024', true)).toEqual(at('2024-01-15T00:00:00Z'));
    expect(dayOf('15/01/2024')).toBeNull();
    expect(dayOf('15.01.2024')).toEqual(at('2024-01-15T00:00:00Z'));
    expect(dayOf('2024-06-30 00:00')).toEqual(at('2024-06-30T00:00:00Z'));
    expect(dayOf('2024-02-30')).toBeNull();
    expect(pastTimeOf('1/15/2024, 9:32 PM')).toEqual(at('2024-01-15T21:32:00Z'));
    expect(pastTimeOf('1/15/2024 12:05 AM')).toEqual(at('2024-01-15T00:05:00Z'));
    expect(pastTimeOf('2024-01-15T09:32:10.5+01:00')).toEqual(at('2024-01-15T08:32:10.500Z'));
    expect(pastTimeOf('2024-01-15 24:00')).toBeNull();
    expect(pastTimeOf('1/15/2024 13:00 PM')).toBeNull();
    expect(pastTimeOf('2999-01-01')).toBeNull();
    expect(pastTimeOf('next Tuesday')).toBeNull();
  });

  it('enum values: any case or spacing, and the synonyms, before the rules judge them; the value mapping first', () => {
    const columns = ['firstName', 'contactType', 'source'];
    expect(inputOf(columns, ['Ada', ' marketingqualifiedlead ', 'PARTNER_REFERRAL'])).toEqual({ firstName: 'Ada', contactType: 'lead', source: 'referral' });
    expect(inputOf(columns, ['Ada', 'Gold', 'Web'], { values: { contactType: { gold: 'Client' } }, decimalComma: false })).toEqual({ firstName: 'Ada', contactType: 'client', source: 'website' });
    expect(inputOf(columns, ['Ada', 'Martian', ''])).toEqual({ firstName: 'Ada', contactType: 'Martian' });
  });
});
