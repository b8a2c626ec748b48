// Raw reads that requests make (a list page's statement, the access check, search) run through `pg`
// itself where the client has a pool: Prisma's $queryRaw spends about 195 µs of CPU on a contacts
// page's statement that the pool's own query runs in about 60 µs, and a list request makes two such
// reads (BENCHMARKS.md "Raw reads through pg"). The statement is the same text and parameters. Only
// for answers of int, boolean and text columns, which pg and Prisma read alike (a numeric would come
// back as a string, not a Decimal). A client without a runner (PGlite's, a transaction's) reads
// through Prisma's $queryRaw.
import type pg from 'pg';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';

type RawRunner = (sql: Prisma.Sql) => Promise<unknown[]>;
const runners = new WeakMap<PrismaClient, RawRunner>();
const writers = new WeakMap<object, RawRunner>();
const transactionPools = new WeakMap<object, pg.Pool>();

/** The rows of `sql` on this pool, as pg answers them. */
export const poolQuery = <T>(pool: pg.Pool, sql: Prisma.Sql): Promise<T[]> =>
  pool.query(sql.text, sql.values as unknown[]).then((r) => r.rows as T[]);

/** Raw reads made through `client` run on `run` (its pool, or a replica's with the primary behind it). */
export function runRawReads(client: PrismaClient, run: RawRunner): void {
  runners.set(client, run);
}

/** The rows of `sql` where `db` reads: its pool when it has one, else Prisma's $queryRaw. */
export function rawRead<T>(db: PrismaClient, sql: Prisma.Sql): Promise<T[]> {
  const run = runners.get(db);
  return run ? (run(sql) as Promise<T[]>) : db.$queryRaw<T[]>(sql);
}

/** Statements made through `client` itself (never a transaction's client) run on the primary's `pool`, which also opens rawTransaction's transactions. */
export function runRawWrites(client: PrismaClient, pool: pg.Pool): void {
  writers.set(client, (sql) => poolQuery(pool, sql));
  transactionPools.set(client, pool);
}

/** Whether rawTransaction can open a transaction for `db`: a client with a pool (not PGlite's, not a transaction's). */
export const hasRawTransactions = (db: object): boolean => transactionPools.has(db);

/**
 * `work` in one transaction on a client of `db`'s pool: `rawWrite(tx, sql)` runs in it; COMMIT when
 * `work` resolves, ROLLBACK when it throws. Prisma's interactive transaction cost a form submit about
 * 0.7 ms of CPU over pg's for the same statements (BENCHMARKS.md "The submit on pg's own
 * transaction"). Only for statements whose answers pg and Prisma read alike (see rawWrite).
 * `lock`: a transaction-scoped advisory lock on this key (hashtextextended(key, 0), as callers take it
 * through rawWrite elsewhere), taken in BEGIN's own round trip: one simple query of two statements,
 * the key as an escaped literal, since that protocol takes no parameters. `read`: a statement run in
 * that same round trip after the lock (its values inlined as literals likewise), whose rows `work`
 * receives: a submit's lookup of its e-mail needs no round trip of its own (BENCHMARKS.md, "The form
 * submit and the batch against the floor").
 */
export async function rawTransaction<T>(db: object, work: (tx: object, read: unknown[]) => Promise<T>, options: { lock?: string; read?: Prisma.Sql } = {}): Promise<T> {
  const pool = transactionPools.get(db);
  if (!pool) throw new Error('rawTransaction: this client has no pool (check hasRawTransactions first)');
  const client = await pool.connect();
  const tx = {};
  writers.set(tx, (sql) => client.query(sql.text, sql.values as unknown[]).then((r) => r.rows));
  let broken: Error | undefined;
  try {
    const statements = [
      'BEGIN',
      ...(options.lock === undefined ? [] : [`SELECT pg_advisory_xact_lock(hashtextextended(${client.escapeLiteral(options.lock)}, 0))`]),
      ...(options.read ? [inlined(options.read, (text) => client.escapeLiteral(text))] : []),
    ];
    const begun = await client.query(statements.join('; '));
    // A simple query of several statements answers one result each; the read's is the last.
    const answer = await work(tx, options.read ? (begun as unknown as pg.QueryResult[]).at(-1)!.rows : []);
    await client.query('COMMIT');
    return answer;
  } catch (error) {
    // A client whose ROLLBACK fails is in no known state: the pool drops it rather than hand it out.
    await client.query('ROLLBACK').catch((rollbackFailed: Error) => (broken = rollbackFailed));
    throw error;
  } finally {
    writers.delete(tx);
    client.release(broken);
  }
}

/**
 * The rows of a statement that writes, where `db` writes: the primary's pool when `db` is a client
 * with one (outside any transaction: the statement commits by itself), else Prisma's $queryRaw (a
 * transaction's client, PGlite). Prisma's raw path cost a single create about 0.3 ms of CPU over
 * pg's (BENCHMARKS.md "Writes as fast as reads"); the statement is the same text and parameters.
 * Only for answers of text, int and boolean columns, which both read alike.
 */
export function rawWrite<T>(db: object, sql: Prisma.Sql): Promise<T[]> {
  const run = writers.get(db);
  return run ? (run(sql) as Promise<T[]>) : (db as PrismaClient).$queryRaw<T[]>(sql);
}

/**
 * `sql`'s text with each parameter written as a literal, for the simple query protocol (which takes
 * none): text through pg's own escaping, numbers and booleans as written, null as NULL. Anything else
 * is refused rather than guessed at. For statements of our own whose text holds no `$` but the
 * placeholders (no dollar-quoted strings).
 */
export function inlined(sql: Prisma.Sql, escape: (text: string) => string): string {
  return sql.text.replace(/\$(\d+)/g, (_, n: string) => {
    const value: unknown = sql.values[Number(n) - 1];
    if (value === null) return 'NULL';
    if (typeof value === 'string') return escape(value);
    if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') return String(value);
    throw new Error(`inlined: parameter $${n} is a ${typeof value}, not text, a number or a boolean`);
  });
}
