import { GraphQLError, type ASTNode } from 'graphql/index.js';
import { restScope, type ApiScope } from './scopes.js';

/**
 * One vocabulary of failures for both transports. GraphQL shows the code as `extensions.code`;
 * REST turns it into a status and the contract's body (src/rest/errors.ts). Every error the service
 * makes itself comes from a factory below: nothing else builds one by hand.
 */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'RATE_LIMITED'
  | 'INVALID_TRANSITION'
  | 'CONFLICT'
  | 'IDEMPOTENCY_CONFLICT'
  | 'IDEMPOTENCY_IN_PROGRESS'
  | 'PAYLOAD_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_SERVER_ERROR'
  // Request-level failures of /graphql (docs/decisions.md §9 amended, docs/graphql.md#error-codes):
  | 'GRAPHQL_PARSE_FAILED'
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'QUERY_TOO_COMPLEX'
  | 'PERSISTED_QUERY_NOT_FOUND'
  /**
   * A malformed GraphQL-over-HTTP request (no query string, a mutation over GET), or one asking for
   * what /graphql cannot answer (a subscription as one JSON answer, 406): Yoga's and Apollo's own code.
   */
  | 'BAD_REQUEST'
  /** Several operations and no (or an unknown) operationName: Yoga's and Apollo's own code. */
  | 'OPERATION_RESOLUTION_FAILURE';

/** Field name -> messages, as in the contract's `details`. */
export type ErrorDetails = Record<string, string[]>;

export const HTTP_STATUS: Record<ErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  BAD_USER_INPUT: 400,
  NOT_FOUND: 404,
  RATE_LIMITED: 429,
  INVALID_TRANSITION: 409,
  CONFLICT: 409,
  IDEMPOTENCY_CONFLICT: 422,
  IDEMPOTENCY_IN_PROGRESS: 409,
  PAYLOAD_TOO_LARGE: 413,
  REQUEST_TIMEOUT: 408,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_SERVER_ERROR: 500,
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  QUERY_TOO_COMPLEX: 400,
  PERSISTED_QUERY_NOT_FOUND: 404,
  BAD_REQUEST: 400,
  OPERATION_RESOLUTION_FAILURE: 400,
};

/** Every code an error may carry: the documented vocabulary (docs/graphql.md#error-codes). */
export const ERROR_CODES = Object.keys(HTTP_STATUS) as ErrorCode[];

/** Seconds a client is told to wait when the database cannot serve (Retry-After). */
export const UNAVAILABLE_RETRY_SECONDS = 5;

/** An expected failure whose message is safe to show; anything else is masked as internal. */
export class AppError extends GraphQLError {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    extra: Record<string, unknown> = {},
  ) {
    super(message, {
      // No `http.status` by default: a GraphQL response may hold data beside errors, so /graphql answers 200.
      extensions: { code, ...(details ? { details } : {}), ...extra },
    });
  }
}

export const MESSAGES = {
  unauthorized: 'Unauthorized',
  noAccess: 'Forbidden: no access to this account',
  ownerOnly: 'Forbidden: only the account owner can do this',
  ownerOnlyExport: 'Forbidden: only the account owner can export account data',
  crossSite: 'Forbidden: cross-site request',
  notForKeys: 'Forbidden: API keys cannot do this; it needs a session token',
  formNotFound: 'Form not found or inactive',
  rateLimited: 'Rate limit exceeded',
  invalidInput: 'Invalid payload',
  invalidQuery: 'Invalid query',
  unavailable: 'Service unavailable',
  internal: 'Internal server error',
  payloadTooLarge: 'Payload too large',
  requestTimeout: 'Request timeout: the body arrived too slowly',
  unsupportedMediaType: 'Unsupported media type',
  idempotencyConflict: 'Idempotency key reused with a different payload',
  idempotencyInProgress: 'A request with this idempotency key is still in progress',
  notFound: 'Not found',
  staleRecord: 'The record changed since expectedUpdatedAt',
  invalidVariables: 'Invalid variables',
  queryTooComplex: 'Query too complex',
  persistedQueryNotFound: 'PersistedQueryNotFound',
  trustedDocumentsOnly: 'Only trusted documents run here: send extensions.persistedQuery.sha256Hash of a known document',
  subscriptionNeedsStream:
    'A subscription is a stream: send Accept: text/event-stream or multipart/mixed;subscriptionSpec="1.0", or subscribe over graphql-ws',
} as const;

export const unauthenticated = () => new AppError('UNAUTHENTICATED', MESSAGES.unauthorized);
export const forbidden = (message: string = MESSAGES.noAccess) => new AppError('FORBIDDEN', message);
/** An API key without the scope a field declares (docs/decisions.md §15): REST names it as REST spells scopes. */
export const lacksScope = (scope: ApiScope) =>
  new AppError('FORBIDDEN', lacksScopeMessage(scope), undefined, { requiredScope: scope });
export const lacksScopeMessage = (scope: ApiScope) => `Forbidden: this API key lacks the scope ${restScope(scope)}`;
export const badInput = (details: ErrorDetails) => new AppError('BAD_USER_INPUT', MESSAGES.invalidInput, details);
/** A body that is not a JSON object (decisions §2): 400 with `details.body`. */
export const notAJsonObject = () => badInput({ body: ['Expected a JSON object'] });
/** A cookie-authenticated request from another site: refused whole, so it carries its 403. */
export const crossSiteRefusal = () => new AppError('FORBIDDEN', MESSAGES.crossSite, undefined, { http: { status: 403 } });
export const notFound = (message: string) => new AppError('NOT_FOUND', message);
export const rateLimited = (retryAfter: number) => new AppError('RATE_LIMITED', MESSAGES.rateLimited, undefined, { retryAfter });
export const invalidTransition = (message: string, move: { from: string; to: string }) =>
  new AppError('INVALID_TRANSITION', message, undefined, move);
/**
 * A change refused by the record's state (docs/decisions.md §12): a stale `expectedUpdatedAt`
 * (with `currentUpdatedAt`), a billing record past draft, a form that has submissions.
 */
export const conflict = (message: string, extra: { currentUpdatedAt?: string } = {}) => new AppError('CONFLICT', message, undefined, extra);
/** A scalar value that does not parse (graphql-js prefixes it with the variable or argument it is in). */
export const invalidValue = (message: string) => new AppError('BAD_USER_INPUT', message);
/**
 * A literal of the document that its scalar refuses (invalidValue, thrown while validating): the
 * scalar's message, located at the literal, with `details` keyed by argument path
 * (`filter.updatedAfter`), as invalidVariables keys a variable's by variable path. No `http.status`:
 * a document that fails validation is a 200 for `application/json` (GraphQL over HTTP).
 */
export const invalidLiteral = (path: string, message: string, node: ASTNode) =>
  new GraphQLError(message, { nodes: node, extensions: { code: 'BAD_USER_INPUT' satisfies ErrorCode, details: { [path]: [message] } satisfies ErrorDetails } });
export const idempotencyConflict = () => new AppError('IDEMPOTENCY_CONFLICT', MESSAGES.idempotencyConflict);
export const idempotencyInProgress = () => new AppError('IDEMPOTENCY_IN_PROGRESS', MESSAGES.idempotencyInProgress);
// These two judge the HTTP message itself, so they carry their status for /graphql's answer too.
/** A body slower than the service's floor (docs/imports.md#bounds): cut off. */
export const requestTimeout = () => new AppError('REQUEST_TIMEOUT', MESSAGES.requestTimeout, undefined, { http: { status: 408 } });
export const payloadTooLarge = () => new AppError('PAYLOAD_TOO_LARGE', MESSAGES.payloadTooLarge, undefined, { http: { status: 413 } });
export const unsupportedMediaType = () =>
  new AppError('UNSUPPORTED_MEDIA_TYPE', MESSAGES.unsupportedMediaType, undefined, { http: { status: 415 } });
export const unavailable = () => new AppError('SERVICE_UNAVAILABLE', MESSAGES.unavailable);
/** What the client sees of a failure nobody expected: the message and code only. */
export const internalError = () => new AppError('INTERNAL_SERVER_ERROR', MESSAGES.internal);

/** Variables that do not coerce to their declared types: `details` keyed by variable path (`input.email`). */
export const invalidVariables = (details: ErrorDetails) =>
  new AppError('BAD_USER_INPUT', MESSAGES.invalidVariables, details, { http: { status: 400 } });
/** A document that asks for more than one request may (§11 cost, or graphql-armor's depth, aliases, tokens, directives). */
export const queryTooComplex = (cost: number, maxCost: number) =>
  new AppError('QUERY_TOO_COMPLEX', `${MESSAGES.queryTooComplex}: it costs ${cost}, more than ${maxCost}`, undefined, { cost, maxCost });
/** A document the schema cannot run at all (an operation kind it does not have). */
export const validationFailed = (message: string) => new AppError('GRAPHQL_VALIDATION_FAILED', message);
/**
 * Apollo's APQ protocol: the hash is unknown, the client sends the text once. Apollo's message and a
 * 200, which every APQ client (Apollo Link, urql) reads as "send the query" rather than a failure.
 */
export const persistedQueryNotFound = () =>
  new AppError('PERSISTED_QUERY_NOT_FOUND', MESSAGES.persistedQueryNotFound, undefined, { http: { status: 200 } });
/** How a subscription may be asked for over HTTP: Server-Sent Events, or Apollo's multipart protocol. */
export const STREAM_MEDIA_TYPES = 'text/event-stream, multipart/mixed;subscriptionSpec="1.0"';
/**
 * A subscription sent by HTTP asking for one JSON answer: it streams, so 406 Not Acceptable, with
 * `Accept` naming what to ask for; refused before it starts, so nothing runs and nothing is charged.
 */
export const subscriptionNeedsStream = () =>
  new AppError('BAD_REQUEST', MESSAGES.subscriptionNeedsStream, undefined, { http: { status: 406, headers: { Accept: STREAM_MEDIA_TYPES } } });
/** GRAPHQL_TRUSTED_DOCUMENTS is set and the request names no listed document (a 400: resending the text will not help). */
export const trustedDocumentsOnly = () =>
  new AppError('PERSISTED_QUERY_NOT_FOUND', MESSAGES.trustedDocumentsOnly, undefined, { http: { status: 400 } });

/**
 * Gives a library's own error (graphql-armor's limits, thrown where no factory can take its place)
 * one of our codes. Its message stays; the misleading "Syntax Error: " prefix of armor's goes.
 */
export function withCode<E extends GraphQLError>(error: E, code: ErrorCode): E {
  (error.extensions as Record<string, unknown>).code = code;
  error.message = error.message.replace(/^Syntax Error: /, '');
  return error;
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}

/** `replacement` where `original` happened (its path and source locations), for masked errors. */
export function sameLocation(replacement: AppError, original: unknown): GraphQLError {
  if (!(original instanceof GraphQLError)) return replacement;
  return new GraphQLError(replacement.message, {
    nodes: original.nodes,
    source: original.source,
    positions: original.positions,
    path: original.path,
    extensions: replacement.extensions,
  });
}

/** A field naming a record the account does not have (or no longer has). */
export const NOT_IN_ACCOUNT = 'Not found in this account';

/** A field naming someone who is neither the account's owner nor one of its members. */
export const NOT_A_MEMBER = 'Not a member of this account';
