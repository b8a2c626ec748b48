import {
  GraphQLString,
  isEnumType,
  getNamedType,
  getOperationAST,
  isNonNullType,
  Kind,
  typeFromAST,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLInputType,
  type OperationDefinitionNode,
  type VariableDefinitionNode,
} from 'graphql/index.js';
import { HTTP_STATUS, lacksScopeMessage, MESSAGES, type ErrorCode } from '../errors.js';
import { restScope, type ApiScope } from '../scopes.js';
import { notHonoured, rootRules, type FieldRules } from '../graphql/rules.js';
import { answerReadScope } from '../graphql/write-answer.js';
import { schema } from '../schema.js';
import { changesState } from '../http/origin.js';
import { fromCoreError, fromHttpError, invalidInput, type InputSource, type RestError } from './errors.js';
import { rateLimitHeaders } from './headers.js';
import { CUSTOM_FIELD_PARAMETER, CUSTOM_VARIABLES, customSort, takesCustomFields } from './custom-field-params.js';
import { restEnum, toSnake } from './input.js';
import { answerSchema, inputSchema, nonNullInput, refuses, requiredBy, stateRule, zodElement, zodField, type JsonSchema, type Named } from './json-schema.js';
import { createInvoiceInput, updateInvoiceInput } from '../invoices/invoice.service.js';
import { createEndpointInput } from '../webhooks/endpoint.service.js';
import { EVENT_TYPES } from '../events/types.js';
import { optionalDomain } from '../links/domain.js';
import { currencyCode } from '../validation.js';
import { startImportArgs } from '../imports/import.service.js';
import { DELIMITERS, ENCODING_NAMES, ENCODINGS } from '../imports/dialect.js';
import { FILE_VARIABLES, routes, type Answer, type Route } from './routes.js';
import { MAX_IMPORT_BYTES, MAX_IMPORT_ROWS } from '../imports/intake.js';
import { idempotencyKeyProblems } from '../idempotency/idempotency.service.js';
import { maxHeaderSize } from 'node:http';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted: the import is stored and QUEUED; `Location` is where to follow it',
  204: 'Deleted; no body',
  304: '`If-None-Match` names the record\'s current version: nothing changed since that read; no body',
  400: 'Invalid input: `details` maps each failing field to its messages (a missing one reads `Required`)',
  401: 'No valid session token or API key (unknown, revoked or expired)',
  403: 'Not the owner or a team member of the account (the same answer whether or not the account exists; for an API key: not its account), an API key without the operation\'s scope, or a cookie-authenticated request that changes state (a POST, or an export) sent from another site',
  404: 'Not found: no such record, or not visible to the caller (the same answer)',
  409: 'A request with the same Idempotency-Key is still in progress, or the change is not allowed in the record\'s state (a refused status move names `status` in `details`)',
  412: '`If-Match` names a version the record no longer has: GET it again',
  413: 'Body larger than 1 MiB',
  415: 'Body is not JSON (Content-Type must be application/json)',
  422: 'Idempotency-Key already used with a different payload',
  429: 'Rate limit exceeded; retry after `Retry-After` seconds',
  500: 'Unexpected failure (never any detail)',
  503: 'The database cannot be reached; retry after `Retry-After` seconds',
};

const HEADERS: Record<string, JsonSchema> = {
  'X-Request-Id': { description: 'Echoes a sane client X-Request-Id, else a new UUID', schema: { type: 'string' } },
  'RateLimit-Limit': { description: 'Calls allowed in the window', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Calls left in the window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until a call is freed', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
  'Content-Disposition': { description: 'attachment; filename="…"', schema: { type: 'string' } },
  Allow: { description: 'The methods the path has, e.g. `GET, POST`', schema: { type: 'string' } },
  Location: { description: 'Where the accepted resource can be followed', schema: { type: 'string' } },
  ETag: { description: 'The record\'s version (its `updated_at`, quoted): send it back as `If-Match` to change only that version', schema: { type: 'string' } },
};
/** Only on some successes (a replay), so declared where it may be sent and not among the components. */
const REPLAYED = {
  description: '`true` on an answer given back for a retry with the same Idempotency-Key and payload (docs/rest.md#idempotency)',
  required: false,
  schema: { type: 'string', enum: ['true'] },
};
/** Read on a GET of a versioned record only (src/rest/answers/record.ts). */
const IF_NONE_MATCH = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'An `ETag` of this record (or `*`): when it is still the current version, 304 without a body',
  schema: { type: 'string' },
};
const IF_MATCH = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'An `ETag` of this record: the change applies only to that version, else 412 and nothing is written',
  schema: { type: 'string' },
};

// --- What the rules enforce that zod cannot state in JSON Schema ---------------------------------
// Each is stated once, beside the rule it describes (src/rest/json-schema.ts stateRule), so every input
// judged by that rule carries it; test/rest/openapi-constraints.test.ts holds each to the rule it states.

// An invoice's money is `amount` or `lines`, exactly one (null reads as absent): a refinement over two
// fields (moneyProblems, src/invoices/invoice-money.ts), which zod's JSON Schema output leaves out.
stateRule(createInvoiceInput, {
  oneOf: [
    { title: 'amount', required: ['amount'], properties: { amount: { not: { type: 'null' } } } },
    { title: 'lines', required: ['lines'], properties: { lines: { not: { type: 'null' } } } },
  ],
});
// A draft's change gives one of them at most (the other is kept or replaced: src/invoices/invoice-lines.service.ts).
stateRule(updateInvoiceInput, { not: { required: ['amount', 'lines'], properties: { amount: { not: { type: 'null' } }, lines: { not: { type: 'null' } } } } });

// A webhook's event types: a refinement against the catalogue (src/events/types.ts), which zod cannot
// state; the enum is the catalogue as the rule itself takes it (each value asked).
const eventType = zodElement(zodField(createEndpointInput, 'eventTypes')!)!;
stateRule(eventType, (rule) => ({ enum: ['*', ...EVENT_TYPES].filter((type) => !refuses(rule, type)) }));

// A currency: any case, trimmed, then one of the ISO 4217 codes Node knows (a refinement against
// Intl.supportedValuesOf, which zod cannot state): the codes the rule takes, each letter in either case
// (JSON Schema patterns have no case-insensitive flag).
const anyCase = (text: string) => [...text].map((c) => (c.toLowerCase() === c.toUpperCase() ? c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') : `[${c.toUpperCase()}${c.toLowerCase()}]`)).join('');
stateRule(currencyCode, (rule) => {
  const byFirst = new Map<string, string[]>();
  for (const code of Intl.supportedValuesOf('currency').filter((c) => !refuses(rule, c))) byFirst.set(code[0]!, [...(byFirst.get(code[0]!) ?? []), code.slice(1)]);
  const codes = [...byFirst].map(([first, rests]) => `${anyCase(first)}(?:${rests.map(anyCase).join('|')})`).join('|');
  return { pattern: `^\\s*(?:${codes})\\s*$`, examples: ['EUR', 'usd'] };
});

// An import's `delimiter` and `encoding`: refinements against the names the file reader knows
// (src/imports/dialect.ts), which zod cannot state: those names as the rule takes them, each asked
// (an encoding in any case, as the rule lower-cases it).
stateRule(zodField(startImportArgs, 'delimiter')!, (rule) => ({ enum: Object.keys(DELIMITERS).filter((name) => !refuses(rule, name)) }));
stateRule(zodField(startImportArgs, 'encoding')!, (rule) => ({ pattern: `^(?:${Object.keys(ENCODINGS).filter((name) => !refuses(rule, name)).map(anyCase).join('|')})$`, examples: ENCODING_NAMES }));

// A company's domain: normalised by a transform (src/links/domain.ts normalizeDomain), so zod states
// nothing of it. What it takes, as a pattern: blank (none), or a host of two labels or more (the last
// not numeric, 253 characters at most), with a scheme, user, `www.`, trailing dot, port and path around
// it allowed; any case, trimmed. Held to normalizeDomain by generated values in the test.
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST = `(?![A-Za-z0-9.-]{253}(?:[A-Za-z0-9-]|\\.[A-Za-z0-9.-]))(?:${LABEL}\\.)+(?=[A-Za-z0-9-]*[A-Za-z-])${LABEL}`;
export const DOMAIN_PATTERN =
  `^\\s*(?:(?:[A-Za-z][A-Za-z0-9+.-]*://)?(?:[^@/?#]*@)?(?:[Ww][Ww][Ww]\\.${HOST}|(?![Ww][Ww][Ww]\\.)${HOST})\\.?(?::[0-9]*)?(?:[/?#][^\\n\\r\\u2028\\u2029]*)?)?\\s*$`;
stateRule(optionalDomain, { pattern: DOMAIN_PATTERN, examples: ['acme.com', 'https://www.Acme.com/about'] });

const EXTENSION = 'Beyond the REST contract (docs/decisions.md §12): an extension the service adds, not part of the customer\'s contract.';

// Listed headers are always sent (`required`); `maybe` ones only when the answer met the limit
// (a refusal decided before the limit is consulted, like a 401, carries none).
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });
const optional = (name: string) => ({ ...HEADERS[name], required: false });
const headers = (names: string[], maybe: string[] = []) => ({
  ...Object.fromEntries(maybe.map((n) => [n, optional(n)])),
  ...Object.fromEntries(['X-Request-Id', ...names].map((n) => [n, header(n)])),
});

const X_FILE_NAME = { name: 'X-File-Name', in: 'header', required: false, description: "The file's name, shown on the import", schema: { type: 'string' } as JsonSchema };
const FILE_BODY = {
  required: true,
  content: {
    'text/csv': {
      schema: {
        type: 'string',
        description:
          `RFC 4180 CSV, UTF-8 (a BOM is allowed), at most ${MAX_IMPORT_BYTES / 1024 / 1024} MiB and ${MAX_IMPORT_ROWS} rows; the first row names the columns ` +
          '(field names or the contacts export\'s labels, case- and space-insensitively; `mapping` overrides). Streamed: send it as it is read.',
      },
      example: 'First Name,Last Name,Email,Phone\r\nAda,Lovelace,ada@example.com,\'+1 660 555 0198\r\n',
    },
  },
};

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Makes a retry safe for 24 hours: the same key and payload give back the first answer; another payload is 422',
  schema: headerSchema('Idempotency-Key', (value) => Object.keys(idempotencyKeyProblems(new Headers({ 'Idempotency-Key': value }))).length === 0),
};

/**
 * A header's schema as its check takes it (the check is a function, not a zod rule): the characters
 * it takes among those a header may carry (Latin-1), as ranges, and the longest value it takes
 * (found by halving), each asked of the check.
 */
function headerSchema(name: string, takes: (value: string) => boolean): JsonSchema {
  const ok = (value: string) => {
    try {
      return takes(value);
    } catch {
      return false; // a value no header can carry (Headers refuses it)
    }
  };
  const ranges: [number, number][] = [];
  for (let code = 0; code <= 0xff; code++) {
    if (!ok(String.fromCharCode(code))) continue;
    const last = ranges.at(-1);
    if (last && last[1] === code - 1) last[1] = code;
    else ranges.push([code, code]);
  }
  if (ranges.length === 0) throw new Error(`OpenAPI: ${name} takes no character`);
  const hex = (code: number) => `\\x${code.toString(16).padStart(2, '0')}`;
  const sample = String.fromCharCode(ranges[0]![0]);
  let [taken, refused] = [1, 1 << 16];
  if (ok(sample.repeat(refused))) throw new Error(`OpenAPI: ${name} takes any length`);
  while (refused - taken > 1) {
    const middle = Math.floor((taken + refused) / 2);
    if (ok(sample.repeat(middle))) taken = middle;
    else refused = middle;
  }
  return { type: 'string', minLength: ok('') ? 0 : 1, maxLength: taken, pattern: `^[${ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('')}]+$` };
}

const LIMITED = Object.keys(rateLimitHeaders({ allowed: true, limit: 1, remaining: 1, resetSeconds: 1 }));
const REFUSED = Object.keys(rateLimitHeaders({ allowed: false, limit: 1, remaining: 0, resetSeconds: 1 }));

const TAGS: Record<string, string> = {
  contacts: 'People and companies of an account: list, create, export as CSV',
  deals: 'Opportunities in pipeline stages',
  invoices: 'Billing records of an account',
  forms: 'Public lead forms that website visitors submit',
  account: 'The account as a whole: the owner\'s data export',
  imports: 'CSV files of contacts or deals written in the background (docs/imports.md)',
};

/**
 * The OpenAPI 3.1 document of /api/v1, built from the same sources the REST layer runs on.
 * `serverUrl` is where clients reach it (src/rest/docs.ts picks it per request), so generated
 * clients have a base URL to call.
 */
export function buildOpenApi(options: { cookieName: string; serverUrl: string }): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const named: Named = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = replayable(describeRoute(route, named));
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'CRM & billing API',
      version: '1',
      description: [
        'REST interface of the CRM and billing service. Every endpoint is a named GraphQL operation run in-process',
        '(`x-graphql-operation`); GraphQL for internal tools is served at `/graphql`.',
        '',
        'Errors are JSON `{"error": "<message>"}` (plus `details` on 400). An unknown path under /api/v1 is 404',
        '`{"error":"Not found"}` (`#/components/responses/RouteNotFound`); a known path with another method is 405',
        '`{"error":"Method not allowed"}` with `Allow` (`#/components/responses/MethodNotAllowed`).',
        'Checks run in the order 401 → 429 → 400 → 403 (the public form: 429 → 415/413 → 404 → 400; the account export:',
        '401 → 400 → 403 → 429).',
        '',
        '## API keys for integrations',
        '',
        'A system that integrates (a website, a billing system, a nightly sync) uses an API key rather than a person\'s session.',
        'The account owner creates one with the GraphQL mutation `createApiKey(input: {accountId, name, scopes, expiresAt})`',
        '(or an operator with `npm run cli -- api-key create --account <id> --name <n> --scopes contacts:read,...`); the answer',
        'shows the secret `crm_sk_<prefix>_<random>` once. Send it as `Authorization: Bearer crm_sk_...` (never as a cookie):',
        '',
        '    curl -H "Authorization: Bearer crm_sk_..." "<server>/api/v1/contacts?account_id=<account>"',
        '',
        'A key acts for its own account only and within its scopes: each operation names the scope it needs (`apiKey` in its',
        '`security`, and `x-api-key-scope`). Without it: 403 `{"error":"Forbidden: this API key lacks the scope contacts:write"}`.',
        'An unknown, revoked or expired key: 401 `{"error":"Unauthorized"}`. Rate limits count per key, with the numbers shown.',
      ].join('\n'),
    },
    servers: [{ url: options.serverUrl, description: 'This service (PUBLIC_URL, else the address this document was asked at)' }],
    tags: [...new Set(routes.map(tagOf))].map((name) => ({ name, description: TAGS[name] ?? name })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(named).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A session token of the identity provider' },
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'crm_sk_<prefix>_<secret>',
          description: 'An API key of the account (createApiKey, or the CLI): `Authorization: Bearer crm_sk_...`, never a cookie. Its scopes are listed per operation.',
        },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: options.cookieName,
          description: 'The same token as a cookie; a POST with it must come from an allowed origin (ALLOWED_ORIGINS)',
        },
      },
      headers: Object.fromEntries(Object.entries(HEADERS).map(([name, h]) => [name, { ...h, required: true }])),
      // Answers of no operation: a path under /api/v1 that names none, or a method its path lacks.
      responses: {
        RouteNotFound: errorResponse(404, [fromHttpError('ROUTE_NOT_FOUND')], [], 'No such path under /api/v1'),
        MethodNotAllowed: errorResponse(405, [fromHttpError('METHOD_NOT_ALLOWED', ['GET'])], [], 'The path has no such method; `Allow` lists those it has'),
        HeadersTooLarge: HEADERS_TOO_LARGE,
      },
    },
    security: [{ bearerAuth: [] }, { sessionCookie: [] }],
  };
}

/** An operation taking an Idempotency-Key: its success may be a replay, which says so (`Idempotent-Replayed`, docs/decisions.md §26). */
function replayable(operation: JsonSchema): JsonSchema {
  const parameters = (operation.parameters ?? []) as { name: string }[];
  if (!parameters.some((p) => p.name === IDEMPOTENCY_KEY.name)) return operation;
  for (const [status, response] of Object.entries(operation.responses as Record<string, { headers?: Record<string, unknown> }>)) {
    if (status.startsWith('2')) response.headers = { ...response.headers, 'Idempotent-Replayed': REPLAYED };
  }
  return operation;
}

/** Who may call a signed-in operation: a session (bearer or cookie), or a key holding the field's scope. */
function securityOf(rules: FieldRules) {
  if (rules.access === 'public') return [];
  return [{ bearerAuth: [] }, { sessionCookie: [] }, ...(rules.scope ? [{ apiKey: [restScope(rules.scope)] }] : [])];
}

const tagOf = (route: Route) => route.path.split('/')[3]!;
const words = (name: string) => name.replace(/(?<=[a-z0-9])([A-Z])/g, ' $1').replace(/ [A-Z]/g, (c) => c.toLowerCase());
const per = { user: 'per user', ip: 'per client IP address', account: 'per account' } as const;
const windowText = (window: string) => {
  const [, n, unit] = /^(\d+)([smh])$/.exec(window)!;
  const name = { s: 'second', m: 'minute', h: 'hour' }[unit as 's' | 'm' | 'h'];
  return n === '1' ? name : `${n} ${name}s`;
};

/** A route operation's one root field. */
const rootField = (document: DocumentNode) => (getOperationAST(document) as OperationDefinitionNode).selectionSet.selections[0] as FieldNode;

const fragmentsOf = (document: DocumentNode) =>
  Object.fromEntries(document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));

function describeRoute(route: Route, named: Named): JsonSchema {
  const operation = getOperationAST(route.operation) as OperationDefinitionNode;
  const root = operation.selectionSet.selections[0] as FieldNode;
  const rootType = operation.operation === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
  const field = rootType.getFields()[root.name.value]!;
  const rules = rootRules(schema, operation.operation === 'mutation' ? 'mutation' : 'query', field.name);
  if (!rules) throw new Error(`OpenAPI: ${route.method} ${route.path} (${field.name}) declares no rules`);
  // An upload's retry is known only once its file is stored: the route's `queue` mutation takes the key.
  const queue = route.answer.kind === 'upload' ? rootRules(schema, 'mutation', rootField(route.answer.queue).name.value)! : null;
  const idempotent = (queue ?? rules).idempotent;
  const doc = { ...rules, rules: rules.input ?? rules.documents };
  const limit = rules.limit;
  const fragments = fragmentsOf(route.operation);

  const pathParams = route.path.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1));
  const variables = operation.variableDefinitions ?? [];
  const inPath = (d: VariableDefinitionNode) => pathParams.includes(toSnake(d.variable.name.value));
  const fromFile = (d: VariableDefinitionNode) => route.input === 'query-with-file' && FILE_VARIABLES.includes(d.variable.name.value);
  // A list's custom-field conditions and order are read from `cf.*` and `sort=cf.<key>`, not by their variables' names.
  const custom = takesCustomFields(operation);
  const byCustom = (d: VariableDefinitionNode) => custom && (CUSTOM_VARIABLES as readonly string[]).includes(d.variable.name.value);
  const queryParameter = (d: VariableDefinitionNode) => (custom && d.variable.name.value === 'sort' ? customSort(parameter(d, 'query', root, field, doc)) : parameter(d, 'query', root, field, doc));
  const parameters: { name: string; in: string; required: boolean }[] = [
    ...variables.filter(inPath).map((d) => parameter(d, 'path', root, field, doc)),
    ...(route.input === 'query' || route.input === 'query-with-file' ? variables.filter((d) => !inPath(d) && !fromFile(d) && !byCustom(d)).map(queryParameter) : []),
    ...(custom ? [CUSTOM_FIELD_PARAMETER] : []),
    // The file's name is a variable of the operation, judged by its rule (a length).
    ...(route.input === 'query-with-file' ? [{ ...X_FILE_NAME, schema: doc.rules ? nonNullInput(GraphQLString, zodField(doc.rules, 'fileName')) : X_FILE_NAME.schema }] : []),
    ...(idempotent ? [IDEMPOTENCY_KEY] : []),
    ...(route.ifMatch ? [IF_MATCH] : []),
    ...(conditionalGet(route) ? [IF_NONE_MATCH] : []),
  ];

  const body = route.input === 'query' ? undefined : route.input === 'query-with-file' ? FILE_BODY : route.variants ? variantsBody(route) : requestBody(route, variables.filter((d) => !inPath(d)), root, field, doc);
  const bodyRequired = ((body?.content as Record<string, { schema: JsonSchema }> | undefined)?.['application/json']?.schema.required ?? []) as string[];
  const exampleField = parameters.find((p) => p.required && p.in === 'query')?.name ?? bodyRequired[0] ?? 'body';

  const description = [
    route.extension && EXTENSION,
    queue ? field.description?.replace(`\n\n${notHonoured(rules)}`, '') : field.description,
    limit && `Rate limit: ${limit.max} per ${windowText(limit.window)} ${per[limit.per]}${limit.per === 'user' ? ' (per API key for a key)' : ''}.`,
    rules.scope ? `API keys: needs the scope \`${restScope(rules.scope)}\`${rules.inputScope ? ` and, by the input, one of ${rules.inputScope.may.map((s) => `\`${restScope(s)}\``).join(', ')}` : ''}.` : rules.access !== 'public' && 'API keys: not allowed (a session token only).',
  ].filter(Boolean);
  return {
    operationId: operation.name!.value,
    summary: words(operation.name!.value),
    ...(description.length ? { description: description.join('\n\n') } : {}),
    tags: [tagOf(route)],
    security: securityOf(rules),
    ...(rules.scope ? { 'x-api-key-scope': restScope(rules.scope) } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: {
      ...(conditionalGet(route) ? { 304: { description: STATUS_TEXT[304], headers: headers(['ETag', ...(limit ? LIMITED : [])]) } } : {}),
      ...byName(success(route.answer, withReceipt(answerSchema(field.type, root.selectionSet, fragments, named), operation.operation === 'mutation' ? answerReadScope(field) : undefined, named), limit !== undefined, named), `${operation.name!.value}Response`, named),
      ...errorResponses(route, { ...rules, idempotent }, limit !== undefined, exampleField),
    },
    'x-graphql-operation': operation.name!.value,
    'x-graphql-field': `${rootType.name}.${field.name}`,
    ...(route.extension ? { 'x-contract-extension': true } : {}),
  };
}

/** A GET answering a versioned record: it takes If-None-Match and may answer 304. */
const conditionalGet = (route: Route) => route.method === 'GET' && route.answer.kind === 'record' && !route.answer.unversioned;

/**
 * A write's record, or what a key without the record's read scope reads of it (docs/decisions.md
 * §26, src/graphql/write-answer.ts): the same fields, of which only those it may read are present.
 */
function withReceipt(record: JsonSchema, readScope: ApiScope | undefined, named: Named): JsonSchema {
  if (!readScope) return record;
  let shown = record; // a record's named schema may name another (Contact: ContactItem)
  while (typeof shown.$ref === 'string') shown = named[shown.$ref.replace('#/components/schemas/', '')]!;
  const { properties } = shown as { properties: Record<string, JsonSchema> };
  const receipt = {
    type: 'object',
    description: `What an API key without \`${restScope(readScope)}\` reads of the record it wrote: \`id\`, \`status\` and \`updated_at\` where the record has them, and the fields it sent.`,
    properties,
    required: ['id'],
    additionalProperties: false,
  };
  if (typeof record.$ref !== 'string') return { anyOf: [record, receipt] };
  const name = `${record.$ref.replace('#/components/schemas/', '')}WriteReceipt`; // one per record, referenced
  named[name] ??= receipt;
  return { anyOf: [record, { $ref: `#/components/schemas/${name}` }] };
}

/** A success answer's JSON body as a named schema (`ListContactsResponse`), referenced: generators name its type. */
function byName<T extends object>(responses: T, name: string, named: Named): T {
  for (const response of Object.values(responses) as ({ content?: Record<string, { schema: JsonSchema }> } | undefined)[]) {
    const media = response?.content?.['application/json'];
    if (!media) continue;
    named[name] = media.schema;
    media.schema = { $ref: `#/components/schemas/${name}` };
  }
  return responses;
}

/** A GraphQL description as REST says it: a field it names in backticks by its REST name (`nextCursor` -> `next_cursor`). */
const restWords = (text: string) => text.replace(/`([a-z]+[A-Z][A-Za-z]*)`/g, (_, name: string) => `\`${toSnake(name)}\``);

/** The argument of the root field a variable is passed to (its default, its description, its zod rule). */
function argumentOf(root: FieldNode, field: GraphQLField<unknown, unknown>, variable: string) {
  const node = root.arguments?.find((a) => a.value.kind === Kind.VARIABLE && a.value.name.value === variable);
  return field.args.find((a) => a.name === (node?.name.value ?? variable));
}

/** The field's declared rules, with the zod schema its arguments are judged by (or documented with). */
type RouteDoc = FieldRules & { rules?: FieldRules['input'] };

/** A query value percent-encoded takes up to 9 bytes a character (a 3-byte UTF-8 character, each byte `%XX`). */
const ENCODED_BYTES_PER_CHARACTER = 9;
/** Whether a value the schema allows can overflow the request line on its own: then the answer may be 431. */
const mayOverflow = (value: JsonSchema) => typeof value.maxLength === 'number' && value.maxLength * ENCODED_BYTES_PER_CHARACTER > maxHeaderSize;
const OVERFLOW = `The request line and headers must fit in ${maxHeaderSize / 1024} KiB together, percent-encoding included: a value this long may not, and is then answered 431 (\`#/components/responses/HeadersTooLarge\`).`;

function parameter(definition: VariableDefinitionNode, where: 'path' | 'query', root: FieldNode, field: GraphQLField<unknown, unknown>, doc: RouteDoc) {
  const variable = definition.variable.name.value;
  const type = typeFromAST(schema, definition.type) as GraphQLInputType;
  const arg = argumentOf(root, field, variable);
  const rules = doc.rules && arg ? zodField(doc.rules, arg.name) : undefined;
  const value = nonNullInput(type, rules); // a query string has no null
  // An enum's default as REST shows its values (`CREATED_AT` -> `created_at`).
  const fallback = isEnumType(getNamedType(type)) && typeof arg?.defaultValue === 'string' ? restEnum(arg.defaultValue) : arg?.defaultValue;
  const own = arg?.description ? restWords(arg.description) : undefined;
  const description = mayOverflow(value) ? `${own ? `${own.replace(/(?<![.!?])$/, '.')} ` : ''}${OVERFLOW}` : own;
  return {
    name: toSnake(variable),
    in: where,
    required: where === 'path' || isNonNullType(type),
    ...(description ? { description } : {}),
    schema: ['string', 'number', 'boolean'].includes(typeof fallback) ? { ...value, default: fallback } : value,
  };
}

function requestBody(route: Route, variables: readonly VariableDefinitionNode[], root: FieldNode, field: GraphQLField<unknown, unknown>, doc: RouteDoc) {
  let body: JsonSchema;
  if (route.input === 'body-as-input') {
    // The rules of the `input` argument where they are the arguments' (an update's `{id, input, expectedUpdatedAt}`), else the input's own.
    const rules = doc.rules && (zodField(doc.rules, 'input') ?? doc.rules);
    body = inputSchema(field.args.find((a) => a.name === 'input')!.type, rules);
    // Variables the body carries beside the input (a create's `account_id` where the account is an argument of its own).
    const inPath = new Set([...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]));
    for (const definition of variables) {
      const variable = definition.variable.name.value;
      if (variable === 'input' || variable === route.ifMatch || inPath.has(variable)) continue;
      const type = typeFromAST(schema, definition.type) as GraphQLInputType;
      body = { ...body, properties: { [toSnake(variable)]: inputSchema(type, doc.rules && zodField(doc.rules, variable)), ...(body.properties as object) } };
      if (isNonNullType(type)) body = { ...body, required: [toSnake(variable), ...((body.required as string[] | undefined) ?? [])] };
    }
  } else {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const definition of variables) {
      const variable = definition.variable.name.value;
      const type = typeFromAST(schema, definition.type) as GraphQLInputType;
      const arg = argumentOf(root, field, variable);
      const rule = doc.rules && arg ? zodField(doc.rules, arg.name) : undefined;
      properties[toSnake(variable)] = inputSchema(type, rule);
      if (isNonNullType(type) || (arg?.defaultValue === undefined && requiredBy(rule))) required.push(toSnake(variable));
    }
    body = { type: 'object', properties, required, additionalProperties: false };
  }
  return { required: true, content: { 'application/json': { schema: body } } };
}

/**
 * The body of a route whose key chooses among operations (docs/decisions.md §16): the key, every
 * variant's variables, and per variant (`if` the key names it, the first when it is left out) what it
 * requires beyond the others and what only the others take, refused as the service refuses it
 * (`match_on` only with upsert, and required there: `Unknown field`, `Required`).
 */
function variantsBody(route: Route) {
  const { key, operations } = route.variants!;
  const names = Object.keys(operations);
  const bodies = Object.values(operations).map((operation) => {
    const op = getOperationAST(operation) as OperationDefinitionNode;
    const root = op.selectionSet.selections[0] as FieldNode;
    const field = schema.getMutationType()!.getFields()[root.name.value]!;
    const rules = rootRules(schema, 'mutation', field.name)!;
    const body = requestBody(route, op.variableDefinitions ?? [], root, field, { ...rules, rules: rules.input }).content['application/json'].schema;
    return { properties: body.properties as Record<string, JsonSchema>, required: body.required as string[] };
  });
  const properties: Record<string, JsonSchema> = {
    [key]: { type: 'string', enum: names, default: names[0], description: names.length > 1 ? `Which operation: \`${names[0]}\` (the default) or ${names.slice(1).map((n) => `\`${n}\``).join(', ')}` : 'Which operation (the only one)' },
  };
  for (const body of bodies) {
    for (const [name, value] of Object.entries(body.properties)) {
      if (properties[name] && JSON.stringify(properties[name]) !== JSON.stringify(value)) throw new Error(`OpenAPI: ${route.path}: the variants differ on ${name}`);
      properties[name] = value;
    }
  }
  const required = bodies.map((b) => b.required).reduce((all, some) => all.filter((name) => some.includes(name)));
  // A subschema naming a property it requires (as linters want): the body's own schema of it applies already.
  const declared = (names: string[]) => Object.fromEntries(names.map((name) => [name, true]));
  const rules = bodies.flatMap((body, index) => {
    const more = body.required.filter((name) => !required.includes(name));
    const others = Object.keys(properties).filter((name) => name !== key && !(name in body.properties));
    if (more.length === 0 && others.length === 0) return [];
    return [{
      if: { properties: { [key]: { const: names[index] } }, ...(index === 0 ? {} : { required: [key] }) },
      then: {
        ...(more.length ? { properties: declared(more), required: more } : {}),
        ...(others.length ? { not: others.length === 1 ? { properties: declared(others), required: others } : { anyOf: others.map((name) => ({ properties: declared([name]), required: [name] })) } } : {}),
      },
    }];
  });
  const body = { type: 'object', properties, required, additionalProperties: false, ...(rules.length ? { allOf: rules } : {}) };
  return { required: true, content: { 'application/json': { schema: body } } };
}

/**
 * A batch item has its `id` (and `data`, for a caller with the read scope) or its `details`, never
 * both (src/rest/answers/batch.ts).
 */
function batchSchema(selection: JsonSchema): JsonSchema {
  const items = (selection.properties as Record<string, JsonSchema>).data!.items as JsonSchema;
  const { details, ...written } = items.properties as Record<string, JsonSchema>;
  const { id: _id, data: _data, ...failed } = items.properties as Record<string, JsonSchema>;
  const oneOf = [
    { ...items, properties: written, required: ['index', 'status', 'id'] },
    { ...items, properties: { ...failed, details }, required: ['index', 'status', 'details'] },
  ];
  const object = Array.isArray(selection.type) ? { ...selection, type: 'object' } : selection;
  return { ...object, properties: { ...(object.properties as object), data: { type: 'array', items: { oneOf } } } };
}

function success(answer: Answer, selection: JsonSchema, limited: boolean, named: Named) {
  const extra = limited ? LIMITED : [];
  switch (answer.kind) {
    case 'batch':
      return { 200: { description: STATUS_TEXT[200], headers: headers(extra), content: { 'application/json': { schema: batchSchema(selection) } } } };
    case 'as-is':
      return { 200: { description: STATUS_TEXT[200], headers: headers(extra), content: { 'application/json': { schema: selection } } } };
    case 'page': {
      // `page`, where selected, is left out of a page read by cursor, never null (src/rest/answers/page.ts).
      const properties = selection.properties as Record<string, JsonSchema>;
      const page = properties.page
        ? {
            ...selection,
            properties: { ...properties, page: { type: 'integer', minimum: 1, description: 'Absent on a page read by `cursor`' } },
            required: (selection.required as string[]).filter((name) => name !== 'page'),
          }
        : selection;
      return { 200: { description: STATUS_TEXT[200], headers: headers(extra), content: { 'application/json': { schema: page } } } };
    }
    case 'created': {
      const wrapped = { type: 'object', properties: { data: selection }, required: ['data'], additionalProperties: false };
      return { 201: { description: STATUS_TEXT[201], headers: headers(extra), content: { 'application/json': { schema: wrapped } } } };
    }
    case 'record': {
      const wrapped = { type: 'object', properties: { data: selection }, required: ['data'], additionalProperties: false };
      return { 200: { description: STATUS_TEXT[200], headers: headers([...(answer.unversioned ? [] : ['ETag']), ...extra]), content: { 'application/json': { schema: wrapped } } } };
    }
    case 'no-content':
      return { 204: { description: STATUS_TEXT[204], headers: headers(extra) } };
    case 'list': {
      const wrapped = { type: 'object', properties: { data: selection }, required: ['data'], additionalProperties: false };
      return { 200: { description: STATUS_TEXT[200], headers: headers(extra), content: { 'application/json': { schema: wrapped } } } };
    }
    case 'upload': {
      const queueRoot = rootField(answer.queue);
      const queueField = schema.getMutationType()!.getFields()[queueRoot.name.value]!;
      const data = answerSchema(queueField.type, queueRoot.selectionSet, fragmentsOf(answer.queue), named);
      const wrapped = { type: 'object', properties: { data }, required: ['data'], additionalProperties: false };
      return { 202: { description: STATUS_TEXT[202], headers: headers(['Location', ...extra]), content: { 'application/json': { schema: wrapped } } } };
    }
    case 'download': {
      const { file } = answer;
      return {
        200: {
          description: `A download named like \`${file.sampleFileName}\``,
          headers: headers(['Content-Disposition', ...extra]),
          content: { [file.mediaType]: { schema: file.schema, ...(file.example ? { example: file.example } : {}) } },
        },
      };
    }
  }
}

/** Every refusal the route can give, rendered by the REST layer's own translator (src/rest/errors.ts). */
function errorResponses(route: Route, rules: FieldRules, limited: boolean, exampleField: string) {
  const source: InputSource = route.input === 'query' || route.input === 'query-with-file' ? 'query' : 'body';
  const core = (code: ErrorCode, message: string, extensions: Record<string, unknown> = {}) =>
    fromCoreError({ message, extensions: { code, ...extensions } }, source, (key) => key);

  const refusals: RestError[] = [];
  if (route.input !== 'query') refusals.push(core('PAYLOAD_TOO_LARGE', MESSAGES.payloadTooLarge), core('UNSUPPORTED_MEDIA_TYPE', MESSAGES.unsupportedMediaType));
  // A malformed Idempotency-Key, judged with the input and rendered as the service renders it (the payload's, on every route);
  // the 400's example where the route reads no input of its own (a DELETE).
  const badKey = rules.idempotent && core('BAD_USER_INPUT', '', { details: idempotencyKeyProblems(new Headers({ [IDEMPOTENCY_KEY.name]: ' ' })) });
  if (badKey && exampleField === 'body' && source === 'query') refusals.push(badKey);
  refusals.push(invalidInput(source, { [exampleField]: ['Required'] }));
  if (badKey && !refusals.includes(badKey)) refusals.push(badKey);
  // The file's own problems (not UTF-8, no rows, a required field without a column) are the body's.
  if (route.input === 'query-with-file') refusals.push(invalidInput('body', { body: ['Empty file'] }), core('REQUEST_TIMEOUT', MESSAGES.requestTimeout));
  if (rules.access !== 'public') {
    refusals.push(core('UNAUTHENTICATED', MESSAGES.unauthorized), core('FORBIDDEN', MESSAGES.noAccess));
    if (changesState(route.method, getOperationAST(route.operation)?.operation)) refusals.push(core('FORBIDDEN', MESSAGES.crossSite));
  }
  if (rules.access === 'owner') refusals.push(core('FORBIDDEN', rules.forbidden ?? MESSAGES.ownerOnly));
  if (rules.scope) refusals.push(core('FORBIDDEN', lacksScopeMessage(rules.scope)));
  else if (rules.access !== 'public') refusals.push(core('FORBIDDEN', MESSAGES.notForKeys));
  for (const scope of rules.inputScope?.may ?? []) refusals.push(core('FORBIDDEN', lacksScopeMessage(scope)));
  if (rules.access === 'public' && rules.target) refusals.push(core('NOT_FOUND', rules.missing ?? 'Not found'));
  if (rules.access !== 'public' && rules.target && rules.hidden) refusals.push(core('NOT_FOUND', MESSAGES.notFound));
  // A path parameter that can name nothing (not a UUID, hostile bytes: docs/decisions.md §26) is the router's own 404.
  if (route.path.includes('/:')) refusals.push(fromHttpError('ROUTE_NOT_FOUND'));
  if (route.ifMatch) refusals.push(fromHttpError('PRECONDITION_FAILED'));
  if (rules.machine) refusals.push(core('INVALID_TRANSITION', '', { from: 'paid', to: 'draft' }));
  if (rules.idempotent) refusals.push(core('IDEMPOTENCY_IN_PROGRESS', ''), core('IDEMPOTENCY_CONFLICT', ''));
  if (limited) refusals.push(core('RATE_LIMITED', MESSAGES.rateLimited));
  refusals.push(core('INTERNAL_SERVER_ERROR', MESSAGES.internal), core('SERVICE_UNAVAILABLE', MESSAGES.unavailable));

  const byStatus = new Map<number, RestError[]>();
  for (const refusal of refusals) byStatus.set(refusal.status, [...(byStatus.get(refusal.status) ?? []), refusal]);
  // A limited route reports its budget on every answer that met the limit, refusals included.
  const extra = limited ? LIMITED : [];
  const answers: [number, unknown][] = [...byStatus].map(([status, group]) => [status, errorResponse(status, group, extra)]);
  // Any request's line and headers may overflow what the HTTP parser reads, before any route.
  answers.push([431, { $ref: '#/components/responses/HeadersTooLarge' }]);
  return Object.fromEntries(answers.sort(([a], [b]) => a - b));
}

/**
 * 431, answered by Node's HTTP parser (src/http/client-error.ts) before the request reaches the app:
 * hence none of the app's headers (no X-Request-Id, no rate limit), and the connection closes.
 */
const HEADERS_TOO_LARGE = {
  description: `The request line and headers are over ${maxHeaderSize / 1024} KiB together (Node's \`--max-http-header-size\`): a long query string, such as an import's \`mapping\`, or a long header. Answered before any route, so without \`X-Request-Id\` or rate-limit headers; the connection is closed.`,
  content: {
    'application/json': {
      schema: { type: 'object', properties: { error: { type: 'string', enum: ['Request header fields too large'] } }, required: ['error'], additionalProperties: false },
      example: { error: 'Request header fields too large' },
    },
  },
};

/** One status's error answer: the messages it can carry, `details` on a 400, and its headers. */
function errorResponse(status: number, group: RestError[], extra: string[] = [], description = STATUS_TEXT[status] ?? 'Error') {
  // An empty message stands for one the table above does not know word for word.
  const messages = [...new Set(group.map((r) => r.body.error))];
  const error = messages.includes('') ? { type: 'string' } : { type: 'string', enum: messages };
  const withDetails = group.some((r) => r.body.details);
  const body: JsonSchema = {
    type: 'object',
    properties: {
      error,
      ...(withDetails ? { details: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } } } : {}),
    },
    required: withDetails ? ['error', 'details'] : ['error'],
    additionalProperties: false,
  };
  const names = [...new Set(group.flatMap((r) => Object.keys(r.headers ?? {})))];
  return {
    description,
    headers: status === 429 ? headers(REFUSED) : headers(names, extra.filter((n) => !names.includes(n))),
    content: { 'application/json': { schema: body, ...(messages.includes('') ? {} : { example: group[0]!.body }) } },
  };
}
