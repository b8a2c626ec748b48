import { getOperationAST, NoSchemaIntrospectionCustomRule } from 'graphql/index.js';
import { createYoga, type CORSOptions, type Plugin } from 'graphql-yoga';
import { graphqlArmor, graphqlBodyLimit } from './graphql/armor.js';
import { useCrossSiteRule } from './plugins/use-cross-site-rule.js';
import { createContext, requestState, type Context, type ServerContext } from './context.js';
import { releaseUpload } from './ratelimit/upload-slots.js';
import type { AppDeps } from './deps.js';
import { maskError } from './graphql/mask.js';
import { useErrorCodes } from './plugins/use-error-codes.js';
import { useMalformedRequestStatus } from './plugins/use-malformed-request-status.js';
import { useVariableErrors } from './plugins/use-variable-errors.js';
import { useCost } from './plugins/use-cost.js';
import { useReplayedExtension } from './plugins/use-replayed-extension.js';
import { useMultipartSubscriptions } from './plugins/use-multipart-subscriptions.js';
import { useSseSingleConnection } from './plugins/use-sse-single-connection.js';
import { useSubscriptionAccept } from './plugins/use-subscription-accept.js';
import { memoryDocumentStore } from './graphql/persisted.js';
import { useAutomaticPersistedQueries } from './plugins/use-automatic-persisted-queries.js';
import { useTrustedDocuments } from './plugins/use-trusted-documents.js';
import { GRAPHQL_LIMITS } from './graphql/armor.js';
import { schema } from './schema.js';
import { useHealth } from './plugins/use-health.js';
import { useRest } from './rest/plugin.js';
import { DOCS_PATH, OPENAPI_PATH, useApiReference } from './rest/docs.js';
import { EXAMPLE_OPERATION_NAMES, graphiql } from './graphiql.js';
import { useObservability } from './plugins/use-observability.js';
import { useFormPage } from './pages/form-page.plugin.js';
import { rateLimitHeaders } from './rest/headers.js';
import { useInvoicePage } from './pages/invoice-page.plugin.js';
import { routes } from './rest/routes.js';
import { useAuthChallenge } from './plugins/use-auth-challenge.js';
import { startPdfPool } from './invoices/pdf-pool.js';
import { useCompression } from './plugins/use-compression.js';
import { useRequestsInFlight } from './plugins/use-requests-in-flight.js';

export type { AppDeps } from './deps.js';

export type App = ReturnType<typeof createApp>;

/** The whole service as one fetch handler: GraphQL at /graphql, the REST contract under /api/v1. */
export function createApp(deps: AppDeps) {
  // Its threads start with the first PDF; whoever built `deps` closes it with them (src/runtime.ts).
  deps.pdfs ??= startPdfPool(deps.config.pdf);
  const yoga = createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    context: ({ request, ...server }) => createContext(deps, request, server),
    maskedErrors: { maskError: (error) => maskError(error, deps.log) },
    ...graphiql(deps.config),
    landingPage: false,
    logging: false,
    cors: (request) => corsFor(request, deps.config.allowedOrigins),
    // A JSON array of operations answers an array; each operation meets every limit on its own (§11).
    batching: { limit: GRAPHQL_LIMITS.maxBatch },
    // graphqlBodyLimit reads every POSTed operation within 1 MiB. Yoga's own limit (25 MB) piped each
    // body through a stream pipeline that ended by aborting an AbortController: a DOMException and its
    // stack trace, ~60 µs of every POST /graphql (BENCHMARKS.md "GraphQL's fixed cost").
    maxRequestBodySize: false,
    plugins: [
      useRequestsInFlight(), // background work (workflow runs) steps aside while requests keep the instance busy
      // GRAPHQL_TRUSTED_DOCUMENTS runs only the listed documents; else Apollo's automatic persisted queries.
      deps.config.trustedDocuments
        ? useTrustedDocuments(deps.config.trustedDocuments)
        : useAutomaticPersistedQueries(deps.documents ?? memoryDocumentStore()),
      ...useObservability(deps, knownRoutes),
      ...(deps.config.introspection ? [] : [noIntrospection]),
      ...graphqlArmor(deps.config.production),
      graphqlBodyLimit(),
      useVariableErrors(deps.config.production),
      useCost(deps.limiter),
      useReplayedExtension(),
      useErrorCodes(deps.log),
      useMalformedRequestStatus(),
      useSubscriptionAccept(), // a subscription by HTTP must ask for a stream: else 406, before it starts
      useMultipartSubscriptions(deps.log), // Apollo Client's HttpLink subscriptions (SSE is Yoga's own)
      // graphql-sse's single connection mode; each operation goes back through this Yoga as a POST.
      useSseSingleConnection({
        signedIn: (request, server) => createContext(deps, request, server).viewer().then(() => true, () => false),
        run: async (request, server): Promise<Response> => yoga.fetch(request, server),
      }),
      useResponseHeaders(),
      // An upload's places are given back with its answer, however it ended (src/ratelimit/upload-slots.ts).
      { onResponse: ({ request }) => releaseUpload(request) } satisfies Plugin,
      useCrossSiteRule({ cookieName: deps.config.auth.cookieName, allowedOrigins: deps.config.allowedOrigins }),
      useHealth(deps),
      useApiReference({ cookieName: deps.config.auth.cookieName, publicUrl: deps.config.publicUrl, trustProxy: deps.config.trustProxy }),
      useRest({ log: deps.log, db: deps.db, nudgeImports: () => deps.imports?.nudge(), uploadPace: deps.config.uploadPace }),
      useFormPage({ log: deps.log }),
      useInvoicePage({ log: deps.log }),
      useAuthChallenge(deps.config.auth.cookieName),
      // Last: it codes the answer every other plugin has finished (its headers included).
      useCompression({ enabled: deps.config.compression, kept: isKeptDocument }),
    ],
  });
  return yoga;
}

/** What the request logs and metrics may name: bounded labels, from the REST table and GraphiQL's examples. */
const knownRoutes = {
  paths: routes.map((r) => r.path),
  operations: [...routes.map((r) => getOperationAST(r.operation)?.name?.value ?? ''), ...EXAMPLE_OPERATION_NAMES].filter(Boolean),
};

/**
 * Browsers may call the API cross-origin only from ALLOWED_ORIGINS (with cookies). The public form
 * submit is meant for any website, so it allows every origin but never with credentials.
 */
function corsFor(request: Request, allowedOrigins: string[]): CORSOptions {
  if (/^\/api\/v1\/forms\/[^/]+\/submit$/.test(new URL(request.url).pathname)) {
    return { origin: '*', credentials: false, methods: ['POST'], allowedHeaders: ['Content-Type', 'Idempotency-Key'] };
  }
  // No CORS headers at all for any other origin: given a list, the CORS helper would answer
  // `Access-Control-Allow-Origin: null` with credentials, which a sandboxed page's Origin "null" matches.
  const origin = request.headers.get('origin');
  if (origin === null || !allowedOrigins.includes(origin)) return false as unknown as CORSOptions;
  return {
    origin,
    credentials: true,
    methods: ['GET', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'X-Request-Id'],
    exposedHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'Content-Disposition', 'ETag', 'Idempotent-Replayed'],
  };
}

/** The documents served as they are kept: the OpenAPI document, Swagger UI's files, GraphiQL's page. */
function isKeptDocument(request: Request, url: URL, response: Response): boolean {
  if (response.status !== 200 || (request.method !== 'GET' && request.method !== 'HEAD')) return false;
  const { pathname } = url;
  if (pathname === OPENAPI_PATH || pathname === DOCS_PATH || pathname.startsWith(`${DOCS_PATH}/`)) return true;
  return pathname === '/graphql' && (response.headers.get('content-type') ?? '').startsWith('text/html');
}

const noIntrospection: Plugin = {
  onValidate: ({ addValidationRule }) => addValidationRule(NoSchemaIntrospectionCustomRule),
};

/** Request id, rate-limit headers and safe defaults on every answer, GraphQL and REST alike. */
function useResponseHeaders(): Plugin {
  return {
    onResponse: ({ request, response }) => {
      const state = requestState(request);
      response.headers.set('X-Request-Id', state.requestId);
      response.headers.set('X-Content-Type-Options', 'nosniff');
      if (!response.headers.has('Cache-Control')) response.headers.set('Cache-Control', 'no-store');
      for (const [name, value] of Object.entries(rateLimitHeaders(state.rateLimit))) response.headers.set(name, value);
      if (state.replayed) response.headers.set('Idempotent-Replayed', 'true'); // the core said so (src/graphql/replayed.ts)
    },
  };
}

