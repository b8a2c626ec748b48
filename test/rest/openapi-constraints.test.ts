/**
 * Each constraint the OpenAPI document states beyond types (docs/decisions.md §26: one of `amount` or
 * `lines`, `match_on` only with `mode: upsert`, a note's body not blank, a webhook's event types, the
 * patterns of a currency and of a company's domain, the payments list's `page_size`, 431, the
 * Idempotency-Key's 400) is what the service enforces:
 *
 * - the rules the document cannot derive from zod are held to the rule itself on generated values
 *   (the pattern or enum accepts a value exactly when the rule does);
 * - against the service, bodies generated from the document's own schema (test/helpers/json-schema-arbitrary.ts)
 *   and made to break one constraint are refused by the schema (ajv) and answered 400 naming that field
 *   for that reason; those keeping it are accepted by the schema and never refused for that reason.
 *
 * Every answer is also checked against the document by the harness (t.rest).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientErrors } from '../../src/http/client-error.js';
import { optionalDomain } from '../../src/links/domain.js';
import { currencyCode } from '../../src/validation.js';
import { createEndpointInput } from '../../src/webhooks/endpoint.service.js';
import { createNoteInput } from '../../src/activities/note.service.js';
import { startImportArgs } from '../../src/imports/import.service.js';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { jsonSchemaArbitraries, type Generator, type Schema } from '../helpers/json-schema-arbitrary.js';
import { Unlimited } from '../helpers/unlimited-store.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const TIMEOUT = 240_000;

let t: TestApp;
let acc: TestAccount;
let doc: any;
let gen: Generator;
let ajv: Ajv2020;
let contactId: string;

beforeAll(async () => {
  t = await createTestApp({ store: new Unlimited(), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  acc = await createAccount(t);
  contactId = (await createContact(t, acc)).id;
  doc = (await t.rest('GET', '/api/v1/openapi.json')).body;
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
  gen = jsonSchemaArbitraries(doc, hint);
}, TIMEOUT);
afterAll(() => t?.close());

/** Real values where a generated one would only be refused for naming nothing (ids, URLs the test server takes). */
function hint(name: string, schema: Schema): fc.Arbitrary<unknown> | undefined {
  const nullable = Array.isArray(schema.type) && schema.type.includes('null');
  if (name === 'account_id') return fc.constant(acc.id);
  if (name === 'contact_id') return fc.constant(contactId);
  if (['deal_id', 'company_id', 'stage_id', 'owner_id', 'assignee_id'].includes(name)) return fc.constant(null);
  if (name === 'url') return fc.constant('http://127.0.0.1:9/hook');
  if (name === 'email') return fc.uuid({ version: 4 }).map((u) => `${u.slice(0, 8)}@example.com`);
  // Unique in the account: none, or a fresh one.
  if (name === 'external_id' || name === 'invoice_number') return nullable ? fc.constant(null) : fc.uuid({ version: 4 }).map((u) => `N-${u.slice(0, 12)}`);
  if (name === 'domain') return fc.uuid({ version: 4 }).map((u) => `${u.slice(0, 8)}.example`);
  if (name === 'currency') return fc.constantFrom('USD', 'EUR', ...(nullable ? [null] : []));
  return undefined;
}

const bodySchema = (path: string, method: string): Schema => doc.paths[path][method].requestBody.content['application/json'].schema;
const paramSchema = (path: string, method: string, name: string): Schema => doc.paths[path][method].parameters.find((p: { name: string }) => p.name === name).schema;
/** A schema of the document, compiled in the document (its `$ref`s resolve). */
const validator = (pointer: string) => ajv.getSchema(`openapi.json#${pointer}`)!;
const bodyPointer = (path: string, method: string) => `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/requestBody/content/application~1json/schema`;

type Case = {
  name: string;
  method: 'POST' | 'PATCH';
  path: string;
  /** The request path (an id filled in), when it differs from the template. */
  at?: () => Promise<string>;
  field: (key: string) => boolean;
  /** The messages the service gives for this constraint, on that field. */
  reasons: (message: string) => boolean;
  /** Bodies (from the document's valid ones) breaking the constraint. */
  broken: (valid: fc.Arbitrary<Record<string, unknown>>, schema: Schema) => fc.Arbitrary<Record<string, unknown>>;
};

const without = (body: Record<string, unknown>, ...keys: string[]) => Object.fromEntries(Object.entries(body).filter(([key]) => !keys.includes(key)));
const notNull = (s: Schema, name: string) => gen.valid(s, name).filter((v) => v !== null);

let draft = '';
const CASES: Case[] = [
  {
    name: 'an invoice has amount or lines, exactly one',
    method: 'POST', path: '/api/v1/invoices',
    field: (key) => key === 'amount',
    reasons: (m) => m === 'Give amount or lines, not both' || m === 'Required (or lines)',
    broken: (valid, s) =>
      fc.oneof(
        fc.tuple(valid, notNull(s.properties.amount, 'amount'), notNull(s.properties.lines, 'lines')).map(([b, amount, lines]) => ({ ...b, amount, lines })),
        valid.chain((b) => fc.constantFrom(without(b, 'amount', 'lines'), { ...b, amount: null, lines: null })),
      ),
  },
  {
    name: 'a draft\'s change gives amount or lines, not both',
    method: 'PATCH', path: '/api/v1/invoices/{id}',
    at: async () => {
      draft ||= (await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: '2030-01-31', amount: 10 } })).body.data.id;
      return `/api/v1/invoices/${draft}`;
    },
    field: (key) => key === 'amount',
    reasons: (m) => m === 'Give amount or lines, not both',
    broken: (valid, s) => fc.tuple(valid, notNull(s.properties.amount, 'amount'), notNull(s.properties.lines, 'lines')).map(([b, amount, lines]) => ({ ...b, amount, lines })),
  },
  {
    name: 'a batch takes match_on only with mode upsert, and requires it there',
    method: 'POST', path: '/api/v1/contacts/batch',
    field: (key) => key === 'match_on',
    reasons: (m) => m === 'Unknown field' || m === 'Required',
    broken: (valid, s) =>
      fc.oneof(
        fc.tuple(valid, fc.constantFrom(undefined, 'create'), gen.valid(s.properties.match_on, 'match_on')).map(([b, mode, on]) => ({ ...without(b, 'mode'), ...(mode ? { mode } : {}), match_on: on })),
        valid.map((b) => ({ ...without(b, 'match_on'), mode: 'upsert' })),
      ),
  },
  {
    name: 'a note\'s body is not blank, at most 10,000 characters',
    method: 'POST', path: '/api/v1/notes',
    field: (key) => key === 'body',
    reasons: (m) => m === 'Required' || m === 'Must be at most 10000 characters',
    broken: (valid) => fc.tuple(valid, fc.constantFrom('', ' ', '\t\n', '   \r\n ', 'x'.repeat(10_001), ' '.repeat(10_001))).map(([b, body]) => ({ ...b, body })),
  },
  {
    name: 'a webhook\'s event types are the catalogue\'s (or *)',
    method: 'POST', path: '/api/v1/webhook_endpoints',
    field: (key) => key.startsWith('event_types'),
    reasons: (m) => m.startsWith('Unknown event type'),
    broken: (valid) =>
      fc.tuple(valid, fc.constantFrom('contact.created', '*'), fc.constantFrom('contact.creat', 'Contact.Created', 'all', 'invoice.*', ' *', 'deal.won')).map(([b, good, bad]) => ({ ...b, event_types: [good, bad] })),
  },
  {
    name: 'a currency is an ISO 4217 code Node knows, any case',
    method: 'POST', path: '/api/v1/invoices',
    field: (key) => key === 'currency',
    reasons: (m) => m.startsWith('Unknown ISO 4217 currency code'),
    broken: (valid) => fc.tuple(valid, fc.constantFrom('XXX', 'QQQ', 'US', 'USDD', 'U SD', 'EURO', '€', 'usd1', '')).map(([b, currency]) => ({ ...b, currency })),
  },
  {
    name: 'a company\'s domain is a host name (or blank)',
    method: 'POST', path: '/api/v1/companies',
    field: (key) => key === 'domain',
    reasons: (m) => m === 'Must be a host name such as acme.com',
    broken: (valid) => fc.tuple(valid, fc.constantFrom('localhost', 'www.com', '1.2.3.4', 'acme..com', '-acme.com', 'acme-.com', 'acme.com:x', 'a b.com', `${'a'.repeat(64)}.com`, 'http://', 'acme.123')).map(([b, domain]) => ({ ...b, domain })),
  },
];

describe('the constraints the document states beyond types are the rules\' own', () => {
  it('a company\'s domain pattern takes a value exactly when the rule does (normalizeDomain)', () => {
    const pattern = new RegExp(bodySchema('/api/v1/companies', 'post').properties.domain.pattern, 'u');
    const label = fc.oneof(fc.stringMatching(/^[a-z0-9]{1,8}$/), fc.stringMatching(/^[A-Za-z0-9-]{1,10}$/), fc.constantFrom('www', 'WWW', '123', 'x'.repeat(63), 'y'.repeat(64), ''));
    const host = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join('.'));
    const part = (values: string[]) => fc.constantFrom('', ...values);
    const domain = fc
      .tuple(part([' ', '\t']), part(['https://', 'HTTP://', 'ftp://', 'x:']), part(['user@', 'a:b@', '@', 'mailto:x@']), part(['www.', 'WWW.']), host, part(['.', '..']), part([':80', ':', ':x']), part(['/', '/about?x=1', '#top', '?q', '/a\nb']), part([' ', '\n']))
      .map((parts) => parts.join(''));
    const long = fc.integer({ min: 240, max: 260 }).map((n) => `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(Math.max(1, n - 183))}.com`);
    fc.assert(
      fc.property(fc.oneof(domain, long, fc.string({ maxLength: 30 }).filter((s) => !/[\u0000\ud800-\udfff]/.test(s))), (value) => {
        expect(pattern.test(value), JSON.stringify(value)).toBe(optionalDomain.safeParse(value).success);
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });

  it('a currency\'s pattern takes a value exactly when the rule does (ISO 4217 as Node knows it, any case, trimmed)', () => {
    const pattern = new RegExp(bodySchema('/api/v1/invoices', 'post').properties.currency.pattern, 'u');
    const letters = fc.stringMatching(/^[A-Za-z]{2,4}$/);
    const known = fc.constantFrom(...Intl.supportedValuesOf('currency')).chain((code) => fc.constantFrom(code, code.toLowerCase(), `${code[0]}${code.slice(1).toLowerCase()}`));
    fc.assert(
      fc.property(fc.tuple(fc.constantFrom('', ' ', '\t'), fc.oneof(known, letters, fc.string({ maxLength: 4 }).filter((s) => !/[\u0000\ud800-\udfff]/.test(s))), fc.constantFrom('', ' ')), ([a, code, b]) => {
        const value = `${a}${code}${b}`;
        expect(pattern.test(value), JSON.stringify(value)).toBe(currencyCode.safeParse(value).success);
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });

  it('derives from the rules what they are keyed or valued by: a line\'s REST-spelled bounds, the one status a new invoice takes', () => {
    const invoice = bodySchema('/api/v1/invoices', 'post');
    const line = invoice.properties.lines.items.properties;
    expect(line.unit_price).toMatchObject({ minimum: 0, maximum: 9_999_999_999.99 });
    expect(line.tax_rate).toMatchObject({ minimum: 0, maximum: 100 });
    expect(line.discount_percent).toMatchObject({ minimum: 0, maximum: 100 });
    expect(invoice.properties.status.enum).toEqual(['draft', null]);
  });

  it('an import\'s delimiter and encoding take a value exactly when the rule does', () => {
    const parameter = (name: string) => ajv.compile(paramSchema('/api/v1/imports', 'post', name));
    const rule = (name: string) => startImportArgs.shape[name as 'delimiter' | 'encoding'];
    const delimiters = [',', ';', '|', 'tab', '\t', 'TAB', ' ', ',,', 'comma', ':', '\\t', ''];
    const encodings = ['utf-8', 'UTF-8', 'Utf8', 'latin1', 'LATIN9', 'cp1252', 'us-ascii', 'utf-16', 'utf-32', 'windows-1251', ' utf-8', 'klingon', ''];
    for (const [name, values] of [['delimiter', delimiters], ['encoding', encodings]] as const) {
      const schema = parameter(name);
      for (const value of values) expect(schema(value), `${name} ${JSON.stringify(value)}`).toBe(rule(name).safeParse(value).success);
    }
  });

  it('a webhook\'s event types enum is what the rule takes, and the body\'s pattern and bound are the note rule\'s', () => {
    const items = bodySchema('/api/v1/webhook_endpoints', 'post').properties.event_types.items;
    const rule = createEndpointInput.shape.eventTypes;
    for (const type of [...items.enum, 'nope', 'contact.*', 'CONTACT.CREATED']) expect(rule.safeParse([type]).success, type).toBe(items.enum.includes(type));
    const body = bodySchema('/api/v1/notes', 'post').properties.body;
    expect(body).toMatchObject({ pattern: '\\S', maxLength: 10_000 });
    const note = createNoteInput.shape.body;
    const schema = ajv.compile(body);
    for (const value of ['', ' ', '\n\t', 'x', ' x ', '**bold**', 'y'.repeat(10_000), 'y'.repeat(10_001), '😀'.repeat(10_000), '😀'.repeat(10_001)]) {
      expect(schema(value), JSON.stringify(value.slice(0, 12))).toBe(note.safeParse(value).success);
    }
  });
});

describe('bodies generated from the document: broken, refused by the schema and by the service naming the field; kept, never refused for it', () => {
  for (const c of CASES) {
    it(`${c.method} ${c.path}: ${c.name}`, async () => {
      const schema = bodySchema(c.path, c.method.toLowerCase());
      const validate = validator(bodyPointer(c.path, c.method.toLowerCase()));
      const valid = gen.valid(schema) as fc.Arbitrary<Record<string, unknown>>;
      const send = async (body: Record<string, unknown>) => {
        const r = await t.rest(c.method, c.at ? await c.at() : c.path, { as: acc.owner, body });
        const named = Object.entries((r.body?.details ?? {}) as Record<string, string[]>).filter(([key]) => c.field(key));
        return { r, reasons: named.flatMap(([, messages]) => messages).filter(c.reasons), named };
      };
      await fc.assert(
        fc.asyncProperty(valid, async (body) => {
          expect(validate(body), `${JSON.stringify(body)}: ${JSON.stringify(validate.errors)}`).toBe(true);
          const { r, reasons } = await send(body);
          expect(reasons, `${JSON.stringify(body)} -> ${r.status} ${r.text}`).toEqual([]);
        }),
        { seed: SEED, numRuns: RUNS },
      );
      await fc.assert(
        fc.asyncProperty(c.broken(valid, schema), async (body) => {
          expect(validate(body), `${JSON.stringify(body).slice(0, 300)} is refused by the schema`).toBe(false);
          const { r, reasons, named } = await send(body);
          expect(r.status, `${JSON.stringify(body).slice(0, 300)} -> ${r.text}`).toBe(400);
          expect(named.length, `${JSON.stringify(body).slice(0, 300)} -> ${r.text}`).toBeGreaterThan(0);
          // Broken in a way the service names for this rule, or (a value that is no text at all) for its type.
          expect(reasons.length + named.flatMap(([, m]) => m).filter((m) => /^(Expected|Must not contain)/.test(m)).length, r.text).toBeGreaterThan(0);
        }),
        { seed: SEED, numRuns: RUNS },
      );
    }, TIMEOUT);
  }
});

describe('the payments list\'s parameters and the refusals every route shares', () => {
  it('page_size is 1 to 100 and cursor is not with page, named by their REST names as the schema states', async () => {
    const invoice = (await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: '2030-01-31', amount: 10 } })).body.data.id;
    const path = '/api/v1/invoices/{id}/payments';
    const pageSize = ajv.compile(paramSchema(path, 'get', 'page_size'));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -5, max: 200 }), async (size) => {
        const r = await t.rest('GET', `/api/v1/invoices/${invoice}/payments?page_size=${size}`, { as: acc.owner });
        expect(r.status === 200, `${size} -> ${r.text}`).toBe(pageSize(size));
        if (r.status !== 200) expect(r.body).toEqual({ error: 'Invalid query', details: { page_size: ['Must be from 1 to 100'] } });
      }),
      { seed: SEED, numRuns: 40 },
    );
    const both = await t.rest('GET', `/api/v1/invoices/${invoice}/payments?page=2&cursor=abc`, { as: acc.owner });
    expect([both.status, Object.keys(both.body.details)]).toEqual([400, ['cursor']]);
  }, TIMEOUT);

  it('a malformed Idempotency-Key is the same 400 on a DELETE as on a POST: Invalid payload on idempotency_key, as the document says', async () => {
    const invoice = (await t.rest('POST', '/api/v1/invoices', { as: acc.owner, body: { account_id: acc.id, due_date: '2030-01-31', amount: 10 } })).body.data.id;
    const refusal = { error: 'Invalid payload', details: { idempotency_key: ['Must be 1 to 255 printable ASCII characters'] } };
    const del = await t.rest('DELETE', `/api/v1/invoices/${invoice}`, { as: acc.owner, headers: { 'idempotency-key': 'a b' } });
    const post = await t.rest('POST', `/api/v1/invoices/${invoice}/status`, { as: acc.owner, body: { status: 'sent' }, headers: { 'idempotency-key': 'a b' } });
    const cancel = await t.rest('DELETE', `/api/v1/imports/${invoice}`, { as: acc.owner, headers: { 'idempotency-key': 'a b' } });
    expect([del.status, del.body]).toEqual([400, refusal]);
    expect([post.status, post.body]).toEqual([400, refusal]);
    expect([cancel.status, cancel.body]).toEqual([400, refusal]);
    expect(doc.paths['/api/v1/invoices/{id}'].delete.responses['400'].content['application/json'].example).toEqual(refusal);
  });

  it('an import\'s mapping too long for the request line is the 431 every operation lists, in the body the document states', async () => {
    const operation = doc.paths['/api/v1/imports'].post;
    expect(operation.responses['431']).toEqual({ $ref: '#/components/responses/HeadersTooLarge' });
    expect(operation.parameters.find((p: { name: string }) => p.name === 'mapping').description).toContain('431');
    for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, { responses: object }>>)) {
      for (const [method, op] of Object.entries(methods)) expect(op.responses, `${method} ${path}`).toHaveProperty('431');
    }
    // As src/main.ts serves the app: Node's parser refusals in the contract's JSON.
    const server: Server = createServer(t.app);
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      // A spreadsheet's German headers: 9,000 characters, each `ä` six bytes once percent-encoded.
      const mapping = JSON.stringify(Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`Spalte ${i} für Verträge`, '-']))).slice(0, 8999) + '}';
      expect(mapping.length).toBe(9000);
      expect(mapping.length).toBeLessThanOrEqual(paramSchema('/api/v1/imports', 'post', 'mapping').maxLength);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/imports?account_id=${acc.id}&object=contacts&mapping=${encodeURIComponent(mapping)}`;
      const r = await fetch(url, { method: 'POST', body: 'First Name\r\nAda\r\n', headers: { authorization: `Bearer ${acc.owner.token}`, 'content-type': 'text/csv' } });
      const body = await r.json();
      expect(r.status, JSON.stringify(body)).toBe(431);
      expect(ajv.getSchema('openapi.json#/components/responses/HeadersTooLarge/content/application~1json/schema')!(body)).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
