import { GraphQLError, type ExecutionResult, type FormattedExecutionResult, type GraphQLFormattedError } from 'graphql/index.js';
import { internalError, isAppError, MESSAGES, notFound, sameLocation, unavailable } from '../errors.js';
import { isDatabaseUnavailable } from '../db/client.js';
import type { Logger } from '../logger.js';

/**
 * What a failure shows, for both transports: expected failures (AppError) and GraphQL's own
 * document errors pass; a record removed meanwhile becomes NOT_FOUND; a database outage becomes
 * SERVICE_UNAVAILABLE; anything else is logged and shown only as "Internal server error".
 */
export function maskError(error: unknown, log: Logger): GraphQLError {
  if (isAppError(error)) return error;
  const original = error instanceof GraphQLError ? (error.originalError ?? null) : error;
  if (error instanceof GraphQLError && (original === null || original instanceof GraphQLError)) return error;
  if (removedMeanwhile(original)) return sameLocation(notFound(MESSAGES.notFound), error);
  if (isDatabaseUnavailable(original)) {
    log.warn({ err: original }, 'database unavailable');
    return sameLocation(unavailable(), error);
  }
  log.error({ err: original }, 'unexpected error');
  return sameLocation(internalError(), error);
}

export function withCodes(result: ExecutionResult, log: Logger): ExecutionResult {
  const coded = (error: GraphQLError): GraphQLError => {
    if (error.extensions?.code) return error;
    log.error({ err: error }, 'an error without a code reached the client');
    return sameLocation(internalError(), error);
  };
  return result.errors?.some((error) => !error.extensions?.code) ? { ...result, errors: result.errors.map(coded) } : result;
}

/**
 * A result as the transports outside Yoga's HTTP answers send it (graphql-ws, multipart
 * subscriptions): every error coded as above, without the `http` extensions (status, headers) that
 * only an HTTP answer acts on, as Yoga leaves them out of its own.
 */
export function shownResult(result: ExecutionResult, log: Logger): FormattedExecutionResult {
  const { errors, extensions, ...rest } = withCodes(result, log);
  const { http: _http, ...shownExtensions } = (extensions ?? {}) as Record<string, unknown>;
  return {
    ...rest,
    ...(errors ? { errors: errors.map(shownError) } : {}),
    ...(Object.keys(shownExtensions).length ? { extensions: shownExtensions } : {}),
  };
}

export function shownError(error: GraphQLError): GraphQLFormattedError {
  const { extensions, ...rest } = error.toJSON();
  const { http: _http, unexpected: _unexpected, ...shown } = extensions ?? {};
  return Object.keys(shown).length ? { ...rest, extensions: shown } : rest;
}

export const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/**
 * Prisma's "record to update, delete or read not found" (P2025). A write finds its target before it
 * changes it, so this is a record another request removed in between: the caller is told it is gone,
 * as if it had come a moment later.
 */
const removedMeanwhile = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'PrismaClientKnownRequestError' && (error as { code?: unknown }).code === 'P2025';
