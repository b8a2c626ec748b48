import { getOperationAST, GraphQLError, validate, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import type { AppDeps } from '../app.js';
import type { Context, ServerContext } from '../context.js';
import { isDatabaseUnavailable } from '../db/client.js';
import { notFound } from '../errors.js';
import { LIMITS, type FieldLimit } from '../graphql/limits.js';
import { schema } from '../graphql/schema.js';
import { jsonObject, readJson, RestRefusal } from './body.js';
import { fromCoreError, fromHttpError, invalidInput, restErrorResponse, type InputSource, type RestError } from './errors.js';
import { toSnake, VariableReader } from './input.js';
import { routes, type Route } from './routes.js';

type Operation = { document: DocumentNode; operation: OperationDefinitionNode; field: string };
type Compiled = Operation & { route: Route; target?: Operation & { missing: string }; segments: string[] };

/** Checked once at start: every REST operation is valid against the schema and names one root field. */
function compile(route: Route): Compiled {
  const target = route.target && { ...operationOf(route, route.target.operation), missing: route.target.missing };
  return { route, ...operationOf(route, route.operation), target, segments: route.path.split('/') };
}

function operationOf(route: Route, document: DocumentNode): Operation {
  const errors = validate(schema, document);
  const operation = getOperationAST(document);
  const root = operation?.selectionSet.selections[0];
  if (errors.length > 0 || !operation || root?.kind !== 'Field') {
    throw new Error(`REST operation for ${route.method} ${route.path} is invalid: ${errors.map((e) => e.message).join('; ')}`);
  }
  return { document, operation, field: root.name.value };
}

function match(table: Compiled[], method: string, pathname: string) {
  const parts = pathname.replace(/\/+$/, '').split('/');
  const allow: string[] = [];
  for (const entry of table) {
    if (entry.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const same = entry.segments.every((segment, i) => {
      if (segment.startsWith(':')) return (params[segment.slice(1)] = decodeURIComponent(parts[i]!)) !== '';
      return segment === parts[i];
    });
    if (!same) continue;
    if (entry.route.method === method) return { entry, params };
    allow.push(entry.route.method);
  }
  return { allow };
}

/** Serves /api/v1 inside Yoga, so REST runs the same plugins (context, masking) as /graphql. */
export function useRest(deps: AppDeps): Plugin<Context> {
  const table = routes.map(compile);
  let yoga: YogaServerInstance<ServerContext, Context>;
  return {
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
        endResponse(restErrorResponse(allow.length ? fromHttpError('METHOD_NOT_ALLOWED', allow) : fromHttpError('ROUTE_NOT_FOUND')));
        return;
      }
      endResponse(await run(yoga, deps, found.entry, found.params, request, url, serverContext as ServerContext));
    },
  };
}

async function run(
  yoga: YogaServerInstance<ServerContext, Context>,
  deps: AppDeps,
  compiled: Compiled,
  pathParams: Record<string, string>,
  request: Request,
  url: URL,
  serverContext: ServerContext,
): Promise<Response> {
  const { route, field, target } = compiled;
  const source: InputSource = route.input === 'query' ? 'query' : 'body';
  const renameField = route.keepDetailKeys ? (key: string) => key : (key: string) => key.split('.').map(toSnake).join('.');
  try {
    const enveloped = yoga.getEnveloped({ request, ...serverContext, operation: compiled.operation.operation } as never);
    const ctx = (await enveloped.contextFactory()) as Context;
    // Decisions §2: 401 -> 429 -> 400 (public form: 429 -> 415/413 -> 404 -> 400). The limit is charged here,
    // before the input is read, and the resolver is told it was paid, so a request still counts once.
    const viewer = route.auth === 'user' ? await ctx.viewer() : null;
    const limit: FieldLimit | undefined = (LIMITS as Record<string, FieldLimit>)[field];
    if (limit && limit.per !== 'account') {
      await ctx.charge(limit, limit.per === 'ip' ? ctx.clientIp : viewer!.id);
      ctx.state.prepaid.add(limit.name);
    }

    // 415 and 413 judge the HTTP message, not its content: they come first (RestRefusal, thrown).
    const raw = route.input === 'query' ? undefined : await readJson(request);
    const input = readVariables(compiled, raw, url, pathParams);
    if ('refused' in input) {
      // The addressed resource answers before its input (public form: 404 -> 400). Only a refused
      // input needs this look-up: a valid one meets the core's own 404 when it runs.
      const missing = target ? await missingTarget(enveloped, ctx, target, pathParams) : null;
      return restErrorResponse(missing ? fromCoreError(missing, source, renameField) : input.refused);
    }
    const variables = input.variables;

    const result = await enveloped.execute({ schema, document: route.operation, variableValues: variables, contextValue: ctx });
    if ('errors' in result && result.errors?.length) {
      const error = result.errors.find((e: GraphQLError) => e.extensions?.code) ?? result.errors[0]!;
      return restErrorResponse(fromCoreError(error, source, renameField));
    }
    const data = (result as { data: Record<string, unknown> }).data;
    const exchange = {
      signal: request.signal,
      abort: () => Boolean(serverContext.req?.socket.destroy()),
      log: (err: unknown) => deps.log.error({ err, requestId: ctx.requestId }, 'REST download failed'),
    };
    return await route.respond(data[field] as never, ctx, exchange);
  } catch (error) {
    if (error instanceof RestRefusal) return restErrorResponse(error.refusal);
    if (error instanceof GraphQLError && error.extensions.code) return restErrorResponse(fromCoreError(error, source, renameField));
    if (isDatabaseUnavailable(error)) return restErrorResponse(fromCoreError(unavailable(), source, renameField));
    deps.log.error({ err: error }, 'REST request failed');
    return restErrorResponse(fromHttpError('INTERNAL_SERVER_ERROR'));
  }
}

/**
 * The operation's variables from the query string or the JSON body, type-checked against the
 * operation (unknown keys, JSON types, required fields, enums), or the 400 that refuses them.
 */
function readVariables(
  { route, operation, field }: Compiled,
  raw: unknown,
  url: URL,
  pathParams: Record<string, string>,
): { variables: Record<string, unknown> } | { refused: RestError } {
  const reader = new VariableReader(route.input === 'query');
  let variables: Record<string, unknown>;
  if (route.input === 'query') {
    variables = reader.variables(schema, operation, { ...Object.fromEntries(url.searchParams), ...pathParams });
  } else {
    let body: Record<string, unknown>;
    try {
      body = jsonObject(raw);
    } catch (error) {
      if (error instanceof RestRefusal) return { refused: error.refusal };
      throw error;
    }
    if (route.input === 'body-as-input') {
      const inputType = schema.getMutationType()!.getFields()[field]!.args.find((a) => a.name === 'input')!.type;
      variables = { input: reader.read(body, inputType, '') };
    } else {
      rejectUnknownKeys(reader, body, operation, pathParams);
      variables = reader.variables(schema, operation, { ...body, ...pathParams });
    }
  }
  if (Object.keys(reader.details).length > 0) return { refused: invalidInput(route.input === 'query' ? 'query' : 'body', reader.details) };
  return { variables };
}

type Enveloped = ReturnType<YogaServerInstance<ServerContext, Context>['getEnveloped']>;

/** The core's own answer to "does the path address something?": its error, a 404 for null, else null. */
async function missingTarget(
  enveloped: Enveloped,
  ctx: Context,
  target: NonNullable<Compiled['target']>,
  pathParams: Record<string, string>,
): Promise<GraphQLError | null> {
  const reader = new VariableReader(true);
  const variableValues = reader.variables(schema, target.operation, pathParams);
  if (Object.keys(reader.details).length > 0) return null; // an ill-typed path parameter: the reader's 400 below
  const result = await enveloped.execute({ schema, document: target.document, variableValues, contextValue: ctx });
  if ('errors' in result && result.errors?.length) return result.errors.find((e: GraphQLError) => e.extensions?.code) ?? result.errors[0]!;
  const data = (result as { data?: Record<string, unknown> | null }).data;
  return data?.[target.field] == null ? notFound(target.missing) : null;
}

const unavailable = () => new GraphQLError('Service unavailable', { extensions: { code: 'SERVICE_UNAVAILABLE' } });

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
