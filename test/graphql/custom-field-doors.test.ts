import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';
import { whereFound } from '../helpers/everywhere.js';
import { drain, importCsv } from '../imports/helpers.js';

// docs/custom-fields.md#where-values-go (docs/decisions.md §23): everywhere a record's fields go, its
// custom fields go: imports, the contacts CSV, the account export, events, erasure.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const CREATE = /* GraphQL */ `
  mutation ($accountId: ID!, $input: CreateCustomFieldInput!) {
    createCustomField(accountId: $accountId, input: $input) { id key }
  }
`;

async function define(acc: TestAccount, input: Record<string, unknown>) {
  const r = await t.gql(CREATE, { accountId: acc.id, input: { object: 'CONTACT', label: String(input.key), type: 'TEXT', ...input } }, { as: acc.owner });
  expect(r.errors).toBeUndefined();
  return r.data.createCustomField as { id: string; key: string };
}

/** An account with one contact field of each type the doors convert. */
async function accountWithFields() {
  const acc = await createAccount(t);
  await define(acc, { key: 'tier', label: 'Customer Tier', type: 'SELECT', options: ['gold', 'silver'] });
  await define(acc, { key: 'seats', label: 'Seats', type: 'NUMBER' });
  await define(acc, { key: 'vip', label: 'VIP', type: 'BOOLEAN' });
  await define(acc, { key: 'renewal', label: 'Renewal', type: 'DATE' });
  await define(acc, { key: 'tags', label: 'Tags', type: 'MULTI_SELECT', options: ['a', 'b', 'c'] });
  return acc;
}

const valuesOf = async (acc: TestAccount, email: string) => (await t.db.contact.findFirstOrThrow({ where: { accountId: acc.id, email } })).customFields;

describe('imports', () => {
  test('a column headed by a custom field key or label feeds it, its cells read by the field type', async () => {
    const acc = await accountWithFields();
    const csv = [
      'First Name,Email,tier,SEATS,vip,Renewal,tags',
      'Ada,ada@example.com,gold,12,yes,3/31/2027,a;c',
      'Grace,grace@example.com,,,0,,b',
    ].join('\r\n');
    const r = await importCsv(t, acc.member, acc.id, csv);
    expect(r.status, r.text).toBe(202);
    expect(r.body.data.unknown_columns ?? []).toEqual([]);
    await drain(t);
    const done = await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: acc.member });
    expect(done.body.data).toMatchObject({ status: 'completed', created: 2, failed: 0 });
    expect(await valuesOf(acc, 'ada@example.com')).toEqual({ tier: 'gold', seats: 12, vip: true, renewal: '2027-03-31', tags: ['a', 'c'] });
    expect(await valuesOf(acc, 'grace@example.com')).toEqual({ vip: false, tags: ['b'] });
    const item = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&email=ada@example.com`, { as: acc.member });
    expect(item.body.data[0].custom_fields).toEqual({ tier: 'gold', seats: 12, vip: true, renewal: '2027-03-31', tags: ['a', 'c'] });
  });

  test('a mapping may send any column to custom_fields.<key>', async () => {
    const acc = await accountWithFields();
    const csv = 'First Name,Email,Level\r\nAda,ada@example.com,silver\r\n';
    const r = await importCsv(t, acc.member, acc.id, csv, { mapping: JSON.stringify({ Level: 'custom_fields.tier' }) });
    expect(r.status, r.text).toBe(202);
    await drain(t);
    expect(await valuesOf(acc, 'ada@example.com')).toEqual({ tier: 'silver' });
  });

  test('a cell its field refuses fails its row, named custom_fields.<key> in the errors file; the other rows are written', async () => {
    const acc = await accountWithFields();
    const csv = 'First Name,Email,Customer Tier,Seats,VIP\r\nAda,ada@example.com,platinum,many,maybe\r\nGrace,grace@example.com,gold,1,no\r\n';
    const r = await importCsv(t, acc.member, acc.id, csv);
    expect(r.status, r.text).toBe(202);
    await drain(t);
    const done = await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: acc.member });
    expect(done.body.data).toMatchObject({ status: 'completed', created: 1, failed: 1 });
    const errors = await t.rest('GET', `/api/v1/imports/${r.body.data.id}/errors`, { as: acc.member });
    const [header, row] = parseCsv(errors.text);
    expect(header).toEqual(['line', 'First Name', 'Email', 'Customer Tier', 'Seats', 'VIP', 'errors']);
    expect(row!.slice(0, 6)).toEqual(['2', 'Ada', 'ada@example.com', 'platinum', 'many', 'maybe']);
    expect(row![6]).toContain('custom_fields.tier: Must be one of: gold, silver');
    expect(row![6]).toContain('custom_fields.seats: Expected a number');
    expect(row![6]).toContain('custom_fields.vip: Expected true or false');
  });

  test('a required custom field without a column refuses the import by custom_fields.<key>', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'region', label: 'Region', required: true });
    const r = await importCsv(t, acc.member, acc.id, 'First Name,Email\r\nAda,ada@example.com\r\n');
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual({ 'custom_fields.region': ['No column for this required field'] });
  });
});

const ARCHIVE = /* GraphQL */ `mutation ($id: ID!) { updateCustomField(id: $id, input: { archived: true }) { id } }`;
const createContactRest = async (acc: TestAccount, body: Record<string, unknown>) => {
  const r = await t.rest('POST', '/api/v1/contacts', { as: acc.member, body: { account_id: acc.id, ...body } });
  expect(r.status, r.text).toBe(201);
  return r.body.data.id as string;
};

describe('the contacts CSV export', () => {
  test('one column per active contact field, by label in position order, after the nine fixed ones; cells formula-guarded, a MULTI_SELECT as "a; b"', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'notes_text', label: 'Remarks', position: 5 });
    await define(acc, { key: 'seats', label: 'Seats', type: 'NUMBER', position: 1 });
    await define(acc, { key: 'tags', label: 'Tags', type: 'MULTI_SELECT', options: ['a', 'b'], position: 3 });
    const gone = await define(acc, { key: 'old', label: 'Old', position: 2 });
    await createContactRest(acc, { first_name: 'Ada', custom_fields: { notes_text: '=HYPERLINK("x")', seats: -5, tags: ['b', 'a'], old: 'kept' } });
    await createContactRest(acc, { first_name: 'Grace' });
    expect((await t.gql(ARCHIVE, { id: gone.id }, { as: acc.owner })).errors).toBeUndefined();
    const r = await t.rest('GET', `/api/v1/contacts/export?account_id=${acc.id}`, { as: acc.owner });
    expect(r.status).toBe(200);
    const [header, ada, grace] = parseCsv(r.text);
    expect(header).toEqual(['First Name', 'Last Name', 'Email', 'Phone', 'Company', 'Contact Type', 'Source', 'Created At', 'External Id', 'Seats', 'Tags', 'Remarks']);
    expect(ada!.slice(9)).toEqual(['-5', 'b; a', `'=HYPERLINK("x")`]);
    expect(grace!.slice(9)).toEqual(['', '', '']);
    expect(r.text).not.toContain('kept');
  });
});

describe('the account export', () => {
  test('holds every definition (archived too) under custom_fields, REST-shaped, and each record its custom_fields object', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'tier', label: 'Tier', type: 'SELECT', options: ['gold'] });
    const gone = await define(acc, { key: 'size', label: 'Size', type: 'MULTI_SELECT', options: ['s', 'm'], object: 'DEAL' });
    await createContactRest(acc, { first_name: 'Ada', custom_fields: { tier: 'gold' } });
    const deal = await t.rest('POST', '/api/v1/deals', { as: acc.member, body: { account_id: acc.id, title: 'Big', custom_fields: { size: ['m'] } } });
    expect(deal.status, deal.text).toBe(201);
    expect((await t.gql(ARCHIVE, { id: gone.id }, { as: acc.owner })).errors).toBeUndefined();
    const r = await t.rest('GET', `/api/v1/account/export?account_id=${acc.id}`, { as: acc.owner });
    expect(r.status).toBe(200);
    const doc = JSON.parse(r.text);
    expect(doc.custom_fields).toEqual([
      expect.objectContaining({ account_id: acc.id, object: 'contact', key: 'tier', label: 'Tier', type: 'select', options: ['gold'], required: false, archived: false, position: 0 }),
      expect.objectContaining({ object: 'deal', key: 'size', type: 'multi_select', options: ['s', 'm'], archived: true }),
    ]);
    expect(doc.contacts[0].custom_fields).toEqual({ tier: 'gold' });
    // An archived field's values stay on the record (docs/custom-fields.md): the export is the account's data.
    expect(doc.deals[0].custom_fields).toEqual({ size: ['m'] });
  });
});

describe('events', () => {
  test('a created event carries data.object.custom_fields; an update patching one key shows both objects in object and previous', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'tier', type: 'SELECT', options: ['gold', 'silver'] });
    await define(acc, { key: 'seats', type: 'NUMBER' });
    const id = await createContactRest(acc, { first_name: 'Ada', custom_fields: { tier: 'gold', seats: 3 } });
    const patched = await t.rest('PATCH', `/api/v1/contacts/${id}`, { as: acc.member, body: { custom_fields: { tier: 'silver' } } });
    expect(patched.status, patched.text).toBe(200);
    const events = await t.db.event.findMany({ where: { accountId: acc.id, type: { in: ['contact.created', 'contact.updated'] } }, orderBy: { occurredAt: 'asc' } });
    const [created, updated] = events.map((e) => e.data as { object: Record<string, unknown>; previous?: Record<string, unknown> });
    expect(created!.object.custom_fields).toEqual({ tier: 'gold', seats: 3 });
    expect(updated!.object.custom_fields).toEqual({ tier: 'silver', seats: 3 });
    expect(updated!.previous).toEqual({ custom_fields: { tier: 'gold', seats: 3 } });
  });

  test('deal, company and invoice events carry custom_fields too', async () => {
    const acc = await createAccount(t);
    for (const object of ['DEAL', 'COMPANY', 'INVOICE']) await define(acc, { key: 'ref', object });
    const deal = await t.rest('POST', '/api/v1/deals', { as: acc.member, body: { account_id: acc.id, title: 'Big', custom_fields: { ref: 'd1' } } });
    const company = await t.rest('POST', '/api/v1/companies', { as: acc.member, body: { account_id: acc.id, name: 'Acme', custom_fields: { ref: 'c1' } } });
    const contactId = await createContactRest(acc, { first_name: 'Ada' });
    const invoice = await t.rest('POST', '/api/v1/invoices', { as: acc.member, body: { account_id: acc.id, contact_id: contactId, due_date: '2030-01-01', lines: [{ description: 'Work', quantity: 1, unit_price: 10 }], custom_fields: { ref: 'i1' } } });
    for (const r of [deal, company, invoice]) expect(r.status, r.text).toBe(201);
    const data = async (type: string) => ((await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type } })).data as { object: Record<string, unknown> }).object.custom_fields;
    expect(await data('deal.created')).toEqual({ ref: 'd1' });
    expect(await data('company.created')).toEqual({ ref: 'c1' });
    expect(await data('invoice.created')).toEqual({ ref: 'i1' });
  });
});

describe('erasure', () => {
  test("eraseContact leaves none of the person's custom values in any table: the contact, its events, import rows and errors", async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'nickname', label: 'Nickname' });
    const tag = Math.random().toString(36).slice(2, 10);
    const marker = `zz-secret-${tag}`;
    const email = `erin.${tag}@example.com`;
    const id = await createContactRest(acc, { first_name: 'Erin', email, custom_fields: { nickname: marker } });
    expect((await t.rest('PATCH', `/api/v1/contacts/${id}`, { as: acc.member, body: { custom_fields: { nickname: `${marker}-2` } } })).status).toBe(200);
    // An import that refuses their row (its errors file keeps the cells) and one still waiting for the worker.
    const refused = await importCsv(t, acc.member, acc.id, `First Name,Email,Nickname,Contact Type\r\nErin,${email},${marker},stranger\r\n`);
    expect(refused.status, refused.text).toBe(202);
    await drain(t);
    const waiting = await importCsv(t, acc.member, acc.id, `First Name,Email,Nickname\r\nErin,${email},${marker}\r\n`);
    expect(waiting.status, waiting.text).toBe(202);
    expect((await whereFound(t.db, [marker])).length).toBeGreaterThanOrEqual(3);

    const r = await t.gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id }, { as: acc.owner });
    expect(r.errors).toBeUndefined();
    expect(await whereFound(t.db, [marker])).toEqual([]);
  });
});

describe('lead forms', () => {
  const CREATE_FORM = /* GraphQL */ `
    mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id fields { key type customField options } } }
  `;
  let ip = 0;
  const nextIp = () => `10.77.${Math.floor(++ip / 250) % 250}.${(ip % 250) + 1}`;
  const EMAIL = { key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' };
  const saveForm = (acc: TestAccount, fields: Record<string, unknown>[]) =>
    t.gql(CREATE_FORM, { input: { accountId: acc.id, name: 'Signup', fields: [EMAIL, ...fields] } }, { as: acc.owner });
  const submit = (formId: string, data: Record<string, string>) => t.rest('POST', `/api/v1/forms/${formId}/submit`, { body: { data }, clientIp: nextIp() });

  /** A form filling the account's fields (accountWithFields) through inputs of their types. */
  async function formFillingFields(acc: TestAccount) {
    const r = await saveForm(acc, [
      { key: 'plan', label: 'Plan', type: 'select', customField: 'tier' },
      { key: 'team', label: 'Team size', type: 'number', customField: 'seats' },
      { key: 'vip', label: 'VIP', type: 'checkbox', customField: 'vip' },
      { key: 'renews', label: 'Renews on', type: 'date', customField: 'renewal' },
      { key: 'interest', label: 'Interest', type: 'select', customField: 'tags', options: ['b'] },
    ]);
    expect(r.errors).toBeUndefined();
    return r.data.createLeadForm as { id: string; fields: { key: string; type: string; customField: string | null; options: string[] }[] };
  }

  test("a field names the contact custom field it fills; a select without options takes the field's", async () => {
    const acc = await accountWithFields();
    const form = await formFillingFields(acc);
    expect(form.fields.slice(1)).toEqual([
      { key: 'plan', type: 'select', customField: 'tier', options: ['gold', 'silver'] },
      { key: 'team', type: 'number', customField: 'seats', options: [] },
      { key: 'vip', type: 'checkbox', customField: 'vip', options: [] },
      { key: 'renews', type: 'date', customField: 'renewal', options: [] },
      { key: 'interest', type: 'select', customField: 'tags', options: ['b'] },
    ]);
  });

  test('a form is refused when a field names an unknown or archived key, gives mapsTo too, or an input unsuited to the field type', async () => {
    const acc = await accountWithFields();
    const old = await define(acc, { key: 'old' });
    expect((await t.gql(ARCHIVE, { id: old.id }, { as: acc.owner })).errors).toBeUndefined();
    for (const [field, details] of [
      [{ key: 'x', label: 'X', type: 'text', customField: 'nope' }, { 'fields.1.customField': ['No active contact custom field has this key'] }],
      [{ key: 'x', label: 'X', type: 'text', customField: 'old' }, { 'fields.1.customField': ['No active contact custom field has this key'] }],
      [{ key: 'x', label: 'X', type: 'text', customField: 'tier', mapsTo: 'last_name' }, { 'fields.1.customField': ['Give mapsTo or customField, not both'] }],
      [{ key: 'x', label: 'X', type: 'text', customField: 'seats' }, { 'fields.1.type': ['Must be one of: number, hidden (the field is NUMBER)'] }],
      [{ key: 'x', label: 'X', type: 'select', customField: 'tier', options: ['gold', 'bronze'] }, { 'fields.1.options': ["Must be among the field's options: gold, silver"] }],
    ] as const) {
      const r = await saveForm(acc, [field]);
      expect(r.errors?.[0]?.extensions, JSON.stringify(field)).toMatchObject({ code: 'BAD_USER_INPUT', details });
    }
  });

  test("a visitor's values are stored in the new contact's custom_fields, each read by its field's type", async () => {
    const acc = await accountWithFields();
    const form = await formFillingFields(acc);
    const r = await submit(form.id, { email: 'ada@example.com', plan: 'gold', team: '12.5', vip: 'yes', renews: '2027-03-31', interest: 'b' });
    expect(r.status, r.text).toBe(200);
    expect(await valuesOf(acc, 'ada@example.com')).toEqual({ tier: 'gold', seats: 12.5, vip: true, renewal: '2027-03-31', tags: ['b'] });
    const created = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'contact.created' } });
    expect((created.data as { object: Record<string, unknown> }).object.custom_fields).toEqual({ tier: 'gold', seats: 12.5, vip: true, renewal: '2027-03-31', tags: ['b'] });
  });

  test("a known contact's values are patched by what the visitor filled, the others kept, and its event shows the previous ones", async () => {
    const acc = await accountWithFields();
    const form = await formFillingFields(acc);
    const id = await createContactRest(acc, { first_name: 'Ada', email: 'ada@example.com', custom_fields: { tier: 'silver', seats: 3 } });
    const r = await submit(form.id, { email: 'ada@example.com', plan: 'gold' });
    expect(r.status, r.text).toBe(200);
    expect(r.body.contact_id).toBe(id);
    expect(await valuesOf(acc, 'ada@example.com')).toEqual({ tier: 'gold', seats: 3 });
    const updated = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'contact.updated' } });
    expect(updated.data).toMatchObject({ object: { custom_fields: { tier: 'gold', seats: 3 } }, previous: { custom_fields: { tier: 'silver', seats: 3 } } });
  });

  test("a value its field refuses is the submission's 400, named by the form's key; a required field the form lacks refuses a new contact", async () => {
    const acc = await accountWithFields();
    const form = await formFillingFields(acc);
    const bad = await submit(form.id, { email: 'ada@example.com', team: 'many', renews: '2027-02-30' });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual({ team: ['Must be a number'], renews: ['Must be a real date in the form YYYY-MM-DD'] });
    await define(acc, { key: 'region', required: true });
    const missing = await submit(form.id, { email: 'grace@example.com', plan: 'gold' });
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual({ 'custom_fields.region': ['Required'] });
    expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(0);
  });

  test("a field archived after the form was saved takes nothing from a submission, which still succeeds and keeps the visitor's value", async () => {
    const acc = await createAccount(t);
    const tier = await define(acc, { key: 'tier', label: 'Tier' });
    const r = await saveForm(acc, [{ key: 'level', label: 'Level', type: 'text', customField: 'tier' }]);
    expect(r.errors).toBeUndefined();
    expect((await t.gql(ARCHIVE, { id: tier.id }, { as: acc.owner })).errors).toBeUndefined();
    const sent = await submit(r.data.createLeadForm.id, { email: 'ada@example.com', level: 'high' });
    expect(sent.status, sent.text).toBe(200);
    expect(await valuesOf(acc, 'ada@example.com')).toEqual({});
    expect((await t.db.formSubmission.findFirstOrThrow({ where: { accountId: acc.id } })).data).toEqual({ email: 'ada@example.com', level: 'high' });
  });

  test('the public page renders an input of the field type: options of a select, a checkbox, a date, a number', async () => {
    const acc = await accountWithFields();
    const form = await formFillingFields(acc);
    const html = await (await fetch(`${t.baseUrl}/forms/${form.id}`)).text();
    expect(html).toMatch(/<select id="f-plan"[^>]*>.*<option value="gold">gold<\/option><option value="silver">silver<\/option><\/select>/);
    expect(html).toMatch(/<input type="number" step="any" id="f-team"/);
    expect(html).toMatch(/<input type="checkbox" value="yes" id="f-vip"/);
    expect(html).toMatch(/<input type="date" id="f-renews"/);
  });
});
