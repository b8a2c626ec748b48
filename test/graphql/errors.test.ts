/**
 * docs/decisions.md §9 amended: every entry of `errors[]`, request-level ones included, carries an
 * `extensions.code` from the documented vocabulary (src/errors.ts ERROR_CODES, docs/graphql.md#error-codes).
 * About fifty kinds of bad request, each with the code it must get.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';
import { GRAPHQL_LIMITS } from '../../src/graphql/armor.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_METRICS_TOKEN, type TestApp } from '../helpers/app.js';

let t: TestApp;
let prod: TestApp;
let acc: TestAccount;
let formId: string;

beforeAll(async () => {
  [t, prod] = await Promise.all([createTestApp(), createTestApp({ env: { NODE_ENV: 'production', METRICS_TOKEN: TEST_METRICS_TOKEN } })]);
  acc = await createAccount(t);
  const form = await t.db.leadForm.create({
    data: { accountId: acc.id, name: 'Errors', fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email', position: 0 }] } },
  });
  formId = form.id;
});
afterAll(async () => {
  await Promise.all([t?.close(), prod?.close()]);
});

type Body = { data?: unknown; errors?: { message: string; extensions?: { code?: string; details?: Record<string, string[]> } }[] };
type Case = {
  name: string;
  /** The request: a JSON body for POST, or a full init (method, headers, body, query string). */
  body?: unknown;
  raw?: { method?: string; headers?: Record<string, string>; body?: string; search?: string };
  as?: 'owner' | 'outsider' | 'anonymous' | 'bad-token';
  app?: 'prod';
  /** The code of the (first) error. */
  code: string;
  details?: Record<string, unknown>;
};

const q = (query: string, variables?: Record<string, unknown>) => ({ query, variables });
const nest = (levels: number) => `${'{ x '.repeat(levels)}${'}'.repeat(levels)}`;
const aliases = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: id`).join(' ');
const CREATE = 'mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }';
const GET = (query: string) => ({ method: 'GET', search: `?query=${encodeURIComponent(query)}` });

const CASES: Case[] = [
  // Parsing
  { name: 'an unclosed selection', body: q('{ me { id '), code: 'GRAPHQL_PARSE_FAILED' },
  { name: 'an empty document', body: q(' '), code: 'GRAPHQL_PARSE_FAILED' },
  { name: 'a stray character', body: q('{ me { id } } %'), code: 'GRAPHQL_PARSE_FAILED' },
  { name: 'an unterminated string', body: q('{ contacts(accountId: "x) { total } }'), code: 'GRAPHQL_PARSE_FAILED' },
  { name: 'a bad number literal', body: q('{ contacts(accountId: "x", pageSize: 1e) { total } }'), code: 'GRAPHQL_PARSE_FAILED' },
  { name: 'a document in plain words', body: q('select * from contacts'), code: 'GRAPHQL_PARSE_FAILED' },
  // Validation
  { name: 'an unknown field', body: q('{ nope }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'an unknown argument', body: q('{ contacts(acountId: "x") { total } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'a missing required argument', body: q('{ contacts { total } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'an object without a selection', body: q('{ me }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'a selection on a scalar', body: q('{ me { id { x } } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'an enum literal that does not exist', body: q('{ contacts(accountId: "x", type: vip) { total } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'a literal of the wrong type', body: q('{ contacts(accountId: "x", pageSize: "ten") { total } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'an undefined variable', body: q('{ contacts(accountId: $a) { total } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'an unused variable', body: q('query ($a: ID) { me { id } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'a variable of an unknown type', body: q('query ($a: Nope) { me { id } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'an unknown fragment', body: q('{ me { ...F } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'a fragment cycle', body: q('query { me { ...A } } fragment A on User { ...B } fragment B on User { ...A }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'an unknown directive', body: q('{ me @nope { id } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'two anonymous operations', body: q('{ me { id } } { me { id } }'), code: 'OPERATION_RESOLUTION_FAILURE' },
  { name: 'a field the Subscription type lacks', body: q('subscription { me { id } }'), code: 'GRAPHQL_VALIDATION_FAILED' },
  { name: 'introspection in production', body: q('{ __schema { types { name } } }'), app: 'prod', code: 'GRAPHQL_VALIDATION_FAILED' },
  // Variables that do not coerce: BAD_USER_INPUT with details keyed by variable path
  { name: 'a string for an Int variable', body: q('query ($n: Int) { contacts(accountId: "x", pageSize: $n) { total } }', { n: 'ten' }), code: 'BAD_USER_INPUT', details: { n: [expect.stringMatching(/Int/)] } },
  { name: 'a missing required variable', body: q('query ($a: ID!) { contacts(accountId: $a) { total } }'), code: 'BAD_USER_INPUT', details: { a: [expect.any(String)] } },
  { name: 'null for a required variable', body: q('query ($a: ID!) { contacts(accountId: $a) { total } }', { a: null }), code: 'BAD_USER_INPUT', details: { a: [expect.any(String)] } },
  { name: 'an unknown enum value in a variable', body: q('query ($t: ContactType) { contacts(accountId: "x", type: $t) { total } }', { t: 'vip' }), code: 'BAD_USER_INPUT', details: { t: [expect.any(String)] } },
  { name: 'a missing input field', body: q(CREATE, { i: { accountId: 'x' } }), code: 'BAD_USER_INPUT', details: { i: [expect.stringMatching(/firstName/)] } },
  { name: 'an unknown input field', body: q(CREATE, { i: { accountId: 'x', firstName: 'A', nope: 1 } }), code: 'BAD_USER_INPUT', details: { i: [expect.stringMatching(/nope/)] } },
  { name: 'a wrong type inside the input', body: q(CREATE, { i: { accountId: 'x', firstName: 5 } }), code: 'BAD_USER_INPUT', details: { 'i.firstName': [expect.any(String)] } },
  { name: 'a bad enum inside the input', body: q(CREATE, { i: { accountId: 'x', firstName: 'A', contactType: 'vip' } }), code: 'BAD_USER_INPUT', details: { 'i.contactType': [expect.any(String)] } },
  { name: 'a date that is not a date', body: q('mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId: 'x', title: 'T', expectedCloseDate: '2025-02-30' } }), code: 'BAD_USER_INPUT', details: { 'i.expectedCloseDate': [expect.any(String)] } },
  { name: 'a list where an object goes', body: q(CREATE, { i: [] }), code: 'BAD_USER_INPUT', details: { i: [expect.any(String)] } },
  // Literals a scalar refuses: BAD_USER_INPUT with details keyed by argument path
  { name: 'a timestamp literal that is not a timestamp', body: q('{ account(id: "x") { contacts(filter: { updatedAfter: "notadate" }) { totalCount } } }'), code: 'BAD_USER_INPUT', details: { 'filter.updatedAfter': [expect.any(String)] } },
  { name: 'a date literal that is not a real day', body: q('{ account(id: "x") { invoices(filter: { dueAfter: "2027-02-30" }) { totalCount } } }'), code: 'BAD_USER_INPUT', details: { 'filter.dueAfter': [expect.any(String)] } },
  // Limits of one document
  { name: 'too deep', body: q(`{ me { accounts { members { user { id ${nest(6)} } } } } }`), code: 'QUERY_TOO_COMPLEX' },
  { name: 'too many aliases', body: q(`{ me { ${aliases(GRAPHQL_LIMITS.maxAliases + 1)} } }`), code: 'QUERY_TOO_COMPLEX' },
  { name: 'too many tokens', body: q(`{ me { ${'id '.repeat(GRAPHQL_LIMITS.maxTokens)} } }`), code: 'QUERY_TOO_COMPLEX' },
  { name: 'too many directives', body: q(`{ me { id ${'@include(if: true) '.repeat(GRAPHQL_LIMITS.maxDirectives + 1)} } }`), code: 'QUERY_TOO_COMPLEX' },
  { name: 'pages costing more than the ceiling', body: q(`{ ${Array.from({ length: 20 }, (_, i) => `p${i}: deals(accountId: "x", pageSize: 100) { nodes { contact { id } stage { id } } }`).join(' ')} }`), code: 'QUERY_TOO_COMPLEX' },
  // The HTTP request itself
  { name: 'no query at all', body: {}, code: 'BAD_REQUEST' },
  { name: 'a query that is not a string', body: { query: 5 }, code: 'BAD_REQUEST' },
  { name: 'variables that are not an object', body: { query: '{ me { id } }', variables: 5 }, code: 'BAD_REQUEST' },
  { name: 'extensions that are not an object', body: { query: '{ me { id } }', extensions: 5 }, code: 'BAD_REQUEST' },
  { name: 'an operationName that is not a string', body: { query: '{ me { id } }', operationName: 5 }, code: 'OPERATION_RESOLUTION_FAILURE' },
  { name: 'a body that is not JSON', raw: { body: '{' }, code: 'BAD_USER_INPUT' },
  { name: 'a JSON string body', raw: { body: '"{ me { id } }"' }, code: 'BAD_USER_INPUT' },
  { name: 'an empty batch', body: [], code: 'BAD_USER_INPUT' },
  { name: 'a text/plain body', raw: { headers: { 'content-type': 'text/plain' }, body: '{"query":"{ me { id } }"}' }, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { name: 'a form-encoded body', raw: { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'query=%7Bme%7Bid%7D%7D' }, code: 'UNSUPPORTED_MEDIA_TYPE' },
  { name: 'a body over 1 MiB', raw: { body: JSON.stringify(q(`{ me { id } } # ${'x'.repeat(1024 * 1024)}`)) }, code: 'PAYLOAD_TOO_LARGE' },
  { name: 'a mutation over GET', raw: GET('mutation { createAccount(input: { name: "x" }) { id } }'), code: 'BAD_REQUEST' },
  { name: 'a GET with no query', raw: { method: 'GET', headers: { accept: 'application/json' } }, code: 'BAD_REQUEST' },
  { name: 'a PATCH (PUT and DELETE reserve and stop graphql-sse streams: docs/graphql.md#subscriptions)', raw: { method: 'PATCH', body: JSON.stringify(q('{ me { id } }')) }, code: 'BAD_REQUEST' },
  { name: 'a subscription asked for as one JSON answer', body: q('subscription ($a: ID!) { accountEvents(accountId: $a) { id } }', { a: randomUUID() }), raw: { headers: { accept: 'application/json' } }, code: 'BAD_REQUEST' },
  { name: 'a malformed Idempotency-Key', body: q(CREATE, { i: { accountId: randomUUID(), firstName: 'A' } }), raw: { headers: { 'idempotency-key': 'k'.repeat(256) } }, code: 'BAD_USER_INPUT', details: { idempotency_key: [expect.any(String)] } },
  { name: 'two operations and no operationName', body: q('query A { me { id } } query B { me { id } }'), code: 'OPERATION_RESOLUTION_FAILURE' },
  { name: 'an operationName the document lacks', body: { query: 'query A { me { id } }', operationName: 'B' }, code: 'OPERATION_RESOLUTION_FAILURE' },
  // Fields that refuse
  { name: 'no token', body: q('{ me { id } }'), as: 'anonymous', code: 'UNAUTHENTICATED' },
  { name: 'a token that does not verify', body: q('{ me { id } }'), as: 'bad-token', code: 'UNAUTHENTICATED' },
  { name: 'another account', body: q('query ($a: ID!) { contacts(accountId: $a) { total } }', { a: randomUUID() }), as: 'outsider', code: 'FORBIDDEN' },
  { name: 'an input the field refuses', body: q(CREATE, { i: { accountId: randomUUID(), firstName: '' } }), code: 'BAD_USER_INPUT' },
  { name: 'a page size out of range', body: q(`{ contacts(accountId: "${randomUUID()}", pageSize: 1000) { total } }`), code: 'BAD_USER_INPUT' },
  { name: 'a form that does not exist', body: q('mutation ($f: ID!) { submitLeadForm(formId: $f, data: {}) { success } }', { f: randomUUID() }), as: 'anonymous', code: 'NOT_FOUND' },
  { name: 'a deal that does not exist', body: q('mutation ($id: ID!) { setDealStatus(id: $id, status: won) { id } }', { id: randomUUID() }), code: 'NOT_FOUND' },
];

async function send(c: Case): Promise<{ status: number; body: Body | Body[] }> {
  const app = c.app === 'prod' ? prod : t;
  const auth: Record<string, string> =
    c.as === 'anonymous' ? {} : c.as === 'bad-token' ? { authorization: 'Bearer nope.nope.nope' } : { authorization: `Bearer ${(c.as === 'outsider' ? acc.outsider : acc.owner).token}` };
  const raw = c.raw ?? {};
  const response = await fetch(`${app.baseUrl}/graphql${raw.search ?? ''}`, {
    method: raw.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...auth, ...raw.headers },
    body: raw.body ?? (c.body === undefined || (raw.method ?? 'POST') === 'GET' ? undefined : JSON.stringify(c.body)),
  });
  return { status: response.status, body: (await response.json()) as Body | Body[] };
}

describe('every error carries a code from the documented vocabulary (decisions §9 amended)', () => {
  it(`covers about fifty kinds of bad request (${CASES.length})`, () => {
    expect(CASES.length).toBeGreaterThanOrEqual(50);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    const { status, body } = await send(c);
    const answers = Array.isArray(body) ? body : [body];
    const errors = answers.flatMap((a) => a.errors ?? []);
    expect(errors.length, JSON.stringify(body)).toBeGreaterThan(0);
    for (const error of errors) expect(ERROR_CODES, JSON.stringify(error)).toContain(error.extensions?.code);
    expect(errors[0]!.extensions?.code, JSON.stringify(body)).toBe(c.code);
    if (c.details) expect(errors[0]!.extensions?.details).toEqual(c.details);
    expect(status).toBeLessThan(500);
    expect(JSON.stringify(body)).not.toMatch(/\bat \S+\.(ts|js):\d+|stack/);
  });

  it('a failure nobody planned for is INTERNAL_SERVER_ERROR, masked', async () => {
    const consume = t.deps.limiter.consume;
    t.deps.limiter.consume = async () => {
      throw new Error('relation "secret_table" does not exist');
    };
    try {
      const r = await t.gql('{ me { id } contacts(accountId: "x") { total } }', {}, { as: acc.owner });
      expect(r.errors).toEqual([expect.objectContaining({ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } })]);
      expect(r.data.me).toEqual({ id: acc.owner.id });
    } finally {
      t.deps.limiter.consume = consume;
    }
  });
});

/** POST /graphql with the owner's token, `accept` as given (none: fetch's own `*\/*`). */
const post = (app: TestApp, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${app.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${acc.owner.token}`, ...headers },
    body: JSON.stringify(body),
  });

describe('a request that is not well-formed GraphQL over HTTP is 400 whatever it accepts (docs/graphql.md#error-codes)', () => {
  const ACCEPTS: Record<string, string>[] = [{}, { accept: 'application/json' }, { accept: 'application/graphql-response+json' }];
  const requests: [string, (headers: Record<string, string>) => Promise<Response>][] = [
    ['an empty object', (h) => post(t, {}, h)],
    ['a null query', (h) => post(t, { query: null }, h)],
    ['variables and no query', (h) => post(t, { variables: {} }, h)],
    ['a GET with no query', (h) => fetch(`${t.baseUrl}/graphql?x=1`, { headers: { accept: 'application/json', ...h } })],
  ];
  it.each(requests.flatMap(([name, send]) => ACCEPTS.map((h) => [`${name}, Accept ${h.accept ?? '(default)'}`, send, h] as const)))(
    'no query string is 400 BAD_REQUEST: %s',
    async (_, send, headers) => {
      const response = await send(headers);
      expect([response.status, await response.json()]).toEqual([400, { errors: [{ message: 'Must provide query string.', extensions: { code: 'BAD_REQUEST' } }] }]);
    },
  );
});

describe('a subscription by HTTP must ask for a stream (docs/graphql.md#subscriptions)', () => {
  const SUB = 'subscription ($a: ID!) { accountEvents(accountId: $a) { id } }';

  it.each(['application/json', 'application/graphql-response+json', 'text/html', 'multipart/mixed'])(
    'asked for as %s, it is 406 BAD_REQUEST with a body, and Accept names what streams',
    async (accept) => {
      const response = await post(t, { query: SUB, variables: { a: acc.id } }, { accept });
      expect(response.status).toBe(406);
      expect(response.headers.get('accept')).toBe('text/event-stream, multipart/mixed;subscriptionSpec="1.0"');
      expect(await response.json()).toEqual({ errors: [{ message: expect.stringContaining('text/event-stream'), extensions: { code: 'BAD_REQUEST' } }] });
    },
  );

  it('a refused subscription never starts and is not charged against its rate limit', async () => {
    const { limiter, events } = t.deps;
    const consume = limiter.consume;
    const subscribe = events.bus.subscribe;
    const charged: string[] = [];
    let started = 0;
    limiter.consume = (rule, identity) => (charged.push(rule.name), consume.call(limiter, rule, identity));
    events.bus.subscribe = ((...args: Parameters<typeof subscribe>) => (started++, subscribe.apply(events.bus, args))) as typeof subscribe;
    try {
      const response = await post(t, { query: SUB, variables: { a: acc.id } }, { accept: 'application/json' });
      expect(response.status).toBe(406);
      expect(response.headers.get('ratelimit-remaining')).toBeNull();
      expect({ charged, started }).toEqual({ charged: [], started: 0 });
    } finally {
      limiter.consume = consume;
      events.bus.subscribe = subscribe;
    }
  });

  it('any Accept that covers text/event-stream still streams: none, */*, text/*', async () => {
    for (const headers of [{} as Record<string, string>, { accept: '*/*' }, { accept: 'text/*' }, { accept: 'application/json, text/event-stream' }]) {
      const response = await post(t, { query: SUB, variables: { a: acc.id } }, headers);
      expect([response.status, response.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^text\/event-stream/)]);
      await response.body?.cancel();
    }
  });
});

describe('BAD_USER_INPUT carries details for literals too (decisions §9)', () => {
  it("a literal a scalar refuses has details keyed by argument path, like a variable's by variable path, and its location", async () => {
    const literal = await t.gql(`{ account(id: "${acc.id}") {\n  contacts(filter: { updatedAfter: "notadate" }) { totalCount } } }`, {}, { as: acc.owner });
    const variable = await t.gql('query ($f: ContactFilter) { account(id: "x") { contacts(filter: $f) { totalCount } } }', { f: { updatedAfter: 'notadate' } }, { as: acc.owner });
    const message = 'Must be an ISO 8601 timestamp with a time zone';
    expect(literal.errors).toEqual([{ message, locations: [{ line: 2, column: 36 }], extensions: { code: 'BAD_USER_INPUT', details: { 'filter.updatedAfter': [message] } } }]);
    expect(variable.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT', details: { 'f.updatedAfter': [message] } } })]);
  });

  it('each refused literal is its own error with its own path, a variable default keyed by its name', async () => {
    const r = await t.gql(
      `query ($d: DateTime = "nope") { account(id: "${acc.id}") {
        a: invoices(filter: { dueAfter: "2027-02-30" }) { totalCount }
        b: contacts(filter: { updatedAfter: "2026-01-01T00:00:00Z", updatedBefore: "later" }) { totalCount }
        c: contacts(filter: { updatedAfter: $d }) { totalCount } } }`,
      {},
      { as: acc.owner },
    );
    expect(r.errors?.map((e) => e.extensions?.details)).toEqual(
      expect.arrayContaining([{ 'filter.dueAfter': [expect.any(String)] }, { 'filter.updatedBefore': [expect.any(String)] }, { d: [expect.any(String)] }]),
    );
    expect(r.errors, JSON.stringify(r.errors)).toHaveLength(3);
  });
});

describe('details keys are camelCase, but for the Idempotency-Key header (docs/graphql.md "Conventions")', () => {
  it('a malformed Idempotency-Key is details.idempotency_key, as REST names it, and the guide says so', async () => {
    const r = await t.gql(CREATE, { i: { accountId: acc.id, firstName: 'A' } }, { as: acc.owner, headers: { 'idempotency-key': 'k'.repeat(256) } });
    expect(r.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', details: { idempotency_key: [expect.any(String)] } });
    const conventions = readFileSync(new URL('../../docs/graphql.md', import.meta.url), 'utf8').split('## Conventions')[1]!.split('\n## ')[0]!;
    expect(conventions).toMatch(/`extensions\.details` keys are camelCase,\s+except `idempotency_key`/);
  });
});
