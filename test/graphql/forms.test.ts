import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, createUser, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type GqlResult, type TestApp, type TestUser } from '../helpers/app.js';

const FORM = `id accountId name active successMessage redirectUrl createdAt
  fields { key label type required mapsTo options maxLength }`;
const LEAD_FORMS = `query ($accountId: ID!) { leadForms(accountId: $accountId) { ${FORM} } }`;
const CREATE = `mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { ${FORM} } }`;
const SET_ACTIVE = `mutation ($id: ID!, $active: Boolean!) { setLeadFormActive(id: $id, active: $active) { id active } }`;
const SUBMIT = `mutation ($formId: ID!, $data: JSON!, $metadata: FormMetadataInput) {
  submitLeadForm(formId: $formId, data: $data, metadata: $metadata) { success contactId successMessage redirectUrl } }`;

const FIELDS = [
  { key: 'firstName', label: 'First name', type: 'text', mapsTo: 'first_name' },
  { key: 'last_name', label: 'Last name', type: 'text', mapsTo: 'last_name' },
  { key: 'Email_Address', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
  { key: 'phone', label: 'Phone', type: 'phone', mapsTo: 'phone', maxLength: 20 },
  { key: 'company', label: 'Company', type: 'text', mapsTo: 'company' },
  { key: 'plan', label: 'Plan', type: 'select', options: ['basic', 'pro'] },
  { key: 'message', label: 'Message', type: 'textarea', maxLength: 10 },
  { key: 'agree', label: 'I agree', type: 'checkbox', required: true },
];

let t: TestApp;
let acc: TestAccount;
let stranger: TestUser;
let form: { id: string; successMessage: string; redirectUrl: string | null };
let ipCounter = 0;
/** Each call from its own address unless told otherwise, so the per-IP limit stays out of the way. */
const nextIp = () => `10.1.${Math.floor(++ipCounter / 250)}.${(ipCounter % 250) + 1}`;

const codeOf = (r: GqlResult) => r.errors?.[0]?.extensions?.code;
const detailsOf = (r: GqlResult) => r.errors?.[0]?.extensions?.details;

async function newForm(input: Record<string, unknown> = {}, as: TestUser = acc.owner) {
  const r = await t.gql(CREATE, { input: { accountId: acc.id, name: unique('Form'), fields: FIELDS, ...input } }, { as });
  expect(r.errors).toBeUndefined();
  return r.data.createLeadForm;
}

function submit(formId: string, data: unknown, metadata?: unknown, opts: { clientIp?: string; headers?: Record<string, string>; as?: TestUser } = {}) {
  return t.gql(SUBMIT, { formId, data, metadata }, { as: opts.as ?? null, clientIp: opts.clientIp ?? nextIp(), headers: opts.headers });
}

const email = () => `${unique('lead')}@example.com`;
const valid = (over: Record<string, string> = {}) => ({ Email_Address: email(), agree: 'yes', ...over });

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  stranger = await createUser(t);
  form = await newForm({ redirectUrl: 'https://example.com/thanks', successMessage: 'Got it!' });
});
afterAll(() => t?.close());

describe('createLeadForm', () => {
  it('an owner creates a form with defaults and fields in the given order', async () => {
    const created = await newForm({ fields: FIELDS.slice(0, 3) });
    expect(created).toMatchObject({ accountId: acc.id, active: true, successMessage: "Thanks! We'll be in touch.", redirectUrl: null });
    expect(created.fields.map((f: { key: string }) => f.key)).toEqual(['firstName', 'last_name', 'Email_Address']);
    expect(created.fields[0]).toEqual({ key: 'firstName', label: 'First name', type: 'text', required: false, mapsTo: 'first_name', options: [], maxLength: 1000 });
  });

  it('a member can create a form', async () => {
    const created = await newForm({ active: false }, acc.member);
    expect(created.active).toBe(false);
  });

  it('an outsider, a user with no account and an unknown account are FORBIDDEN; anonymous is UNAUTHENTICATED', async () => {
    const input = { accountId: acc.id, name: 'x', fields: FIELDS };
    expect(codeOf(await t.gql(CREATE, { input }, { as: acc.outsider }))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(CREATE, { input }, { as: stranger }))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(CREATE, { input: { ...input, accountId: randomUUID() } }, { as: acc.owner }))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(CREATE, { input }, { as: null }))).toBe('UNAUTHENTICATED');
    expect(await t.db.leadForm.count({ where: { name: 'x' } })).toBe(0);
  });

  const refusals: [string, Record<string, unknown>, Record<string, string[]>][] = [
    ['a blank name is Required', { name: '  ' }, { name: ['Required'] }],
    ['a name over 200 characters is refused', { name: 'n'.repeat(201) }, { name: ['Must be at most 200 characters'] }],
    ['an accountId that is not a UUID is refused', { accountId: 'nope' }, { accountId: ['Must be a UUID'] }],
    ['a form needs at least one field', { fields: [] }, { fields: ['Must have at least one field'] }],
    [
      'a form has at most 50 fields',
      { fields: [FIELDS[2], ...Array.from({ length: 50 }, (_, i) => ({ key: `f${i}`, label: 'F', type: 'text' }))] },
      { fields: ['Must have at most 50 fields'] },
    ],
    ['field keys are unique', { fields: [FIELDS[2], { ...FIELDS[1], key: 'Email_Address' }] }, { 'fields.1.key': ['Duplicate key'] }],
    [
      'a field key must start with a letter and hold letters, digits and _',
      { fields: [{ ...FIELDS[2], key: 'e-mail' }] },
      { 'fields.0.key': ['Must start with a letter and hold only letters, digits and _ (at most 100)'] },
    ],
    ['a label is required', { fields: [{ ...FIELDS[2], label: '' }] }, { 'fields.0.label': ['Required'] }],
    ['a label over 200 characters is refused', { fields: [{ ...FIELDS[2], label: 'l'.repeat(201) }] }, { 'fields.0.label': ['Must be at most 200 characters'] }],
    ['a select field needs an option', { fields: [FIELDS[2], { ...FIELDS[5], options: [] }] }, { 'fields.1.options': ['A select field needs at least one option'] }],
    ['only select fields have options', { fields: [{ ...FIELDS[2], options: ['a'] }] }, { 'fields.0.options': ['Only select fields have options'] }],
    ['maxLength is at least 1', { fields: [{ ...FIELDS[2], maxLength: 0 }] }, { 'fields.0.maxLength': ['Must be from 1 to 10000'] }],
    ['maxLength is at most 10000', { fields: [{ ...FIELDS[2], maxLength: 10001 }] }, { 'fields.0.maxLength': ['Must be from 1 to 10000'] }],
    ['two fields cannot map to one contact field', { fields: [FIELDS[0], { ...FIELDS[1], mapsTo: 'first_name' }] }, { 'fields.1.mapsTo': ['Already mapped by another field'] }],
    ['a field must map to first_name or email', { fields: [FIELDS[1], FIELDS[3]] }, { fields: ['A field must map to first_name or email'] }],
    ['a success message over 1000 characters is refused', { successMessage: 's'.repeat(1001) }, { successMessage: ['Must be at most 1000 characters'] }],
    ['a redirect URL must be absolute http or https', { redirectUrl: '/thanks' }, { redirectUrl: ['Must be an absolute http or https URL'] }],
    ['a redirect URL over 2048 characters is refused', { redirectUrl: `https://x.test/${'a'.repeat(2040)}` }, { redirectUrl: ['Must be at most 2048 characters'] }],
  ];
  for (const [name, override, details] of refusals) {
    it(name, async () => {
      const r = await t.gql(CREATE, { input: { accountId: acc.id, name: 'Refused', fields: FIELDS, ...override } }, { as: acc.owner });
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(detailsOf(r)).toEqual(details);
    });
  }
});

describe('leadForms', () => {
  it('owner and member see the account forms, newest first, fields in order', async () => {
    const other = await createAccount(t);
    await t.gql(CREATE, { input: { accountId: other.id, name: 'Other', fields: FIELDS } }, { as: other.owner });
    const latest = await newForm();
    for (const as of [acc.owner, acc.member]) {
      const r = await t.gql(LEAD_FORMS, { accountId: acc.id }, { as });
      expect(r.errors).toBeUndefined();
      expect(r.data.leadForms[0].id).toBe(latest.id);
      expect(r.data.leadForms.every((f: { accountId: string }) => f.accountId === acc.id)).toBe(true);
      expect(r.data.leadForms.find((f: { id: string }) => f.id === form.id).fields.map((f: { key: string }) => f.key)).toEqual(FIELDS.map((f) => f.key));
    }
  });

  it('an outsider is FORBIDDEN, anonymous UNAUTHENTICATED, a bad accountId BAD_USER_INPUT', async () => {
    expect(codeOf(await t.gql(LEAD_FORMS, { accountId: acc.id }, { as: acc.outsider }))).toBe('FORBIDDEN');
    expect(codeOf(await t.gql(LEAD_FORMS, { accountId: acc.id }, { as: null }))).toBe('UNAUTHENTICATED');
    expect(detailsOf(await t.gql(LEAD_FORMS, { accountId: 'x' }, { as: acc.owner }))).toEqual({ accountId: ['Must be a UUID'] });
  });
});

describe('setLeadFormActive', () => {
  it('owner and member switch a form off and on', async () => {
    const f = await newForm();
    const off = await t.gql(SET_ACTIVE, { id: f.id, active: false }, { as: acc.member });
    expect(off.data.setLeadFormActive).toEqual({ id: f.id, active: false });
    const on = await t.gql(SET_ACTIVE, { id: f.id, active: true }, { as: acc.owner });
    expect(on.data.setLeadFormActive.active).toBe(true);
  });

  // docs/decisions.md §9 amended: a mutation by id answers an unknown and an invisible record alike, NOT_FOUND.
  it('an outsider and an unknown form get the same NOT_FOUND; anonymous UNAUTHENTICATED; a bad id BAD_USER_INPUT', async () => {
    const outsider = await t.gql(SET_ACTIVE, { id: form.id, active: false }, { as: acc.outsider });
    const unknown = await t.gql(SET_ACTIVE, { id: randomUUID(), active: false }, { as: acc.owner });
    expect(codeOf(outsider)).toBe('NOT_FOUND');
    expect(outsider.errors?.[0]?.message).toBe(unknown.errors?.[0]?.message);
    expect(codeOf(unknown)).toBe('NOT_FOUND');
    expect(codeOf(await t.gql(SET_ACTIVE, { id: form.id, active: false }, { as: null }))).toBe('UNAUTHENTICATED');
    expect(detailsOf(await t.gql(SET_ACTIVE, { id: 'x', active: false }, { as: acc.owner }))).toEqual({ id: ['Must be a UUID'] });
    expect((await t.db.leadForm.findUniqueOrThrow({ where: { id: form.id } })).active).toBe(true);
  });
});

describe('submitLeadForm', () => {
  it('an anonymous visitor creates a lead from the website with the mapped values', async () => {
    const address = email();
    const r = await submit(form.id, valid({ Email_Address: address, firstName: ' Ann ', last_name: 'Lee', phone: '555', company: 'ACME' }));
    expect(r.errors).toBeUndefined();
    expect(r.data.submitLeadForm).toMatchObject({ success: true, successMessage: 'Got it!', redirectUrl: 'https://example.com/thanks' });
    const contact = await t.db.contact.findUniqueOrThrow({ where: { id: r.data.submitLeadForm.contactId } });
    expect(contact).toMatchObject({ accountId: acc.id, firstName: 'Ann', lastName: 'Lee', email: address, phone: '555', company: 'ACME', contactType: 'lead', source: 'website' });
  });

  it('a token is ignored, even an invalid one', async () => {
    expect((await submit(form.id, valid(), undefined, { as: acc.outsider })).data.submitLeadForm.success).toBe(true);
    const bad = await submit(form.id, valid(), undefined, { headers: { authorization: 'Bearer not-a-token' } });
    expect(bad.errors).toBeUndefined();
  });

  it("the first name falls back to the e-mail's local part", async () => {
    const r = await submit(form.id, valid({ Email_Address: 'jo.smith+x@example.com' }));
    const contact = await t.db.contact.findUniqueOrThrow({ where: { id: r.data.submitLeadForm.contactId } });
    expect(contact.firstName).toBe('jo.smith+x');
  });

  it('a known e-mail updates the oldest matching contact, case-insensitively, with non-empty mapped values only', async () => {
    const address = `${unique('Known')}@Example.com`;
    const oldest = await createContact(t, acc, { email: address, firstName: 'Old', lastName: 'Keep', phone: '1', contactType: 'client', source: 'referral', createdAt: new Date('2020-01-01T00:00:00Z') });
    const newer = await createContact(t, acc, { email: address.toLowerCase(), firstName: 'Newer' });
    const r = await submit(form.id, valid({ Email_Address: address.toUpperCase(), firstName: 'New', last_name: '  ', company: 'NewCo' }));
    expect(r.data.submitLeadForm.contactId).toBe(oldest.id);
    const updated = await t.db.contact.findUniqueOrThrow({ where: { id: oldest.id } });
    expect(updated).toMatchObject({ firstName: 'New', lastName: 'Keep', phone: '1', company: 'NewCo', email: address, contactType: 'client', source: 'referral' });
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: newer.id } })).firstName).toBe('Newer');
  });

  it('an address is matched exactly: _ and % are not wildcards, other accounts do not count', async () => {
    const other = await createAccount(t);
    const tag = unique('w');
    await createContact(t, acc, { email: `${tag}xa@example.com` });
    await createContact(t, other, { email: `${tag}_a@example.com` });
    const r = await submit(form.id, valid({ Email_Address: `${tag}_a@example.com` }));
    const contact = await t.db.contact.findUniqueOrThrow({ where: { id: r.data.submitLeadForm.contactId } });
    expect(contact).toMatchObject({ accountId: acc.id, email: `${tag}_a@example.com`, source: 'website' });
  });

  it('every submission is recorded with its defined values, metadata, client IP and user agent; unknown keys are not stored', async () => {
    const data = valid({ plan: 'pro', message: 'hi', unknown: 'drop me', Email_address: 'wrong-case' });
    const r = await submit(form.id, data, { referrer: 'https://google.com/', page: '/pricing' }, { clientIp: '198.51.100.7', headers: { 'user-agent': 'TestAgent/1.0' } });
    const row = await t.db.formSubmission.findFirstOrThrow({ where: { contactId: r.data.submitLeadForm.contactId } });
    expect(row).toMatchObject({
      accountId: acc.id,
      formId: form.id,
      data: { Email_Address: data.Email_Address, agree: 'yes', plan: 'pro', message: 'hi' },
      referrer: 'https://google.com/',
      page: '/pricing',
      clientIp: '198.51.100.7',
      userAgent: 'TestAgent/1.0',
    });
    expect(row.createdAt).toBeInstanceOf(Date);
  });

  const invalid: [string, unknown, Record<string, string[]>, unknown?][] = [
    ['data must be an object', ['a'], { data: ['Expected an object of string values'] }],
    ['data values must be strings', valid({ agree: 1 as unknown as string }), { agree: ['Expected a string'] }],
    ['required fields must be non-empty after trimming', { Email_Address: email(), agree: '  ' }, { agree: ['Required'] }],
    ['an email field needs a valid address', valid({ Email_Address: 'not-an-email' }), { Email_Address: ['Must be a valid e-mail address'] }],
    ['a select value must be one of the options', valid({ plan: 'gold' }), { plan: ['Must be one of the options'] }],
    ['a value must fit the field maxLength', valid({ message: 'x'.repeat(11), phone: '1'.repeat(21) }), { message: ['Must be at most 10 characters'], phone: ['Must be at most 20 characters'] }],
    ['metadata strings are at most 2048 characters', valid(), { 'metadata.referrer': ['Must be at most 2048 characters'] }, { referrer: 'r'.repeat(2049) }],
  ];
  for (const [name, data, details, metadata] of invalid) {
    it(`${name} (BAD_USER_INPUT keyed by field key, nothing recorded)`, async () => {
      const before = await t.db.formSubmission.count();
      const r = await submit(form.id, data, metadata);
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(detailsOf(r)).toEqual(details);
      expect(await t.db.formSubmission.count()).toBe(before);
    });
  }

  it('without a first name or an e-mail the first_name field is Required', async () => {
    const f = await newForm({ fields: [{ key: 'name', label: 'Name', type: 'text', mapsTo: 'first_name' }, { key: 'mail', label: 'Mail', type: 'email', mapsTo: 'email' }] });
    expect(detailsOf(await submit(f.id, { mail: '' }))).toEqual({ name: ['Required'] });
  });

  it('an inactive, unknown or non-UUID form is NOT_FOUND', async () => {
    const inactive = await newForm({ active: false });
    for (const id of [inactive.id, randomUUID(), 'not-a-uuid']) {
      const r = await submit(id, valid());
      expect(codeOf(r)).toBe('NOT_FOUND');
      expect(r.errors?.[0]?.message).toBe('Form not found or inactive');
    }
  });

  it('the 6th submission from one IP within a minute is RATE_LIMITED; another IP still passes', async () => {
    const ip = '203.0.113.9';
    for (let i = 0; i < 5; i++) expect((await submit(form.id, valid(), undefined, { clientIp: ip })).errors).toBeUndefined();
    const sixth = await submit(form.id, valid(), undefined, { clientIp: ip });
    expect(codeOf(sixth)).toBe('RATE_LIMITED');
    // The limit comes before the form check.
    expect(codeOf(await submit(randomUUID(), valid(), undefined, { clientIp: ip }))).toBe('RATE_LIMITED');
    expect((await submit(form.id, valid(), undefined, { clientIp: '203.0.113.10' })).errors).toBeUndefined();
  });

  it('20 concurrent submissions with one new e-mail create exactly one contact and 20 submissions', async () => {
    const address = email();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => submit(form.id, valid({ Email_Address: i % 2 ? address.toUpperCase() : address }))),
    );
    for (const r of results) expect(r.errors).toBeUndefined();
    const contacts = await t.db.contact.findMany({ where: { accountId: acc.id, email: { equals: address, mode: 'insensitive' } } });
    expect(contacts).toHaveLength(1);
    expect(new Set(results.map((r) => r.data.submitLeadForm.contactId))).toEqual(new Set([contacts[0]!.id]));
    expect(await t.db.formSubmission.count({ where: { contactId: contacts[0]!.id } })).toBe(20);
  });
});
