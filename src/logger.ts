import pino from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;

export type LoggerOptions = {
  level?: string;
  /** Human-readable lines (pino-pretty) instead of JSON: for a developer's terminal only. */
  pretty?: boolean;
  /** Where lines go (default stdout); tests pass a stream to read them back. */
  destination?: pino.DestinationStream;
};

/** What a logged `err` becomes: an allow-list, so no property an error library adds leaks by default. */
export type SafeError = { type: string; code?: string | number; kind?: string; message?: string; stack?: string; cause?: SafeError };

type ErrorLike = Record<string, unknown> & { meta?: { driverAdapterError?: unknown } };
const MAX_CAUSES = 3;

/** What an error wraps: its cause, a GraphQLError's original, or the adapter error Prisma keeps in meta. */
const innerOf = (e: ErrorLike): unknown => e.cause ?? e.originalError ?? e.meta?.driverAdapterError;

/**
 * Data-layer errors quote call arguments and row values (a Prisma validation error prints the whole
 * `data: { email: ... }`): Prisma client errors, driver adapter errors, PostgreSQL error responses,
 * and anything wrapping one (a GraphQLError copies its original's message).
 */
function fromDataLayer(value: unknown, depth = 0): boolean {
  if (!value || typeof value !== 'object' || depth > MAX_CAUSES) return false;
  const e = value as ErrorLike;
  const name = typeof e.name === 'string' ? e.name : '';
  if (name.startsWith('PrismaClient') || name === 'DriverAdapterError' || 'clientVersion' in e || typeof e.severity === 'string') return true;
  return fromDataLayer(innerOf(e), depth + 1);
}

/** Only the `at ...` lines: V8 puts the message (and so any data in it) at the top of `stack`. */
function framesOf(stack: unknown, message: string): string | undefined {
  if (typeof stack !== 'string') return undefined;
  const at = message ? stack.indexOf(message) : -1;
  const rest = at >= 0 ? stack.slice(at + message.length) : stack;
  const frames = rest.split('\n').filter((line) => /^\s+at /.test(line));
  return frames.length > 0 ? frames.join('\n') : undefined;
}

/** The class name (pg's DatabaseError is named "error"), else `name`. */
function typeOf(e: ErrorLike): string {
  const ctor = typeof e.constructor === 'function' ? e.constructor.name : '';
  if (ctor && ctor !== 'Object' && ctor !== 'Error') return ctor;
  return typeof e.name === 'string' && e.name ? e.name : ctor || 'Object';
}

/**
 * pino's `err` serializer: type, code, kind, stack frames and causes always; the message only when
 * no data-layer error is involved. Never `meta`, `detail` or other properties.
 */
export function serializeError(value: unknown, depth = 0): SafeError {
  if (!value || typeof value !== 'object') return { type: typeof value, message: String(value) };
  const e = value as ErrorLike;
  const message = typeof e.message === 'string' ? e.message : '';
  const code = e.code ?? e.errorCode ?? e.originalCode; // errorCode: Prisma init errors; originalCode: adapter causes
  const inner = innerOf(e);
  const stack = framesOf(e.stack, message);
  const safe: SafeError = {
    type: typeOf(e),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(typeof e.kind === 'string' ? { kind: e.kind } : {}),
    ...(message && !fromDataLayer(e) ? { message } : {}),
    ...(stack ? { stack } : {}),
  };
  if (inner && typeof inner === 'object' && depth < MAX_CAUSES) safe.cause = serializeError(inner, depth + 1);
  return safe;
}

/** JSON lines; never tokens, cookies or bodies (they are redacted where they could appear), nor data-layer error text. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const settings: pino.LoggerOptions = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    serializers: { err: serializeError },
    redact: ['req.headers.authorization', 'req.headers.cookie', '*.token', '*.password', '*.authorization', '*.cookie'],
  };
  const destination = options.destination ?? (options.pretty ? pretty({ colorize: true, sync: true, ignore: 'pid,hostname' }) : undefined);
  return destination ? pino(settings, destination) : pino(settings);
}

/** Pretty output when a developer watches the terminal; JSON lines anywhere else (files, collectors). */
export const wantsPrettyLogs = (production: boolean): boolean => !production && process.stdout.isTTY === true;
