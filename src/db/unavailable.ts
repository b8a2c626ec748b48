import { DatabaseUnavailableError } from './bounds.js';
import { errorChain } from './sql-state.js';

// Prisma: can't reach server, timed out, database missing, access denied, TLS, server closed the
// connection, operations timed out, no free pool connection, a transaction that could not start (or
// ran out of time and was rolled back) in its bound.
const PRISMA_CODES = new Set(['P1001', 'P1002', 'P1003', 'P1008', 'P1010', 'P1011', 'P1017', 'P2024', 'P2028']);
// Driver adapters (MappedError kinds) describing a connection-level failure.
const ADAPTER_KINDS = new Set([
  'DatabaseNotReachable', 'DatabaseDoesNotExist', 'DatabaseAccessDenied', 'AuthenticationFailed',
  'ConnectionClosed', 'TlsConnectionError', 'SocketTimeout', 'TooManyConnections',
]);
// Socket errors from Node.
const ERRNO_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH',
]);
// PostgreSQL SQLSTATE: class 08 (connection exception), class 57P (operator intervention: shutting
// down, starting up, database dropped), 57014 (statement timeout), 53300 (too many clients).
const SQLSTATE = /^(08...|57P..|57014|53300)$/;

/**
 * True when `err` means "the database can't be reached in time right now", so callers answer 503.
 * Decided by class and code only: the pool and the PGlite gate (src/db/bounds.ts) give pg's and
 * PGlite's codeless failures a SQLSTATE of their own.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (e instanceof DatabaseUnavailableError) return true;
    const code = e.code ?? e.errorCode; // errorCode: PrismaClientInitializationError
    if (typeof code === 'string' && (PRISMA_CODES.has(code) || ERRNO_CODES.has(code) || SQLSTATE.test(code))) return true;
    // The adapter's error inside Prisma's (a P2010 "raw query failed" hiding a lost server) counts too.
    if (typeof e.kind === 'string' && ADAPTER_KINDS.has(e.kind)) return true;
  }
  return false;
}
