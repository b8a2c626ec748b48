/**
 * GraphQL over WebSocket on /graphql: the `graphql-transport-ws` protocol of the graphql-ws package,
 * which Apollo Client's GraphQLWsLink and urql speak (docs/graphql.md#subscriptions). Every operation
 * runs through Yoga's own pipeline (getEnveloped), so the context, rules, limits, cost and masking are
 * those of a POST /graphql; an operation is, for the checks, that POST with the upgrade's headers.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { ExecutionArgs, ExecutionResult, GraphQLError } from 'graphql/index.js';
import type { SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { App } from './app.js';
import type { Context } from './context.js';
import type { AppDeps } from './deps.js';
import { MAX_BODY_BYTES } from './http/body.js';
import { maskError, shownResult } from './graphql/mask.js';
import { documentOf } from './graphql/persisted.js';

type Enveloped = ReturnType<App['getEnveloped']>;
type Run = ExecutionArgs & { enveloped: Enveloped };

/** Headers of the upgrade that say nothing about the operations sent over it. */
const CONNECTION_HEADERS = new Set(['connection', 'upgrade', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-protocol']);

/**
 * The request an operation of this connection is checked as: a POST /graphql with the upgrade's
 * headers, and `connectionParams.authorization` (browsers cannot set an upgrade's headers) as its
 * Authorization. A POST, so a cookie must come from ALLOWED_ORIGINS (docs/decisions.md §1): a browser
 * sends the cookie on any site's WebSocket, as on any site's form POST.
 */
export function operationRequest(upgrade: IncomingMessage, connectionParams: Record<string, unknown> | undefined): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(upgrade.headers)) {
    if (value !== undefined && !CONNECTION_HEADERS.has(name)) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const given = connectionParams?.authorization ?? connectionParams?.Authorization;
  if (typeof given === 'string' && given.trim()) headers.set('authorization', /^bearer\s/i.test(given) ? given : `Bearer ${given.trim()}`);
  return new Request('http://localhost/graphql', { method: 'POST', headers });
}

/** Serves graphql-ws on the server's /graphql; close() ends every connection (1001, going away). */
export function serveGraphqlWs(server: Server, app: App, deps: Pick<AppDeps, 'config' | 'log'>): { close(): Promise<void> } {
  const wss = new WebSocketServer({ server, path: app.graphqlEndpoint, maxPayload: MAX_BODY_BYTES });
  const envelop = (upgrade: IncomingMessage, connectionParams: Record<string, unknown> | undefined, params?: SubscribePayload) =>
    app.getEnveloped({ request: operationRequest(upgrade, connectionParams), req: upgrade, params } as never);
  // Errors leave as the HTTP answers show them; nothing may throw out of a hook: graphql-ws would close the connection.
  const failed = (error: unknown): GraphQLError[] => [maskError(error, deps.log)];
  const run = async (call: () => Promise<unknown>) => {
    try {
      return await call();
    } catch (error) {
      return { errors: failed(error) };
    }
  };
  const disposable = useServer<Record<string, unknown> | undefined>(
    {
      // A connection is one caller: refused (4403) without a valid token, or with a cookie from another site.
      onConnect: async ({ extra, connectionParams }) => {
        try {
          const context = (await envelop(extra.request, connectionParams).contextFactory()) as unknown as Context;
          await context.viewer();
          return true;
        } catch {
          return false;
        }
      },
      onSubscribe: async ({ extra, connectionParams }, _id, payload) => {
        try {
          const enveloped = envelop(extra.request, connectionParams, payload);
          const document = enveloped.parse(documentOf(payload, deps.config.trustedDocuments));
          const errors = enveloped.validate(enveloped.schema, document);
          if (errors.length > 0) return [...errors];
          const contextValue = await enveloped.contextFactory();
          const args: Run = { schema: enveloped.schema, document, operationName: payload.operationName, variableValues: payload.variables, contextValue, enveloped };
          return args;
        } catch (error) {
          return failed(error);
        }
      },
      execute: (args) => run(() => (args as Run).enveloped.execute(args)) as never,
      subscribe: (args) => run(() => (args as Run).enveloped.subscribe(args)) as never,
      onNext: (_ctx, _id, _payload, _args, result) => shownResult(result as ExecutionResult, deps.log),
      onError: (_ctx, _id, _payload, errors) => shownResult({ errors }, deps.log).errors!,
    },
    wss,
  );
  return { close: async () => disposable.dispose() };
}
