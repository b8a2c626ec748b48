import { GraphQLError } from 'graphql';
import { internalError, isAppError, sameLocation, unavailable } from '../errors.js';
import { isDatabaseUnavailable } from '../db/client.js';
import type { Logger } from '../logger.js';

/**
 * What a failure shows, for both transports: expected failures (AppError) and GraphQL's own
 * document errors pass; a database outage becomes SERVICE_UNAVAILABLE; anything else is logged
 * and shown only as "Internal server error".
 */
export function maskError(error: unknown, log: Logger): GraphQLError {
  if (isAppError(error)) return error;
  const original = error instanceof GraphQLError ? (error.originalError ?? null) : error;
  if (error instanceof GraphQLError && (original === null || original instanceof GraphQLError)) return error;
  if (isDatabaseUnavailable(original)) {
    log.warn({ err: original }, 'database unavailable');
    return sameLocation(unavailable(), error);
  }
  log.error({ err: original }, 'unexpected error');
  return sameLocation(internalError(), error);
}
