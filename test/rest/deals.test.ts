import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, createMember, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { restResource } from '../helpers/rest.js';

// REST contract: GET /api/v1/deals and POST /api/v1/deals (docs/rest.md; docs/decisions.md §2-§4).
// Who may call each endpoint (owner, member, outsider, anonymous, an unknown account) and that a
// refused call writes nothing: test/security/access-matrix.test.ts.

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// company_id and owner_id: docs/decisions.md §21.
const LIST_ITEM_KEYS = ['company_id', 'contacts', 'custom_fields', 'expected_close_date', 'external_id', 'id', 'owner_id', 'pipeline_stages', 'probability', 'status', 'title', 'updated_at', 'value'];
const CREATED_KEYS = ['created_at', 'custom_fields', 'external_id', 'id', 'probability', 'status', 'title', 'value'];
const NOT_IN_ACCOUNT = ['Not found in this account'];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const { list, create } = restResource(() => t, '/api/v1/deals');

const stage = (accountId: string, name = 'Qualified') => t.db.pipelineStage.create({ data: { accountId, name } });
const deal = (accountId: string, data: Record<string, unknown> = {}) =>
  t.db.deal.create({ data: { accountId, title: 'Deal', ...data } });

describe('GET /api/v1/deals', () => {
  let acc: TestAccount;
  let linked: { id: string };
  let contact: { id: string; firstName: string; lastName: string | null };
  let qualified: { id: string; name: string };
  beforeAll(async () => {
    acc = await createAccount(t);
    contact = await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace' });
    qualified = await stage(acc.id, 'Qualified');
    await deal(acc.id, { title: 'Bare', createdAt: new Date(Date.UTC(2024, 0, 1)) });
    linked = await deal(acc.id, {
      title: 'Engines', value: 1234.5, probability: 75, contactId: contact.id, stageId: qualified.id,
      expectedCloseDate: new Date(Date.UTC(2027, 1, 28)), createdAt: new Date(Date.UTC(2024, 0, 2)),
    });
  });

  it('answers 200 with the list envelope {data, total, page, page_size, next_cursor}, page 1 and page_size 25 by default', async () => {
    const r = await list(acc.id, acc.owner);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'next_cursor', 'page', 'page_size', 'total']);
    expect(r.body).toMatchObject({ total: 2, page: 1, page_size: 25 });
  });

  it('each item has exactly id, title, value, probability, status, expected_close_date, external_id, company_id, owner_id, contacts, pipeline_stages, custom_fields, updated_at', async () => {
    const r = await list(acc.id, acc.owner);
    for (const item of r.body.data) expect(Object.keys(item).sort()).toEqual(LIST_ITEM_KEYS);
  });

  it('contacts is {id, first_name, last_name} and pipeline_stages is {id, name}; amounts are numbers, dates YYYY-MM-DD', async () => {
    const [item] = (await list(acc.id, acc.owner)).body.data;
    expect(item).toEqual({
      id: linked.id,
      custom_fields: {},
      title: 'Engines',
      value: 1234.5,
      probability: 75,
      status: 'open',
      expected_close_date: '2027-02-28',
      external_id: null,
      company_id: null,
      owner_id: null,
      contacts: { id: contact.id, first_name: 'Ada', last_name: 'Lovelace' },
      pipeline_stages: { id: qualified.id, name: 'Qualified' },
      updated_at: expect.stringMatching(ISO_Z),
    });
  });

  it('contacts and pipeline_stages are null when the deal has none; expected_close_date null when not set', async () => {
    const bare = (await list(acc.id, acc.owner)).body.data[1];
    expect(bare).toMatchObject({ title: 'Bare', value: 0, probability: 50, contacts: null, pipeline_stages: null, expected_close_date: null });
  });

  it("never lists another account's deals", async () => {
    const other = await createAccount(t);
    await deal(other.id, { title: 'Elsewhere' });
    const titles = (await list(acc.id, acc.owner)).body.data.map((d: { title: string }) => d.title);
    expect(titles).toEqual(['Engines', 'Bare']);
  });

  describe('account_id', () => {
    it('an account_id that is not a UUID is a 400 on account_id; a missing one is Required', async () => {
      const r = await list('42', acc.owner);
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { account_id: ['Must be a UUID'] } }]);
      const missing = await t.rest('GET', '/api/v1/deals', { as: acc.owner });
      expect([missing.status, missing.body]).toEqual([400, { error: 'Invalid query', details: { account_id: ['Required'] } }]);
    });
  });

  describe('paging and order', () => {
    let paged: TestAccount;
    let expected: string[];
    beforeAll(async () => {
      paged = await createAccount(t);
      const base = Date.UTC(2024, 5, 1);
      // Ties on created_at are broken by id, the same way on every page.
      for (const [i, offset] of [0, 1000, 1000, 1000, 2000].entries()) {
        await deal(paged.id, { title: `D${i}`, createdAt: new Date(base + offset) });
      }
      const rows = await t.db.deal.findMany({ where: { accountId: paged.id } });
      expected = rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1)).map((d) => d.id);
    });

    it('is newest first (created_at desc, then id desc), stable across first, middle and last pages', async () => {
      const ids: string[] = [];
      for (const page of [1, 2, 3]) {
        const r = await list(paged.id, paged.owner, { page, page_size: 2 });
        expect(r.body).toMatchObject({ total: 5, page, page_size: 2 });
        expect(r.body.data).toHaveLength(page === 3 ? 1 : 2);
        ids.push(...r.body.data.map((d: { id: string }) => d.id));
      }
      expect(ids).toEqual(expected);
    });

    it('a page past the end is 200 with data [] and the true total', async () => {
      const r = await list(paged.id, paged.owner, { page: 4, page_size: 2 });
      expect([r.status, r.body]).toEqual([200, { data: [], total: 5, page: 4, page_size: 2, next_cursor: null }]);
    });

    it.each([
      ['page', '0', 'Must be at least 1'],
      ['page', 'abc', 'Must be an integer'],
      ['page', '2.5', 'Must be an integer'],
      ['page_size', '0', 'Must be from 1 to 100'],
      ['page_size', '101', 'Must be from 1 to 100'],
      ['page_size', 'abc', 'Must be an integer'],
      ['page_size', '2.5', 'Must be an integer'],
    ])('%s %s is a 400 "Invalid query" on %s', async (param, value, message) => {
      const r = await list(paged.id, await createMember(t, paged.id), { [param]: value });
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { [param]: [message] } }]);
    });
  });

  describe('status filter', () => {
    let filtered: TestAccount;
    beforeAll(async () => {
      filtered = await createAccount(t);
      for (const status of ['open', 'open', 'won', 'lost', 'abandoned'] as const) await deal(filtered.id, { title: status, status });
    });

    it.each(['open', 'won', 'lost', 'abandoned'])('status=%s lists only deals in that state', async (status) => {
      const r = await list(filtered.id, await createMember(t, filtered.id), { status });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(status === 'open' ? 2 : 1);
      for (const item of r.body.data) expect(item.status).toBe(status);
    });

    it('an invalid status is a 400 "Invalid query" naming status', async () => {
      const r = await list(filtered.id, filtered.owner, { status: 'closed' });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('Invalid query');
      expect(Object.keys(r.body.details)).toEqual(['status']);
      for (const value of ['open', 'won', 'lost', 'abandoned']) expect(r.body.details.status[0]).toContain(value);
    });

    it('unknown query parameters are ignored', async () => {
      const r = await list(filtered.id, filtered.owner, { type: 'lead', order: 'asc', q: 'won' });
      expect([r.status, r.body.total]).toEqual([200, 5]);
    });
  });
});

describe('POST /api/v1/deals', () => {
  let acc: TestAccount;
  let other: TestAccount;
  let ownContact: { id: string };
  let ownStage: { id: string };
  let foreignContact: { id: string };
  let foreignStage: { id: string };
  beforeAll(async () => {
    [acc, other] = [await createAccount(t), await createAccount(t)];
    ownContact = await createContact(t, acc, { firstName: 'Grace', lastName: 'Hopper' });
    ownStage = await stage(acc.id, 'Proposal');
    foreignContact = await createContact(t, other);
    foreignStage = await stage(other.id, 'Theirs');
  });
  // A fresh member per request, so the 30/min budget never interferes.
  const post = async (body: unknown) => create(await createMember(t, acc.id), body);
  const valid = (extra: Record<string, unknown> = {}) => ({ account_id: acc.id, title: 'New deal', ...extra });

  it('answers 201 {data: {id, title, value, probability, status, external_id, custom_fields, created_at}} where status is open', async () => {
    const r = await post(valid({ value: 2500.75, probability: 80 }));
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['data']);
    expect(Object.keys(r.body.data).sort()).toEqual(CREATED_KEYS);
    expect(r.body.data).toMatchObject({ title: 'New deal', value: 2500.75, probability: 80, status: 'open' });
    expect(r.body.data.id).toMatch(UUID);
    expect(r.body.data.created_at).toMatch(ISO_Z);
  });

  it('value defaults to 0, probability to 50, and a new deal is open', async () => {
    const r = await post(valid());
    expect(r.body.data).toMatchObject({ value: 0, probability: 50, status: 'open' });
    const row = await t.db.deal.findUniqueOrThrow({ where: { id: r.body.data.id } });
    expect(row).toMatchObject({ accountId: acc.id, contactId: null, stageId: null, expectedCloseDate: null, closedAt: null });
  });

  it('links a contact and a stage of the same account; the list shows them', async () => {
    const r = await post(valid({ title: 'Linked', contact_id: ownContact.id, stage_id: ownStage.id, expected_close_date: '2024-02-29' }));
    expect(r.status).toBe(201);
    const listed = (await list(acc.id, acc.owner)).body.data.find((d: { id: string }) => d.id === r.body.data.id);
    expect(listed).toMatchObject({
      expected_close_date: '2024-02-29',
      contacts: { id: ownContact.id, first_name: 'Grace', last_name: 'Hopper' },
      pipeline_stages: { id: ownStage.id, name: 'Proposal' },
    });
  });

  it('value bounds: 0 and 9999999999.99 are accepted, with up to two decimals', async () => {
    expect((await post(valid({ value: 0 }))).body.data.value).toBe(0);
    expect((await post(valid({ value: 9999999999.99 }))).body.data.value).toBe(9999999999.99);
    expect((await post(valid({ value: 19.99 }))).body.data.value).toBe(19.99);
    expect((await post(valid({ value: 0.1 + 0.2 }))).body.data.value).toBe(0.3);
  });

  it('probability bounds: 0, 100 and fractions in between are accepted', async () => {
    expect((await post(valid({ probability: 0 }))).body.data.probability).toBe(0);
    expect((await post(valid({ probability: 100 }))).body.data.probability).toBe(100);
    expect((await post(valid({ probability: 33.5 }))).body.data.probability).toBe(33.5);
  });

  it('the title is trimmed; 200 characters are accepted', async () => {
    expect((await post(valid({ title: '  Spaced  ' }))).body.data.title).toBe('Spaced');
    expect((await post(valid({ title: 't'.repeat(200) }))).status).toBe(201);
  });

  describe('validation: 400 {"error":"Invalid payload","details":{...}}', () => {
    const refused: [string, () => Record<string, unknown>, Record<string, string[]>][] = [
      ['a missing title is exactly ["Required"]', () => ({ title: undefined }), { title: ['Required'] }],
      ['a blank title is ["Required"]', () => ({ title: '   ' }), { title: ['Required'] }],
      ['a missing account_id is ["Required"]', () => ({ account_id: undefined }), { account_id: ['Required'] }],
      ['an account_id that is not a UUID is a 400 on account_id', () => ({ account_id: 'abc' }), { account_id: ['Must be a UUID'] }],
      ['a title longer than 200 characters', () => ({ title: 't'.repeat(201) }), { title: ['Must be at most 200 characters'] }],
      ['a negative value', () => ({ value: -1 }), { value: ['Must be from 0 to 9999999999.99'] }],
      ['a value over 9999999999.99', () => ({ value: 10_000_000_000 }), { value: ['Must be from 0 to 9999999999.99'] }],
      ['a value with three decimals', () => ({ value: 1.234 }), { value: ['Must have at most two decimals'] }],
      ['a value that is not a number', () => ({ value: '100' }), { value: ['Expected a number'] }],
      ['a probability below 0', () => ({ probability: -0.5 }), { probability: ['Must be from 0 to 100'] }],
      ['a probability above 100', () => ({ probability: 101 }), { probability: ['Must be from 0 to 100'] }],
      ['a probability that is not a number', () => ({ probability: 'high' }), { probability: ['Expected a number'] }],
      ['expected_close_date that is not a real date (2025-02-30)', () => ({ expected_close_date: '2025-02-30' }),
        { expected_close_date: ['Must be a real date in the form YYYY-MM-DD'] }],
      ['expected_close_date 2025-13-01', () => ({ expected_close_date: '2025-13-01' }),
        { expected_close_date: ['Must be a real date in the form YYYY-MM-DD'] }],
      ['expected_close_date not in the form YYYY-MM-DD', () => ({ expected_close_date: '2025-1-5' }),
        { expected_close_date: ['Must be a real date in the form YYYY-MM-DD'] }],
      ['expected_close_date given as a timestamp', () => ({ expected_close_date: '2025-01-05T00:00:00Z' }),
        { expected_close_date: ['Must be a real date in the form YYYY-MM-DD'] }],
      ['contact_id that is not a UUID', () => ({ contact_id: 'c1' }), { contact_id: ['Must be a UUID'] }],
      ['contact_id from another account is ["Not found in this account"]', () => ({ contact_id: foreignContact.id }),
        { contact_id: NOT_IN_ACCOUNT }],
      ['stage_id from another account is ["Not found in this account"]', () => ({ stage_id: foreignStage.id }),
        { stage_id: NOT_IN_ACCOUNT }],
      ['contact_id and stage_id that exist nowhere are both named', () => ({ contact_id: randomUUID(), stage_id: randomUUID() }),
        { contact_id: NOT_IN_ACCOUNT, stage_id: NOT_IN_ACCOUNT }],
      ['status cannot be set: it is an unknown field', () => ({ status: 'won' }), { status: ['Unknown field'] }],
      ['unknown fields are each ["Unknown field"]', () => ({ id: randomUUID(), closed_at: null, account: {} }),
        { id: ['Unknown field'], closed_at: ['Unknown field'], account: ['Unknown field'] }],
    ];

    it.each(refused)('%s', async (_name, change, details) => {
      const before = await t.db.deal.count({ where: { accountId: acc.id } });
      const r = await post({ ...valid(), ...change() });
      expect(r.status).toBe(400);
      expect(r.body).toEqual({ error: 'Invalid payload', details });
      expect(await t.db.deal.count({ where: { accountId: acc.id } })).toBe(before);
    });

    it('every failing field is named at once', async () => {
      const r = await post(valid({ title: '', value: -5, probability: 150 }));
      expect(r.body).toEqual({
        error: 'Invalid payload',
        details: { title: ['Required'], value: ['Must be from 0 to 9999999999.99'], probability: ['Must be from 0 to 100'] },
      });
    });

    it.each([['an array', '[{"title":"x"}]'], ['a string', '"deal"'], ['null', 'null'], ['invalid JSON', '{title:']])(
      'a body that is %s is a 400 with details.body ["Expected a JSON object"]',
      async (_name, rawBody) => {
        const r = await t.rest('POST', '/api/v1/deals', { as: await createMember(t, acc.id), rawBody });
        expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { body: ['Expected a JSON object'] } }]);
      },
    );
  });
});

// docs/decisions.md §18: a deal's status moves on REST through setDealStatus.
describe('POST /api/v1/deals/{id}/status', () => {
  it('won sets closed_at; the answer is the deal as GET by id shows it, with its event', async () => {
    const acc = await createAccount(t);
    const open = await deal(acc.id);
    const r = await t.rest('POST', `/api/v1/deals/${open.id}/status`, { as: acc.member, body: { status: 'won' } });
    expect([r.status, r.body.data.status]).toEqual([200, 'won']);
    expect(r.body.data).toEqual((await t.rest('GET', `/api/v1/deals/${open.id}`, { as: acc.member })).body.data);
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: open.id } })).closedAt).not.toBeNull();
    expect(await t.db.event.count({ where: { accountId: acc.id, type: 'deal.status_changed', subjectId: open.id } })).toBe(1);
  });

  it('a move the machine refuses is a 409 naming status, and an Idempotency-Key replays the first answer', async () => {
    const acc = await createAccount(t);
    const open = await deal(acc.id);
    const headers = { 'idempotency-key': randomUUID() };
    const first = await t.rest('POST', `/api/v1/deals/${open.id}/status`, { as: acc.member, body: { status: 'lost' }, headers });
    const retry = await t.rest('POST', `/api/v1/deals/${open.id}/status`, { as: acc.member, body: { status: 'lost' }, headers });
    expect([retry.status, retry.body]).toEqual([first.status, first.body]);
    const refused = await t.rest('POST', `/api/v1/deals/${open.id}/status`, { as: acc.member, body: { status: 'won' } });
    expect([refused.status, refused.body]).toEqual([409, { error: 'Invalid transition', details: { status: ['Cannot move from lost to won'] } }]);
  });
});
