import { getOperationAST, Kind, validate, type DocumentNode, type FieldNode, type GraphQLError, type OperationDefinitionNode } from 'graphql/index.js';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import type { Context, ServerContext } from '../context.js';
import { isAppError, notFound, type ErrorDetails } from '../errors.js';
import { useCompiledExecution } from '../graphql/compiled.js';
import { maskError } from '../graphql/mask.js';
import { admit, inputProblems, rootRules, type FieldRules } from '../graphql/rules.js';
import { schema } from '../schema.js';
import { jsonObject, readJson } from '../http/body.js';
import { Response } from '../http/response.js';
import type { Logger } from '../logger.js';
import { download } from './download.js';
import type { Ticket } from './downloads.js';
import { fromCoreError, fromHttpError, invalidInput, json, restErrorResponse, type InputSource, type RestError } from './errors.js';
import { restFieldName } from './field-names.js';
import { coercedVariables, restEnum, toCamel, toSnake, VariableReader } from './input.js';
import { FILE_VARIABLES, routes, type Route } from './routes.js';
import { checkCsvMessage, type Pace } from '../imports/intake.js';
import type { Database } from '../db/client.js';
import { upload } from './upload.js';
import { restEnumsOf } from './json-schema.js';

type Operation = { document: DocumentNode; operation: OperationDefinitionNode; field: string; responseKey: string };
type Compiled = Operation & { route: Route; rules: FieldRules; target?: Operation; segments: string[]; variants?: Record<string, Compiled> };

/** Aborts when the client closes the connection before its request's body is complete (an upload given up). */
function clientGone({ req }: ServerContext): AbortSignal {
  const gone = new AbortController();
  req?.once('close', () => {
    if (!req.complete) gone.abort();
  });
  return gone.signal;
}

/** Checked once at start: every REST operation is valid, names one root field, and that field declares rules. */
export function compileRoute(route: Route): Compiled {
  const compiled = operationOf(route, route.operation);
  const rules = rootRules(schema, compiled.operation.operation === 'mutation' ? 'mutation' : 'query', compiled.field);
  if (!rules) throw new Error(`REST operation for ${route.method} ${route.path}: ${compiled.field} declares no rules`);
  const target = route.target && operationOf(route, route.target);
  const variants = route.variants && Object.fromEntries(
    Object.entries(route.variants.operations).map(([value, operation]) => [value, compileRoute({ ...route, operation, variants: undefined })]),
  );
  if (variants && Object.values(variants).some((v) => v.responseKey !== compiled.responseKey || v.rules.limit?.name !== rules.limit?.name)) {
    throw new Error(`REST ${route.method} ${route.path}: its variants must answer under one key and share one limit`);
  }
  return { route, ...compiled, rules, target, segments: route.path.split('/'), variants };
}

/** Every document a route runs (its operation, target and variants): the ones executed compiled. */
const restDocuments = new WeakSet<DocumentNode>();

function operationOf(route: Route, document: DocumentNode): Operation {
  restDocuments.add(document);
  const errors = validate(schema, document);
  const operation = getOperationAST(document);
  const root = operation?.selectionSet.selections[0];
  if (errors.length > 0 || !operation || root?.kind !== 'Field') {
    throw new Error(`REST operation for ${route.method} ${route.path} is invalid: ${errors.map((e) => e.message).join('; ')}`);
  }
  return { document, operation, field: root.name.value, responseKey: root.alias?.value ?? root.name.value };
}

function match(table: Compiled[], method: string, pathname: string) {
  const parts = pathname.replace(/\/+$/, '').split('/');
  const found: { entry: Compiled; params: Record<string, string>; wildcards: number }[] = [];
  for (const entry of table) {
    if (entry.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const same = entry.segments.every((segment, i) => {
      if (segment.startsWith(':')) return (params[segment.slice(1)] = decodeURIComponent(parts[i]!)) !== '';
      return segment === parts[i];
    });
    if (same) found.push({ entry, params, wildcards: Object.keys(params).length });
  }
  // A literal path wins over a parameter (/contacts/export is never the contact "export").
  const fewest = Math.min(...found.map((f) => f.wildcards));
  const paths = found.filter((f) => f.wildcards === fewest);
  const hit = paths.find((f) => f.entry.route.method === method);
  if (hit) return { entry: hit.entry, params: hit.params };
  return { allow: [...new Set(paths.map((f) => f.entry.route.method))] };
}

/** Serves /api/v1 inside Yoga, so REST runs the same plugins (context, masking) as /graphql. */
export function useRest({ log, db, nudgeImports, uploadPace }: { log: Logger; db: Database; nudgeImports?: () => void; uploadPace: Pace }): Plugin<Context> {
  const table = routes.map(compileRoute);
  let yoga: YogaServerInstance<ServerContext, Context>;
  return {
    // REST's fixed operations run compiled from their first run, /graphql's repeated queries from their second (src/graphql/compiled.ts).
    onPluginInit: ({ addPlugin }) => {
      addPlugin(useCompiledExecution((document) => restDocuments.has(document)) as Plugin<Context>);
    },
    onYogaInit: ({ yoga: instance }) => {
      yoga = instance as unknown as YogaServerInstance<ServerContext, Context>;
    },
    onRequest: async ({ request, url, serverContext, endResponse }) => {
      if (url.pathname !== '/api/v1' && !url.pathname.startsWith('/api/v1/')) return;
      let found: ReturnType<typeof match>;
      try {
        found = match(table, request.method, url.pathname);
      } catch {
        found = { allow: [] }; // a path that does not even decode
      }
      if (!('entry' in found) || !found.entry) {
        const { allow } = found as { allow: string[] };
        endResponse(restErrorResponse(fromHttpError(allow.length ? 'METHOD_NOT_ALLOWED' : 'ROUTE_NOT_FOUND', allow)));
        return;
      }
      const response = await run(yoga, { log, db, nudgeImports, uploadPace }, found.entry, found.params, request, url, serverContext as ServerContext);
      // An upload refused: the connection closes after the answer, so the rest of its body is never read (docs/imports.md#intake).
      if (found.entry.route.answer.kind === 'upload' && response.status >= 400) response.headers.set('Connection', 'close');
      endResponse(response);
    },
  };
}

async function run(
  yoga: YogaServerInstance<ServerContext, Context>,
  { log, db, nudgeImports, uploadPace }: { log: Logger; db: Database; nudgeImports?: () => void; uploadPace: Pace },
  compiled: Compiled,
  pathParams: Record<string, string>,
  request: Request,
  url: URL,
  serverContext: ServerContext,
): Promise<Response> {
  const { route, field, rules, target, responseKey } = compiled;
  const source: InputSource = route.input === 'query' || route.input === 'query-with-file' ? 'query' : 'body';
  const renameField = (key: string) => restFieldName(route, key);
  try {
    const enveloped = yoga.getEnveloped({ request, ...serverContext, operation: compiled.operation.operation } as never);
    const ctx = (await enveloped.contextFactory()) as Context;
    // docs/decisions.md §2: 401 -> 429 before the body is read (415/413 -> 400; the public form: 404 -> 400).
    // The field's own admission, done once per request: its resolver does not charge again.
    // A route with variants charges their shared bucket under their shared response key, once.
    await admit(ctx, field, rules, responseKey);

    if (route.answer.kind === 'upload') {
      checkCsvMessage(request); // 415 / 413 before the query is judged (docs/decisions.md §2)
      const input = await readVariables(compiled, undefined, url, pathParams, ctx);
      if ('refused' in input) return restErrorResponse(input.refused);
      const execute = (document: Route['operation'], variableValues: Record<string, unknown>) =>
        enveloped.execute({ schema, document, variableValues, contextValue: ctx }) as never;
      const queryParams = [...url.searchParams.keys()];
      const answered = await upload(route as never, input.variables, ctx, db, execute, renameField, queryParams, uploadPace, clientGone(serverContext), nudgeImports);
      return answered instanceof Response ? answered : restErrorResponse(answered);
    }

    const raw = route.input === 'query' ? undefined : await readJson(request);
    const chosen = compiled.variants ? variantOf(compiled, raw) : { compiled, body: raw };
    if ('refused' in chosen) return restErrorResponse(chosen.refused);
    // A variant key naming none (a batch's `mode`): a 400 with what every variant refuses (batches address no target).
    if (!('compiled' in chosen)) return restErrorResponse(await refusedByEveryVariant(chosen, url, pathParams, ctx));
    const input = await readVariables(chosen.compiled, chosen.body, url, pathParams, ctx);
    const ifMatch = route.ifMatch ? ifMatchVersion(request.headers.get('if-match')) : null;
    if (ifMatch !== null && 'variables' in input) input.variables[route.ifMatch!] = ifMatch;
    if ('refused' in input) {
      // The addressed resource answers before its input (public form: 404 -> 400). Only a refused
      // input needs this look-up: a valid one meets the core's own 404 when it runs.
      const missing = target ? await missingTarget(enveloped, ctx, target, rules, pathParams) : null;
      return restErrorResponse(missing ? fromCoreError(missing, source, renameField) : input.refused);
    }

    const result = await enveloped.execute({ schema, document: chosen.compiled.route.operation, variableValues: input.variables, contextValue: ctx });
    if ('errors' in result && result.errors?.length) {
      const error = result.errors.find((e: GraphQLError) => e.extensions?.code) ?? result.errors[0]!;
      // A path whose parameter names nothing this service could hold (not a UUID) addresses nothing: 404.
      if (namesOnlyPath(error, pathParams, renameField)) return restErrorResponse(fromHttpError('ROUTE_NOT_FOUND'));
      // The core's stale expectedUpdatedAt, asked for by If-Match: HTTP's own answer (RFC 9110 §13.1.1).
      if (ifMatch !== null && error.extensions?.code === 'CONFLICT' && error.extensions.currentUpdatedAt) {
        return restErrorResponse(fromHttpError('PRECONDITION_FAILED'));
      }
      return restErrorResponse(fromCoreError(error, source, renameField));
    }
    // Enum values as REST shows them (`QUEUED` -> `queued`), by the selection's types.
    const data = restEnumsOf(schema, chosen.compiled.route.operation, (result as { data: Record<string, unknown> }).data[responseKey]);
    if (route.answer.kind === 'batch') return json(200, batchAnswer(data as BatchAnswer, input.refusedItems));
    // A page read by cursor has no page number (docs/decisions.md §18): GraphQL's is 1, counted from the cursor.
    if (route.answer.kind === 'page' && input.variables.cursor != null) delete (data as { page?: number }).page;
    return await answer(route, data, ctx, request, serverContext, log);
  } catch (error) {
    // Failures outside execution (the context, reading the body): the core's masking decides what shows.
    const shown = isAppError(error) ? error : maskError(error, log);
    return restErrorResponse(fromCoreError(shown, source, renameField));
  }
}

async function answer(route: Route, result: unknown, ctx: Context, request: Request, serverContext: ServerContext, log: Logger) {
  switch (route.answer.kind) {
    case 'as-is':
    case 'page': // its `page` already dropped by run() when read by cursor
      return json(200, result);
    case 'created':
      return json(201, { data: result });
    case 'record': {
      if (result == null) return restErrorResponse(fromHttpError('ROUTE_NOT_FOUND')); // unknown or not visible: one 404
      const version = (result as { updated_at?: string }).updated_at;
      return json(200, { data: result }, version ? { ETag: etagOf(version) } : {});
    }
    case 'no-content':
      return new Response(null, { status: 204 });
    case 'list':
      return json(200, { data: result });
    case 'batch':
      throw new Error('a batch is answered by batchAnswer');
    case 'upload':
      throw new Error('an upload is answered by upload()');
    case 'download': {
      const { file } = route.answer;
      if (result == null) return restErrorResponse(fromHttpError('ROUTE_NOT_FOUND')); // a by-id read: unknown or not visible
      const ticket = result as Ticket;
      // Text says its charset; a binary file (a PDF) has none.
      const type = file.mediaType.startsWith('text/') || file.mediaType.endsWith('json') ? `${file.mediaType}; charset=utf-8` : file.mediaType;
      return download(await file.stream(ctx.reader, ticket), type, file.fileName?.(ticket) ?? ticket.fileName!, {
        signal: request.signal,
        abort: () => Boolean(serverContext.req?.socket.destroy()),
        log: (err: unknown) => log.error({ err, requestId: ctx.requestId }, 'REST download failed'),
      });
    }
  }
}

/**
 * The operation's variables from the query string or the JSON body, type-checked against the
 * operation (unknown keys, JSON types, required fields, enums), or the 400 that refuses them. A
 * refusal names every failing field at once: those the types refuse, and what the field's own
 * input rules say of the rest.
 */
async function readVariables(
  { route, operation, field, rules }: Compiled,
  raw: unknown,
  url: URL,
  pathParams: Record<string, string>,
  ctx: Context,
  given: ErrorDetails = {},
): Promise<{ variables: Record<string, unknown>; refusedItems: Map<number, ErrorDetails> } | { refused: RestError }> {
  const fromQuery = route.input === 'query' || route.input === 'query-with-file';
  const reader = new VariableReader(fromQuery);
  // What the route refused before reading (the body's variant key): a problem like the reader's own.
  for (const [key, messages] of Object.entries(given)) for (const message of messages) reader.fail(key, message);
  let variables: Record<string, unknown>;
  if (fromQuery) {
    // A file's own variables (its header) are not the query string's: judged once the file is read.
    const skip = route.input === 'query-with-file' ? FILE_VARIABLES : [];
    variables = reader.variables(schema, operation, { ...queryObject(url.searchParams), ...pathParams }, skip);
  } else {
    let body: Record<string, unknown>;
    try {
      body = jsonObject(raw);
    } catch (error) {
      if (isAppError(error)) return { refused: fromCoreError(error, 'body', (key) => restFieldName(route, key)) };
      throw error;
    }
    if (route.input === 'body-as-input') {
      const inputType = schema.getMutationType()!.getFields()[field]!.args.find((a) => a.name === 'input')!.type;
      // The path's parameters (a record's id) are the operation's other variables.
      variables = { ...reader.variables(schema, operation, pathParams, ['input', ...(route.ifMatch ? [route.ifMatch] : [])]), input: reader.read(body, inputType, '') };
    } else {
      rejectUnknownKeys(reader, body, operation, pathParams);
      variables = reader.variables(schema, operation, { ...body, ...pathParams });
    }
  }
  const refusedItems = route.answer.kind === 'batch' ? refusedRecords(reader, variables, route.answer.records) : new Map<number, ErrorDetails>();
  if (Object.keys(reader.details).length === 0) return { variables, refusedItems };
  const details = { ...reader.details };
  // The core's problems with what the type check let through (its form, the Idempotency-Key header,
  // a public field's checks against its target: inputProblems) are merged by the name the client
  // sent, less those about a field, object or body the type check already refused within (the core
  // saw it without them: an update "with no field" was given fields, just ill-typed ones).
  const refused = Object.keys(details);
  const within = (name: string) => refused.some((key) => key === name || name === 'body' || key.startsWith(`${name}.`));
  for (const [key, messages] of Object.entries(await inputProblems(rules, argumentsOf(operation, coercedVariables(schema, operation, variables)), ctx))) {
    const name = restFieldName(route, key);
    if (route.input === 'query-with-file' && FILE_VARIABLES.includes(key)) continue; // not read yet
    if (!within(name)) details[name] = messages;
  }
  return { refused: invalidInput(fromQuery ? 'query' : 'body', details) };
}

/** The root field's arguments from the operation's variables (an argument may take a variable of another name). */
function argumentsOf(operation: OperationDefinitionNode, variables: Record<string, unknown>): Record<string, unknown> {
  const root = operation.selectionSet.selections[0] as FieldNode;
  const args: Record<string, unknown> = { ...variables };
  for (const arg of root.arguments ?? []) if (arg.value.kind === Kind.VARIABLE) args[arg.name.value] = variables[arg.value.name.value];
  return args;
}

/**
 * The query string as one value per name; a name given more than once (`types=a&types=b`, as
 * generated clients send a list) keeps all its values, as a list.
 */
function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name);
    query[name] = values.length === 1 ? values[0]! : values;
  }
  return query;
}

/**
 * docs/decisions.md §16: a record the reader refuses (an unknown field, a wrong JSON type) fails as
 * an item, named in its own details, and the others are still judged and written. Its problems move
 * out of the request's details, and the core gets an empty record in its place, which every batch
 * refuses (no record key, no required field), so it counts as FAILED there too (all_or_nothing included).
 * A record that is not an object stays the request's problem (an invalid envelope: 400).
 */
function refusedRecords(reader: VariableReader, variables: Record<string, unknown>, records: string): Map<number, ErrorDetails> {
  const refused = new Map<number, ErrorDetails>();
  const prefix = new RegExp(`^${records}\\.(\\d+)\\.(.+)$`);
  for (const key of Object.keys(reader.details)) {
    const match = prefix.exec(key);
    if (!match) continue;
    const index = Number(match[1]);
    if (!refused.has(index)) refused.set(index, {});
    refused.get(index)![match[2]!] = reader.details[key]!;
    delete reader.details[key];
  }
  const list = variables[toCamel(records)];
  if (Array.isArray(list)) for (const index of refused.keys()) list[index] = {};
  return refused;
}

type BatchAnswer = { data: { index: number; status: string; id: string | null; data: unknown; details: unknown }[]; created: number; updated: number; unchanged: number; failed: number };

/**
 * The core's batch answer (its enums already as REST shows them: `failed`) with each item's `id`
 * and `data` (which the core gives only to a caller with the read scope), or its `details`,
 * refused records named by the reader.
 */
function batchAnswer(result: BatchAnswer, refused: Map<number, ErrorDetails>) {
  const data = result.data.map(({ index, status, id, data: written, details: problems }) => {
    const details = refused.get(index) ?? problems;
    if (refused.has(index) && status !== 'failed') throw new Error(`batch: refused record ${index} was written`);
    if (details != null) return { index, status, details };
    return written == null ? { index, status, id } : { index, status, id, data: written };
  });
  return { data, created: result.created, updated: result.updated, unchanged: result.unchanged, failed: result.failed };
}

type UnknownVariant = { variants: Compiled[]; body: Record<string, unknown>; key: ErrorDetails };

/**
 * The variant a body's key chooses (absent: the first), and the body without that key; for a key
 * naming none, every variant and the key's problem (refusedByEveryVariant); a body that is no
 * JSON object, its 400.
 */
function variantOf(compiled: Compiled, raw: unknown): { compiled: Compiled; body: unknown } | UnknownVariant | { refused: RestError } {
  const { key } = compiled.route.variants!;
  let body: Record<string, unknown>;
  try {
    body = jsonObject(raw);
  } catch (error) {
    if (isAppError(error)) return { refused: fromCoreError(error, 'body', (k) => restFieldName(compiled.route, k)) };
    throw error;
  }
  const { [key]: value, ...rest } = body;
  const names = Object.keys(compiled.variants!);
  const chosen = value === undefined ? compiled.variants![names[0]!] : typeof value === 'string' && Object.hasOwn(compiled.variants!, value) ? compiled.variants![value] : undefined;
  if (!chosen) return { variants: Object.values(compiled.variants!), body: rest, key: { [key]: [`Must be one of: ${names.join(', ')}`] } };
  return { compiled: chosen, body: rest };
}

/**
 * The 400 of a body whose variant key names no variant: the key, and the rest of the body's
 * problems that every variant finds (so neither a field one variant takes is "Unknown", nor one
 * it requires "Required", whichever the caller meant).
 */
async function refusedByEveryVariant({ variants, body, key }: UnknownVariant, url: URL, pathParams: Record<string, string>, ctx: Context): Promise<RestError> {
  const read = await Promise.all(variants.map((variant) => readVariables(variant, body, url, pathParams, ctx, key)));
  const each = read.map((input) => ('refused' in input ? (input.refused.body.details ?? {}) : {}));
  const shared = Object.entries(each[0]!).filter(([name]) => each.every((details) => Object.hasOwn(details, name)));
  return invalidInput('body', Object.fromEntries(shared));
}

type Enveloped = ReturnType<YogaServerInstance<ServerContext, Context>['getEnveloped']>;

/** The core's own answer to "does the path address something?": its error, the field's 404 for null, else null. */
async function missingTarget(
  enveloped: Enveloped,
  ctx: Context,
  target: Operation,
  rules: FieldRules,
  pathParams: Record<string, string>,
): Promise<GraphQLError | null> {
  const reader = new VariableReader(true);
  const variableValues = reader.variables(schema, target.operation, pathParams);
  if (Object.keys(reader.details).length > 0) return null; // an ill-typed path parameter: the reader's 400 below
  const result = await enveloped.execute({ schema, document: target.document, variableValues, contextValue: ctx });
  if ('errors' in result && result.errors?.length) return result.errors.find((e: GraphQLError) => e.extensions?.code) ?? result.errors[0]!;
  const data = (result as { data?: Record<string, unknown> | null }).data;
  return data?.[target.field] == null ? notFound(rules.missing ?? 'Not found') : null;
}

/** Body keys that name no variable of the operation are refused by name, like unknown input fields. */
function rejectUnknownKeys(
  reader: VariableReader,
  body: Record<string, unknown>,
  operation: OperationDefinitionNode,
  pathParams: Record<string, string>,
) {
  const known = new Set((operation.variableDefinitions ?? []).map((d) => toSnake(d.variable.name.value)));
  for (const key of Object.keys(body)) if (!known.has(key) || key in pathParams) reader.fail(key, 'Unknown field');
}

/** A record's ETag: its `updated_at`, which is also what If-Match hands back as expectedUpdatedAt. */
export const etagOf = (updatedAt: string): string => `"${updatedAt}"`;

/**
 * The version an If-Match header asks for, or null without one (or with `*`: any version). A tag
 * that is no version of ours can never match: it becomes a time no record has, so the core's own
 * check refuses it (as 412) after the usual 401/429/400/403.
 */
export function ifMatchVersion(header: string | null): string | null {
  if (header === null || header.trim() === '*') return null;
  const tag = /^\s*(?:W\/)?"([^"]*)"\s*$/.exec(header)?.[1];
  const time = tag ? Date.parse(tag) : NaN;
  return Number.isNaN(time) ? new Date(0).toISOString() : new Date(time).toISOString();
}

/** A refused input whose every problem is a path parameter (`id`), of a route that has one. */
function namesOnlyPath(error: GraphQLError, pathParams: Record<string, string>, renameField: (key: string) => string): boolean {
  if (error.extensions?.code !== 'BAD_USER_INPUT' || !error.extensions.details) return false;
  const keys = Object.keys(error.extensions.details as object);
  return keys.length > 0 && keys.every((key) => Object.hasOwn(pathParams, renameField(key)));
}
