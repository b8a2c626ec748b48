import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, createMember, type TestAccount } from '../factories/index.js';
import { createTestApp, type RestResult, type TestApp, type TestUser } from '../helpers/app.js';
import { restResource } from '../helpers/rest.js';

// REST contract: GET /api/v1/contacts and POST /api/v1/contacts (docs/rest.md; docs/decisions.md §2-§4).
// Who may call each endpoint (owner, member, outsider, anonymous, an unknown account) and that a
// refused call writes nothing: test/security/access-matrix.test.ts.

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// company_id and owner_id: docs/decisions.md §21.
const LIST_ITEM_KEYS = ['company', 'company_id', 'contact_type', 'created_at', 'custom_fields', 'email', 'external_id', 'first_name', 'id', 'last_name', 'owner_id', 'phone', 'source', 'updated_at'];
const CREATED_KEYS = ['contact_type', 'created_at', 'custom_fields', 'email', 'external_id', 'first_name', 'id', 'last_name', 'source'];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const { list, create } = restResource(() => t, '/api/v1/contacts');

const firstNames = (r: RestResult) => (r.body.data as { first_name: string }[]).map((c) => c.first_name).sort();

describe('GET /api/v1/contacts', () => {
  let acc: TestAccount;
  beforeAll(async () => {
    acc = await createAccount(t);
    await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+44 1', company: 'Engines' });
  });

  it('answers 200 with the list envelope {data, total, page, page_size, next_cursor}, page 1 and page_size 25 by default', async () => {
    const r = await list(acc.id, acc.owner);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'next_cursor', 'page', 'page_size', 'total']);
    expect(r.body).toMatchObject({ total: 1, page: 1, page_size: 25 });
  });

  it('each item has exactly id, first_name, last_name, email, phone, company, contact_type, source, external_id, company_id, owner_id, custom_fields, created_at, updated_at', async () => {
    const r = await list(acc.id, acc.owner);
    const [item] = r.body.data;
    expect(Object.keys(item).sort()).toEqual(LIST_ITEM_KEYS);
    expect(item).toMatchObject({
      first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone: '+44 1', company: 'Engines',
      contact_type: 'lead', source: 'other',
    });
    expect(item.id).toMatch(UUID);
    expect(item.created_at).toMatch(ISO_Z);
  });

  it('optional fields the contact lacks are null', async () => {
    const bare = await createAccount(t);
    await createContact(t, bare, { firstName: 'Solo', lastName: null, email: null });
    const [item] = (await list(bare.id, bare.owner)).body.data;
    expect(item).toMatchObject({ first_name: 'Solo', last_name: null, email: null, phone: null, company: null });
  });

  it("never lists another account's contacts", async () => {
    const other = await createAccount(t);
    await createContact(t, other, { firstName: 'Elsewhere' });
    const r = await list(acc.id, acc.owner);
    expect(r.body.data.map((c: { first_name: string }) => c.first_name)).toEqual(['Ada']);
  });

  describe('account_id', () => {
    it('a missing account_id is a 400 "Invalid query" with account_id ["Required"]', async () => {
      const r = await t.rest('GET', '/api/v1/contacts', { as: acc.owner });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'Invalid query', details: { account_id: ['Required'] } });
    });

    it('an account_id that is not a UUID is a 400 on account_id', async () => {
      const r = await list('not-a-uuid', acc.owner);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'Invalid query', details: { account_id: ['Must be a UUID'] } });
    });
  });

  describe('paging', () => {
    let paged: TestAccount;
    let caller: TestUser;
    beforeAll(async () => {
      paged = await createAccount(t);
      caller = paged.owner;
      for (let i = 0; i < 5; i++) await createContact(t, paged, { firstName: `P${i}` });
    });

    it('the first page holds page_size items and total is the number of matching records', async () => {
      const r = await list(paged.id, caller, { page_size: 2 });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ total: 5, page: 1, page_size: 2 });
      expect(r.body.data).toHaveLength(2);
    });

    it('a middle page and the last, partial page', async () => {
      const middle = await list(paged.id, caller, { page: 2, page_size: 2 });
      expect(middle.body).toMatchObject({ total: 5, page: 2, page_size: 2 });
      expect(middle.body.data).toHaveLength(2);
      const last = await list(paged.id, caller, { page: 3, page_size: 2 });
      expect(last.body).toMatchObject({ total: 5, page: 3, page_size: 2 });
      expect(last.body.data).toHaveLength(1);
    });

    it('a page past the end is 200 with data [] and the true total', async () => {
      const r = await list(paged.id, caller, { page: 9, page_size: 2 });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ data: [], total: 5, page: 9, page_size: 2, next_cursor: null });
    });

    it('page_size 1 and 100 are accepted', async () => {
      expect((await list(paged.id, caller, { page_size: 1 })).body.data).toHaveLength(1);
      expect((await list(paged.id, caller, { page_size: 100 })).body).toMatchObject({ page_size: 100, total: 5 });
    });

    const refused = [
      ['page', '0', 'Must be at least 1'],
      ['page', '-1', 'Must be at least 1'],
      ['page', 'abc', 'Must be an integer'],
      ['page', '2.5', 'Must be an integer'],
      ['page_size', '0', 'Must be from 1 to 100'],
      ['page_size', '101', 'Must be from 1 to 100'],
      ['page_size', 'abc', 'Must be an integer'],
      ['page_size', '2.5', 'Must be an integer'],
    ] as const;
    for (const [param, value, message] of refused) {
      it(`${param} ${value} is a 400 "Invalid query" on ${param}`, async () => {
        const r = await list(paged.id, await createMember(t, paged.id), { [param]: value });
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ error: 'Invalid query', details: { [param]: [message] } });
      });
    }

    it('a bad page and a bad page_size are named together', async () => {
      const r = await list(paged.id, caller, { page: 0, page_size: 101 });
      expect(r.status).toBe(400);
      expect(Object.keys(r.body.details).sort()).toEqual(['page', 'page_size']);
    });
  });

  describe('order', () => {
    it('is newest first (created_at desc, then id desc) and stable across pages', async () => {
      const ordered = await createAccount(t);
      const base = Date.UTC(2024, 0, 1);
      // Two ties on created_at: the id decides, the same way on every page.
      const at = [0, 1000, 3000, 3000, 3000, 5000, 5000];
      for (const [i, offset] of at.entries()) {
        await createContact(t, ordered, { firstName: `O${i}`, createdAt: new Date(base + offset) });
      }
      const rows = await t.db.contact.findMany({ where: { accountId: ordered.id } });
      const expected = rows
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
        .map((c) => c.id);

      const pages: string[] = [];
      for (let page = 1; page <= 4; page++) {
        const r = await list(ordered.id, ordered.owner, { page, page_size: 2 });
        pages.push(...r.body.data.map((c: { id: string }) => c.id));
      }
      expect(pages).toEqual(expected);
      const whole = await list(ordered.id, ordered.owner, { page_size: 100 });
      expect(whole.body.data.map((c: { id: string }) => c.id)).toEqual(expected);
    });
  });

  describe('search', () => {
    let found: TestAccount;
    let caller: TestUser;
    const search = (value: string, params: Record<string, string> = {}) => list(found.id, caller, { search: value, ...params });

    beforeAll(async () => {
      found = await createAccount(t);
      caller = found.owner;
      const people: [string, string | null, string | null, 'lead' | 'client'][] = [
        ['Ada', 'Lovelace', 'ada.l@analytical.example', 'client'],
        ['Grace', 'Hopper', 'GRACE@Navy.example', 'lead'],
        ['Adalbert', 'Stifter', null, 'lead'],
        ['50%', 'Percent', 'pct@percent.example', 'lead'],
        ['50x', 'Other', 'x50@other.example', 'lead'],
        ['Under', 'a_b', 'under1@score.example', 'lead'],
        ['Under', 'axb', 'under2@score.example', 'lead'],
        ['Back', 'sl\\ash', 'back@slash.example', 'lead'],
      ];
      for (const [firstName, lastName, email, contactType] of people) {
        await createContact(t, found, { firstName, lastName, email, contactType });
      }
    });

    it('matches a case-insensitive substring of the first name', async () => {
      expect(firstNames(await search('aDA'))).toEqual(['Ada', 'Adalbert']);
    });

    it('matches a case-insensitive substring of the last name', async () => {
      expect(firstNames(await search('LOVEL'))).toEqual(['Ada']);
    });

    it('matches a case-insensitive substring of the e-mail', async () => {
      expect(firstNames(await search('navy.EXAMPLE'))).toEqual(['Grace']);
    });

    it('matches "first last", also in part across the space', async () => {
      expect(firstNames(await search('ada lovelace'))).toEqual(['Ada']);
      expect(firstNames(await search('DA LOVE'))).toEqual(['Ada']);
      expect((await search('Grace Lovelace')).body.data).toEqual([]);
    });

    it('is trimmed', async () => {
      expect(firstNames(await search('   hopper  '))).toEqual(['Grace']);
    });

    it('an empty or blank search means no filter', async () => {
      expect((await search('')).body.total).toBe(8);
      expect((await search('   ')).body.total).toBe(8);
    });

    it('total counts the matching records, not the page', async () => {
      const r = await search('under', { page_size: '1' });
      expect(r.body).toMatchObject({ total: 2, page_size: 1 });
      expect(r.body.data).toHaveLength(1);
    });

    it('% and _ (and \\) match literally', async () => {
      expect(firstNames(await search('%'))).toEqual(['50%']);
      expect(firstNames(await search('50%'))).toEqual(['50%']);
      expect((await search('a_b')).body.data.map((c: { last_name: string }) => c.last_name)).toEqual(['a_b']);
      expect((await search('_')).body.data.map((c: { last_name: string }) => c.last_name)).toEqual(['a_b']);
      expect(firstNames(await search('\\'))).toEqual(['Back']);
    });

    it('combines with the type filter', async () => {
      expect(firstNames(await search('ada', { type: 'client' }))).toEqual(['Ada']);
    });

    it('200 characters are accepted; longer than 200 characters is a 400 on search', async () => {
      expect((await search('x'.repeat(200))).status).toBe(200);
      const r = await search('x'.repeat(201));
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'Invalid query', details: { search: ['Must be at most 200 characters'] } });
    });
  });

  describe('type filter', () => {
    let typed: TestAccount;
    beforeAll(async () => {
      typed = await createAccount(t);
      for (const contactType of ['lead', 'client', 'past_client', 'vendor', 'other', 'client'] as const) {
        await createContact(t, typed, { firstName: contactType, contactType });
      }
    });

    it.each(['lead', 'client', 'past_client', 'vendor', 'other'])('type=%s lists only contacts of that type', async (type) => {
      const r = await list(typed.id, await createMember(t, typed.id), { type });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(type === 'client' ? 2 : 1);
      for (const item of r.body.data) expect(item.contact_type).toBe(type);
    });

    it('source=website lists only contacts from that source, with the exact total; with type, both hold', async () => {
      const sourced = await createAccount(t);
      for (const [source, contactType] of [['website', 'lead'], ['website', 'client'], ['referral', 'client']] as const) {
        await createContact(t, sourced, { firstName: `${source}-${contactType}`, source, contactType });
      }
      const website = await list(sourced.id, sourced.owner, { source: 'website' });
      expect(website.status).toBe(200);
      expect(website.body.total).toBe(2);
      expect(firstNames(website)).toEqual(['website-client', 'website-lead']);
      expect(firstNames(await list(sourced.id, sourced.owner, { source: 'website', type: 'client' }))).toEqual(['website-client']);
      const bad = await list(sourced.id, sourced.owner, { source: 'billboard', type: 'customer' });
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.details).sort()).toEqual(['source', 'type']);
    });

    it('an invalid type is a 400 "Invalid query" naming type', async () => {
      const r = await list(typed.id, typed.owner, { type: 'customer' });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Invalid query');
      expect(Object.keys(r.body.details)).toEqual(['type']);
      expect(r.body.details.type[0]).toMatch(/^Must be one of: /);
    });

    it('unknown query parameters are ignored', async () => {
      const r = await list(typed.id, typed.owner, { sort_by: 'name', foo: 'bar', status: 'bogus' });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(6);
    });
  });

  describe('rate limit', () => {
    it('60 requests per minute per user: the 61st is a 429 {"error":"Rate limit exceeded"} with Retry-After', async () => {
      const limited = await createAccount(t);
      for (let i = 0; i < 60; i++) {
        const r = await list(limited.id, limited.member);
        expect(r.status).toBe(200);
        if (i === 0) expect(r.headers.get('ratelimit-limit')).toBe('60');
      }
      const r = await list(limited.id, limited.member);
      expect(r.status).toBe(429);
      expect(r.body).toEqual({ error: 'Rate limit exceeded' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('ratelimit-remaining')).toBe('0');
      // Per user: the owner of the same account still has its own budget.
      expect((await list(limited.id, limited.owner)).status).toBe(200);
    });
  });
});

describe('POST /api/v1/contacts', () => {
  let acc: TestAccount;
  let caller: TestUser;
  beforeAll(async () => {
    acc = await createAccount(t);
  });
  // Each test creates with a fresh member so the 30/min budget never interferes.
  const post = async (body: unknown) => create((caller = await createMember(t, acc.id)), body);
  const valid = (extra: Record<string, unknown> = {}) => ({ account_id: acc.id, first_name: 'Grace', ...extra });

  it('answers 201 {data: {id, first_name, last_name, email, contact_type, source, external_id, custom_fields, created_at}}', async () => {
    const r = await post(valid({ last_name: 'Hopper', email: 'grace@example.com', phone: '555', company: 'Navy' }));
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['data']);
    expect(Object.keys(r.body.data).sort()).toEqual(CREATED_KEYS);
    expect(r.body.data).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com' });
    expect(r.body.data.id).toMatch(UUID);
    expect(r.body.data.created_at).toMatch(ISO_Z);
    const row = await t.db.contact.findUniqueOrThrow({ where: { id: r.body.data.id } });
    expect(row).toMatchObject({ accountId: acc.id, phone: '555', company: 'Navy' });
  });

  it('contact_type defaults to lead and source to other', async () => {
    const r = await post(valid());
    expect(r.body.data).toMatchObject({ contact_type: 'lead', source: 'other', last_name: null, email: null });
  });

  it('the created contact is listed first', async () => {
    const r = await post(valid({ first_name: 'Newest' }));
    const listed = await list(acc.id, caller);
    expect(listed.body.data[0]).toMatchObject({ id: r.body.data.id, first_name: 'Newest' });
  });

  it.each(['lead', 'client', 'past_client', 'vendor', 'other'])('contact_type %s is accepted', async (contactType) => {
    const r = await post(valid({ contact_type: contactType }));
    expect(r.status).toBe(201);
    expect(r.body.data.contact_type).toBe(contactType);
  });

  it.each(['website', 'referral', 'social_media', 'advertising', 'cold_outreach', 'repeat_client', 'other'])(
    'source %s is accepted',
    async (source) => {
      const r = await post(valid({ source }));
      expect(r.status).toBe(201);
      expect(r.body.data.source).toBe(source);
    },
  );

  it('strings are trimmed and an empty optional string is stored as null', async () => {
    const r = await post(valid({ first_name: '  Grace  ', last_name: '', email: '   ', phone: ' ', company: '  Navy ' }));
    expect(r.status).toBe(201);
    expect(r.body.data).toMatchObject({ first_name: 'Grace', last_name: null, email: null });
    const row = await t.db.contact.findUniqueOrThrow({ where: { id: r.body.data.id } });
    expect(row).toMatchObject({ phone: null, company: 'Navy' });
  });

  it('an e-mail address is kept as given', async () => {
    const r = await post(valid({ email: 'Grace.Hopper@Navy.EXAMPLE' }));
    expect(r.body.data.email).toBe('Grace.Hopper@Navy.EXAMPLE');
  });

  it('duplicate e-mails are allowed', async () => {
    const first = await post(valid({ email: 'same@example.com' }));
    const second = await post(valid({ email: 'SAME@example.com' }));
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.data.id).not.toBe(first.body.data.id);
  });

  it('the maximum lengths are accepted', async () => {
    const r = await post(valid({
      first_name: 'f'.repeat(100), last_name: 'l'.repeat(100), phone: '1'.repeat(50), company: 'c'.repeat(200),
      email: `${'e'.repeat(64)}@${'d'.repeat(63)}.${'d'.repeat(63)}.${'d'.repeat(58)}.io`,
    }));
    expect(r.status).toBe(201);
    expect(r.body.data.email).toHaveLength(254);
  });

  describe('validation: 400 {"error":"Invalid payload","details":{...}}', () => {
    // `undefined` drops the key from the JSON body.
    const refused: [string, Record<string, unknown>, Record<string, string[]>][] = [
      ['a missing first_name is exactly ["Required"]', { first_name: undefined }, { first_name: ['Required'] }],
      ['a null first_name is ["Required"]', { first_name: null }, { first_name: ['Required'] }],
      ['an empty first_name is ["Required"]', { first_name: '' }, { first_name: ['Required'] }],
      ['a blank first_name is ["Required"]', { first_name: '   ' }, { first_name: ['Required'] }],
      ['a missing account_id is ["Required"]', { account_id: undefined }, { account_id: ['Required'] }],
      ['an account_id that is not a UUID is a 400 on account_id', { account_id: '123' }, { account_id: ['Must be a UUID'] }],
      ['first_name longer than 100 characters', { first_name: 'f'.repeat(101) }, { first_name: ['Must be at most 100 characters'] }],
      ['last_name longer than 100 characters', { last_name: 'l'.repeat(101) }, { last_name: ['Must be at most 100 characters'] }],
      ['phone longer than 50 characters', { phone: '1'.repeat(51) }, { phone: ['Must be at most 50 characters'] }],
      ['company longer than 200 characters', { company: 'c'.repeat(201) }, { company: ['Must be at most 200 characters'] }],
      ['an invalid e-mail', { email: 'not-an-email' }, { email: ['Must be a valid e-mail address'] }],
      ['an e-mail longer than 254 characters', { email: `${'e'.repeat(64)}@${'d'.repeat(187)}.io` }, { email: ['Must be at most 254 characters'] }],
      ['a first_name that is not a string', { first_name: 42 }, { first_name: ['Expected a string'] }],
      ['an account_id that is not a string', { account_id: 7 }, { account_id: ['Expected a string'] }],
      ['unknown fields are each ["Unknown field"]', { id: randomUUID(), created_at: '2020-01-01T00:00:00Z' },
        { id: ['Unknown field'], created_at: ['Unknown field'] }],
      ['a camelCase field name is an unknown field', { firstName: 'Grace' }, { firstName: ['Unknown field'] }],
      ['fields named like built-in object members are unknown fields too', { constructor: 1, toString: 'x', hasOwnProperty: null },
        { constructor: ['Unknown field'], toString: ['Unknown field'], hasOwnProperty: ['Unknown field'] }],
    ];

    it.each(refused)('%s', async (_name, change, details) => {
      const body = { ...valid(), ...change };
      const before = await t.db.contact.count({ where: { accountId: acc.id } });
      const r = await post(body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'Invalid payload', details });
      expect(await t.db.contact.count({ where: { accountId: acc.id } })).toBe(before);
    });

    it('an invalid contact_type and source are each named with the allowed values', async () => {
      const r = await post(valid({ contact_type: 'customer', source: 'tv' }));
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Invalid payload');
      expect(Object.keys(r.body.details).sort()).toEqual(['contact_type', 'source']);
      expect(r.body.details.contact_type[0]).toMatch(/^Must be one of: /);
      for (const value of ['lead', 'client', 'past_client', 'vendor', 'other']) expect(r.body.details.contact_type[0]).toContain(value);
      for (const value of ['website', 'social_media', 'repeat_client']) expect(r.body.details.source[0]).toContain(value);
    });

    it('every failing field is named at once', async () => {
      const r = await post({ account_id: acc.id, first_name: '', email: 'x', phone: 'p'.repeat(51) });
      expect(r.status).toBe(400);
      expect(r.body.details).toEqual({
        first_name: ['Required'],
        email: ['Must be a valid e-mail address'],
        phone: ['Must be at most 50 characters'],
      });
    });

    it('a __proto__ field is an unknown field', async () => {
      const r = await t.rest('POST', '/api/v1/contacts', {
        as: await createMember(t, acc.id), rawBody: `{"account_id":"${acc.id}","first_name":"P","__proto__":{"contact_type":"client"}}`,
      });
      expect(r.status).toBe(400);
      expect(r.text).toBe('{"error":"Invalid payload","details":{"__proto__":["Unknown field"]}}');
    });

    it('an empty object names both required fields', async () => {
      const r = await post({});
      expect(r.body).toEqual({ error: 'Invalid payload', details: { account_id: ['Required'], first_name: ['Required'] } });
    });

    it.each([
      ['an array', '[]'],
      ['a string', '"contact"'],
      ['a number', '42'],
      ['null', 'null'],
      ['invalid JSON', '{"first_name": '],
      ['an empty body', ''],
    ])('a body that is %s is a 400 with details.body ["Expected a JSON object"]', async (_name, rawBody) => {
      const r = await t.rest('POST', '/api/v1/contacts', { as: await createMember(t, acc.id), rawBody });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'Invalid payload', details: { body: ['Expected a JSON object'] } });
    });
  });

  describe('rate limit', () => {
    it('30 requests per minute per user: the 31st is a 429 and creates nothing', async () => {
      const limited = await createAccount(t);
      for (let i = 0; i < 30; i++) {
        const r = await create(limited.member, { account_id: limited.id, first_name: `R${i}` });
        expect(r.status).toBe(201);
      }
      const r = await create(limited.member, { account_id: limited.id, first_name: 'Too many' });
      expect(r.status).toBe(429);
      expect(r.body).toEqual({ error: 'Rate limit exceeded' });
      expect(r.headers.get('ratelimit-limit')).toBe('30');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await t.db.contact.count({ where: { accountId: limited.id } })).toBe(30);
      // Per endpoint: the same user can still list.
      expect((await list(limited.id, limited.member)).status).toBe(200);
    });
  });
});
