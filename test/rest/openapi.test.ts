import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../src/rest/routes.js';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// GET /api/v1/openapi.json is generated at start from the route table, the operations, the GraphQL
// schema, the zod rules and the error translator; real answers must match it: the harness's rest()
// checks every /api/v1 answer (test/helpers/openapi.ts), here and in every other test file.

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, unknown>; responses: Record<string, unknown>; securitySchemes: Record<string, { in?: string; name?: string }> };
};
type Operation = {
  operationId: string;
  description?: string;
  security?: unknown[];
  parameters?: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[];
  requestBody?: { content: Record<string, { schema: Record<string, any> }> };
  responses: Record<string, { headers?: Record<string, unknown>; content: Record<string, { schema: object }> }>;
  'x-graphql-operation': string;
};

let t: TestApp;
let acc: TestAccount;
let doc: Doc;
let ip = 0;
const nextIp = () => `10.77.${Math.floor(++ip / 250) % 250}.${(ip % 250) + 1}`;

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  const r = await t.rest('GET', '/api/v1/openapi.json');
  expect(r.status).toBe(200);
  doc = r.body;
});
afterAll(() => t.close());

const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1', async () => {
    expect(doc.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it('describes every route of the table, with its GraphQL operation', () => {
    const described = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(described.sort()).toEqual(routes.map((r) => `${r.method} ${openApiPath(r.path)}`).sort());
    for (const route of routes) {
      const operation = doc.paths[openApiPath(route.path)]![route.method.toLowerCase()]!;
      const name = route.operation.definitions.find((d) => d.kind === 'OperationDefinition')!;
      expect(operation['x-graphql-operation']).toBe((name as { name?: { value: string } }).name?.value);
      expect(operation.responses['500']).toBeDefined();
      expect(operation.responses['503']).toBeDefined();
    }
  });

  it('states a rate limit and its 429 on every route: REST spends no cost budget, so a route without a limit would be unbounded', () => {
    const unlimited = routes.filter((route) => {
      const operation = doc.paths[openApiPath(route.path)]![route.method.toLowerCase()]!;
      return !operation.responses['429'] || !operation.description?.includes('Rate limit:');
    });
    expect(unlimited.map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });

  it('every PATCH answering an ETag takes If-Match and lists its 412 (docs/rest.md, Headers)', () => {
    const patches = Object.entries(doc.paths).flatMap(([path, ops]) => (ops.patch ? [[path, ops.patch] as const] : []));
    const versioned = patches.filter(([, op]) => op.responses['200']?.headers?.ETag);
    expect(versioned.map(([path]) => path)).toContain('/api/v1/webhook_endpoints/{id}');
    const without = versioned.filter(([, op]) => !op.parameters?.some((p) => p.name === 'If-Match' && p.in === 'header') || !op.responses['412']);
    expect(without.map(([path]) => path)).toEqual([]);
  });

  it('names REST parameters as the REST layer reads them, with the domain constraints', () => {
    const list = doc.paths['/api/v1/contacts']!.get!;
    const param = (name: string) => list.parameters!.find((p) => p.name === name)!;
    expect(param('account_id')).toMatchObject({ in: 'query', required: true, schema: { type: 'string', format: 'uuid' } });
    expect(param('page_size').schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 25 });
    expect(param('search').schema).toMatchObject({ 'x-trimmed': true, description: expect.stringContaining('at most 200 characters') });
    expect(param('type').schema.enum).toEqual(expect.arrayContaining(['lead', 'client', 'past_client', 'vendor', 'other']));

    const contact = doc.paths['/api/v1/contacts']!.post!.requestBody!.content['application/json']!.schema;
    expect(contact.required).toEqual(['account_id', 'first_name']);
    expect(contact.additionalProperties).toBe(false);
    // Trimmed before judged: non-blank instead of minLength, lengths counted after trimming (docs/rest.md).
    expect(contact.properties.first_name).toMatchObject({ type: 'string', pattern: '\\S', 'x-trimmed': true, description: expect.stringContaining('at most 100') });
    expect(contact.properties.email).toMatchObject({ 'x-trimmed': true, description: expect.stringContaining('at most 254') });

    const deal = doc.paths['/api/v1/deals']!.post!.requestBody!.content['application/json']!.schema;
    expect(deal.properties.probability).toMatchObject({ minimum: 0, maximum: 100 });
    expect(deal.properties.expected_close_date).toMatchObject({ format: 'date' });
    expect(deal.properties.stage_id).toMatchObject({ format: 'uuid' });

    const submission = doc.paths['/api/v1/forms/{form_id}/submit']!.post!.requestBody!.content['application/json']!.schema;
    expect(submission.required).toEqual(['data']);
    expect(submission.properties.data).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
    expect(submission.properties.metadata.properties.referrer).toMatchObject({ 'x-trimmed': true, description: expect.stringContaining('at most 2048') });
    expect(submission.properties.metadata.properties.page).toMatchObject({ 'x-trimmed': true, description: expect.stringContaining('at most 2048') });
  });

  it('says how to authenticate: bearer JWT or the session cookie; the form submit is public', () => {
    expect(doc.components.securitySchemes.sessionCookie).toMatchObject({ in: 'cookie', name: 'session' });
    expect(doc.paths['/api/v1/forms/{form_id}/submit']!.post!.security).toEqual([]);
    // Each operation lists both session schemes and, with its scope, the API key (docs/decisions.md §15).
    expect(doc.paths['/api/v1/contacts']!.get!.security).toEqual([{ bearerAuth: [] }, { sessionCookie: [] }, { apiKey: ['contacts:read'] }]);
  });
});

describe('real answers match the document (each t.rest() below throws if not)', () => {
  it('GET /api/v1/contacts (200 list envelope)', async () => {
    await createContact(t, acc, { phone: null, company: null });
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.member });
    expect(r.status).toBe(200);
    expect(r.body.data.length).toBeGreaterThan(0);
  });

  it('POST /api/v1/contacts (201 {data})', async () => {
    const r = await t.rest('POST', '/api/v1/contacts', {
      as: acc.owner,
      body: { account_id: acc.id, first_name: 'Ada', email: `${unique('ada')}@example.com`, contact_type: 'client' },
    });
    expect(r.status).toBe(201);
  });

  it('POST /api/v1/deals and GET /api/v1/deals (with and without contact and stage)', async () => {
    const contact = await createContact(t, acc);
    const stage = await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'Qualified' } });
    const full = await t.rest('POST', '/api/v1/deals', {
      as: acc.owner,
      body: { account_id: acc.id, title: 'Big one', value: 1200.5, probability: 70, expected_close_date: '2025-12-31', contact_id: contact.id, stage_id: stage.id },
    });
    expect(full.status).toBe(201);
    const bare = await t.rest('POST', '/api/v1/deals', { as: acc.owner, body: { account_id: acc.id, title: 'Small one' } });
    expect(bare.status).toBe(201);

    const list = await t.rest('GET', `/api/v1/deals?account_id=${acc.id}`, { as: acc.member });
    expect(list.status).toBe(200);
    expect(list.body.data.some((d: { contacts: unknown }) => d.contacts === null)).toBe(true);
    expect(list.body.data.some((d: { pipeline_stages: unknown }) => d.pipeline_stages !== null)).toBe(true);
  });

  it('GET /api/v1/invoices (with and without contact)', async () => {
    const contact = await createContact(t, acc);
    await t.db.invoice.create({ data: { accountId: acc.id, contactId: contact.id, invoiceNumber: unique('INV'), amount: '99.90', dueDate: new Date('2025-02-01') } });
    await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: unique('INV'), amount: '10.00', dueDate: new Date('2025-03-01'), status: 'sent' } });
    const r = await t.rest('GET', `/api/v1/invoices?account_id=${acc.id}`, { as: acc.member });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(2);
  });

  it('the check itself refuses an answer that does not match (an undescribed key, a wrong type, status, header or media type)', async () => {
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.member });
    const path = '/api/v1/contacts';
    const check = (answer: Partial<typeof r>, method = 'GET', pathname = path) =>
      t.openapi.problems(method, pathname, { ...r, ...answer, text: JSON.stringify(answer.body ?? r.body) });
    expect(check({})).toEqual([]);
    expect(check({ body: { ...r.body, extra: 1 } })).not.toEqual([]);
    expect(check({ body: { ...r.body, total: '1' } })).not.toEqual([]);
    expect(check({ body: { ...r.body, data: [{ ...r.body.data[0], created_at: 'yesterday' }] } })).not.toEqual([]);
    expect(check({ body: { ...r.body, data: [{ ...r.body.data[0], contact_type: 'friend' }] } })).not.toEqual([]);
    expect(check({ status: 418 })).toEqual(['GET /api/v1/contacts: the document describes no 418 answer']);
    expect(check({ headers: new Headers({ 'content-type': 'application/json' }) })).toContain('GET /api/v1/contacts 200: header X-Request-Id is missing');
    expect(check({ headers: new Headers({ ...Object.fromEntries(r.headers), 'content-type': 'text/plain' }) })).not.toEqual([]);
    expect(check({}, 'DELETE')).toEqual(['DELETE /api/v1/contacts: no operation is described, so only 404 or 405 may answer, not 200']);
    expect(() => t.openapi.check('GET', path, { ...r, status: 418 })).toThrow(/does not match the OpenAPI document:\n  GET \/api\/v1\/contacts: the document describes no 418 answer/);
  });

  it('an unknown path is the documented 404, a known path with another method the documented 405 with Allow', async () => {
    expect(doc.components.responses).toHaveProperty('RouteNotFound');
    expect(doc.components.responses).toHaveProperty('MethodNotAllowed');
    const unknown = await t.rest('GET', '/api/v1/no/such/path');
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'Not found' }]);
    const wrong = await t.rest('DELETE', '/api/v1/contacts', { as: acc.owner });
    expect([wrong.status, wrong.body, wrong.headers.get('allow')]).toEqual([405, { error: 'Method not allowed' }, 'GET, POST']);
  });

  it('400 on a query parameter and on a body', async () => {
    const query = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&page_size=0`, { as: acc.member });
    expect(query.status).toBe(400);
    const body = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body: { account_id: acc.id } });
    expect(body.status).toBe(400);
    expect(body.body.details.first_name).toEqual(['Required']);
  });

  it('401 without a token, 403 for an outsider, 403 for a member on the account export', async () => {
    const anonymous = await t.rest('GET', `/api/v1/deals?account_id=${acc.id}`);
    expect(anonymous.status).toBe(401);
    const outsider = await t.rest('GET', `/api/v1/invoices?account_id=${acc.id}`, { as: acc.outsider });
    expect(outsider.status).toBe(403);
    const member = await t.rest('GET', `/api/v1/account/export?account_id=${acc.id}`, { as: acc.member });
    expect(member.status).toBe(403);
  });

  it('415 and 413 on a body route', async () => {
    const text = await t.rest('POST', '/api/v1/contacts', { as: acc.owner, rawBody: 'first_name=Ada', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    const big = await t.rest('POST', '/api/v1/deals', { as: acc.owner, rawBody: JSON.stringify({ title: 'x'.repeat(1024 * 1024 + 1) }) });
    expect(big.status).toBe(413);
  });

  it('POST /api/v1/forms/{form_id}/submit: 200, and 404 for an unknown form', async () => {
    const created = await t.gql(
      'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }',
      { input: { accountId: acc.id, name: unique('Form'), fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] } },
      { as: acc.owner },
    );
    expect(created.errors).toBeUndefined();
    const path = `/api/v1/forms/${created.data.createLeadForm.id}/submit`;
    const r = await t.rest('POST', path, { body: { data: { email: `${unique('lead')}@example.com` }, metadata: { page: '/pricing' } }, clientIp: nextIp() });
    expect(r.status).toBe(200);
    const missing = await t.rest('POST', '/api/v1/forms/00000000-0000-4000-8000-000000000000/submit', { body: { data: {} }, clientIp: nextIp() });
    expect(missing.status).toBe(404);
  });

  it('the downloads: contacts CSV and the account export document', async () => {
    const csv = await t.rest('GET', `/api/v1/contacts/export?account_id=${acc.id}`, { as: acc.member });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const example = doc.paths['/api/v1/contacts/export']!.get!.responses['200']!.content['text/csv'] as unknown as { example: string };
    expect(csv.text.split('\r\n')[0]).toBe(example.example.split('\r\n')[0]);

    const json = await t.rest('GET', `/api/v1/account/export?account_id=${acc.id}`, { as: acc.owner });
    expect(json.status).toBe(200);
  });
});

describe('the interactive reference', () => {
  it('GET /api/v1/docs serves Swagger UI from this server, pointed at the document', async () => {
    const page = await t.rest('GET', '/api/v1/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const urls = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) expect(url.startsWith('/api/v1/docs/')).toBe(true); // no CDN
    for (const url of urls) expect((await t.rest('GET', url)).status).toBe(200);
    expect((await t.rest('GET', '/api/v1/docs/init.js')).text).toContain('"/api/v1/openapi.json"');
  });

  it('serves only the files it lists', async () => {
    expect((await t.rest('GET', '/api/v1/docs/package.json')).status).toBe(404);
    expect((await t.rest('GET', '/api/v1/docs/..%2F..%2Fpackage.json')).status).toBe(404);
    expect((await t.rest('POST', '/api/v1/openapi.json', { body: {} })).status).toBe(405);
  });
});
