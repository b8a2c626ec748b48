import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type RestResult, type TestApp } from '../helpers/app.js';
import { inline } from '../helpers/openapi.js';
import { serverUrlOf } from '../../src/rest/docs.js';

// docs/rest.md "The OpenAPI document": what integrators' own tools (Redocly's linter, ajv) make of it.

type Doc = {
  servers?: { url: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: object }> }> }>>;
  components: { schemas: Record<string, object> };
};

let t: TestApp;
let doc: Doc;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  doc = (await (await fetch(`${t.baseUrl}/api/v1/openapi.json`)).json()) as Doc;
  acc = await createAccount(t);
  await createContact(t, acc, { firstName: 'Ada', email: 'ada@example.com' });
});
afterAll(() => t?.close());

describe('the OpenAPI document, as standard tools read it', () => {
  it("passes Redocly's recommended rules with 0 errors", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    expect(problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  });

  it("leaves only the Redocly warnings docs/rest.md explains (who runs the service; the answers of no operation)", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    expect(problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`).sort()).toEqual([
      'info-license #/info',
      'no-unused-components #/components/responses/MethodNotAllowed',
      'no-unused-components #/components/responses/RouteNotFound',
    ]);
  });

  it('names a server, so a generated client has a base URL: the address the document was asked at', () => {
    expect(doc.servers?.[0]?.url).toBe(t.baseUrl);
  });

  it("names the server a trusted proxy forwards (X-Forwarded-Host/-Proto; the test app trusts one hop)", async () => {
    const headers = { 'x-forwarded-host': 'api.example.com', 'x-forwarded-proto': 'https' };
    const forwarded = (await (await fetch(`${t.baseUrl}/api/v1/openapi.json`, { headers })).json()) as Doc;
    expect(forwarded.servers).toEqual([expect.objectContaining({ url: 'https://api.example.com' })]);
  });

  it('PUBLIC_URL wins; forwarded headers count only as far as TRUST_PROXY trusts; a host that is not one is ignored', () => {
    const request = (headers: Record<string, string>) => new Request('http://10.0.0.5:3000/api/v1/openapi.json', { headers });
    const url = new URL('http://10.0.0.5:3000/api/v1/openapi.json');
    const proxied = { 'x-forwarded-host': 'evil.example, api.example.com', 'x-forwarded-proto': 'https' };
    expect(serverUrlOf(request(proxied), url, { publicUrl: 'https://crm.example.com', trustProxy: 1 })).toBe('https://crm.example.com');
    expect(serverUrlOf(request(proxied), url, { trustProxy: 1 })).toBe('https://api.example.com');
    expect(serverUrlOf(request(proxied), url, { trustProxy: 2 })).toBe('https://evil.example');
    expect(serverUrlOf(request(proxied), url, { trustProxy: 0 })).toBe('http://10.0.0.5:3000');
    expect(serverUrlOf(request({ 'x-forwarded-host': 'a.example/<script>' }), url, { trustProxy: 1 })).toBe('http://10.0.0.5:3000');
  });

  it('names each record and each answer in components.schemas, and the answers refer to them', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Contact', 'Deal', 'Invoice', 'Import', 'WebhookEndpoint', 'ListContactsResponse', 'ContactByIdResponse']));
    const byId = doc.paths['/api/v1/contacts/{id}']!.get!.responses['200']!.content!['application/json']!.schema;
    expect(byId).toEqual({ $ref: '#/components/schemas/ContactByIdResponse' });
    expect(doc.components.schemas.ContactByIdResponse).toMatchObject({ properties: { data: { $ref: '#/components/schemas/Contact' } } });
  });

  it("says `next_cursor`, REST's name, where a parameter's description names GraphQL's nextCursor", () => {
    const cursor = (doc.paths['/api/v1/contacts']!.get as unknown as { parameters: { name: string; description: string }[] }).parameters.find((p) => p.name === 'cursor')!;
    expect(cursor.description).toContain('`next_cursor`');
    expect(JSON.stringify(doc)).not.toContain('nextCursor');
  });

  it('describes every tag', () => {
    for (const tag of doc.tags) expect(tag.description, tag.name).toBeTruthy();
  });

  it('declares the RateLimit-* headers on every answer of a limited route (they are sent on refusals too)', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const limited = Object.values(operation.responses).some((r) => r.headers && 'RateLimit-Limit' in r.headers);
        if (!limited) continue;
        for (const [status, response] of Object.entries(operation.responses)) {
          // 431 is the HTTP parser's, before any route or limit: none of the app's headers (src/http/client-error.ts).
          if (status === '431') {
            expect(response).toEqual({ $ref: '#/components/responses/HeadersTooLarge' });
            continue;
          }
          expect(Object.keys(response.headers ?? {}), `${method} ${path} ${status}`).toContain('RateLimit-Remaining');
        }
      }
    }
  });

  it('says money has at most two decimals as a rule of its own, not multipleOf (ajv accepts 19.99 and 0.07)', () => {
    const text = JSON.stringify(doc);
    expect(text).not.toContain('multipleOf');
    const ajv = new Ajv2020({ strict: false });
    const value = (doc.paths['/api/v1/deals']!.post as unknown as { requestBody: { content: { 'application/json': { schema: { properties: { value: object } } } } } })
      .requestBody.content['application/json'].schema.properties.value;
    expect(value).toMatchObject({ 'x-decimal-places': 2 });
    for (const ok of [19.99, 0.07, 1200.51]) expect(ajv.validate(value, ok), String(ok)).toBe(true);
  });

  it('states that strings are trimmed: "   " is refused as the server refuses it, " a@b.example " accepted as the server accepts it', () => {
    const ajv = new Ajv2020({ strict: false });
    const body = (doc.paths['/api/v1/contacts']!.post as unknown as { requestBody: { content: { 'application/json': { schema: { properties: Record<string, object> } } } } })
      .requestBody.content['application/json'].schema.properties;
    expect(body.first_name).toMatchObject({ 'x-trimmed': true });
    expect(ajv.validate(body.first_name!, '   ')).toBe(false);
    expect(ajv.validate(body.first_name!, ' Ada ')).toBe(true);
    expect(ajv.validate(body.email!, ' a@b.example ')).toBe(true);
  });
});

describe('real answers validate with ajv against the document', () => {
  const validate = (method: string, path: string, r: RestResult) => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const response = doc.paths[path]![method]!.responses[String(r.status)]!;
    const schema = response.content?.['application/json']?.schema;
    expect(schema, `${method} ${path} ${r.status} has a JSON schema`).toBeDefined();
    const ok = ajv.validate(inline(schema, doc.components.schemas) as object, r.body);
    expect(ok, JSON.stringify(ajv.errors)).toBe(true);
  };

  it('lists, creates, refusals and the public submit all validate', async () => {
    validate('get', '/api/v1/contacts', await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`, { as: acc.owner }));
    validate('get', '/api/v1/contacts', await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&page=0`, { as: acc.owner }));
    validate('get', '/api/v1/contacts', await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}`));
    validate('post', '/api/v1/contacts', await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body: { account_id: acc.id, first_name: 'Grace', value: 1 } }));
    validate('post', '/api/v1/contacts', await t.rest('POST', '/api/v1/contacts', { as: acc.owner, body: { account_id: acc.id, first_name: ' Grace ' } }));
    validate('post', '/api/v1/deals', await t.rest('POST', '/api/v1/deals', { as: acc.owner, body: { account_id: acc.id, title: 'Big', value: 19.99 } }));
    validate('get', '/api/v1/deals', await t.rest('GET', `/api/v1/deals?account_id=${acc.id}`, { as: acc.member }));
    validate('get', '/api/v1/invoices', await t.rest('GET', `/api/v1/invoices?account_id=${acc.id}`, { as: acc.outsider }));
    validate('post', '/api/v1/forms/{form_id}/submit', await t.rest('POST', '/api/v1/forms/not-a-form/submit', { body: { data: {} } }));
  });
});
