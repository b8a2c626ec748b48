import { Kind, type FieldNode, type GraphQLError } from 'graphql/index.js';
import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import type { Context, ServerContext } from '../context.js';
import type { Database } from '../db/client.js';
import { isAppError } from '../errors.js';
import { useCompiledExecution } from '../plugins/use-compiled-execution.js';
import { maskError } from '../graphql/mask.js';
import { admit } from '../graphql/admission.js';
import { abandoned, CLIENT_CLOSED_REQUEST } from '../http/abandoned.js';
import { HOSTILE_BYTES, hostileHeader, hostileParameters } from '../http/hostile-bytes.js';
import { Response } from '../http/response.js';
import type { Pace } from '../imports/intake.js';
import type { Logger } from '../logger.js';
import { schema } from '../schema.js';
import { respond } from './answers/index.js';
import { acceptUpload } from './answers/upload.js';
import { fromCoreError, fromHttpError, invalidInput, restErrorResponse, type RestError } from './errors.js';
import { restFieldName } from './field-names.js';
import { toSnake } from './input.js';
import { restEnumsOf } from './json-schema.js';
import { compileRoute, isRestDocument, match, type Compiled } from './match.js';
import { readInput, sourceOf, type Enveloped, type Input } from './read.js';
import { routes, type Route } from './routes.js';
import { answerDocument } from './write-answer.js';

/** What a running app hands REST: its log, database, and the import worker's wake-up and upload pace. */
type RestDeps = { log: Logger; db: Database; nudgeImports?: () => void; uploadPace: Pace };

/** One request to a route: what matched and the exchange it came in. */
type Call = { compiled: Compiled; params: Record<string, string>; request: Request; url: URL; serverContext: ServerContext };

/** Serves /api/v1 inside Yoga, so REST runs the same plugins (context, masking) as /graphql. */
export function useRest(deps: RestDeps): Plugin<Context> {
  const table = routes.map(compileRoute);
  let yoga: YogaServerInstance<ServerContext, Context>;
  return {
    // REST's fixed operations run compiled from their first run, /graphql's repeated queries from their second (src/plugins/use-compiled-execution.ts).
    onPluginInit: ({ addPlugin }) => {
      addPlugin(useCompiledExecution(isRestDocument) as Plugin<Context>);
    },
    onYogaInit: ({ yoga: instance }) => {
      yoga = instance as unknown as YogaServerInstance<ServerContext, Context>;
    },
    onRequest: async ({ request, url, serverContext, endResponse }) => {
      if (url.pathname !== '/api/v1' && !url.pathname.startsWith('/api/v1/')) return;
      const found = match(table, request.method, url.pathname);
      if ('allow' in found) {
        endResponse(restErrorResponse(fromHttpError(found.allow.length ? 'METHOD_NOT_ALLOWED' : 'ROUTE_NOT_FOUND', found.allow)));
        return;
      }
      const response = await handle(yoga, deps, { compiled: found.entry, params: found.params, request, url, serverContext: serverContext as ServerContext });
      // An upload refused: the connection closes after the answer, so the rest of its body is never read (docs/imports.md#intake).
      if (found.entry.route.answer.kind === 'upload' && response.status >= 400) response.headers.set('Connection', 'close');
      endResponse(response);
    },
  };
}

/** A matched request: admitted, its input read, its operation executed, its answer given. */
async function handle(yoga: YogaServerInstance<ServerContext, Context>, { log, db, nudgeImports, uploadPace }: RestDeps, call: Call): Promise<Response> {
  const { compiled, params, request, url, serverContext } = call;
  const { route, field, rules, responseKey } = compiled;
  const renameField = (key: string) => restFieldName(route, key);
  try {
    const enveloped = yoga.getEnveloped({ request, ...serverContext, operation: compiled.operation.operation } as never);
    const ctx = (await enveloped.contextFactory()) as Context;
    // docs/decisions.md §2: 401 -> 429 before the body is read (415/413 -> 400; the public form: 404 -> 400).
    // The field's own admission, done once per request: its resolver does not charge again.
    // A route with variants charges their shared bucket under their shared response key, once.
    await admit(ctx, field, rules, responseKey);
    // Hostile bytes in a query parameter the route reads: the query's 400, judged here once for every route.
    const hostile = [...hostileParameters(url.search, (name) => compiled.query.has(name) || compiled.queryPrefixes.some((prefix) => name.startsWith(prefix))), ...compiled.headers.filter((name) => hostileHeader(request.headers.get(name) ?? ''))];
    if (hostile.length > 0) return restErrorResponse(invalidInput('query', Object.fromEntries(hostile.map((name) => [name, [HOSTILE_BYTES]]))));

    const input = await readInput({ compiled, params, request, url, ctx, enveloped });
    if ('refused' in input) return restErrorResponse(input.refused);

    if (route.answer.kind === 'upload') {
      // An upload runs its operations as its body arrives (src/rest/answers/upload.ts).
      const execute = (document: Route['operation'], variableValues: Record<string, unknown>) =>
        enveloped.execute({ schema, document, variableValues, contextValue: ctx }) as never;
      return await acceptUpload({
        route: route as never, variables: input.variables, ctx, db, execute, renameField,
        queryParams: [...url.searchParams.keys()], pace: uploadPace, gone: clientGone(serverContext), nudge: nudgeImports,
      });
    }

    const executed = await execute(enveloped, ctx, input, call);
    if ('refused' in executed) return restErrorResponse(executed.refused);
    return await respond[route.answer.kind]({ data: executed.data, answer: route.answer as never, variables: input.variables, refusedItems: input.refusedItems, ctx, request, serverContext, log });
  } catch (error) {
    // A body its client cut off (an upload given up): nobody reads the answer, and nothing failed
    // here. Logged and counted as 499 (src/http/abandoned.ts), never as a server error.
    if (abandoned(serverContext)) return new Response(null, { status: CLIENT_CLOSED_REQUEST });
    // Failures outside execution (the context, reading the body): the core's masking decides what shows.
    const shown = isAppError(error) ? error : maskError(error, log);
    return restErrorResponse(fromCoreError(shown, sourceOf(route), renameField));
  }
}

/** The operation's data, its enums as REST shows them (`QUEUED` -> `queued`), or the core's refusal in REST's words. */
async function execute(enveloped: Enveloped, ctx: Context, input: Input, { compiled, params }: Call): Promise<{ data: unknown } | { refused: RestError }> {
  const { route } = compiled;
  const document = answerDocument(input.compiled, input.variables, await ctx.viewer().catch(() => null));
  const result = await enveloped.execute({ schema, document, variableValues: input.variables, contextValue: ctx });
  if ('errors' in result && result.errors?.length) {
    const renameField = (key: string) => restFieldName(route, key);
    const error = result.errors.find((e: GraphQLError) => e.extensions?.code) ?? result.errors[0]!;
    // A path whose parameter names nothing this service could hold (not a UUID) addresses nothing: 404.
    if (namesOnlyPath(error, params, (key) => variableOf(input.compiled, key) ?? renameField(key))) return { refused: fromHttpError('ROUTE_NOT_FOUND') };
    // The core's stale expectedUpdatedAt, asked for by If-Match: HTTP's own answer (RFC 9110 §13.1.1).
    if (input.ifMatch !== null && error.extensions?.code === 'CONFLICT' && error.extensions.currentUpdatedAt) {
      return { refused: fromHttpError('PRECONDITION_FAILED') };
    }
    return { refused: fromCoreError(error, sourceOf(route), renameField) };
  }
  return { data: restEnumsOf(schema, document, (result as { data: Record<string, unknown> }).data[compiled.responseKey]) };
}

/** The REST name of the variable the root field's argument `key` takes (`invoicePayments(invoiceId: $id)`: `id`), if it takes one. */
function variableOf({ operation }: Compiled, key: string): string | undefined {
  const root = operation.selectionSet.selections[0] as FieldNode;
  const value = root.arguments?.find((a) => a.name.value === key)?.value;
  return value?.kind === Kind.VARIABLE ? toSnake(value.name.value) : undefined;
}

/** A refused input whose every problem is a path parameter (`id`), of a route that has one. */
function namesOnlyPath(error: GraphQLError, pathParams: Record<string, string>, renameField: (key: string) => string): boolean {
  if (error.extensions?.code !== 'BAD_USER_INPUT' || !error.extensions.details) return false;
  const keys = Object.keys(error.extensions.details as object);
  return keys.length > 0 && keys.every((key) => Object.hasOwn(pathParams, renameField(key)));
}

/** Aborts when the client closes the connection before its request's body is complete (an upload given up). */
function clientGone({ req }: ServerContext): AbortSignal {
  const gone = new AbortController();
  req?.once('close', () => {
    if (!req.complete) gone.abort();
  });
  return gone.signal;
}
