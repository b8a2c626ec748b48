import { buildSchema, getOperationAST, GraphQLError, parse, type GraphQLInputType } from 'graphql/index.js';
import { describe, expect, it } from 'vitest';
import { AppError, HTTP_STATUS, type ErrorCode } from '../../src/errors.js';
import { rootRules } from '../../src/graphql/rules.js';
import { schema } from '../../src/schema.js';
import { MAX_BODY_BYTES, readJsonObject } from '../../src/http/body.js';
import { download, type Exchange } from '../../src/rest/download.js';
import { fromCoreError, fromHttpError, invalidInput } from '../../src/rest/errors.js';
import { restFieldName } from '../../src/rest/field-names.js';
import { toCamel, toSnake, VariableReader } from '../../src/rest/input.js';
import { routes } from '../../src/rest/routes.js';

// The REST layer's pure parts: REST parameters -> operation variables (src/rest/input.ts), request
// bodies (body.ts), the one error translation (errors.ts), downloads (download.ts) and the route table.

const toy = buildSchema(`
  enum Color { red green }
  input Inner { firstName: String! nickName: String }
  input Outer { accountId: ID! inner: Inner tags: [String!] when: Date }
  scalar Date
  type Query { q(id: ID!, page: Int, ratio: Float, flag: Boolean, color: Color, input: Outer): Int }
`);
const type = (name: string) => toy.getType(name) as GraphQLInputType;
const op = (source: string) => getOperationAST(parse(source))!;

describe('toCamel / toSnake', () => {
  it.each([
    ['account_id', 'accountId'],
    ['page_size', 'pageSize'],
    ['expected_close_date', 'expectedCloseDate'],
    ['data', 'data'],
  ])('%s <-> %s', (snake, camel) => {
    expect(toCamel(snake)).toBe(camel);
    expect(toSnake(camel)).toBe(snake);
  });
});

describe('VariableReader: query strings', () => {
  const operation = op('query ($id: ID!, $page: Int, $ratio: Float, $flag: Boolean, $color: Color) { q(id: $id) }');
  const read = (params: Record<string, string>) => {
    const reader = new VariableReader(true);
    return { variables: reader.variables(toy, operation, params), details: reader.details };
  };

  it('turns snake_case parameters into typed camelCase variables', () => {
    expect(read({ id: 'a', page: '2', ratio: '0.5', flag: 'true', color: 'red' })).toEqual({
      variables: { id: 'a', page: 2, ratio: 0.5, flag: true, color: 'red' },
      details: {},
    });
  });

  it('leaves out absent optional parameters and ignores unknown ones', () => {
    expect(read({ id: 'a', sort: 'x', page_size: '3' })).toEqual({ variables: { id: 'a' }, details: {} });
  });

  it('a missing required parameter is exactly ["Required"]', () => {
    expect(read({}).details).toEqual({ id: ['Required'] });
  });

  it.each(['abc', '2.5', '', '1e3', ' 1', '0x10'])('Int "%s" is "Must be an integer"', (page) => {
    expect(read({ id: 'a', page }).details).toEqual({ page: ['Must be an integer'] });
  });

  it('Int beyond 32 bits is "Out of range"', () => {
    expect(read({ id: 'a', page: '99999999999' }).details).toEqual({ page: ['Out of range'] });
  });

  it('negative and zero integers pass the type check (ranges are the core\'s business)', () => {
    expect(read({ id: 'a', page: '-3' }).variables.page).toBe(-3);
    expect(read({ id: 'a', page: '0' }).variables.page).toBe(0);
  });

  it.each(['abc', '', 'Infinity', 'NaN'])('Float "%s" is "Expected a number"', (ratio) => {
    expect(read({ id: 'a', ratio }).details).toEqual({ ratio: ['Expected a number'] });
  });

  it('Boolean takes only true and false', () => {
    expect(read({ id: 'a', flag: 'false' }).variables.flag).toBe(false);
    expect(read({ id: 'a', flag: '1' }).details).toEqual({ flag: ['Expected true or false'] });
  });

  it('an enum value outside the type names the allowed values', () => {
    expect(read({ id: 'a', color: 'blue' }).details).toEqual({ color: ['Must be one of: red, green'] });
    expect(read({ id: 'a', color: 'RED' }).details).toEqual({ color: ['Must be one of: red, green'] });
  });
});

describe('VariableReader: JSON bodies', () => {
  const read = (value: unknown, t = type('Outer')) => {
    const reader = new VariableReader(false);
    return { value: reader.read(value, t, ''), details: reader.details };
  };

  it('reads snake_case keys into the camelCase input fields, nested too', () => {
    expect(read({ account_id: 'a', inner: { first_name: 'Ada' }, tags: ['x'], when: '2024-02-29' })).toEqual({
      value: { accountId: 'a', inner: { firstName: 'Ada' }, tags: ['x'], when: '2024-02-29' },
      details: {},
    });
  });

  it('unknown keys, camelCase spellings and prototype keys are each ["Unknown field"]', () => {
    const body = JSON.parse('{"account_id":"a","accountId":"a","extra":1,"__proto__":{},"constructor":1}');
    expect(Object.entries(read(body).details)).toEqual(
      ['accountId', 'extra', '__proto__', 'constructor'].map((key) => [key, ['Unknown field']]),
    );
    expect(JSON.stringify(read({ account_id: 'a', toString: 1 }).details)).toBe('{"toString":["Unknown field"]}');
  });

  it('missing and null required fields are ["Required"], named by their dotted path', () => {
    expect(read({ inner: {} }).details).toEqual({ account_id: ['Required'], 'inner.first_name': ['Required'] });
    expect(read({ account_id: null }).details).toEqual({ account_id: ['Required'] });
  });

  it('null optional fields stay null (the core applies defaults)', () => {
    expect(read({ account_id: 'a', inner: null, tags: null }).value).toEqual({ accountId: 'a', inner: null, tags: null });
  });

  it('wrong JSON types are named: strings, objects, lists', () => {
    expect(read({ account_id: 1, inner: 'x', tags: 'x' }).details).toEqual({
      account_id: ['Expected a string'], inner: ['Expected an object'], tags: ['Expected an array'],
    });
    expect(read({ account_id: 'a', tags: ['ok', 2] }).details).toEqual({ 'tags.1': ['Expected a string'] });
  });

  it('numbers are not read from strings in a body', () => {
    const reader = new VariableReader(false);
    reader.read('5', toy.getType('Int') as GraphQLInputType, 'page');
    reader.read('0.5', toy.getType('Float') as GraphQLInputType, 'ratio');
    reader.read('true', toy.getType('Boolean') as GraphQLInputType, 'flag');
    expect(reader.details).toEqual({ page: ['Must be an integer'], ratio: ['Expected a number'], flag: ['Expected true or false'] });
  });

  it("custom scalars explain themselves with their own message", () => {
    const real = new VariableReader(false);
    real.read('2025-02-30', schema.getType('Date') as GraphQLInputType, 'expected_close_date');
    expect(real.details).toEqual({ expected_close_date: ['Must be a real date in the form YYYY-MM-DD'] });
  });

  it('a top-level problem with no field name is reported on body', () => {
    const reader = new VariableReader(false);
    reader.read('x', type('Outer'), '');
    expect(reader.details).toEqual({ body: ['Expected an object'] });
  });

  it('reads a real operation input: CreateDealInput', () => {
    const reader = new VariableReader(false);
    const input = schema.getMutationType()!.getFields().createDeal!.args.find((a) => a.name === 'input')!.type;
    const value = reader.read({ account_id: 'a', title: 'T', contact_id: null, value: 10, expected_close_date: '2024-02-29' }, input, '');
    expect(reader.details).toEqual({});
    expect(value).toEqual({ accountId: 'a', title: 'T', contactId: null, value: 10, expectedCloseDate: '2024-02-29' });
  });
});

describe('readJsonObject', () => {
  const request = (body: BodyInit | null, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
    new Request('http://x/api/v1/contacts', { method: 'POST', body, headers });
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    return fromCoreError(error as AppError, 'body', (key) => key);
  };

  it('returns the parsed object', async () => {
    expect(await readJsonObject(request('{"a":1}'))).toEqual({ a: 1 });
  });

  it.each(['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/problem+json'])('accepts %s', async (ct) => {
    expect(await readJsonObject(request('{}', { 'content-type': ct }))).toEqual({});
  });

  it.each(['text/plain', 'application/jsonp', 'application/x-www-form-urlencoded', ''])('%s is a 415', async (ct) => {
    expect(await refusal(readJsonObject(request('{}', { 'content-type': ct })))).toEqual({ status: 415, body: { error: 'Unsupported media type' } });
  });

  it('a declared Content-Length over 1 MiB is a 413 before reading', async () => {
    const r = request('{}', { 'content-type': 'application/json', 'content-length': String(MAX_BODY_BYTES + 1) });
    expect(await refusal(readJsonObject(r))).toEqual({ status: 413, body: { error: 'Payload too large' } });
  });

  it('a body that grows past 1 MiB while read is a 413, and the rest is read off (so the client gets the answer)', async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 3 * MAX_BODY_BYTES) return controller.close();
        pulled += 256 * 1024;
        controller.enqueue(new Uint8Array(256 * 1024).fill(32));
      },
    });
    const r = new Request('http://x/', { method: 'POST', body, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit);
    expect(await refusal(readJsonObject(r))).toEqual({ status: 413, body: { error: 'Payload too large' } });
    expect(pulled).toBe(3 * MAX_BODY_BYTES);
  });

  it('exactly 1 MiB is read', async () => {
    const text = `{"a":"${'x'.repeat(MAX_BODY_BYTES - 8)}"}`;
    expect(Buffer.byteLength(text)).toBe(MAX_BODY_BYTES);
    expect(Object.keys(await readJsonObject(request(text)))).toEqual(['a']);
  });

  it.each([['empty', ''], ['invalid', '{'], ['array', '[1]'], ['null', 'null'], ['number', '1'], ['string', '"s"']])(
    'a body that is %s is a 400 with details.body ["Expected a JSON object"]',
    async (_name, body) => {
      expect(await refusal(readJsonObject(request(body)))).toEqual({
        status: 400, body: { error: 'Invalid payload', details: { body: ['Expected a JSON object'] } },
      });
    },
  );

  it('bytes that are not UTF-8 are a 400 on body', async () => {
    const r = request(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]));
    expect((await refusal(readJsonObject(r))).body.details).toEqual({ body: ['Expected a JSON object'] });
  });
});

describe('restFieldName: the one way back from a core path to a REST name', () => {
  it('a body that is the input names its fields without the variable, in snake_case; the whole input is the body', () => {
    const body = { input: 'body-as-input' } as const;
    expect(restFieldName(body, 'input.firstName')).toBe('first_name');
    expect(restFieldName(body, 'firstName')).toBe('first_name');
    expect(restFieldName(body, 'fields.0.mapsTo')).toBe('fields.0.maps_to');
    expect(restFieldName(body, 'input')).toBe('body');
  });

  it('query strings and bodies of variables name the variables in snake_case; a form keeps its own keys', () => {
    expect(restFieldName({ input: 'query' }, 'pageSize')).toBe('page_size');
    expect(restFieldName({ input: 'body-as-variables' }, 'metadata.referrer')).toBe('metadata.referrer');
    expect(restFieldName({ input: 'body-as-variables', keepDetailKeys: true }, 'workEmail')).toBe('workEmail');
  });
});

describe('the error translation', () => {
  const core = (code: string | undefined, message = 'm', details?: Record<string, string[]>) =>
    new GraphQLError(message, { extensions: { ...(code ? { code } : {}), ...(details ? { details } : {}) } });
  const snake = (key: string) => key.split('.').map(toSnake).join('.');

  it('BAD_USER_INPUT from a body is "Invalid payload" with details renamed to the REST field names', () => {
    expect(fromCoreError(core('BAD_USER_INPUT', 'x', { contactId: ['Not found in this account'], 'fields.0.mapsTo': ['y'] }), 'body', snake)).toEqual({
      status: 400, body: { error: 'Invalid payload', details: { contact_id: ['Not found in this account'], 'fields.0.maps_to': ['y'] } },
    });
  });

  it('BAD_USER_INPUT from a query string is "Invalid query"', () => {
    expect(fromCoreError(core('BAD_USER_INPUT', 'x', { pageSize: ['Must be from 1 to 100'] }), 'query', snake).body).toEqual({
      error: 'Invalid query', details: { page_size: ['Must be from 1 to 100'] },
    });
  });

  it('form field keys can be kept as the form spells them', () => {
    expect(fromCoreError(core('BAD_USER_INPUT', 'x', { workEmail: ['Required'] }), 'body', (k) => k).body.details).toEqual({ workEmail: ['Required'] });
  });

  it.each([
    ['UNAUTHENTICATED', 'Unauthorized', 401],
    ['FORBIDDEN', 'Forbidden: no access to this account', 403],
    ['FORBIDDEN', 'Forbidden: only the account owner can export account data', 403],
    ['NOT_FOUND', 'Form not found or inactive', 404],
  ])('%s with message "%s" is %i {"error": message}', (code, message, status) => {
    expect(fromCoreError(core(code, message), 'query', snake)).toEqual({ status, body: { error: message } });
  });

  it('INVALID_TRANSITION is 409 {"error":"Invalid transition"} naming status with the move (docs/decisions.md §18)', () => {
    const error = { message: 'Cannot move a deal from won to lost', extensions: { code: 'INVALID_TRANSITION', from: 'won', to: 'lost' } };
    expect(fromCoreError(error, 'body', snake)).toEqual({ status: 409, body: { error: 'Invalid transition', details: { status: ['Cannot move from won to lost'] } } });
  });

  it('RATE_LIMITED is 429 {"error":"Rate limit exceeded"} whatever the message', () => {
    expect(fromCoreError(core('RATE_LIMITED', 'slow down'), 'query', snake)).toEqual({ status: 429, body: { error: 'Rate limit exceeded' } });
  });

  it('SERVICE_UNAVAILABLE is 503 {"error":"Service unavailable"} with Retry-After', () => {
    expect(fromCoreError(core('SERVICE_UNAVAILABLE', 'db down at 10.0.0.1'), 'body', snake)).toEqual({
      status: 503, body: { error: 'Service unavailable' }, headers: { 'Retry-After': '5' },
    });
  });

  it('an internal or uncoded error is exactly {"error":"Internal server error"}, never its message', () => {
    for (const error of [core('INTERNAL_SERVER_ERROR', 'SELECT * FROM secrets'), core(undefined, 'TypeError: x is undefined')]) {
      expect(fromCoreError(error, 'body', snake)).toEqual({ status: 500, body: { error: 'Internal server error' } });
    }
  });

  it('every core error code has a REST rendering with the status of HTTP_STATUS', () => {
    for (const [code, status] of Object.entries(HTTP_STATUS) as [ErrorCode, number][]) {
      expect(fromCoreError(core(code, 'm', {}), 'body', snake).status, code).toBe(status);
    }
  });

  it('the HTTP-only failures', () => {
    expect(fromHttpError('ROUTE_NOT_FOUND')).toEqual({ status: 404, body: { error: 'Not found' } });
    expect(fromHttpError('METHOD_NOT_ALLOWED', ['GET', 'POST'])).toEqual({ status: 405, body: { error: 'Method not allowed' }, headers: { Allow: 'GET, POST' } });
    expect(invalidInput('query', { page: ['x'] }).body.error).toBe('Invalid query');
  });
});

describe('download', () => {
  const streamOf = (parts: (string | Error)[]) => {
    let i = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        const part = parts[i++];
        if (part === undefined) controller.close();
        else if (part instanceof Error) controller.error(part);
        else controller.enqueue(new TextEncoder().encode(part));
      },
    });
  };
  const exchange = (cut: boolean) => {
    const seen = { aborted: 0, logged: [] as unknown[] };
    const ex: Exchange = {
      signal: new AbortController().signal,
      abort: () => (seen.aborted++, cut),
      log: (e) => seen.logged.push(e),
    };
    return { ex, seen };
  };

  it('answers 200 with the type and an attachment file name, and streams every part', async () => {
    const { ex } = exchange(true);
    const r = await download(streamOf(['a,b\r\n', '1,2\r\n']), 'text/csv; charset=utf-8', 'contacts-2024-01-01.csv', ex);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="contacts-2024-01-01.csv"');
    expect(await r.text()).toBe('a,b\r\n1,2\r\n');
  });

  it('an empty stream is an empty file', async () => {
    expect(await (await download(streamOf([]), 'text/csv', 'f.csv', exchange(true).ex)).text()).toBe('');
  });

  it('a failure before the first byte rejects, so the caller answers with an error status', async () => {
    const boom = new Error('SELECT failed');
    await expect(download(streamOf([boom]), 'text/csv', 'f.csv', exchange(true).ex)).rejects.toBe(boom);
  });

  it('a failure after the first bytes is logged and cuts the connection; the body is never completed as if whole', async () => {
    const { ex, seen } = exchange(true);
    const r = await download(streamOf(['a', new Error('later')]), 'text/csv', 'f.csv', ex);
    const reader = r.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('a');
    await reader.read().catch(() => undefined);
    expect(seen.aborted).toBe(1);
    expect(seen.logged).toHaveLength(1);
  });

  it('with no connection to cut, the failure errors the body stream', async () => {
    const { ex } = exchange(false);
    const r = await download(streamOf(['a', new Error('later')]), 'text/csv', 'f.csv', ex);
    await expect(r.text()).rejects.toThrow('download failed');
  });

  it('a client that goes away cancels the source', async () => {
    const controller = new AbortController();
    let cancelled = false;
    const source = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array([65])),
      cancel: () => void (cancelled = true),
    });
    await download(source, 'text/csv', 'f.csv', { signal: controller.signal, abort: () => true, log: () => {} });
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cancelled).toBe(true);
  });
});

describe('the route table', () => {
  const field = (route: (typeof routes)[number]) => {
    const root = getOperationAST(route.operation)!.selectionSet.selections[0]!;
    return root.kind === 'Field' ? root.name.value : '';
  };
  const rulesOfRoute = (route: (typeof routes)[number]) =>
    rootRules(schema, getOperationAST(route.operation)!.operation === 'mutation' ? 'mutation' : 'query', field(route));

  it('lists the eight endpoints of the contract; every other route is marked an extension (docs/decisions.md §12)', () => {
    expect(routes.filter((r) => !r.extension).map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      'GET /api/v1/account/export',
      'GET /api/v1/contacts',
      'GET /api/v1/contacts/export',
      'GET /api/v1/deals',
      'GET /api/v1/invoices',
      'POST /api/v1/contacts',
      'POST /api/v1/deals',
      'POST /api/v1/forms/:form_id/submit',
    ]);
  });

  it('only the form submission is public', () => {
    expect(routes.filter((r) => rulesOfRoute(r)?.access === 'public').map((r) => r.path)).toEqual(['/api/v1/forms/:form_id/submit']);
  });

  it("each endpoint's GraphQL field declares the contract's rate limit", () => {
    const limits = Object.fromEntries(routes.map((r) => [`${r.method} ${r.path}`, rulesOfRoute(r)?.limit]));
    expect(limits).toMatchObject({
      'GET /api/v1/contacts': { max: 60, window: '1m', per: 'user' },
      'POST /api/v1/contacts': { max: 30, window: '1m', per: 'user' },
      'GET /api/v1/contacts/export': { max: 5, window: '1m', per: 'user' },
      'GET /api/v1/deals': { max: 60, window: '1m', per: 'user' },
      'POST /api/v1/deals': { max: 30, window: '1m', per: 'user' },
      'GET /api/v1/invoices': { max: 60, window: '1m', per: 'user' },
      'POST /api/v1/forms/:form_id/submit': { max: 5, window: '1m', per: 'ip' },
      'GET /api/v1/account/export': { max: 1, window: '1h', per: 'account' },
    });
  });
});
