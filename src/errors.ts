import { GraphQLError } from 'graphql';

/**
 * One vocabulary of expected failures for both transports. GraphQL shows the code as
 * `extensions.code`; REST turns it into a status and the contract's body (src/rest/errors.ts).
 */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'RATE_LIMITED'
  | 'INVALID_TRANSITION'
  | 'IDEMPOTENCY_CONFLICT'
  | 'IDEMPOTENCY_IN_PROGRESS'
  | 'SERVICE_UNAVAILABLE';

/** Field name -> messages, as in the contract's `details`. */
export type ErrorDetails = Record<string, string[]>;

export const HTTP_STATUS: Record<ErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  BAD_USER_INPUT: 400,
  NOT_FOUND: 404,
  RATE_LIMITED: 429,
  INVALID_TRANSITION: 409,
  IDEMPOTENCY_CONFLICT: 422,
  IDEMPOTENCY_IN_PROGRESS: 409,
  SERVICE_UNAVAILABLE: 503,
};

/** An expected failure whose message is safe to show; anything else is masked as internal. */
export class AppError extends GraphQLError {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    extra: Record<string, unknown> = {},
  ) {
    super(message, {
      // No `http.status`: a GraphQL response may hold data beside errors, so /graphql answers 200.
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
  formNotFound: 'Form not found or inactive',
  rateLimited: 'Rate limit exceeded',
  invalidInput: 'Invalid payload',
  unavailable: 'Service unavailable',
} as const;

export const unauthenticated = () => new AppError('UNAUTHENTICATED', MESSAGES.unauthorized);
export const forbidden = (message: string = MESSAGES.noAccess) => new AppError('FORBIDDEN', message);
export const badInput = (details: ErrorDetails) => new AppError('BAD_USER_INPUT', MESSAGES.invalidInput, details);
export const notFound = (message: string) => new AppError('NOT_FOUND', message);

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
