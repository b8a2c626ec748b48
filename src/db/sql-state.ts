// What a failed statement's error says of the data it was given, read the same through pg (its
// error's `code`) and through Prisma's raw queries (a P2010 wrapping the driver adapter's error,
// which keeps the SQLSTATE as `originalCode`, or names only a `kind`).

/** Adapter kinds that name a constraint violation without a code of their own. */
const KINDS: Record<string, string> = { UniqueConstraintViolation: '23505', ForeignKeyConstraintViolation: '23503', NullConstraintViolation: '23502' };

/** What a database error may carry, on itself or on an error it wraps. */
export type ErrorLike = { code?: unknown; errorCode?: unknown; originalCode?: unknown; kind?: unknown; constraint?: unknown; cause?: ErrorLike; meta?: { driverAdapterError?: ErrorLike } };

/** `error` and the errors it wraps, outermost first: Prisma keeps the adapter's error in meta (a P2010 "raw query failed"), others in `cause`. */
export function* errorChain(error: unknown): Generator<ErrorLike> {
  for (let depth = 0, e = error as ErrorLike | undefined; e && typeof e === 'object' && depth < 8; depth++) {
    yield e;
    e = e.meta?.driverAdapterError ?? e.cause;
  }
}

/** The SQLSTATE a database error carries (23505: a unique key taken), or null. */
export function sqlStateOf(error: unknown): string | null {
  for (const e of errorChain(error)) {
    for (const code of [e.originalCode, e.code]) if (typeof code === 'string' && /^[0-9A-O][0-9A-Z]{4}$/.test(code)) return code;
    if (typeof e.kind === 'string' && KINDS[e.kind]) return KINDS[e.kind]!;
  }
  return null;
}

/** A data exception (class 22) or an integrity constraint violation (class 23): the statement's data is at fault, not the database. */
export const isDataError = (error: unknown): boolean => /^2[23]/.test(sqlStateOf(error) ?? '');

/**
 * The column of `table` whose foreign key a row broke (SQLSTATE 23503: the record it names is gone),
 * read from the constraint's name as Prisma's migrations give it (`<table>_[account_id_]<column>_fkey`),
 * or null for any other error.
 */
export function brokenLink(error: unknown, table: string): string | null {
  if (sqlStateOf(error) !== '23503') return null;
  for (const e of errorChain(error)) {
    // pg names the constraint; Prisma's adapter keeps it as { index }.
    const named = typeof e.constraint === 'string' ? e.constraint : (e.constraint as { index?: unknown } | undefined)?.index;
    const column = typeof named === 'string' ? new RegExp(`^${table}_(?:account_id_)?(\\w+)_fkey$`).exec(named)?.[1] : undefined;
    if (column) return column;
  }
  return null;
}
