/**
 * docs/decisions.md §11 cost limits (docs/graphql.md#cost-and-budget): a document's cost is known
 * before it runs, a request over the ceiling is refused before any SQL, each user spends a budget of
 * 20,000 points a minute, and every answer carries extensions.cost.
 */
import { buildSchema, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHQL_LIMITS } from '../../src/graphql/armor.js';
import { COST_BUDGET } from '../../src/graphql/cost.plugin.js';
import { documentCost } from '../../src/graphql/cost.js';
import { MemoryStore } from '../../src/ratelimit/memory-store.js';
import { schema } from '../../src/schema.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// A schema shaped like §11's connections, so the rule is proven on names and arguments alone.
const CONNECTIONS = buildSchema(/* GraphQL */ `
  type Query { account(id: ID!): Account  contact(id: ID!): Contact }
  type Account { id: ID!  contacts(first: Int, after: String, last: Int, before: String): ContactConnection!  owner: User! }
  type User { id: ID! }
  type PageInfo { hasNextPage: Boolean!  endCursor: String }
  type ContactConnection { edges: [ContactEdge!]!  nodes: [Contact!]!  pageInfo: PageInfo!  totalCount: Int! }
  type ContactEdge { cursor: String!  node: Contact! }
  type Contact { id: ID!  deals(first: Int, last: Int): DealConnection!  invoices(first: Int = 10): InvoiceConnection! }
  type DealConnection { nodes: [Deal!]!  totalCount: Int! }
  type InvoiceConnection { nodes: [Invoice!]! }
  type Deal { id: ID!  contact: Contact }
  type Invoice { id: ID! }
`);
const costOf = (query: string, variables: Record<string, unknown> = {}, on = CONNECTIONS) => documentCost(on, parse(query), undefined, variables);

describe('a document costs 1 per object it can return; connections multiply by first/last', () => {
  it('scalars are free, each object costs 1', () => {
    expect(costOf('{ account(id: "a") { id owner { id } } }')).toEqual({ total: 2, charged: 2 });
  });

  it('a connection costs 1, and each list in it (nodes, edges) its first times its selection', () => {
    expect(costOf('{ account(id: "a") { contacts(first: 50) { totalCount nodes { id } } } }')!.total).toBe(1 + 1 + 50);
    expect(costOf('{ account(id: "a") { contacts(first: 50) { edges { cursor node { id } } pageInfo { hasNextPage } } } }')!.total).toBe(1 + 1 + 50 + 50 + 1);
  });

  it('last counts like first; with neither, the default page of 25 (or the argument default) is charged', () => {
    expect(costOf('{ account(id: "a") { contacts(last: 10) { nodes { id } } } }')!.total).toBe(12);
    expect(costOf('{ account(id: "a") { contacts { nodes { id } } } }')!.total).toBe(27);
    expect(costOf('{ contact(id: "c") { invoices { nodes { id } } } }')!.total).toBe(1 + 1 + 10);
  });

  it('nested connections multiply: 100 contacts with their first 10 deals and each deal\'s contact', () => {
    const cost = costOf('{ account(id: "a") { contacts(first: 100) { nodes { id deals(first: 10) { nodes { id contact { id } } } } } } }');
    expect(cost!.total).toBe(1 + 1 + 100 + 100 * (1 + 10 + 10));
  });

  it('variables, fragments and inline fragments are counted where they land', () => {
    const query = `query ($n: Int) { account(id: "a") { ...A } }
      fragment A on Account { contacts(first: $n) { nodes { ... on Contact { deals(first: 2) { nodes { id } } } } } }`;
    expect(costOf(query, { n: 4 })!.total).toBe(1 + 1 + 4 + 4 * (1 + 2));
  });

  it('§9 fields keep their REST limits: their pages count toward the ceiling, not the budget', () => {
    const cost = costOf('query ($a: ID!) { me { id } contacts(accountId: $a, pageSize: 40) { total nodes { id } } }', { a: 'x' }, schema);
    expect(cost).toEqual({ total: 1 + 1 + 40, charged: 1 });
  });
});

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

// 20 pages of 100 deals, each with its contact and stage: 20 × 301 = 6,020 points, over the ceiling.
const OVER = `query ($a: ID!) { ${Array.from({ length: 20 }, (_, i) => `d${i}: deals(accountId: $a, pageSize: 100) { nodes { contact { id } stage { id } } }`).join(' ')} }`;

/** Counts every use of the Prisma client while `work` runs (each request's context takes deps.db.prisma). */
async function databaseCalls(work: () => Promise<unknown>): Promise<number> {
  const real = t.deps.db.prisma;
  let calls = 0;
  t.deps.db.prisma = new Proxy(real, {
    get(target, prop, receiver) {
      if (typeof prop === 'string') calls++;
      return Reflect.get(target, prop, receiver);
    },
  });
  try {
    await work();
  } finally {
    t.deps.db.prisma = real;
  }
  return calls;
}

describe('the ceiling and the budget on /graphql', () => {
  it(`a request costing more than ${GRAPHQL_LIMITS.maxCost} is QUERY_TOO_COMPLEX with its cost, before any SQL runs`, async () => {
    await t.gql('{ me { id } }', {}, { as: acc.owner }); // the caller is known: signing in needs no SQL now
    let answer: Awaited<ReturnType<TestApp['gql']>> | undefined;
    const calls = await databaseCalls(async () => (answer = await t.gql(OVER, { a: acc.id }, { as: acc.owner })));
    expect(answer!.errors).toEqual([
      expect.objectContaining({ message: 'Query too complex: it costs 6020, more than 5000', extensions: { code: 'QUERY_TOO_COMPLEX', cost: 6020, maxCost: 5000 } }),
    ]);
    expect(answer!.data ?? null).toBeNull();
    expect(calls).toBe(0);
    // The same counter sees the SQL of a request under the ceiling.
    expect(await databaseCalls(() => t.gql('query ($a: ID!) { deals(accountId: $a) { total } }', { a: acc.id }, { as: acc.owner }))).toBeGreaterThan(0);
  });

  it('every answer carries extensions.cost {requested, remaining, limit, resetSeconds}', async () => {
    const user = (await createAccount(t)).owner;
    const first = await t.gql('{ me { id accounts { id owner { id } } } }', {}, { as: user });
    expect(first.extensions?.cost).toEqual({ requested: 3, remaining: COST_BUDGET.points - 3, limit: COST_BUDGET.points, resetSeconds: 1 });
    const refused = await t.gql('query ($a: ID!) { contacts(accountId: $a) { total } }', { a: acc.id }, { as: user });
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(refused.extensions?.cost).toMatchObject({ requested: 0, limit: COST_BUDGET.points });
    expect(refused.extensions!.cost.remaining).toBeGreaterThanOrEqual(COST_BUDGET.points - 3);
    const tooComplex = await t.gql(OVER, { a: acc.id }, { as: user });
    expect(tooComplex.extensions?.cost).toMatchObject({ requested: 0, limit: COST_BUDGET.points });
    const anonymous = await t.gql('{ me { id } }', {}, { as: null });
    expect(anonymous.extensions?.cost).toMatchObject({ requested: 1, limit: COST_BUDGET.points });
  });

});

describe('the budget, on a stopped clock (points leak back at 20,000 a minute: a third of a point each ms)', () => {
  let clock = Date.now();
  let frozen: TestApp;
  beforeAll(async () => void (frozen = await createTestApp({ store: new MemoryStore({ now: () => clock }) })));
  afterAll(() => frozen?.close());

  it('a request that does not fit the budget is RATE_LIMITED with retryAfter, and runs nothing; it fits once points leak back', async () => {
    const user = (await createAccount(frozen)).owner;
    await frozen.deps.limiter.spend(COST_BUDGET, `user:${user.id}`, COST_BUDGET.points - 2);
    const fits = await frozen.gql('{ me { id accounts { id } } }', {}, { as: user });
    expect(fits.errors).toBeUndefined();
    expect(fits.extensions?.cost).toEqual({ requested: 2, remaining: 0, limit: COST_BUDGET.points, resetSeconds: 60 });
    const refused = await frozen.gql('{ me { id accounts { id } } }', {}, { as: user });
    expect(refused.errors).toEqual([expect.objectContaining({ extensions: { code: 'RATE_LIMITED', retryAfter: 1 } })]);
    expect(refused.data ?? null).toBeNull();
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.extensions?.cost).toMatchObject({ requested: 2, remaining: 0, limit: COST_BUDGET.points });
    clock += 6; // two points leak back
    expect((await frozen.gql('{ me { id accounts { id } } }', {}, { as: user })).errors).toBeUndefined();
  });

  it('§9 fields are not charged to the budget: with it spent, they still answer under their own limits', async () => {
    const fresh = await createAccount(frozen);
    await frozen.deps.limiter.spend(COST_BUDGET, `user:${fresh.owner.id}`, COST_BUDGET.points);
    const r = await frozen.gql('query ($a: ID!) { contacts(accountId: $a) { total } }', { a: fresh.id }, { as: fresh.owner });
    expect(r.errors).toBeUndefined();
    expect(r.extensions?.cost).toMatchObject({ requested: 0, remaining: 0 });
    expect(r.headers.get('ratelimit-limit')).toBe('60');
  });

  it('REST is not charged: its operations run under their endpoints\' limits', async () => {
    const fresh = await createAccount(frozen);
    await frozen.deps.limiter.spend(COST_BUDGET, `user:${fresh.owner.id}`, COST_BUDGET.points);
    const r = await frozen.rest('GET', `/api/v1/contacts?account_id=${fresh.id}`, { as: fresh.owner });
    expect(r.status).toBe(200);
  });
});
