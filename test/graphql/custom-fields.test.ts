import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createAccount, createApiKey, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';
import { recordShapes } from '../../src/model/shapes.js';
import { CONTACT_MODEL } from '../../src/contacts/contact.model.js';

// docs/custom-fields.md (docs/decisions.md §23): the fields an account defines, and their values on
// contacts, deals, companies and invoices through GraphQL and REST.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

/** The one error's code and details. */
const problem = (r: Parameters<typeof errorOf>[0]) => errorOf(r).extensions!;

const CREATE = /* GraphQL */ `
  mutation ($accountId: ID!, $input: CreateCustomFieldInput!) {
    createCustomField(accountId: $accountId, input: $input) { id object key label type options required archived position }
  }
`;
const UPDATE = /* GraphQL */ `
  mutation ($id: ID!, $input: UpdateCustomFieldInput!) { updateCustomField(id: $id, input: $input) { id label options required archived position } }
`;

async function define(acc: TestAccount, input: Record<string, unknown>) {
  const r = await t.gql(CREATE, { accountId: acc.id, input: { object: 'CONTACT', label: String(input.key), type: 'TEXT', ...input } }, { as: acc.owner });
  expect(r.errors).toBeUndefined();
  return r.data.createCustomField as { id: string; key: string; position: number };
}

const contactValues = async (acc: TestAccount, id: string) =>
  (await t.gql('query ($id: ID!) { contact(id: $id) { customFields } }', { id }, { as: acc.member })).data.contact.customFields;

describe('definitions', () => {
  test('the owner defines a field; members and Account.customFields list it, archived ones too', async () => {
    const acc = await createAccount(t);
    const tier = await define(acc, { key: 'tier', label: 'Tier', type: 'SELECT', options: ['gold', 'silver'] });
    const score = await define(acc, { key: 'score', type: 'NUMBER', object: 'DEAL' });
    expect(tier.position).toBe(0);
    await t.gql(UPDATE, { id: score.id, input: { archived: true } }, { as: acc.owner });
    const r = await t.gql('query ($id: ID!) { account(id: $id) { customFields { key object type options archived } } }', { id: acc.id }, { as: acc.member });
    expect(r.data.account.customFields).toEqual([
      { key: 'tier', object: 'CONTACT', type: 'SELECT', options: ['gold', 'silver'], archived: false },
      { key: 'score', object: 'DEAL', type: 'NUMBER', options: null, archived: true },
    ]);
    const rest = await t.rest('GET', `/api/v1/custom_fields?account_id=${acc.id}&object=contact`, { as: acc.member });
    expect(rest.status).toBe(200);
    expect(rest.body.data).toEqual([expect.objectContaining({ key: 'tier', object: 'contact', type: 'select', options: ['gold', 'silver'] })]);
  });

  test('a bad, taken or built-in key, and options on a type without them, are BAD_USER_INPUT naming the field', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'tier' });
    for (const [input, details] of [
      [{ key: 'Tier' }, { 'key': ['Must start with a lower-case letter and hold only a-z, 0-9 and _ (at most 50)'] }],
      [{ key: 'tier' }, { 'key': ['Already used by another field of this object (archived fields keep their keys)'] }],
      [{ key: 'first_name' }, { 'key': ['Is the name of a built-in field'] }],
      [{ key: 'colour', options: ['red'] }, { 'options': ['Only SELECT and MULTI_SELECT fields take options'] }],
      [{ key: 'colour', type: 'SELECT' }, { 'options': ['A SELECT or MULTI_SELECT field needs at least one option'] }],
    ] as const) {
      const r = await t.gql(CREATE, { accountId: acc.id, input: { object: 'CONTACT', label: 'L', type: 'TEXT', ...input } }, { as: acc.owner });
      expect(problem(r)).toMatchObject({ code: 'BAD_USER_INPUT', details });
    }
    const rest = await t.rest('POST', '/api/v1/custom_fields', { as: acc.owner, body: { account_id: acc.id, object: 'contact', key: 'tier', label: 'Tier', type: 'text' } });
    expect(rest.status).toBe(400);
    expect(rest.body.details).toEqual({ key: ['Already used by another field of this object (archived fields keep their keys)'] });
  });

  test('only the owner changes definitions: a member is FORBIDDEN and an API key is refused', async () => {
    const acc = await createAccount(t);
    const input = { object: 'CONTACT', key: 'tier', label: 'Tier', type: 'TEXT' };
    expect(problem(await t.gql(CREATE, { accountId: acc.id, input }, { as: acc.member })).code).toBe('FORBIDDEN');
    const key = await createApiKey(t, acc, ['CONTACTS_READ', 'CONTACTS_WRITE']);
    expect(problem(await t.gql(CREATE, { accountId: acc.id, input }, { as: key })).code).toBe('FORBIDDEN');
    const created = await t.rest('POST', '/api/v1/custom_fields', { as: acc.owner, body: { account_id: acc.id, object: 'contact', key: 'tier', label: 'Tier', type: 'text' } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ key: 'tier', object: 'contact', type: 'text', options: null, required: false, archived: false });
    expect((await t.rest('PATCH', `/api/v1/custom_fields/${created.body.data.id}`, { as: acc.member, body: { label: 'X' } })).status).toBe(403);
    const patched = await t.rest('PATCH', `/api/v1/custom_fields/${created.body.data.id}`, { as: acc.owner, body: { label: 'Level' } });
    expect(patched.body.data).toMatchObject({ key: 'tier', label: 'Level' });
  });

  test('the 101st active field of an object is refused on key; archiving one makes room', async () => {
    const acc = await createAccount(t);
    const values = Array.from({ length: 100 }, (_, i) => `('${acc.id}', 'CONTACT', 'f${i}', 'F${i}', 'TEXT', ${i})`).join(', ');
    await t.db.$executeRawUnsafe(`INSERT INTO custom_field_definitions (id, account_id, object, key, label, type, position) SELECT gen_random_uuid(), v.a::uuid, v.o::custom_field_object, v.k, v.l, v.t::custom_field_type, v.p FROM (VALUES ${values}) v(a, o, k, l, t, p)`);
    const refused = await t.gql(CREATE, { accountId: acc.id, input: { object: 'CONTACT', key: 'extra', label: 'Extra', type: 'TEXT' } }, { as: acc.owner });
    expect(problem(refused)).toMatchObject({ code: 'BAD_USER_INPUT', details: { 'key': ['At most 100 active fields per object; archive one first'] } });
    await define(acc, { key: 'extra', object: 'DEAL' }); // another object has its own 100
    const f0 = await t.db.customField.findFirstOrThrow({ where: { accountId: acc.id, key: 'f0' } });
    await t.gql(UPDATE, { id: f0.id, input: { archived: true } }, { as: acc.owner });
    await define(acc, { key: 'extra' });
  });

  test('removing an option a record holds is CONFLICT; an option no record holds (any more) goes', async () => {
    const acc = await createAccount(t);
    const tier = await define(acc, { key: 'tier', type: 'SELECT', options: ['gold', 'silver', 'bronze'] });
    const tags = await define(acc, { key: 'tags', type: 'MULTI_SELECT', options: ['a', 'b'] });
    const holder = await createContact(t, acc, { customFields: { tier: 'gold', tags: ['b'] } });
    const refused = await t.gql(UPDATE, { id: tier.id, input: { options: ['silver'] } }, { as: acc.owner });
    expect(problem(refused).code).toBe('CONFLICT');
    expect(errorOf(refused).message).toBe('Cannot remove "gold": records hold it; change them first');
    expect(problem(await t.gql(UPDATE, { id: tags.id, input: { options: ['a'] } }, { as: acc.owner })).code).toBe('CONFLICT');
    const kept = await t.gql(UPDATE, { id: tier.id, input: { options: ['gold', 'platinum'] } }, { as: acc.owner });
    expect(kept.data.updateCustomField.options).toEqual(['gold', 'platinum']);
    // Once no record holds them (the holder changed), both options go.
    expect((await t.rest('PATCH', `/api/v1/contacts/${holder.id}`, { body: { custom_fields: { tier: 'platinum', tags: ['a'] } }, as: acc.owner })).status).toBe(200);
    expect((await t.gql(UPDATE, { id: tier.id, input: { options: ['platinum'] } }, { as: acc.owner })).data.updateCustomField.options).toEqual(['platinum']);
    expect((await t.gql(UPDATE, { id: tags.id, input: { options: ['a'] } }, { as: acc.owner })).data.updateCustomField.options).toEqual(['a']);
  });
});

describe('values', () => {
  const CREATE_CONTACT = 'mutation ($input: CreateContactInput!) { createContact(input: $input) { id customFields } }';
  const UPDATE_CONTACT = 'mutation ($id: ID!, $input: UpdateContactInput!) { updateContact(id: $id, input: $input) { id customFields } }';

  async function typedAccount() {
    const acc = await createAccount(t);
    await define(acc, { key: 'note', type: 'TEXT' });
    await define(acc, { key: 'score', type: 'NUMBER' });
    await define(acc, { key: 'renewal', type: 'DATE' });
    await define(acc, { key: 'vip', type: 'BOOLEAN' });
    await define(acc, { key: 'tier', type: 'SELECT', options: ['gold', 'silver'] });
    await define(acc, { key: 'tags', type: 'MULTI_SELECT', options: ['a', 'b'] });
    await define(acc, { key: 'site', type: 'URL' });
    await define(acc, { key: 'billing_email', type: 'EMAIL' });
    await define(acc, { key: 'fax', type: 'PHONE' });
    return acc;
  }

  test("every type's accepted values are stored and read back; fields without a value are absent", async () => {
    const acc = await typedAccount();
    const values = { note: 'hi', score: 12.5, renewal: '2027-02-28', vip: true, tier: 'gold', tags: ['a', 'b'], site: 'https://acme.test/x', billing_email: 'ap@acme.test', fax: '+1 555 0100' };
    const r = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'Ada', customFields: values } }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    expect(r.data.createContact.customFields).toEqual(values);
    const bare = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'Bo', customFields: { note: null } } }, { as: acc.member });
    expect(bare.data.createContact.customFields).toEqual({});
  });

  test("every type's refused values are named customFields.<key> beside the record's own failing fields, and nothing is written", async () => {
    const acc = await typedAccount();
    const bad = { note: 'x'.repeat(1001), score: 1.1234567, renewal: '2027-02-30', vip: 'yes', tier: 'bronze', tags: ['a', 'a'], site: 'ftp://acme.test', billing_email: 'nope', fax: '9'.repeat(51), nope: 1 };
    const r = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: '', customFields: bad } }, { as: acc.member });
    const details = problem(r).details as Record<string, string[]>;
    expect(Object.keys(details).sort()).toEqual(['customFields.billing_email', 'customFields.fax', 'customFields.nope', 'customFields.note', 'customFields.renewal', 'customFields.score', 'customFields.site', 'customFields.tags', 'customFields.tier', 'customFields.vip', 'firstName'].sort());
    expect(details['customFields.nope']).toEqual(['Unknown field']);
    expect(details['customFields.tier']).toEqual(['Must be one of: gold, silver']);
    expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(0);
    const rest = await t.rest('POST', '/api/v1/contacts', { as: acc.member, body: { account_id: acc.id, first_name: 'Ada', custom_fields: { score: 'many', billing_email: 'x' } } });
    expect(rest.status).toBe(400);
    expect(rest.body.details).toEqual({ 'custom_fields.score': ['Expected a number'], 'custom_fields.billing_email': ['Must be a valid e-mail address'] });
  });

  test('text the database cannot keep (a NUL, an unpaired surrogate) is a 400 naming the field in a create, a batch item and a filter, never a 500', async () => {
    const acc = await typedAccount();
    const unstorable = ['Must not contain NUL characters or unpaired surrogates'];
    for (const values of [{ note: 'a\u0000b' }, { note: 'a\ud800b' }, { site: 'https://acme.test/a\u0000b' }]) {
      const [key] = Object.keys(values);
      const one = await t.rest('POST', '/api/v1/contacts', { as: acc.member, body: { account_id: acc.id, first_name: 'Ada', custom_fields: values } });
      expect({ status: one.status, details: one.body.details }).toEqual({ status: 400, details: { [`custom_fields.${key}`]: unstorable } });
      const batch = await t.rest('POST', '/api/v1/contacts/batch', { as: acc.member, body: { account_id: acc.id, mode: 'create', records: [{ first_name: 'Ada', custom_fields: values }] } });
      expect(batch.status).toBe(200);
      expect(batch.body.data).toEqual([{ index: 0, status: 'failed', details: { [`custom_fields.${key}`]: unstorable } }]);
    }
    expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(0);
    const listed = await t.gql('query ($a: ID!, $c: [CustomFieldCondition!]) { contacts(accountId: $a, customFields: $c) { total } }', { a: acc.id, c: [{ key: 'note', eq: 'a\u0000b' }, { key: 'site', in: ['https://acme.test/a\u0000b'] }] }, { as: acc.member });
    expect(problem(listed)).toMatchObject({ code: 'BAD_USER_INPUT', details: { 'customFields.note.eq': unstorable, 'customFields.site.in': unstorable } });
  });

  test('a required field must be given on create and cannot be cleared; an archived key is an unknown field', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'region', type: 'TEXT', required: true });
    const old = await define(acc, { key: 'legacy', type: 'TEXT' });
    const missing = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'Ada' } }, { as: acc.member });
    expect(problem(missing).details).toEqual({ 'customFields.region': ['Required'] });
    const made = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'Ada', customFields: { region: 'EU', legacy: 'x' } } }, { as: acc.member });
    const id = made.data.createContact.id;
    const cleared = await t.gql(UPDATE_CONTACT, { id, input: { customFields: { region: null } } }, { as: acc.member });
    expect(problem(cleared).details).toEqual({ 'customFields.region': ['Required'] });
    await t.gql(UPDATE, { id: old.id, input: { archived: true } }, { as: acc.owner });
    expect(await contactValues(acc, id)).toEqual({ region: 'EU' }); // hidden, kept
    const archived = await t.gql(UPDATE_CONTACT, { id, input: { customFields: { legacy: 'y' } } }, { as: acc.member });
    expect(problem(archived).details).toEqual({ 'customFields.legacy': ['Unknown field'] });
    await t.gql(UPDATE, { id: old.id, input: { archived: false } }, { as: acc.owner });
    expect(await contactValues(acc, id)).toEqual({ region: 'EU', legacy: 'x' });
  });

  test('an update is a patch: absent keys unchanged, null clears, others replaced; REST alike', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'a' });
    await define(acc, { key: 'b' });
    await define(acc, { key: 'c' });
    const made = await t.gql(CREATE_CONTACT, { input: { accountId: acc.id, firstName: 'Ada', customFields: { a: '1', b: '2' } } }, { as: acc.member });
    const id = made.data.createContact.id;
    const r = await t.gql(UPDATE_CONTACT, { id, input: { customFields: { a: null, c: '3' } } }, { as: acc.member });
    expect(r.data.updateContact.customFields).toEqual({ b: '2', c: '3' });
    const rest = await t.rest('PATCH', `/api/v1/contacts/${id}`, { as: acc.member, body: { custom_fields: { b: '20' } } });
    expect(rest.body.data.custom_fields).toEqual({ b: '20', c: '3' });
    const item = await t.rest('GET', `/api/v1/contacts/${id}`, { as: acc.member });
    expect(item.body.data.custom_fields).toEqual({ b: '20', c: '3' });
  });

  test("a field of one account is unknown to another's records", async () => {
    const [a, b] = [await createAccount(t), await createAccount(t)];
    await define(a, { key: 'tier' });
    const r = await t.gql(CREATE_CONTACT, { input: { accountId: b.id, firstName: 'Bo', customFields: { tier: 'x' } } }, { as: b.member });
    expect(problem(r).details).toEqual({ 'customFields.tier': ['Unknown field'] });
  });

  test('deals, companies and invoices take values of their own fields on create and update, REST and GraphQL alike', async () => {
    const acc = await createAccount(t);
    for (const object of ['DEAL', 'COMPANY', 'INVOICE']) await define(acc, { object, key: 'ref', type: 'NUMBER' });
    const deal = await t.rest('POST', '/api/v1/deals', { as: acc.member, body: { account_id: acc.id, title: 'D', value: 10, custom_fields: { ref: 1 } } });
    expect(deal.status).toBe(201);
    expect(deal.body.data.custom_fields).toEqual({ ref: 1 });
    const company = await t.rest('POST', '/api/v1/companies', { as: acc.member, body: { account_id: acc.id, name: unique('Co'), custom_fields: { ref: 2 } } });
    expect(company.body.data.custom_fields).toEqual({ ref: 2 });
    const invoice = await t.rest('POST', '/api/v1/invoices', { as: acc.member, body: { account_id: acc.id, amount: 5, due_date: '2030-01-01', custom_fields: { ref: 3 } } });
    expect(invoice.status).toBe(201);
    const read = await t.rest('GET', `/api/v1/invoices/${invoice.body.data.id}`, { as: acc.member });
    expect(read.body.data.custom_fields).toEqual({ ref: 3 });
    const patched = await t.rest('PATCH', `/api/v1/deals/${deal.body.data.id}`, { as: acc.member, body: { custom_fields: { ref: 'x' } } });
    expect(patched.body.details).toEqual({ 'custom_fields.ref': ['Expected a number'] });
    const wrong = await t.rest('POST', '/api/v1/companies', { as: acc.member, body: { account_id: acc.id, name: unique('Co'), custom_fields: { tier: 1 } } });
    expect(wrong.body.details).toEqual({ 'custom_fields.tier': ['Unknown field'] });
  });

  test('batches judge each record by the account fields and an upsert that matches patches the values', async () => {
    const acc = await createAccount(t);
    await define(acc, { key: 'tier', type: 'SELECT', options: ['gold', 'silver'] });
    await define(acc, { key: 'note' });
    const email = `${unique('u')}@example.test`;
    const first = await t.rest('POST', '/api/v1/contacts/batch', { as: acc.member, body: { account_id: acc.id, records: [{ first_name: 'A', email, custom_fields: { tier: 'gold', note: 'n' } }, { first_name: 'B', custom_fields: { tier: 'tin' } }] } });
    expect(first.body.data.map((i: { status: string }) => i.status)).toEqual(['created', 'failed']);
    expect(first.body.data[1].details).toEqual({ 'custom_fields.tier': ['Must be one of: gold, silver'] });
    const upsert = await t.rest('POST', '/api/v1/contacts/batch', { as: acc.member, body: { account_id: acc.id, mode: 'upsert', match_on: 'email', records: [{ email, custom_fields: { tier: 'silver' } }] } });
    expect(upsert.body.data[0].status).toBe('updated');
    expect(upsert.body.data[0].data.custom_fields).toEqual({ tier: 'silver', note: 'n' });
  });
});

describe('definitions across instances', () => {
  test('a field another instance defined (this one told nothing) is accepted here within the freshness window, with no restart', async () => {
    const acc = await createAccount(t);
    const create = (customFields: Record<string, unknown>) =>
      t.gql('mutation ($input: CreateContactInput!) { createContact(input: $input) { customFields } }', { input: { accountId: acc.id, firstName: 'Ada', customFields } }, { as: acc.member });
    expect((await create({})).errors).toBeUndefined(); // this instance now holds the account's (empty) definitions
    // Written as another instance writes it: straight to the shared database, no forget() here.
    await t.db.customField.create({ data: { accountId: acc.id, object: 'CONTACT', key: 'region', label: 'Region', type: 'TEXT' } });
    // Polled where requests read it (a write per poll would meet the writes' rate limit); a generous
    // ceiling for a loaded machine: the promise (900 ms, docs/custom-fields.md#limits) is the cache's life.
    await vi.waitFor(async () => expect((await recordShapes.of(t.db, acc.id, CONTACT_MODEL)).custom.map((f) => f.name)).toEqual(['region']), { timeout: 5_000, interval: 50 });
    expect((await create({ region: 'EU' })).data.createContact.customFields).toEqual({ region: 'EU' });
  });
});
