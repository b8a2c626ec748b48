import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, createUser, type TestAccount } from '../factories/index.js';
import { createTestApp, type GqlResult, type TestApp, type TestUser, errorOf } from '../helpers/app.js';

const CREATE = /* GraphQL */ `
  mutation CreateDeal($input: CreateDealInput!) {
    createDeal(input: $input) {
      id accountId title value probability status expectedCloseDate closedAt createdAt updatedAt
      contact { id firstName }
      stage { id name }
    }
  }
`;
const LIST = /* GraphQL */ `
  query Deals($accountId: ID!, $page: Int, $pageSize: Int, $status: DealStatus) {
    deals(accountId: $accountId, page: $page, pageSize: $pageSize, status: $status) {
      total page pageSize
      nodes { id title status contact { id } stage { id name } }
    }
  }
`;
const SET_STATUS = /* GraphQL */ `
  mutation SetDealStatus($id: ID!, $status: DealStatus!) {
    setDealStatus(id: $id, status: $status) { id status closedAt updatedAt }
  }
`;

let t: TestApp;
let acc: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  t = await createTestApp();
  [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
});
afterAll(() => t?.close());

const expectCode = (result: GqlResult, code: string) => {
  expect(errorOf(result).extensions?.code).toBe(code);
};
const expectDetails = (result: GqlResult, details: Record<string, string[]>) => {
  const error = errorOf(result);
  expect(error.extensions?.code).toBe('BAD_USER_INPUT');
  expect(error.extensions?.details).toEqual(details);
};

const createDeal = (input: Record<string, unknown>, as: TestUser | null, account: TestAccount = acc) =>
  t.gql(CREATE, { input: { accountId: account.id, ...input } }, { as });

const stage = (account: { id: string }, name = 'Qualified', position = 0) =>
  t.db.pipelineStage.create({ data: { accountId: account.id, name, position } });

const dealRow = (account: { id: string }, data: Record<string, unknown> = {}) =>
  t.db.deal.create({ data: { accountId: account.id, title: 'Seeded deal', ...data } });

describe('Mutation.createDeal', () => {
  test('a new deal is open, with value 0, probability 50 and nothing linked by default', async () => {
    const result = await createDeal({ title: '  Website redesign  ' }, acc.owner);
    expect(result.errors).toBeUndefined();
    const deal = result.data.createDeal;
    expect(deal).toMatchObject({
      accountId: acc.id,
      title: 'Website redesign',
      value: 0,
      probability: 50,
      status: 'open',
      expectedCloseDate: null,
      closedAt: null,
      contact: null,
      stage: null,
    });
    expect(deal.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  test('a team member creates a deal linked to a contact and a stage of the account', async () => {
    const [contact, qualified] = await Promise.all([createContact(t, acc), stage(acc)]);
    const result = await createDeal(
      { title: 'Retainer', value: 1234.56, probability: 72.5, expectedCloseDate: '2024-02-29', contactId: contact.id, stageId: qualified.id },
      acc.member,
    );
    expect(result.errors).toBeUndefined();
    expect(result.data.createDeal).toMatchObject({
      value: 1234.56,
      probability: 72.5,
      expectedCloseDate: '2024-02-29',
      contact: { id: contact.id, firstName: contact.firstName },
      stage: { id: qualified.id, name: 'Qualified' },
    });
    const row = await t.db.deal.findUniqueOrThrow({ where: { id: result.data.createDeal.id } });
    expect(row.value.toFixed(2)).toBe('1234.56');
    expect(row.expectedCloseDate?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });

  test('an outsider is FORBIDDEN and nothing is stored', async () => {
    const title = 'Outsider deal';
    expectCode(await createDeal({ title }, acc.outsider), 'FORBIDDEN');
    expect(errorOf(await createDeal({ title }, acc.outsider)).message).toBe('Forbidden: no access to this account');
    expect(await t.db.deal.count({ where: { title } })).toBe(0);
  });

  test('a user with no account is FORBIDDEN', async () => {
    expectCode(await createDeal({ title: 'x' }, await createUser(t)), 'FORBIDDEN');
  });

  test('an anonymous caller is UNAUTHENTICATED', async () => {
    expectCode(await createDeal({ title: 'x' }, null), 'UNAUTHENTICATED');
  });

  test('an account that does not exist gives the same FORBIDDEN as one the caller may not see', async () => {
    const result = await t.gql(CREATE, { input: { accountId: '00000000-0000-4000-8000-000000000000', title: 'x' } }, { as: acc.owner });
    expectCode(result, 'FORBIDDEN');
    expect(errorOf(result).message).toBe('Forbidden: no access to this account');
  });

  test('an accountId that is not a UUID is BAD_USER_INPUT on accountId', async () => {
    expectDetails(await t.gql(CREATE, { input: { accountId: 'nope', title: 'x' } }, { as: acc.owner }), { accountId: ['Must be a UUID'] });
  });

  test('a blank title is Required; a title over 200 characters is refused', async () => {
    expectDetails(await createDeal({ title: '   ' }, acc.owner), { title: ['Required'] });
    expectDetails(await createDeal({ title: 'x'.repeat(201) }, acc.owner), { title: ['Must be at most 200 characters'] });
    expect((await createDeal({ title: 'x'.repeat(200) }, acc.owner)).errors).toBeUndefined();
  });

  test('probability must be from 0 to 100', async () => {
    expectDetails(await createDeal({ title: 'x', probability: 101 }, acc.owner), { probability: ['Must be from 0 to 100'] });
    expectDetails(await createDeal({ title: 'x', probability: -0.5 }, acc.owner), { probability: ['Must be from 0 to 100'] });
    const edges = await Promise.all([0, 100].map((probability) => createDeal({ title: 'edge', probability }, acc.member)));
    expect(edges.map((r) => r.data.createDeal.probability)).toEqual([0, 100]);
  });

  test('value has at most two decimals and lies from 0 to 9999999999.99', async () => {
    expectDetails(await createDeal({ title: 'x', value: 10.005 }, acc.owner), { value: ['Must have at most two decimals'] });
    expectDetails(await createDeal({ title: 'x', value: 1e13 }, acc.owner), { value: ['Must be from 0 to 9999999999.99'] });
    expectDetails(await createDeal({ title: 'x', value: -1 }, acc.owner), { value: ['Must be from 0 to 9999999999.99'] });
    const max = await createDeal({ title: 'max', value: 9999999999.99 }, acc.member);
    expect(max.data.createDeal.value).toBe(9999999999.99);
  });

  test('expectedCloseDate must be a real calendar date (2025-02-30 is refused, nothing stored)', async () => {
    const result = await createDeal({ title: 'Bad date deal', expectedCloseDate: '2025-02-30' }, acc.owner);
    expect(result.data ?? null).toBeNull();
    // A variable that does not coerce: BAD_USER_INPUT, its message under its path (decisions §9 amended).
    expect(errorOf(result).extensions?.details).toEqual({ 'input.expectedCloseDate': [expect.stringContaining('Must be a real date in the form YYYY-MM-DD')] });
    expect(await t.db.deal.count({ where: { title: 'Bad date deal' } })).toBe(0);
  });

  test("another account's contact or stage is BAD_USER_INPUT naming each field", async () => {
    const [foreignContact, foreignStage] = await Promise.all([createContact(t, other), stage(other)]);
    expectDetails(await createDeal({ title: 'x', contactId: foreignContact.id }, acc.owner), { contactId: ['Not found in this account'] });
    expectDetails(await createDeal({ title: 'x', stageId: foreignStage.id }, acc.owner), { stageId: ['Not found in this account'] });
    expectDetails(await createDeal({ title: 'x', contactId: foreignContact.id, stageId: foreignStage.id }, acc.member), {
      contactId: ['Not found in this account'],
      stageId: ['Not found in this account'],
    });
  });

  test('an unknown contactId / stageId is refused the same way, and a non-UUID is a format error', async () => {
    const unknown = '00000000-0000-4000-8000-000000000001';
    expectDetails(await createDeal({ title: 'x', contactId: unknown, stageId: unknown }, acc.owner), {
      contactId: ['Not found in this account'],
      stageId: ['Not found in this account'],
    });
    expectDetails(await createDeal({ title: 'x', contactId: 'abc' }, acc.owner), { contactId: ['Must be a UUID'] });
  });

  test('one BAD_USER_INPUT names every failing field: a foreign contact beside an out-of-range value and probability', async () => {
    const foreignContact = await createContact(t, other);
    expectDetails(await createDeal({ title: 'x', contactId: foreignContact.id, probability: 101, value: -5 }, acc.member), {
      contactId: ['Not found in this account'],
      probability: ['Must be from 0 to 100'],
      value: ['Must be from 0 to 9999999999.99'],
    });
    // A caller outside the account hears only of the input's form: ids of other accounts stay unjudged.
    expectDetails(await createDeal({ title: 'x', contactId: foreignContact.id, probability: 101 }, acc.outsider), { probability: ['Must be from 0 to 100'] });
    expect(await t.db.deal.count({ where: { accountId: acc.id, title: 'x' } })).toBe(0);
  });

  test('checks run in order: 401, then 400, then 403, then the linked rows', async () => {
    const foreignContact = await createContact(t, other);
    // Anonymous with bad input: the token comes first.
    expectCode(await createDeal({ title: '', probability: 500 }, null), 'UNAUTHENTICATED');
    // An outsider with bad input learns about the input, not the account.
    expectDetails(await createDeal({ title: 'x', probability: 500 }, acc.outsider), { probability: ['Must be from 0 to 100'] });
    // An outsider naming a row of the account learns nothing about it: access comes before the link check.
    expectCode(await createDeal({ title: 'x', contactId: foreignContact.id }, other.member, acc), 'FORBIDDEN');
  });

  test('createDeal allows 30 calls a minute per user; the 31st is RATE_LIMITED even with bad input', async () => {
    const fresh = await createAccount(t);
    const calls = await Promise.all(Array.from({ length: 30 }, () => createDeal({ title: '' }, fresh.member, fresh)));
    for (const call of calls) expectCode(call, 'BAD_USER_INPUT');
    const limited = await createDeal({ title: '' }, fresh.member, fresh);
    expectCode(limited, 'RATE_LIMITED');
    expect(limited.headers.get('ratelimit-limit')).toBe('30');
    // Another user's budget is untouched.
    expect((await createDeal({ title: 'still fine' }, fresh.owner, fresh)).errors).toBeUndefined();
  });
});

describe('Query.deals', () => {
  let listed: TestAccount;
  let ids: string[];
  let linkedContactId: string;
  let linkedStageId: string;

  beforeAll(async () => {
    listed = await createAccount(t);
    const [contact, qualified] = await Promise.all([createContact(t, listed), stage(listed, 'Proposal')]);
    linkedContactId = contact.id;
    linkedStageId = qualified.id;
    const base = Date.UTC(2024, 0, 1);
    const statuses = ['open', 'won', 'open', 'lost', 'won'] as const;
    ids = [];
    for (const [i, status] of statuses.entries()) {
      const row = await dealRow(listed, {
        title: `Deal ${i}`,
        status,
        createdAt: new Date(base + i * 60_000),
        ...(i === 4 ? { contactId: contact.id, stageId: qualified.id } : {}),
      });
      ids.push(row.id);
    }
    await dealRow(other, { title: 'Not yours' });
  });

  const list = (vars: Record<string, unknown>, as: TestUser | null = listed.owner) => t.gql(LIST, { accountId: listed.id, ...vars }, { as });

  test('lists newest first with the true total, page 1 of size 25 by default', async () => {
    const result = await list({});
    expect(result.errors).toBeUndefined();
    expect(result.data.deals).toMatchObject({ total: 5, page: 1, pageSize: 25 });
    expect(result.data.deals.nodes.map((d: { id: string }) => d.id)).toEqual([...ids].reverse());
  });

  test('pages are stable and a page past the end is empty with the true total', async () => {
    const pages = await Promise.all([1, 2, 3, 4].map((page) => list({ page, pageSize: 2 })));
    expect(pages.flatMap((p) => p.data.deals.nodes.map((d: { id: string }) => d.id))).toEqual([...ids].reverse());
    expect(pages[3]!.data.deals).toMatchObject({ nodes: [], total: 5, page: 4, pageSize: 2 });
  });

  test('status filters the list and the total', async () => {
    const won = await list({ status: 'won' });
    expect(won.data.deals.total).toBe(2);
    expect(won.data.deals.nodes.map((d: { id: string }) => d.id)).toEqual([ids[4], ids[1]]);
    expect((await list({ status: 'abandoned' })).data.deals).toMatchObject({ total: 0, nodes: [] });
  });

  test('an unknown status value is refused', async () => {
    expect((await list({ status: 'closed' })).errors?.length).toBeGreaterThan(0);
  });

  test('each deal carries its contact and stage, or null', async () => {
    const nodes = (await list({ pageSize: 2 })).data.deals.nodes;
    expect(nodes[0]).toMatchObject({ contact: { id: linkedContactId }, stage: { id: linkedStageId, name: 'Proposal' } });
    expect(nodes[1]).toMatchObject({ contact: null, stage: null });
  });

  test('page and pageSize are bounded', async () => {
    expectDetails(await list({ page: 0 }), { page: ['Must be at least 1'] });
    expectDetails(await list({ pageSize: 101 }), { pageSize: ['Must be from 1 to 100'] });
    expectDetails(await list({ pageSize: 0 }), { pageSize: ['Must be from 1 to 100'] });
    expect((await list({ pageSize: 100 })).data.deals.pageSize).toBe(100);
  });

  test('a member lists deals; an outsider is FORBIDDEN; an anonymous caller is UNAUTHENTICATED', async () => {
    expect((await list({}, listed.member)).data.deals.total).toBe(5);
    expectCode(await list({}, listed.outsider), 'FORBIDDEN');
    expectCode(await list({}, null), 'UNAUTHENTICATED');
  });

  test('deals allows 60 calls a minute per user', async () => {
    const fresh = await createAccount(t);
    const calls = await Promise.all(Array.from({ length: 60 }, () => t.gql(LIST, { accountId: fresh.id }, { as: fresh.member })));
    for (const call of calls) expect(call.errors).toBeUndefined();
    expectCode(await t.gql(LIST, { accountId: fresh.id }, { as: fresh.member }), 'RATE_LIMITED');
  });
});

describe('Mutation.setDealStatus', () => {
  const setStatus = (id: string, status: string, as: TestUser | null = acc.owner) => t.gql(SET_STATUS, { id, status }, { as });

  test.each(['won', 'lost', 'abandoned'])('an open deal can be %s, which sets closedAt; reopening clears it', async (status) => {
    const deal = await dealRow(acc);
    const closed = await setStatus(deal.id, status);
    expect(closed.errors).toBeUndefined();
    expect(closed.data.setDealStatus.status).toBe(status);
    const closedAt = new Date(closed.data.setDealStatus.closedAt).getTime();
    expect(Math.abs(closedAt - Date.now())).toBeLessThan(60_000);
    expect(new Date(closed.data.setDealStatus.updatedAt).getTime()).toBeGreaterThan(deal.updatedAt.getTime());

    const reopened = await setStatus(deal.id, 'open', acc.member);
    expect(reopened.errors).toBeUndefined();
    expect(reopened.data.setDealStatus).toMatchObject({ status: 'open', closedAt: null });
    expect(await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).toMatchObject({ status: 'open', closedAt: null });
  });

  test.each([
    ['won', 'lost'],
    ['lost', 'abandoned'],
    ['abandoned', 'won'],
    ['open', 'open'],
    ['won', 'won'],
  ] as const)('moving a deal from %s to %s is INVALID_TRANSITION and changes nothing', async (from, to) => {
    const closedAt = from === 'open' ? null : new Date('2024-05-01T10:00:00Z');
    const deal = await dealRow(acc, { status: from, closedAt });
    const result = await setStatus(deal.id, to);
    expectCode(result, 'INVALID_TRANSITION');
    expect(errorOf(result).message).toBe(`Cannot move a deal from ${from} to ${to}`);
    expect(errorOf(result).extensions).toMatchObject({ from, to });
    expect(await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).toMatchObject({ status: from, closedAt });
  });

  test('an outsider is NOT_FOUND, as updateDeal answers, and a deal that does not exist looks the same', async () => {
    const deal = await dealRow(acc);
    const outsider = await setStatus(deal.id, 'won', acc.outsider);
    const missing = await setStatus('00000000-0000-4000-8000-000000000002', 'won');
    expectCode(outsider, 'NOT_FOUND');
    expectCode(missing, 'NOT_FOUND');
    expect(errorOf(outsider).message).toBe(errorOf(missing).message);
    expect((await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } })).status).toBe('open');
  });

  test("the owner of another account cannot move this account's deal", async () => {
    const deal = await dealRow(acc);
    expectCode(await setStatus(deal.id, 'won', other.owner), 'NOT_FOUND');
  });

  test('an Idempotency-Key replays the first answer: the retry moves nothing and records no second event', async () => {
    const deal = await dealRow(acc);
    const headers = { 'idempotency-key': randomUUID() };
    const first = await t.gql(SET_STATUS, { id: deal.id, status: 'won' }, { as: acc.member, headers });
    expect(first.errors).toBeUndefined();
    const again = await t.gql(SET_STATUS, { id: deal.id, status: 'won' }, { as: acc.member, headers });
    expect(again.errors).toBeUndefined(); // without the key, won -> won is INVALID_TRANSITION
    expect(again.data).toEqual(first.data);
    const events = await t.db.event.count({ where: { accountId: acc.id, type: 'deal.status_changed', subjectId: deal.id } });
    expect(events).toBe(1);
  });

  test('an anonymous caller is UNAUTHENTICATED', async () => {
    const deal = await dealRow(acc);
    expectCode(await setStatus(deal.id, 'won', null), 'UNAUTHENTICATED');
  });

  test('an id that is not a UUID is BAD_USER_INPUT on id', async () => {
    expectDetails(await setStatus('42', 'won'), { id: ['Must be a UUID'] });
  });

  test('two concurrent moves from the same state cannot both apply', async () => {
    const deal = await dealRow(acc);
    const results = await Promise.all([setStatus(deal.id, 'won'), setStatus(deal.id, 'lost', acc.member)]);
    const winners = results.filter((r) => !r.errors);
    const losers = results.filter((r) => r.errors);
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(1);
    expectCode(losers[0]!, 'INVALID_TRANSITION');
    const final = await t.db.deal.findUniqueOrThrow({ where: { id: deal.id } });
    expect(final.status).toBe(winners[0]!.data.setDealStatus.status);
  });

  test('of many concurrent identical moves exactly one applies', async () => {
    const deal = await dealRow(acc);
    const results = await Promise.all(Array.from({ length: 8 }, () => setStatus(deal.id, 'won')));
    expect(results.filter((r) => !r.errors)).toHaveLength(1);
    for (const r of results.filter((r) => r.errors)) expect(errorOf(r).message).toBe('Cannot move a deal from won to won');
  });
});
