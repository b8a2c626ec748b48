import { GraphQLError, NoSchemaIntrospectionCustomRule } from 'graphql';
import { createYoga, type CORSOptions, type Plugin } from 'graphql-yoga';
import { graphqlArmor, graphqlBodyLimit } from './graphql/armor.js';
import type { KnownUsers } from './auth/viewer.js';
import type { TokenClaims } from './auth/token.js';
import type { Config } from './config.js';
import { createContext, requestState, type Context, type ServerContext } from './context.js';
import { isDatabaseUnavailable, type Database } from './db/client.js';
import { AppError, MESSAGES } from './errors.js';
import { schema } from './graphql/schema.js';
import { useHealth } from './health.js';
import type { Logger } from './logger.js';
import type { RateLimiter } from './ratelimit/limiter.js';
import { useRest } from './rest/plugin.js';
import { useApiReference } from './rest/docs.js';
import { graphiql } from './graphiql.js';
import { useObservability } from './observability/index.js';
import { useFormPage } from './forms/form-page.plugin.js';
import { rateLimitHeaders } from './rest/headers.js';
import { useAuthChallenge } from './auth/challenge.plugin.js';

/** Everything a running app needs from outside; main.ts and the tests each build one. */
export type AppDeps = {
  config: Config;
  db: Database;
  limiter: RateLimiter;
  verifyToken: (token: string) => Promise<TokenClaims>;
  knownUsers: KnownUsers;
  log: Logger;
};

export type App = ReturnType<typeof createApp>;

/** The whole service as one fetch handler: GraphQL at /graphql, the REST contract under /api/v1. */
export function createApp(deps: AppDeps) {
  return createYoga<ServerContext, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    context: ({ request, ...server }) => createContext(deps, request, server),
    maskedErrors: { maskError: (error) => maskError(error, deps.log) },
    ...graphiql(deps.config),
    landingPage: false,
    logging: false,
    cors: (request) => corsFor(request, deps.config.allowedOrigins),
    plugins: [
      ...useObservability(deps),
      ...(deps.config.introspection ? [] : [noIntrospection]),
      ...graphqlArmor(deps.config.production),
      graphqlBodyLimit(),
      useResponseHeaders(),
      useHealth(deps),
      useApiReference(deps),
      useRest(deps),
      useFormPage(deps),
      useAuthChallenge(deps.config.auth.cookieName),
    ],
  });
}

/**
 * Expected failures (AppError) and GraphQL's own document errors pass; a database outage becomes
 * SERVICE_UNAVAILABLE; anything else is logged and shown only as "Internal server error".
 */
export function maskError(error: unknown, log: Logger): Error {
  const original = error instanceof GraphQLError ? (error.originalError ?? null) : error;
  if (error instanceof GraphQLError && (original === null || original instanceof GraphQLError)) return error;
  const path = error instanceof GraphQLError ? error.path : undefined;
  if (isDatabaseUnavailable(original)) {
    log.warn({ err: original }, 'database unavailable');
    return new GraphQLError(MESSAGES.unavailable, { path, extensions: { code: 'SERVICE_UNAVAILABLE' } });
  }
  log.error({ err: original }, 'unexpected error');
  return new GraphQLError('Internal server error', { path, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
}

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
    methods: ['GET', 'POST'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'],
    exposedHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id', 'Content-Disposition'],
  };
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
    },
  };
}

