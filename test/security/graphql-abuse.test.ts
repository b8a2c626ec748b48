/**
 * GraphQL abuse (OWASP API4 unrestricted resource consumption, API8 misconfiguration, API9
 * inventory): one /graphql document stays cheap to parse, plan and run (depth, aliases, tokens,
 * directives, cost, size), aliases never multiply a rate limit, batches stay within 10 operations, and in
 * production the schema is not handed out (no introspection, no "Did you mean" hints).
 * The limits live in src/graphql/armor.ts; introspection follows src/config.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHQL_LIMITS } from '../../src/graphql/armor.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_METRICS_TOKEN, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let prod: TestApp;
let acc: TestAccount;

beforeAll(async () => {
  [t, prod] = await Promise.all([
    createTestApp(),
    // src/config.ts: NODE_ENV=production turns introspection off (GRAPHQL_INTROSPECTION unset).
    createTestApp({ env: { NODE_ENV: 'production', METRICS_TOKEN: TEST_METRICS_TOKEN } }),
  ]);
  acc = await createAccount(t);
});
afterAll(async () => {
  await Promise.all([t?.close(), prod?.close()]);
});

type Raw = { status: number; body: { data?: any; errors?: { message: string; extensions?: { code?: string; details?: Record<string, string[]> } }[] } };
async function post(app: TestApp, body: unknown, as: TestUser | null = acc.owner): Promise<Raw> {
  const response = await fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(as ? { authorization: `Bearer ${as.token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Raw['body'] };
}
const run = (query: string, variables: Record<string, unknown> = {}, as?: TestUser | null, app = t) => post(app, { query, variables }, as);
// Messages and their details (a variable's own message is in details, keyed by its path).
const messages = (r: Raw) => (r.body.errors ?? []).flatMap((e) => [e.message, ...Object.values(e.extensions?.details ?? {}).flat()]).join('\n');
const aliases = (n: number, field: string) => Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ');

describe('depth', () => {
  const nest = (levels: number) => `${'{ x '.repeat(levels)}${'}'.repeat(levels)}`;

  it(`a document deeper than ${GRAPHQL_LIMITS.maxDepth} levels is refused before it runs`, async () => {
    const r = await run(`{ me { accounts { members { user { id ${nest(6)} } } } } }`);
    expect(r.body.data ?? null).toBeNull();
    expect(messages(r)).toMatch(new RegExp(`depth limit of ${GRAPHQL_LIMITS.maxDepth} exceeded`));
  });

  it('fragments do not hide depth: spreads are counted where they land', async () => {
    const r = await run(`
      query { me { ...A } }
      fragment A on User { accounts { ...B } }
      fragment B on Account { members { ...C } }
      fragment C on TeamMember { user { id ${nest(6)} } }`);
    expect(messages(r)).toMatch(/depth limit/);
  });

  it('a fragment cycle is refused, never followed: the request is answered, with errors and no data', async () => {
    const r = await run('query { me { ...A } } fragment A on User { accounts { id } ...B } fragment B on User { ...A }');
    expect(r.body.errors?.length).toBeGreaterThan(0);
    expect(r.body.data ?? null).toBeNull();
  });

  it('the deepest real query of the schema runs', async () => {
    const r = await run('{ me { accounts { members { user { id } } } } }');
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.me.accounts[0].members[0].user.id).toBe(acc.member.id);
  });
});

describe('aliases', () => {
  it(`${GRAPHQL_LIMITS.maxAliases} aliases run; one more refuses the whole document`, async () => {
    const ok = await run(`{ me { ${aliases(GRAPHQL_LIMITS.maxAliases, 'id')} } }`);
    expect(ok.body.errors).toBeUndefined();
    const refused = await run(`{ me { ${aliases(GRAPHQL_LIMITS.maxAliases + 1, 'id')} } }`);
    expect(refused.body.data ?? null).toBeNull();
    expect(messages(refused)).toMatch(new RegExp(`Aliases limit of ${GRAPHQL_LIMITS.maxAliases} exceeded`));
  });

  const create = (n: number, accountId: string) =>
    `mutation { ${Array.from({ length: n }, (_, i) => `c${i}: createContact(input: { accountId: "${accountId}", firstName: "Alias ${i}" }) { id }`).join(' ')} }`;

  it('one document with 40 aliases of createContact is refused whole and creates nothing', async () => {
    const fresh = await createAccount(t);
    const r = await run(create(40, fresh.id), {}, fresh.owner);
    expect(messages(r)).toMatch(/Aliases limit/);
    expect(await t.db.contact.count({ where: { accountId: fresh.id } })).toBe(0);
  });

  it('40 aliased createContact calls (two documents of 20) create at most 30: each alias is charged to the 30/min limit', async () => {
    const fresh = await createAccount(t);
    const [a, b] = [await run(create(20, fresh.id), {}, fresh.owner), await run(create(20, fresh.id), {}, fresh.owner)];
    expect(a.body.errors).toBeUndefined();
    // Mutations run in order; from the 31st on each alias is refused (null with its error).
    expect(b.body.errors?.map((e) => e.extensions?.code)).toEqual(Array(10).fill('RATE_LIMITED'));
    expect(await t.db.contact.count({ where: { accountId: fresh.id } })).toBe(30);
  });

  it('aliases of a list field are charged one each too: 61 calls of contacts in two documents, the 61st is RATE_LIMITED', async () => {
    const fresh = await createAccount(t);
    const field = `contacts(accountId: "${fresh.id}") { total }`;
    const first = await run(`{ ${aliases(30, field)} }`, {}, fresh.owner);
    const second = await run(`{ ${aliases(30, field)} }`, {}, fresh.owner);
    expect([first.body.errors, second.body.errors]).toEqual([undefined, undefined]);
    const third = await run(`{ ${field} }`, {}, fresh.owner);
    expect(third.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
  });
});

describe('document size, tokens, directives and cost', () => {
  it(`a document of more than ${GRAPHQL_LIMITS.maxTokens} tokens is refused while parsing`, async () => {
    const r = await run(`{ me { ${'id '.repeat(GRAPHQL_LIMITS.maxTokens)} } }`);
    expect(messages(r)).toMatch(new RegExp(`Token limit of ${GRAPHQL_LIMITS.maxTokens} exceeded`));
    expect(r.body.data ?? null).toBeNull();
  });

  it('a document just under the token limit runs', async () => {
    const form = await t.db.leadForm.create({
      data: { accountId: acc.id, name: 'Tokens', fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email', position: 0 }] } },
    });
    // About 25 tokens around a list literal of one token per number.
    const pad = Array.from({ length: GRAPHQL_LIMITS.maxTokens - 40 }, (_, i) => i).join(' ');
    const r = await run(`mutation { submitLeadForm(formId: "${form.id}", data: { email: "tokens@example.com", pad: [${pad}] }) { success } }`, {}, null);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data).toEqual({ submitLeadForm: { success: true } });
  });

  it('repeating one field many times is stopped by graphql-js\'s own overlap budget, not run', async () => {
    const r = await run(`{ me { ${'id '.repeat(GRAPHQL_LIMITS.maxTokens - 10)} } }`);
    expect(r.body.data ?? null).toBeNull();
    expect(r.body.errors?.length).toBeGreaterThan(0);
  });

  it('deeply nested brackets are stopped by the token limit before the parser can overflow its stack', async () => {
    const r = await run(`{ me ${'{ x '.repeat(50_000)}${'}'.repeat(50_000)} }`);
    expect(r.status).toBeLessThan(500);
    expect(messages(r)).toMatch(/Token limit/);
  });

  it('a body over 1 MiB is a 413 and runs nothing', async () => {
    const fresh = await createAccount(t);
    const r = await run(`mutation { createContact(input: { accountId: "${fresh.id}", firstName: "${'x'.repeat(1024 * 1024)}" }) { id } }`, {}, fresh.owner);
    expect(r.status).toBe(413);
    expect(await t.db.contact.count({ where: { accountId: fresh.id } })).toBe(0);
  });

  it(`more than ${GRAPHQL_LIMITS.maxDirectives} directives are refused`, async () => {
    const r = await run(`{ me { id ${'@include(if: true) '.repeat(GRAPHQL_LIMITS.maxDirectives + 1)} } }`);
    expect(messages(r)).toMatch(/Directives limit/);
  });

  it(`a document whose cost passes ${GRAPHQL_LIMITS.maxCost} is refused, though within every other limit`, async () => {
    // docs/decisions.md §11: 1 per object, pages multiply: 20 pages of 100 deals with contact and stage cost 6,020.
    const pages = Array.from({ length: 20 }, (_, i) => `d${i}: deals(accountId: "${acc.id}", pageSize: 100) { nodes { contact { id } stage { id } } }`);
    const r = await run(`{ ${pages.join(' ')} }`);
    expect(messages(r)).toMatch(/Query too complex: it costs 6020, more than 5000/);
    expect(r.body.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
    expect(r.body.data ?? null).toBeNull();
  });
});

describe('batches and transports', () => {
  it(`a batch of more than ${GRAPHQL_LIMITS.maxBatch} operations is refused as a whole: 413, nothing runs`, async () => {
    const fresh = await createAccount(t);
    const op = { query: `mutation { createContact(input: { accountId: "${fresh.id}", firstName: "Batch" }) { id } }` };
    const r = await post(t, Array(GRAPHQL_LIMITS.maxBatch + 1).fill(op), fresh.owner);
    expect(r.status).toBe(413);
    expect(r.body.data ?? null).toBeNull();
    expect(await t.db.contact.count({ where: { accountId: fresh.id } })).toBe(0);
  });

  it('a mutation over GET is refused (405): a link or an image cannot change data', async () => {
    const fresh = await createAccount(t);
    const query = encodeURIComponent(`mutation { createContact(input: { accountId: "${fresh.id}", firstName: "Get" }) { id } }`);
    const response = await fetch(`${t.baseUrl}/graphql?query=${query}`, { headers: { authorization: `Bearer ${fresh.owner.token}` } });
    expect(response.status).toBe(405);
    expect(await t.db.contact.count({ where: { accountId: fresh.id } })).toBe(0);
  });

  it('several operations in one document need an operationName; only the named one runs', async () => {
    const fresh = await createAccount(t);
    const query = ['A', 'B'].map((n) => `mutation ${n} { createContact(input: { accountId: "${fresh.id}", firstName: "${n}" }) { id } }`).join('\n');
    const without = await post(t, { query }, fresh.owner);
    expect(without.body.errors?.length).toBeGreaterThan(0);
    expect(await t.db.contact.count({ where: { accountId: fresh.id } })).toBe(0);
    const named = await post(t, { query, operationName: 'B' }, fresh.owner);
    expect(named.body.errors).toBeUndefined();
    expect(await t.db.contact.findMany({ where: { accountId: fresh.id }, select: { firstName: true } })).toEqual([{ firstName: 'B' }]);
  });
});

describe('the schema is not handed out in production', () => {
  const INTROSPECTION = '{ __schema { queryType { name } types { name } } }';

  it('introspection works outside production (NODE_ENV=test)', async () => {
    const r = await run(INTROSPECTION, {}, null);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data.__schema.types.map((x: { name: string }) => x.name)).toContain('Contact');
  });

  it('introspection is refused with NODE_ENV=production: __schema and __type alike', async () => {
    for (const query of [INTROSPECTION, '{ __type(name: "Contact") { fields { name } } }']) {
      const r = await run(query, {}, null, prod);
      expect(r.body.data ?? null, query).toBeNull();
      expect(messages(r)).toMatch(/introspection/i);
    }
  });

  it('introspection stays refused in production for a signed-in user, hidden in a fragment or an alias', async () => {
    const user = await createAccount(prod);
    for (const query of [
      'query { ...F } fragment F on Query { __schema { types { name } } }',
      '{ s: __schema { types { name } } }',
    ]) {
      const r = await run(query, {}, user.owner, prod);
      expect(r.body.data ?? null, query).toBeNull();
    }
  });

  it('__typename still answers in production (clients need it; it reveals nothing)', async () => {
    const r = await run('{ __typename }', {}, null, prod);
    expect(r.body.errors).toBeUndefined();
    expect(r.body.data).toEqual({ __typename: 'Query' });
  });

  /** A document with a typo, its variables, and the name a hint would reveal. */
  const TYPOS: [string, Record<string, unknown>, RegExp][] = [
    ['{ contcts(accountId: "x") { total } }', {}, /"contacts"/],
    ['{ contacts(acountId: "x") { total } }', {}, /Did you mean "accountId"/],
    ['{ contacts(accountId: "x", type: leed) { total } }', {}, /"lead"/],
    ['{ me { emial } }', {}, /"email"/],
    // Variables are checked only when the operation executes: their hints must go too.
    ['query ($t: ContactType) { contacts(accountId: "x", type: $t) { total } }', { t: 'leed' }, /"lead"/],
    ['mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: { accountId: 'x', firstName: 'Ok', lastNme: 'Typo' } }, /"lastName"/],
    ['query ($s: DealStatus!) { deals(accountId: "x", status: $s) { total } }', { s: 'opne' }, /"open"/],
  ];

  it('outside production a typo gets a "Did you mean" hint (the developer experience)', async () => {
    const r = await run(TYPOS[0]![0], {}, null);
    expect(messages(r)).toMatch(/Did you mean [^?]*"contacts"/);
    const variable = await run(TYPOS[4]![0], TYPOS[4]![1], null);
    expect(messages(variable)).toMatch(/Did you mean the enum value "lead"\?/);
  });

  it('in production no error suggests a field, argument or enum value', async () => {
    for (const [query, variables, hint] of TYPOS) {
      const [dev, production] = [await run(query, variables, null), await run(query, variables, null, prod)];
      expect(messages(dev), `outside production: ${query}`).toMatch(hint);
      expect(production.body.errors?.length, query).toBeGreaterThan(0);
      expect(messages(production), query).not.toMatch(/Did you mean/);
      expect(messages(production), query).not.toMatch(hint);
    }
  });

  it('in production a REST refusal raised while its operation runs keeps its status and body, not a 500', async () => {
    const own = await createAccount(prod);
    const stranger = await createAccount(prod);
    const unknown = await prod.rest('GET', '/api/v1/contacts/00000000-0000-4000-8000-000000000000', { as: own.owner });
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'Not found' }]);
    const refused = await prod.rest('GET', `/api/v1/companies?account_id=${stranger.id}`, { as: own.owner });
    expect(refused.status).toBe(403);
    const invalid = await prod.rest('POST', '/api/v1/contacts', { as: own.owner, body: { account_id: own.id, first_name: '' } });
    expect(invalid.status).toBe(400);
  });

  it('GraphiQL is not served in production', async () => {
    const response = await fetch(`${prod.baseUrl}/graphql`, { headers: { accept: 'text/html' } });
    expect(await response.text()).not.toMatch(/graphiql/i);
  });

  it('an unexpected failure is masked: INTERNAL_SERVER_ERROR with no message from inside', async () => {
    const fresh = await createAccount(t);
    const limiter = t.deps.limiter;
    const consume = limiter.consume;
    limiter.consume = async () => {
      throw new Error('relation "secret_table" does not exist at Limiter.consume (/srv/app/limiter.ts:42)');
    };
    try {
      const r = await run(`{ contacts(accountId: "${fresh.id}") { total } }`, {}, fresh.owner);
      expect(r.body.errors?.[0]).toMatchObject({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } });
      expect(JSON.stringify(r.body)).not.toMatch(/secret_table|limiter\.ts|stack/);
    } finally {
      limiter.consume = consume;
    }
  });
});

