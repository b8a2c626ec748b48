/**
 * One limit, whichever door (docs/decisions.md §7, §9): the GraphQL field behind each REST endpoint
 * draws on the same bucket, aliases count one call each, and concurrent bursts never let more than
 * the limit through. Runs over Redis when REDIS_URL is set (createTestApp uses it; CI must set it),
 * else in memory.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, createUser, unique, type TestAccount } from '../factories/index.js';
import { MemoryStore } from '../../src/ratelimit/memory-store.js';
import { createTestApp, type GqlResult, type RestResult, type TestApp, type TestUser } from '../helpers/app.js';
import { requireRedis } from '../helpers/prerequisites.js';

// Hundreds of sequential requests on a shared 2-core machine: generous, never part of correctness.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

let t: TestApp;
let acc: TestAccount;
let formId: string;
let ipSeq = 0;
const newIp = () => `198.51.100.${++ipSeq % 250}`;

beforeAll(async () => {
  await requireRedis(); // in CI these limits are proven on Redis, never on a silent in-memory fallback
  t = await createTestApp();
  acc = await createAccount(t);
  const fields = [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }];
  const r = await t.gql(
    'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }',
    { input: { accountId: acc.id, name: unique('Form'), fields } },
    { as: acc.owner },
  );
  expect(r.errors).toBeUndefined();
  formId = r.data.createLeadForm.id;
});
afterAll(() => t?.close());

/** A fresh account for one test: its owner's buckets are untouched. */
type Caller = { as: TestUser; ip: string; accountId: string };
async function freshCaller(): Promise<Caller> {
  const a = await createAccount(t);
  return { as: a.owner, ip: newIp(), accountId: a.id };
}

type Door = (c: Caller) => Promise<RestResult | GqlResult>;
type Row = { endpoint: string; max: number; rest: Door; gql: Door };

const email = () => `${unique('lead')}@example.com`;
const get = (path: string) => (c: Caller) => t.rest('GET', `${path}?account_id=${c.accountId}`, { as: c.as, clientIp: c.ip });
const gql = (query: string, vars: (c: Caller) => Record<string, unknown> = (c) => ({ a: c.accountId })) => (c: Caller) =>
  t.gql(query, vars(c), { as: c.as, clientIp: c.ip });

const ROWS: Row[] = [
  { endpoint: 'GET /api/v1/contacts', max: 60, rest: get('/api/v1/contacts'), gql: gql('query ($a: ID!) { contacts(accountId: $a) { total } }') },
  {
    endpoint: 'POST /api/v1/contacts', max: 30,
    rest: (c) => t.rest('POST', '/api/v1/contacts', { as: c.as, clientIp: c.ip, body: { account_id: c.accountId, first_name: 'Ada' } }),
    gql: gql('mutation ($a: ID!) { createContact(input: { accountId: $a, firstName: "Ada" }) { id } }'),
  },
  { endpoint: 'GET /api/v1/contacts/export', max: 5, rest: get('/api/v1/contacts/export'), gql: gql('mutation ($a: ID!) { exportContacts(accountId: $a) { fileName } }') },
  { endpoint: 'GET /api/v1/deals', max: 60, rest: get('/api/v1/deals'), gql: gql('query ($a: ID!) { deals(accountId: $a) { total } }') },
  {
    endpoint: 'POST /api/v1/deals', max: 30,
    rest: (c) => t.rest('POST', '/api/v1/deals', { as: c.as, clientIp: c.ip, body: { account_id: c.accountId, title: 'Deal' } }),
    gql: gql('mutation ($a: ID!) { createDeal(input: { accountId: $a, title: "Deal" }) { id } }'),
  },
  { endpoint: 'GET /api/v1/invoices', max: 60, rest: get('/api/v1/invoices'), gql: gql('query ($a: ID!) { invoices(accountId: $a) { total } }') },
  {
    endpoint: 'POST /api/v1/forms/{form_id}/submit', max: 5,
    rest: (c) => t.rest('POST', `/api/v1/forms/${formId}/submit`, { clientIp: c.ip, body: { data: { email: email() } } }),
    gql: gql('mutation ($f: ID!, $d: JSON!) { submitLeadForm(formId: $f, data: $d) { success } }', () => ({ f: formId, d: { email: email() } })),
  },
  { endpoint: 'GET /api/v1/account/export', max: 1, rest: get('/api/v1/account/export'), gql: gql('mutation ($a: ID!) { exportAccount(accountId: $a) { fileName } }') },
];

const isGql = (r: RestResult | GqlResult): r is GqlResult => !('text' in r);

function expectAccepted(r: RestResult | GqlResult, max: number, remaining: number) {
  if (isGql(r)) expect(r.errors).toBeUndefined();
  else expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  expect(r.headers.get('ratelimit-limit')).toBe(String(max));
  expect(r.headers.get('ratelimit-remaining')).toBe(String(remaining));
}

/**
 * GraphQL's refusal: each refused call is null with RATE_LIMITED in extensions.code and the contract's
 * message (the other root fields answer: decisions §9 amended), and the same headers as REST.
 */
function expectRateLimited(r: GqlResult, max: number, refused = 1) {
  expect(r.status).toBe(200);
  expect(r.errors).toHaveLength(refused);
  for (const error of r.errors!) {
    expect(error).toMatchObject({ message: 'Rate limit exceeded', extensions: { code: 'RATE_LIMITED' } });
    expect(r.data[error.path![0]!]).toBeNull();
  }
  expect(r.headers.get('ratelimit-limit')).toBe(String(max));
  expect(r.headers.get('ratelimit-remaining')).toBe('0');
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

function expect429(r: RestResult, max: number) {
  expect({ status: r.status, body: r.body }).toEqual({ status: 429, body: { error: 'Rate limit exceeded' } });
  expect(r.headers.get('ratelimit-limit')).toBe(String(max));
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe('one limit, whichever door', () => {
  it('30 createContact via REST, then the 31st via GraphQL is RATE_LIMITED', async () => {
    const c = await freshCaller();
    const row = ROWS[1]!;
    for (let i = 1; i <= 30; i++) expectAccepted(await row.rest(c), 30, 30 - i);
    expectRateLimited((await row.gql(c)) as GqlResult, 30);
    expect(await t.db.contact.count({ where: { accountId: c.accountId } })).toBe(30);
  });

  it.each(ROWS.map((r) => [r.endpoint, r] as const))(
    '%s: calls through REST and GraphQL share one bucket, and then both doors refuse',
    async (_, row) => {
      const c = await freshCaller();
      for (let i = 1; i <= row.max; i++) expectAccepted(await (i % 2 ? row.gql : row.rest)(c), row.max, row.max - i);
      expect429((await row.rest(c)) as RestResult, row.max);
      expectRateLimited((await row.gql(c)) as GqlResult, row.max);
    },
  );
});

describe('aliases count one call each', () => {
  const aliases = (n: number, field: string, from = 0) =>
    Array.from({ length: n }, (_, i) => `c${from + i}: ${field}`).join('\n');
  const createContacts = (c: Caller, n: number, from = 0) =>
    t.gql(`mutation ($a: ID!) { ${aliases(n, 'createContact(input: { accountId: $a, firstName: "Ada" }) { id }', from)} }`, { a: c.accountId }, { as: c.as });

  it('40 aliased createContact calls (two documents of 20) create exactly 30 contacts', async () => {
    const c = await freshCaller();
    const first = await createContacts(c, 20);
    expectAccepted(first, 30, 10);
    const second = await createContacts(c, 20, 20);
    // Mutation fields run one after another: the 31st call and each after it are refused, null each.
    expectRateLimited(second, 30, 10);
    expect(second.errors!.map((e) => e.path![0])).toEqual(Array.from({ length: 10 }, (_, i) => `c${30 + i}`));
    expect(Object.values(second.data).filter((v) => v !== null)).toHaveLength(10);
    expect(await t.db.contact.count({ where: { accountId: c.accountId } })).toBe(30);
    expect429((await ROWS[1]!.rest(c)) as RestResult, 30);
  });

  it('one document with 40 aliases is refused whole by the alias cap (graphql-armor: 30) and charges nothing', async () => {
    const c = await freshCaller();
    const r = await createContacts(c, 40);
    expect(r.data ?? null).toBeNull();
    expect(r.errors?.[0]?.message).toMatch(/Aliases limit of 30 exceeded/);
    expect(await t.db.contact.count({ where: { accountId: c.accountId } })).toBe(0);
    expectAccepted(await ROWS[1]!.rest(c), 30, 29);
  });

  it('40 list calls, then one query with 30 aliases of contacts: 20 pass and the bucket is full', async () => {
    const c = await freshCaller();
    for (let i = 0; i < 40; i++) expect((await ROWS[0]!.rest(c)).status).toBe(200);
    const r = await t.gql(`query ($a: ID!) { ${aliases(30, 'contacts(accountId: $a) { total }')} }`, { a: c.accountId }, { as: c.as });
    // Query fields run in parallel: 20 are recorded and answer, the 10 refused are null with their error.
    expectRateLimited(r, 60, 10);
    expect(Object.values(r.data).filter((v) => v !== null)).toHaveLength(20);
    // Refused calls are never recorded, so a full bucket means exactly 20 of the 30 aliases counted.
    expect429((await ROWS[0]!.rest(c)) as RestResult, 60);
  });
});

describe('a refused call always shows in the headers', () => {
  // In-process store: both charges settle in document order before the answer is sent, every time.
  let own: TestApp;
  beforeAll(async () => void (own = await createTestApp({ store: new MemoryStore() })));
  afterAll(() => own?.close());

  it('one document, contacts refused then deals allowed with 0 left: RATE_LIMITED comes with Retry-After', async () => {
    const acc2 = await createAccount(own);
    const as = { as: acc2.owner, clientIp: newIp() };
    const list = (path: string) => own.rest('GET', `${path}?account_id=${acc2.id}`, as);
    for (let i = 0; i < 60; i++) expect((await list('/api/v1/contacts')).status).toBe(200);
    for (let i = 0; i < 59; i++) expect((await list('/api/v1/deals')).status).toBe(200);
    const r = await own.gql('query ($a: ID!) { contacts(accountId: $a) { total } deals(accountId: $a) { total } }', { a: acc2.id }, as);
    expectRateLimited(r, 60);
    expect(r.errors![0]!.path).toEqual(['contacts']);
    expect(r.data.deals).toEqual({ total: 0 });
    // The deals call was allowed and took the last place in its bucket.
    expect429(await list('/api/v1/deals'), 60);
  });
});

describe('concurrent bursts never let more than the limit through', () => {
  const burst = <T>(n: number, call: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => call(i)));

  it('100 concurrent POST /api/v1/contacts for one user: exactly 30 are 201, 70 are 429', async () => {
    const c = await freshCaller();
    const results = (await burst(100, () => ROWS[1]!.rest(c))) as RestResult[];
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(70);
    expect(await t.db.contact.count({ where: { accountId: c.accountId } })).toBe(30);
    // Each accepted call saw its own place in the window: remaining 29..0, once each.
    const remaining = results.filter((r) => r.status === 201).map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  it('100 concurrent calls split between REST and GraphQL: exactly 30 contacts are created', async () => {
    const c = await freshCaller();
    const results = await burst(100, (i) => (i % 2 ? ROWS[1]!.gql(c) : ROWS[1]!.rest(c)));
    const accepted = results.filter((r) => (isGql(r) ? !r.errors : r.status === 201));
    expect(accepted).toHaveLength(30);
    const refused = results.filter((r) => (isGql(r) ? r.errors?.[0]?.extensions?.code === 'RATE_LIMITED' : r.status === 429));
    expect(refused).toHaveLength(70);
    expect(await t.db.contact.count({ where: { accountId: c.accountId } })).toBe(30);
  });

  it('20 concurrent form submissions from one address: exactly 5 pass; another address still can', async () => {
    const c = await freshCaller();
    const results = (await burst(20, () => ROWS[6]!.rest(c))) as RestResult[];
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(15);
    expect((await ROWS[6]!.rest({ ...c, ip: newIp() })).status).toBe(200);
  });

  it('10 concurrent account exports by the owner: exactly one passes', async () => {
    const c = await freshCaller();
    const results = (await burst(10, () => ROWS[7]!.rest(c))) as RestResult[];
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 429)).toHaveLength(9);
    expect(await t.db.exportLog.count({ where: { accountId: c.accountId } })).toBe(1);
  });

  it("a burst by one user does not touch another user's budget", async () => {
    const c = await freshCaller();
    const other = await createUser(t);
    await t.db.teamMember.create({ data: { accountId: c.accountId, userId: other.id } });
    await burst(40, () => ROWS[1]!.rest(c));
    expectAccepted(await ROWS[1]!.rest({ ...c, as: other }), 30, 29);
  });
});
