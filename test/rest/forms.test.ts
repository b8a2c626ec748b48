import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { roundTrips } from '../helpers/round-trips.js';

// REST contract: POST /api/v1/forms/{form_id}/submit, public (docs/rest.md; docs/decisions.md §2, §5, §7).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const NOT_FOUND = { error: 'Form not found or inactive' };
const DEFAULT_MESSAGE = "Thanks! We'll be in touch.";

// Keys as a form author may spell them: details must name them exactly so (no snake_casing).
const FIELDS = [
  { key: 'fullName', label: 'Name', type: 'text', mapsTo: 'first_name' },
  { key: 'lastName', label: 'Last name', type: 'text', mapsTo: 'last_name' },
  { key: 'workEmail', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
  { key: 'phone', label: 'Phone', type: 'phone', mapsTo: 'phone' },
  { key: 'company', label: 'Company', type: 'text', mapsTo: 'company' },
  { key: 'plan', label: 'Plan', type: 'select', options: ['basic', 'pro'] },
  { key: 'message', label: 'Message', type: 'textarea', maxLength: 20 },
];

let t: TestApp;
let acc: TestAccount;
let form: { id: string };
let ip = 0;
/** Each request from its own address unless told otherwise, so the per-IP limit stays out of the way. */
const nextIp = () => `10.${Math.floor(++ip / 60000) % 250}.${Math.floor(ip / 250) % 250}.${(ip % 250) + 1}`;

async function newForm(input: Record<string, unknown> = {}) {
  const r = await t.gql(
    'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }',
    { input: { accountId: acc.id, name: unique('Form'), fields: FIELDS, ...input } },
    { as: acc.owner },
  );
  expect(r.errors).toBeUndefined();
  return r.data.createLeadForm as { id: string };
}

type SubmitOptions = { clientIp?: string; headers?: Record<string, string> };
const submitRaw = (formId: string, body: unknown, options: SubmitOptions = {}) =>
  t.rest('POST', `/api/v1/forms/${formId}/submit`, { body, clientIp: options.clientIp ?? nextIp(), headers: options.headers });
const submit = (formId: string, data: Record<string, unknown>, metadata?: Record<string, unknown>, options?: SubmitOptions) =>
  submitRaw(formId, metadata === undefined ? { data } : { data, metadata }, options);

const email = () => `${unique('lead')}@example.com`;
const post = (formId: string, rawBody: string, options: SubmitOptions = {}) =>
  t.rest('POST', `/api/v1/forms/${formId}/submit`, { rawBody, clientIp: options.clientIp ?? nextIp(), headers: options.headers });

/** Bodies the 400 refuses, and its details for an active form: the same bodies address no form first. */
const BAD_BODIES: [string, string, Record<string, string[]>][] = [
  ['an empty object', '{}', { data: ['Required'] }],
  ['an array', '[]', { body: ['Expected a JSON object'] }],
  // With the form's own problems of what the type check let through: one 400 names every failing field.
  ['an unknown top-level key', '{"data":{},"x":1}', { x: ['Unknown field'], workEmail: ['Required'] }],
  ['metadata that is not an object', '{"data":{"a":"b"},"metadata":"home"}', { metadata: ['Expected an object'], workEmail: ['Required'] }],
  ['not JSON at all', 'workEmail=a@example.com', { body: ['Expected a JSON object'] }],
  ['truncated JSON', '{"data": {', { body: ['Expected a JSON object'] }],
];
const submissions = (formId: string) => t.db.formSubmission.findMany({ where: { formId }, orderBy: { createdAt: 'asc' } });

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  form = await newForm();
});
afterAll(() => t?.close());

describe('POST /api/v1/forms/{form_id}/submit', () => {
  describe('creates or updates a contact and records the submission', () => {
    it('answers 200 {success, contact_id, successMessage, redirectUrl}: a new e-mail creates a lead from the website', async () => {
      const address = email();
      const r = await submit(form.id, { fullName: 'Ada', lastName: 'Lovelace', workEmail: address, phone: '+44 20', company: 'Engines' });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(r.body).toEqual({ success: true, contact_id: expect.stringMatching(UUID), successMessage: DEFAULT_MESSAGE, redirectUrl: null });
      const contact = await t.db.contact.findUniqueOrThrow({ where: { id: r.body.contact_id } });
      expect(contact).toMatchObject({
        accountId: acc.id, firstName: 'Ada', lastName: 'Lovelace', email: address, phone: '+44 20', company: 'Engines',
        contactType: 'lead', source: 'website',
      });
    });

    it('successMessage and redirectUrl are the form\'s own when configured', async () => {
      const configured = await newForm({ successMessage: 'Got it!', redirectUrl: 'https://example.com/thanks' });
      const r = await submit(configured.id, { workEmail: email() });
      expect(r.body).toMatchObject({ success: true, successMessage: 'Got it!', redirectUrl: 'https://example.com/thanks' });
    });

    it("without a first name, the contact's first name is the e-mail's local part", async () => {
      const r = await submit(form.id, { workEmail: 'Margaret.H@example.com' });
      const contact = await t.db.contact.findUniqueOrThrow({ where: { id: r.body.contact_id } });
      expect(contact.firstName).toBe('Margaret.H');
    });

    it("a new visitor's contact takes the company of the e-mail's domain (docs/decisions.md §21), its event too; free mail links to none", async () => {
      const domain = `${unique('co')}.example.org`;
      const company = await t.db.company.create({ data: { accountId: acc.id, name: 'Linked', domain } });
      const linked = await submit(form.id, { workEmail: `ada@${domain.toUpperCase()}` });
      const free = await submit(form.id, { workEmail: `${unique('ada')}@gmail.com` });
      for (const [r, companyId] of [[linked, company.id], [free, null]] as const) {
        expect(r.status).toBe(200);
        expect((await t.db.contact.findUniqueOrThrow({ where: { id: r.body.contact_id } })).companyId).toBe(companyId);
        const event = await t.db.event.findFirstOrThrow({ where: { subjectId: r.body.contact_id, type: 'contact.created' } });
        expect((event.data as { object: { company_id: string | null } }).object.company_id).toBe(companyId);
      }
    });

    it('an existing e-mail, compared case-insensitively, updates that contact instead of creating one', async () => {
      const existing = await createContact(t, acc, { firstName: 'Old', lastName: 'Name', email: 'Grace.Hopper@Navy.example', company: 'Old Co' });
      const before = await t.db.contact.count({ where: { accountId: acc.id } });
      const r = await submit(form.id, { fullName: 'Grace', workEmail: 'grace.hopper@NAVY.EXAMPLE', company: 'Navy', lastName: '' });
      expect(r.status).toBe(200);
      expect(r.body.contact_id).toBe(existing.id);
      expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(before);
      const updated = await t.db.contact.findUniqueOrThrow({ where: { id: existing.id } });
      // Mapped fields with non-empty values overwrite; an empty value leaves the old one.
      expect(updated).toMatchObject({ firstName: 'Grace', lastName: 'Name', company: 'Navy', email: 'Grace.Hopper@Navy.example' });
    });

    it('when several contacts share the e-mail, the oldest is updated', async () => {
      const address = email();
      const oldest = await createContact(t, acc, { email: address.toUpperCase(), createdAt: new Date(Date.UTC(2020, 0, 1)) });
      await createContact(t, acc, { email: address, createdAt: new Date(Date.UTC(2021, 0, 1)) });
      const r = await submit(form.id, { workEmail: address });
      expect(r.body.contact_id).toBe(oldest.id);
    });

    it("an e-mail with an apostrophe finds its contact again, whatever its case (the lookup's address is sent as a literal on PostgreSQL)", async () => {
      const address = `o'neil.${unique()}@example.com`;
      const first = await submit(form.id, { workEmail: address });
      expect(first.status).toBe(200);
      const again = await submit(form.id, { workEmail: address.toUpperCase() });
      expect(again.body.contact_id).toBe(first.body.contact_id);
      expect(await t.db.contact.count({ where: { accountId: acc.id, email: address } })).toBe(1);
    });

    it('an e-mail with _ or % matches only that very address', async () => {
      const lookalike = await createContact(t, acc, { email: `a1b-${unique()}@example.com` });
      const r = await submit(form.id, { workEmail: lookalike.email!.replace('a1b', 'a_b') });
      expect(r.body.contact_id).not.toBe(lookalike.id);
    });

    it('a contact of another account with the same e-mail is left alone', async () => {
      const other = await createAccount(t);
      const address = email();
      const theirs = await createContact(t, other, { email: address, firstName: 'Theirs' });
      const r = await submit(form.id, { fullName: 'Mine', workEmail: address });
      expect(r.body.contact_id).not.toBe(theirs.id);
      expect((await t.db.contact.findUniqueOrThrow({ where: { id: theirs.id } })).firstName).toBe('Theirs');
    });

    it('every accepted submission is recorded: form, contact, defined values, metadata, client IP, user agent, time', async () => {
      const recorded = await newForm();
      const address = email();
      const r = await submit(
        recorded.id,
        { fullName: ' Alan ', workEmail: address, plan: 'pro', notAField: 'ignored', message: 'hi' },
        { referrer: 'https://search.example/?q=crm', page: '/pricing' },
        { clientIp: '192.0.2.77', headers: { 'user-agent': 'FormTest/1.0' } },
      );
      expect(r.status).toBe(200);
      const [row] = await submissions(recorded.id);
      expect(row).toMatchObject({
        accountId: acc.id, formId: recorded.id, contactId: r.body.contact_id,
        referrer: 'https://search.example/?q=crm', page: '/pricing', clientIp: '192.0.2.77', userAgent: 'FormTest/1.0',
      });
      // Keys the form does not define are ignored and not stored.
      expect(row!.data).toEqual({ fullName: 'Alan', workEmail: address, plan: 'pro', message: 'hi' });
      expect(Date.now() - row!.createdAt.getTime()).toBeLessThan(60_000);
    });

    it('metadata is optional', async () => {
      const r = await submitRaw(form.id, { data: { workEmail: email() } });
      expect(r.status).toBe(200);
    });

    it('concurrent submissions with one new e-mail create exactly one contact, and every submission is recorded', async () => {
      const concurrent = await newForm();
      const address = email();
      const variants = [address, address.toUpperCase(), address, address.replace('lead', 'LEAD'), address, address, address, address];
      const results = await Promise.all(variants.map((workEmail, i) => submit(concurrent.id, { workEmail, message: `n${i}` })));
      expect(results.map((r) => r.status)).toEqual(variants.map(() => 200));
      expect(new Set(results.map((r) => r.body.contact_id)).size).toBe(1);
      const contacts = await t.db.contact.findMany({ where: { accountId: acc.id, email: { equals: address, mode: 'insensitive' } } });
      expect(contacts).toHaveLength(1);
      const rows = await submissions(concurrent.id);
      expect(rows).toHaveLength(variants.length);
      expect(rows.map((row) => (row.data as { message: string }).message).sort()).toEqual(variants.map((_, i) => `n${i}`).sort());
      for (const row of rows) expect(row.contactId).toBe(contacts[0]!.id);
    });
  });

  describe('public: no authentication', () => {
    it('needs no token', async () => {
      expect((await submit(form.id, { workEmail: email() })).status).toBe(200);
    });

    it('ignores a bearer token, even an invalid one', async () => {
      const r = await submit(form.id, { workEmail: email() }, undefined, { headers: { authorization: 'Bearer not-a-token' } });
      expect(r.status).toBe(200);
    });

    it('accepts a cross-site POST even when a session cookie rides along', async () => {
      const r = await submit(form.id, { workEmail: email() }, undefined, {
        headers: { cookie: `session=${acc.owner.token}`, origin: 'https://some-customer-site.example' },
      });
      expect(r.status).toBe(200);
    });
  });

  describe('404 {"error":"Form not found or inactive"}', () => {
    it('an inactive form', async () => {
      const inactive = await newForm({ active: false });
      const r = await submit(inactive.id, { workEmail: email() });
      expect([r.status, r.body]).toEqual([404, NOT_FOUND]);
      expect(await submissions(inactive.id)).toEqual([]);
    });

    it('a form deactivated after it was used', async () => {
      const used = await newForm();
      expect((await submit(used.id, { workEmail: email() })).status).toBe(200);
      await t.db.leadForm.update({ where: { id: used.id }, data: { active: false } });
      const r = await submit(used.id, { workEmail: email() });
      expect([r.status, r.body]).toEqual([404, NOT_FOUND]);
    });

    it('an unknown form id', async () => {
      const r = await submit(randomUUID(), { workEmail: email() });
      expect([r.status, r.body]).toEqual([404, NOT_FOUND]);
    });

    it('a form id that is not a UUID', async () => {
      for (const id of ['contact-form', '1', 'x'.repeat(300), '%20']) {
        const r = await submit(id, { workEmail: email() });
        expect([r.status, r.body]).toEqual([404, NOT_FOUND]);
      }
    });

    it('the form is checked before the values: an unknown form with invalid values is still a 404', async () => {
      const r = await submit(randomUUID(), { workEmail: 'not-an-email', plan: 'gold' });
      expect([r.status, r.body]).toEqual([404, NOT_FOUND]);
    });

    it('the form id is found whatever its letter case', async () => {
      const r = await submit(form.id.toUpperCase(), { workEmail: email() });
      expect(r.status).toBe(200);
    });

    it.each(BAD_BODIES)('the form is checked before the body: %s is a 404 for an unknown form and an inactive one', async (_name, rawBody) => {
      const inactive = await newForm({ active: false });
      for (const id of [randomUUID(), inactive.id]) {
        const r = await post(id, rawBody);
        expect([r.status, r.body]).toEqual([404, NOT_FOUND]);
      }
      expect(await submissions(inactive.id)).toEqual([]);
    });

    it('415 judges the HTTP message, not the form: a wrong content type to an unknown form is a 415', async () => {
      const r = await post(randomUUID(), 'workEmail=a%40example.com', { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect([r.status, r.body]).toEqual([415, { error: 'Unsupported media type' }]);
    });
  });

  describe('validation: 400 {"error":"Invalid payload","details":{...}} keyed by the form\'s own field keys', () => {
    const refused: [string, unknown, Record<string, string[]>][] = [
      ['a required field that is missing is ["Required"]', { data: { fullName: 'Ada' } }, { workEmail: ['Required'] }],
      ['a required field that is blank is ["Required"]', { data: { workEmail: '   ' } }, { workEmail: ['Required'] }],
      ['an e-mail field with an invalid address', { data: { workEmail: 'ada@' } }, { workEmail: ['Must be a valid e-mail address'] }],
      ['a select value that is not among the options', { data: { workEmail: 'a@example.com', plan: 'gold' } }, { plan: ['Must be one of the options'] }],
      ['a value longer than the field allows', { data: { workEmail: 'a@example.com', message: 'm'.repeat(21) } }, { message: ['Must be at most 20 characters'] }],
      ['a mapped value longer than its contact column', { data: { workEmail: 'a@example.com', phone: '1'.repeat(51) } }, { phone: ['Must be at most 50 characters'] }],
      ['a value that is not a string', { data: { workEmail: 'a@example.com', fullName: 42 } }, { fullName: ['Expected a string'] }],
      ['data that is not an object', { data: ['a@example.com'] }, { data: ['Expected an object of string values'] }],
      ['missing data is ["Required"]', { metadata: { page: '/' } }, { data: ['Required'] }],
      ['a referrer longer than 2048 characters', { data: { workEmail: 'a@example.com' }, metadata: { referrer: `https://x.example/${'r'.repeat(2040)}` } },
        { 'metadata.referrer': ['Must be at most 2048 characters'] }],
      ['a page longer than 2048 characters', { data: { workEmail: 'a@example.com' }, metadata: { page: `/${'p'.repeat(2048)}` } },
        { 'metadata.page': ['Must be at most 2048 characters'] }],
      ['an unknown metadata key is ["Unknown field"]', { data: { workEmail: 'a@example.com' }, metadata: { utm: 'x' } },
        { 'metadata.utm': ['Unknown field'] }],
      ['metadata that is not an object', { data: { workEmail: 'a@example.com' }, metadata: 'home' }, { metadata: ['Expected an object'] }],
      ['a referrer that is not a string', { data: { workEmail: 'a@example.com' }, metadata: { referrer: 1 } }, { 'metadata.referrer': ['Expected a string'] }],
      ['an unknown top-level field is ["Unknown field"]', { data: { workEmail: 'a@example.com' }, contact_id: randomUUID() }, { contact_id: ['Unknown field'] }],
      ['the form id cannot be given in the body', { data: { workEmail: 'a@example.com' }, form_id: randomUUID() }, { form_id: ['Unknown field'] }],
    ];

    it.each(refused)('%s', async (_name, body, details) => {
      const before = (await submissions(form.id)).length;
      const r = await submitRaw(form.id, body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'Invalid payload', details });
      expect((await submissions(form.id)).length).toBe(before);
    });

    it('every failing field is named at once', async () => {
      const r = await submit(form.id, { workEmail: 'nope', plan: 'gold', message: 'm'.repeat(30) });
      expect(r.body).toEqual({
        error: 'Invalid payload',
        details: {
          workEmail: ['Must be a valid e-mail address'],
          plan: ['Must be one of the options'],
          message: ['Must be at most 20 characters'],
        },
      });
    });

    it.each([['an array', '[]'], ['a string', '"hello"'], ['invalid JSON', '{"data": {']])(
      'a body that is %s is a 400 with details.body ["Expected a JSON object"]',
      async (_name, rawBody) => {
        const r = await t.rest('POST', `/api/v1/forms/${form.id}/submit`, { rawBody, clientIp: nextIp() });
        expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { body: ['Expected a JSON object'] } }]);
      },
    );

    it.each(BAD_BODIES)('the same bad bodies to an active form are a 400: %s', async (_name, rawBody, details) => {
      const r = await post(form.id, rawBody);
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details }]);
    });

    it('a body that is not JSON is a 415 {"error":"Unsupported media type"}', async () => {
      const r = await t.rest('POST', `/api/v1/forms/${form.id}/submit`, {
        rawBody: 'workEmail=a%40example.com', headers: { 'content-type': 'application/x-www-form-urlencoded' }, clientIp: nextIp(),
      });
      expect([r.status, r.body]).toEqual([415, { error: 'Unsupported media type' }]);
    });
  });

  describe('rate limit: 5 requests per minute per client IP address', () => {
    it('the 6th request from one address is a 429 {"error":"Rate limit exceeded"} with Retry-After; another address is not affected', async () => {
      const address = '198.18.0.1';
      for (let i = 0; i < 5; i++) {
        const r = await submit(form.id, { workEmail: email() }, undefined, { clientIp: address });
        expect(r.status).toBe(200);
        expect(r.headers.get('ratelimit-limit')).toBe('5');
      }
      const r = await submit(form.id, { workEmail: email() }, undefined, { clientIp: address });
      expect([r.status, r.body]).toEqual([429, { error: 'Rate limit exceeded' }]);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await submit(form.id, { workEmail: email() }, undefined, { clientIp: '198.18.0.2' })).status).toBe(200);
    });

    it('the limit comes first: while limited, an unknown form and invalid values are a 429 too', async () => {
      const address = '198.18.1.1';
      for (let i = 0; i < 5; i++) await submit(randomUUID(), { workEmail: email() }, undefined, { clientIp: address });
      expect((await submit(randomUUID(), {}, undefined, { clientIp: address })).status).toBe(429);
      expect((await submit(form.id, { workEmail: 'bad' }, undefined, { clientIp: address })).status).toBe(429);
    });

    it('the limit comes before the 404: the 6th call from one address is a 429 even for an unknown form and a bad body', async () => {
      const address = '198.18.3.1';
      for (const [, rawBody] of BAD_BODIES.slice(0, 5)) {
        expect((await post(randomUUID(), rawBody, { clientIp: address })).status).toBe(404);
      }
      const r = await post(randomUUID(), '[]', { clientIp: address });
      expect([r.status, r.body]).toEqual([429, { error: 'Rate limit exceeded' }]);
    });

    it('the limit is per address, not per form: two forms share one budget', async () => {
      const address = '198.18.2.1';
      const second = await newForm();
      for (let i = 0; i < 5; i++) {
        expect((await submit(i % 2 ? form.id : second.id, { workEmail: email() }, undefined, { clientIp: address })).status).toBe(200);
      }
      expect((await submit(second.id, { workEmail: email() }, undefined, { clientIp: address })).status).toBe(429);
    });
  });
});

describe('CORS on the public form submit', () => {
  it('any website may post the form, without credentials', async () => {
    const r = await t.rest('OPTIONS', `/api/v1/forms/${form.id}/submit`, {
      headers: { origin: 'https://customer-site.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(r.status).toBeLessThan(300);
    expect(r.headers.get('access-control-allow-credentials')).not.toBe('true');
  });
});

// Counted on pg's client (BEGIN and COMMIT too); the embedded database's adapter runs a
// transaction's statements where no spy sees them, so this needs PostgreSQL.
describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('round trips of a submit', () => {
  it("a new visitor's submit makes 4: the form with its fields, BEGIN with the e-mail's lock and its lookup, one write of the contact, the submission and both events, COMMIT", async () => {
    expect((await submit(form.id, { workEmail: email() })).status).toBe(200); // warm: the schema's caches filled
    let status = 0;
    const trips = await roundTrips(async () => void ({ status } = await submit(form.id, { fullName: 'Ada', workEmail: email() })));
    expect(status).toBe(200);
    expect(trips).toBe(4);
  });
});

// The new visitor's transaction runs on pg's own client (rawTransaction): a COMMIT that fails must
// leave nothing it wrote, events and counters included (docs/events.md). A deferred constraint
// trigger refuses the submission at COMMIT, after the one statement wrote the contact and its events.
describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('a submit whose transaction fails', () => {
  afterAll(async () => {
    await t.db.$executeRawUnsafe('DROP TRIGGER IF EXISTS refuse_at_commit ON form_submissions');
    await t.db.$executeRawUnsafe('DROP FUNCTION IF EXISTS refuse_at_commit()');
  });

  it('leaves no contact, no submission, no event, and the counters as they were', async () => {
    await t.db.$executeRawUnsafe(`CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused at commit'; END $$`);
    await t.db.$executeRawUnsafe(`CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON form_submissions
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.data->>'message' = 'refuse at commit') EXECUTE FUNCTION refuse_at_commit()`);
    const counted = () => t.db.$queryRaw<{ n: number }[]>`
      SELECT coalesce(sum(n), 0)::int AS n FROM record_counts WHERE account_id = ${acc.id}::uuid AND table_name = 'contacts'`.then((r) => r[0]!.n);
    const [events, contacts] = [await t.db.event.count({ where: { accountId: acc.id } }), await counted()];
    const address = email();
    const r = await submit(form.id, { workEmail: address, message: 'refuse at commit' });
    expect(r.status).toBe(500);
    expect(await t.db.contact.count({ where: { email: address } })).toBe(0);
    expect(await t.db.formSubmission.count({ where: { formId: form.id, data: { path: ['message'], equals: 'refuse at commit' } } })).toBe(0);
    expect(await t.db.event.count({ where: { accountId: acc.id } })).toBe(events);
    expect(await counted()).toBe(contacts);
    // The pool's client went back usable: the next submit of the same address is recorded.
    expect((await submit(form.id, { workEmail: address })).status).toBe(200);
    expect(await t.db.contact.count({ where: { email: address } })).toBe(1);
  });
});
