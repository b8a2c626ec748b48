/**
 * docs/decisions.md §11 cost limits (docs/graphql.md#cost-and-budget): a document's cost is known
 * before it runs, a request over the ceiling is refused before any SQL, each user spends a budget of
 * 20,000 points a minute, and every answer carries extensions.cost.
 */
import { buildSchema, isObjectType, parse } from 'graphql/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHQL_LIMITS } from '../../src/graphql/armor.js';
import { COST_BUDGET } from '../../src/plugins/use-cost.js';
import { DEFAULT_PAGE, documentCost, unboundedLists } from '../../src/graphql/cost.js';
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
    expect(costOf('{ account(id: "a") { id owner { id } } }')).toBe(2);
  });

  it('a connection costs 1, and each list in it (nodes, edges) its first times its selection', () => {
    expect(costOf('{ account(id: "a") { contacts(first: 50) { totalCount nodes { id } } } }')).toBe(1 + 1 + 50);
    expect(costOf('{ account(id: "a") { contacts(first: 50) { edges { cursor node { id } } pageInfo { hasNextPage } } } }')).toBe(1 + 1 + 50 + 50 + 1);
  });

  it('last counts like first; with neither, the default page of 25 (or the argument default) is charged', () => {
    expect(costOf('{ account(id: "a") { contacts(last: 10) { nodes { id } } } }')).toBe(12);
    expect(costOf('{ account(id: "a") { contacts { nodes { id } } } }')).toBe(27);
    expect(costOf('{ contact(id: "c") { invoices { nodes { id } } } }')).toBe(1 + 1 + 10);
  });

  it('nested connections multiply: 100 contacts with their first 10 deals and each deal\'s contact', () => {
    const cost = costOf('{ account(id: "a") { contacts(first: 100) { nodes { id deals(first: 10) { nodes { id contact { id } } } } } } }');
    expect(cost).toBe(1 + 1 + 100 + 100 * (1 + 10 + 10));
  });

  it('variables, fragments and inline fragments are counted where they land', () => {
    const query = `query ($n: Int) { account(id: "a") { ...A } }
      fragment A on Account { contacts(first: $n) { nodes { ... on Contact { deals(first: 2) { nodes { id } } } } } }`;
    expect(costOf(query, { n: 4 })).toBe(1 + 1 + 4 + 4 * (1 + 2));
  });

  it('§9 pages cost what they return like any field: their REST limit counts calls, not objects', () => {
    const cost = costOf('query ($a: ID!) { me { id } contacts(accountId: $a, pageSize: 40) { total nodes { id } } }', { a: 'x' }, schema);
    expect(cost).toBe(1 + 1 + 40);
  });
});

// The integrator's report: 10 contacts named Zed, 100 deals each; 45 of each one's deals again under every deal.
const ZED_SEARCH = `query ($a: ID!) { search(accountId: $a, query: "zed", first: 50) { record { ... on Contact {
  deals(first: 100) { nodes { contact { deals(first: 45) { nodes { id } } } } } } } } }`;
/** Under one Contact of ZED_SEARCH: the connection, its 100 deals, each deal's contact, its connection and 45 deals. */
const UNDER_A_ZED = 1 + 100 + 100 * (1 + 1 + 45);

describe('a plain list returns as many as it can hold, and what is under it multiplies by that', () => {
  it("a plain list multiplies what is under it by how many it can return: search(first: 50) under the ceiling's arithmetic", () => {
    // 50 hits, 50 records, and under each record what a contacts page of 50 has under each node.
    expect(costOf(ZED_SEARCH, { a: 'x' }, schema)).toBe(50 + 50 + 50 * UNDER_A_ZED);
    const asPage = ZED_SEARCH.replace('search(accountId: $a, query: "zed", first: 50) { record {', 'contacts(accountId: $a, pageSize: 50) { nodes {');
    expect(costOf(asPage, { a: 'x' }, schema)).toBe(1 + 50 + 50 * UNDER_A_ZED);
    // The documented example (docs/graphql.md#cost-and-budget), and search's default first: 10.
    expect(costOf('query ($a: ID!) { search(accountId: $a, query: "z", first: 50) { record { ... on Contact { deals(first: 50) { nodes { id } } } } } }', { a: 'x' }, schema)).toBe(50 + 50 + 50 * (1 + 50));
    expect(costOf('query ($a: ID!) { search(accountId: $a, query: "z") { title record { __typename } } }', { a: 'x' }, schema)).toBe(10 + 10);
  });

  it('a plain list with no argument counts as the most it declares: me { accounts { pipelineStages { deals(first: 100) } } }', () => {
    // 25 accounts a user (User.accounts), 25 stages an account (pipelineStages), 100 deals a stage.
    expect(costOf('{ me { accounts { pipelineStages { deals(first: 100) { nodes { id } } } } } }', {}, schema)).toBe(1 + 25 + 25 * 25 * (1 + 1 + 100));
    expect(costOf('{ me { id accounts { id name } } }', {}, schema)).toBe(1 + 25); // docs/graphql.md's worked example
    expect(costOf('query ($a: ID!) { pipelineReport(accountId: $a) { stage { deals(first: 10) { nodes { id } } } } }', { a: 'x' }, schema)).toBe(26 + 26 * (1 + 1 + 10));
    expect(costOf('query ($a: ID!) { leadForms(accountId: $a) { fields { key } } }', { a: 'x' }, schema)).toBe(50 + 50 * 50);
  });

  it('every plain list of objects declares the most it can return, or the schema does not build', () => {
    const declared: Record<string, unknown> = {};
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type)) continue;
      for (const field of Object.values(type.getFields())) {
        if ('maxItems' in (field.extensions ?? {})) declared[`${type.name}.${field.name}`] = field.extensions.maxItems;
      }
    }
    // Enforced: imports' take, a form's MAX_FIELDS, a batch's MAX_BATCH, the five aging buckets, one per enum value, a duplicate group's 10.
    // Assumed (docs/graphql.md#cost-and-budget): nothing caps accounts, members, stages, forms, endpoints, keys, months.
    expect(declared).toEqual({
      'Query.imports': 100, 'Invoice.lines': 100, 'InvoiceDocument.lines': 100, 'LeadForm.fields': 50, 'PublicLeadForm.fields': 50,
      'ContactBatchResult.items': 100, 'DealBatchResult.items': 100, 'CompanyBatchResult.items': 100, 'BatchDeleteResult.items': 100,
      'Receivables.buckets': 5, 'ReceivablesReport.buckets': 5, 'DealSummary.byStatus': 4, 'ContactBreakdown.byType': 5, 'ContactBreakdown.bySource': 7,
      'User.accounts': 25, 'Account.members': 50,
      'Account.pipelineStages': 25, 'Query.pipelineStages': 25, 'Account.pipeline': 26, 'Query.pipelineReport': 26,
      'Account.leadForms': 50, 'Query.leadForms': 50, 'Account.webhookEndpoints': 25, 'Query.webhookEndpoints': 25,
      'Account.apiKeys': 100, 'Account.customFields': 400, 'Query.customFields': 400, 'DealSummary.wonByMonth': 120, 'Account.revenue': 480, 'Query.revenueReport': 480,
      // Assumed: an account owes in at most 20 currencies at once (docs/graphql.md#cost-and-budget).
      'Account.receivablesByCurrency': 20, 'ReceivablesReport.byCurrency': 20,
      // docs/workflows.md#limits: at most 20 actions and conditions, so at most 20 steps a run.
      'Workflow.actions': 20, 'WorkflowTrigger.conditions': 20, 'WorkflowRun.steps': 20,
      // Enforced: a duplicate group holds at most 10 records (docs/decisions.md §22).
      'DuplicateGroup.contacts': 10, 'CompanyDuplicateGroup.companies': 10,
    });
    expect(unboundedLists(schema)).toEqual([]);
    // A list declaring none is named (the build throws with it); a schema built elsewhere charges it the default page.
    const bare = buildSchema('type Query { account: Account }  type Account { tags: [Tag!]!  search(first: Int): [Tag!]  names: [String!]! }  type Tag { id: ID! }');
    expect(unboundedLists(bare)).toEqual(['Account.tags']);
    expect(costOf('{ account { tags { id } } }', {}, bare)).toBe(1 + DEFAULT_PAGE);
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

  it("a plain list's multiplied cost is refused before any SQL: the integrator's search(first: 50) under a contact's deals", async () => {
    await t.gql('{ me { id } }', {}, { as: acc.owner });
    let answer: Awaited<ReturnType<TestApp['gql']>> | undefined;
    const calls = await databaseCalls(async () => (answer = await t.gql(ZED_SEARCH, { a: acc.id }, { as: acc.owner })));
    const cost = 50 + 50 + 50 * UNDER_A_ZED;
    expect(answer!.errors).toEqual([expect.objectContaining({ message: `Query too complex: it costs ${cost}, more than 5000`, extensions: { code: 'QUERY_TOO_COMPLEX', cost, maxCost: 5000 } })]);
    expect(answer!.data ?? null).toBeNull();
    expect(calls).toBe(0);
  });

  it('every answer carries extensions.cost {requested, remaining, limit, resetSeconds}', async () => {
    const user = (await createAccount(t)).owner;
    // me, and up to 25 accounts (User.accounts' most) each with its owner: 1 + 25 + 25.
    const first = await t.gql('{ me { id accounts { id owner { id } } } }', {}, { as: user });
    expect(first.extensions?.cost).toEqual({ requested: 51, remaining: COST_BUDGET.points - 51, limit: COST_BUDGET.points, resetSeconds: 1 });
    const refused = await t.gql('query ($a: ID!) { contacts(accountId: $a) { total } }', { a: acc.id }, { as: user });
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(refused.extensions?.cost).toMatchObject({ requested: 1, limit: COST_BUDGET.points }); // spent before it runs
    expect(refused.extensions!.cost.remaining).toBeGreaterThanOrEqual(COST_BUDGET.points - 52);
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
    // me and up to 25 accounts (User.accounts' most): 26 points.
    await frozen.deps.limiter.spend(COST_BUDGET, `user:${user.id}`, COST_BUDGET.points - 26);
    const fits = await frozen.gql('{ me { id accounts { id } } }', {}, { as: user });
    expect(fits.errors).toBeUndefined();
    expect(fits.extensions?.cost).toEqual({ requested: 26, remaining: 0, limit: COST_BUDGET.points, resetSeconds: 60 });
    const refused = await frozen.gql('{ me { id accounts { id } } }', {}, { as: user });
    expect(refused.errors).toEqual([expect.objectContaining({ extensions: { code: 'RATE_LIMITED', retryAfter: 1 } })]);
    expect(refused.data ?? null).toBeNull();
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.extensions?.cost).toMatchObject({ requested: 26, remaining: 0, limit: COST_BUDGET.points });
    clock += 78; // 26 points leak back
    expect((await frozen.gql('{ me { id accounts { id } } }', {}, { as: user })).errors).toBeUndefined();
  });

  it('a root field with its own REST limit is charged its whole cost: 100 contacts with 47 deals each cost 4,901, the fifth is RATE_LIMITED', async () => {
    const fresh = await createAccount(frozen);
    const nested = 'query ($a: ID!) { contacts(accountId: $a, pageSize: 100) { nodes { deals(first: 47) { nodes { id } } } } }';
    const cost = 1 + 100 + 100 * (1 + 47);
    for (let i = 1; i <= 4; i++) {
      const r = await frozen.gql(nested, { a: fresh.id }, { as: fresh.owner });
      expect(r.errors).toBeUndefined();
      expect(r.extensions?.cost).toMatchObject({ requested: cost, remaining: COST_BUDGET.points - i * cost });
      expect(r.headers.get('ratelimit-limit')).toBe('60'); // and its own limit counts the call
    }
    const fifth = await frozen.gql(nested, { a: fresh.id }, { as: fresh.owner });
    expect(fifth.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'RATE_LIMITED' }) })]);
    expect(fifth.data ?? null).toBeNull();
  });

  it('REST is not charged: its operations run under their endpoints\' limits', async () => {
    const fresh = await createAccount(frozen);
    await frozen.deps.limiter.spend(COST_BUDGET, `user:${fresh.owner.id}`, COST_BUDGET.points);
    const r = await frozen.rest('GET', `/api/v1/contacts?account_id=${fresh.id}`, { as: fresh.owner });
    expect(r.status).toBe(200);
  });
});
