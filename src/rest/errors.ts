import { Response } from '../http/response.js';
import type { GraphQLError } from 'graphql/index.js';
import { HTTP_STATUS, MESSAGES, UNAVAILABLE_RETRY_SECONDS, type ErrorCode, type ErrorDetails } from '../errors.js';
import { idempotencyKeyProblems } from '../idempotency/idempotency.service.js';

/** Failures only the REST routing can have: the path names no operation. */
export type HttpErrorCode = 'ROUTE_NOT_FOUND' | 'METHOD_NOT_ALLOWED' | 'PRECONDITION_FAILED';

export type RestError = { status: number; body: { error: string; details?: ErrorDetails }; headers?: Record<string, string> };

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers } });

export const restErrorResponse = (error: RestError): Response => json(error.status, error.body, error.headers);

/**
 * The fields a 400 names for a request header judged with the input: the Idempotency-Key's
 * (`idempotency_key`), as its own check names it (a key that is one space is refused).
 */
const HEADER_FIELDS = new Set(Object.keys(idempotencyKeyProblems(new Headers({ 'Idempotency-Key': ' ' }))));

/** Where the request's input came from decides the 400 message (docs/decisions.md §2). */
export type InputSource = 'query' | 'body';

/**
 * The one translation of the core's error codes into the contract's bodies. Exhaustive: a new
 * ErrorCode does not compile until this switch renders it.
 */
/** An error as the core reports it: its message and extensions (a GraphQLError, or a sample for the reference). */
export type CoreError = Pick<GraphQLError, 'message' | 'extensions'>;

export function fromCoreError(error: CoreError, source: InputSource, renameField: (key: string) => string): RestError {
  const code = error.extensions.code as ErrorCode | undefined;
  switch (code) {
    case 'BAD_USER_INPUT': {
      const details = Object.fromEntries(Object.entries((error.extensions.details ?? {}) as ErrorDetails).map(([k, v]) => [renameField(k), v]));
      // A header judged as input (Idempotency-Key) is the payload's on every route, a DELETE's too
      // (docs/rest.md#errors): a query's 400 only where a query parameter is among the failures.
      const fromHeaders = Object.keys(details).length > 0 && Object.keys(details).every((key) => HEADER_FIELDS.has(key));
      return invalidInput(fromHeaders ? 'body' : source, details);
    }
    case 'RATE_LIMITED':
      return { status: 429, body: { error: MESSAGES.rateLimited } };
    case 'SERVICE_UNAVAILABLE':
      return { status: 503, body: { error: MESSAGES.unavailable }, headers: { 'Retry-After': String(UNAVAILABLE_RETRY_SECONDS) } };
    case 'INVALID_TRANSITION': {
      // docs/decisions.md §18: the move is named on the field that asked for it.
      const { from, to } = error.extensions as { from?: string; to?: string };
      return { status: 409, body: { error: 'Invalid transition', details: { status: [`Cannot move from ${from} to ${to}`] } } };
    }
    case 'UNAUTHENTICATED':
    case 'FORBIDDEN':
    case 'NOT_FOUND':
    case 'CONFLICT':
    case 'IDEMPOTENCY_CONFLICT':
    case 'IDEMPOTENCY_IN_PROGRESS':
    case 'PAYLOAD_TOO_LARGE':
    case 'REQUEST_TIMEOUT':
    case 'UNSUPPORTED_MEDIA_TYPE':
      return { status: HTTP_STATUS[code], body: { error: error.message } };
    // Request-level failures of a GraphQL document: REST runs fixed, checked operations, so these
    // would be our own fault; rendered with their status all the same.
    case 'GRAPHQL_PARSE_FAILED':
    case 'GRAPHQL_VALIDATION_FAILED':
    case 'QUERY_TOO_COMPLEX':
    case 'PERSISTED_QUERY_NOT_FOUND':
    case 'BAD_REQUEST':
    case 'OPERATION_RESOLUTION_FAILURE':
      return { status: HTTP_STATUS[code], body: { error: error.message } };
    case 'INTERNAL_SERVER_ERROR':
    case undefined:
      return { status: 500, body: { error: MESSAGES.internal } };
    default:
      return assertNever(code);
  }
}

export function fromHttpError(code: HttpErrorCode, allow?: string[]): RestError {
  switch (code) {
    case 'ROUTE_NOT_FOUND':
      return { status: 404, body: { error: 'Not found' } };
    case 'METHOD_NOT_ALLOWED':
      return { status: 405, body: { error: 'Method not allowed' }, headers: { Allow: (allow ?? []).join(', ') } };
    case 'PRECONDITION_FAILED': // If-Match named a version the record no longer has
      return { status: 412, body: { error: 'Precondition failed' } };
    default:
      return assertNever(code);
  }
}

export const invalidInput = (source: InputSource, details: ErrorDetails): RestError => ({
  status: 400,
  body: { error: source === 'query' ? MESSAGES.invalidQuery : MESSAGES.invalidInput, details },
});

function assertNever(value: never): never {
  throw new Error(`Unhandled error code: ${String(value)}`);
}
