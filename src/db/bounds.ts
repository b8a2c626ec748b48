/**
 * Bounds on every database call (docs/faults.md): a request waits a bounded time for a connection,
 * every connection attempt and every statement is bounded, and whatever fails for a connection-level
 * reason leaves here as a DatabaseUnavailableError carrying a SQLSTATE, so src/db/client.ts
 * (isDatabaseUnavailable) recognises it by its code, never by its text.
 */
import { AsyncResource } from 'node:async_hooks';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { noteBackend } from './in-flight.js';
import { BACKEND_PID, isBackend, MAX_PREPARED, PLAN_CHANGED, statementName } from './prepared.js';

/** SQLSTATEs we give: 08001 no connection could be had, 08006 the connection broke, 57014 a statement ran out of time. */
export type UnavailableCode = '08001' | '08006' | '57014';

/**
 * Shaped like a PostgreSQL error (code + severity), so the Prisma driver adapters pass the code on
 * (their `isDriverError` test) instead of rethrowing an anonymous Error.
 */
export class DatabaseUnavailableError extends Error {
  readonly severity = 'ERROR';
  constructor(
    readonly code: UnavailableCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

export type Bounds = {
  /** How long a caller waits for a connection (DATABASE_POOL_TIMEOUT_MS). */
  poolTimeoutMs: number;
  /**
   * Longest statement (DATABASE_STATEMENT_TIMEOUT_MS): PostgreSQL's statement_timeout (SET LOCAL in each
   * transaction, the role's default outside one: roleStatementTimeoutSql), then a client-side deadline.
   */
  statementTimeoutMs: number;
  /** Longest connection attempt. */
  connectTimeoutMs: number;
  /** Longest a request waits to share a running statement of its kind before its own runs (DATABASE_SHARED_WAIT_MS; src/db/together.ts). */
  sharedWaitMs: number;
};

/** After the server's own statement_timeout should have fired, how long the client still waits (a frozen server never answers). */
export const CLIENT_GRACE_MS = 1_000;

type Callback = (err: Error | undefined, result?: unknown) => void;

/** `BEGIN` or `START TRANSACTION`, however Prisma or a raw caller spells it. */
const OPENS_TRANSACTION = /^\s*(begin|start\s+transaction)\b/i;

/**
 * The statement bound as the role's default in this database, for every new session: what bounds a
 * statement outside an explicit transaction. Never a startup parameter: PgBouncer refuses those it
 * does not know (docs/scaling.md#pgbouncer). Dynamic SQL, as ALTER ROLE takes no expression for the database.
 */
export function roleStatementTimeoutSql(statementTimeoutMs: number): string {
  const ms = Math.floor(statementTimeoutMs);
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`statement timeout ${statementTimeoutMs} is not a number of ms`);
  return `DO $$ BEGIN EXECUTE format('ALTER ROLE CURRENT_USER IN DATABASE %I SET statement_timeout = ${ms}', current_database()); END $$`;
}

/** Whether the role's default in this database already is that bound (one row, `set`). */
export const ROLE_STATEMENT_TIMEOUT_IS_SET = `SELECT EXISTS (
  SELECT 1 FROM pg_db_role_setting s
  WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND s.setrole = (SELECT oid FROM pg_roles WHERE rolname = current_user)
    AND ('statement_timeout=' || $1::text) = ANY (s.setconfig)) AS "set"`;

/**
 * A pg Client whose statements are bounded on both sides: PostgreSQL cancels one at statement_timeout
 * (57014), set with SET LOCAL right after each BEGIN (it lasts as long as the transaction, so it
 * holds behind PgBouncer's transaction pooling and never leaks to another client's statements), and
 * by the role's default outside transactions; should the server not answer at all (frozen, network gone), the client gives up
 * CLIENT_GRACE_MS later and drops the connection. Any failure once the connection is gone, and any
 * 'error' it emits (pg emits only connection-level ones), becomes a DatabaseUnavailableError.
 */
function boundedClientClass(bounds: Bounds) {
  return class BoundedClient extends pg.Client {
    private lost = false;
    private timedOut = false;
    /** Whether this connection reaches PostgreSQL's backend itself, not a pooler (src/db/prepared.ts): asked once connected. */
    private backend = false;
    /** Its prepared statements met a changed table (PLAN_CHANGED): they are dropped once no transaction is open. */
    private stale = false;
    /** The names prepared on this connection, least recently used first. */
    private readonly prepared = new Map<string, true>();

    constructor(config: pg.ClientConfig = {}) {
      super({ ...config, connectionTimeoutMillis: bounds.connectTimeoutMs });
      // Registered before pg's own handlers (added on connect), so the flag is set before any query fails.
      this.connection.on('end', () => void (this.lost = true));
      this.connection.on('error', () => void (this.lost = true));
    }

    /** Connected, then asked whether it reaches the backend itself, before it is handed out (the pool's connect timeout covers both). */
    override connect(...args: any[]): any {
      const callback = args[0] as ((err?: Error) => void) | undefined;
      const connected = super.connect().then(async (answer) => (await this.askBackend(), answer));
      if (typeof callback !== 'function') return connected;
      connected.then(() => callback(), (err: Error) => callback(err));
      return undefined;
    }

    /** A connection that cannot say stays unnamed; its next statement meets whatever went wrong. */
    private async askBackend(): Promise<void> {
      const announced = (this as unknown as { processID: number | null }).processID;
      try {
        const { rows } = await super.query<{ pid: number }>(BACKEND_PID);
        this.backend = isBackend(announced, rows[0]?.pid);
      } catch {
        this.backend = false;
      }
    }

    /** 'I' idle, 'T' in a transaction, 'E' in a failed one, as the last ReadyForQuery said. */
    private get status(): string | null {
      return (this as unknown as { getTransactionStatus(): string | null }).getTransactionStatus();
    }

    override query(...args: any[]): any {
      const first = args[0] as { submit?: unknown; text?: unknown } | string | undefined;
      if (first && typeof first === 'object' && typeof first.submit === 'function') return super.query(...(args as [never]));
      const text = typeof first === 'string' ? first : typeof first?.text === 'string' ? first.text : '';
      if (this.stale && this.status === 'I') this.dropPrepared();
      if (OPENS_TRANSACTION.test(text)) return this.begin(args);
      const named = this.named(args, text);
      return named ? this.bounded(named, args) : this.bounded(args);
    }

    /** `args` with the statement's name (src/db/prepared.ts), or undefined to send it unnamed: a pooler's connection, no parameters, or a name of its own. */
    private named(args: any[], text: string): any[] | undefined {
      if (!this.backend) return undefined;
      const [first, second] = args as [string | { name?: string; values?: unknown }, unknown];
      const values = typeof first === 'string' ? second : first.values;
      if (!Array.isArray(values) || values.length === 0 || (typeof first === 'object' && first.name)) return undefined;
      const name = statementName(text);
      if (name === undefined || !this.roomFor(name)) return undefined;
      return typeof first === 'string' ? [{ name, text, values }, ...args.slice(2)] : [{ ...first, name }, ...args.slice(1)];
    }

    /**
     * Marks `name` used; a new one past MAX_PREPARED first deallocates the least recently used (sent
     * ahead of the statement; pg forgets it in the callback, which runs before the next is sent).
     * False in a failed transaction, where no DEALLOCATE can run: the statement then goes unnamed.
     */
    private roomFor(name: string): boolean {
      const known = this.prepared.delete(name);
      if (!known && this.prepared.size >= MAX_PREPARED) {
        if (this.status === 'E') return false;
        const oldest = this.prepared.keys().next().value!;
        this.prepared.delete(oldest);
        super.query(`DEALLOCATE ${this.escapeIdentifier(oldest)}`, (err: Error | undefined) => {
          if (!err) delete (this.connection as unknown as { parsedStatements: Record<string, string> }).parsedStatements[oldest];
        });
      }
      this.prepared.set(name, true);
      return true;
    }

    /** DEALLOCATE ALL, and pg forgets what it parsed once that has run (its callback runs before the next statement is sent). */
    private dropPrepared(): void {
      this.stale = false;
      this.prepared.clear(); // what is sent after the DEALLOCATE is prepared again
      super.query('DEALLOCATE ALL', (err: Error | undefined) => {
        if (err) return void (this.stale = true);
        Object.assign(this.connection, { parsedStatements: {}, submittedNamedStatements: {} });
      });
    }

    /**
     * A named statement that met a changed table: the prepared ones are dropped before the next
     * statement. True when it ran outside a transaction (pg answers an error before the ReadyForQuery
     * that follows it, so the status is still the one it was sent in): it may be sent again, unnamed.
     */
    private sendAgain(err: Error, unnamed: any[] | undefined): boolean {
      if (!unnamed || (err as { code?: string }).code !== PLAN_CHANGED) return false;
      this.stale = true;
      return this.status === 'I';
    }

    /** One statement under the client-side deadline; `unnamed`: the caller's own args, when a name was added to them. */
    private bounded(args: any[], unnamed?: any[]): any {
      const timer = setTimeout(() => {
        this.timedOut = true;
        this.connection.stream.destroy(); // pg then fails the query; the pool drops the client on release
      }, bounds.statementTimeoutMs + CLIENT_GRACE_MS);
      timer.unref();
      const last = args.length - 1;
      if (typeof args[last] === 'function') {
        const callback = args[last] as Callback;
        const bounded = (err: Error | undefined, result: unknown) => {
          clearTimeout(timer);
          if (err && this.sendAgain(err, unnamed)) return void this.bounded(unnamed!);
          callback(err && this.classify(err), result);
        };
        // Passed beside the spread, not stored into `args`: with a new closure written into the rest
        // array and that array spread, V8 (Node 20) kept every query's answer alive past young-generation
        // GCs, so each result was promoted and piled up in old space until a full GC (BENCHMARKS.md,
        // "CSV memory": paging 1,000,000 contacts through the pool promoted 422 MB, 45 MB this way).
        return super.query(...(args.slice(0, last) as [never]), bounded);
      }
      return (super.query(...(args as [never])) as unknown as Promise<unknown>).then(
        (result) => (clearTimeout(timer), result),
        (err: Error) => {
          clearTimeout(timer);
          if (this.sendAgain(err, unnamed)) return this.bounded(unnamed!);
          throw this.classify(err);
        },
      );
    }

    /**
     * BEGIN and the bound for this transaction in one round trip (one simple-protocol query: BEGIN
     * takes no parameters), the bound right after BEGIN so it bounds whatever statements the caller
     * sent with it (rawTransaction's lock and read); answers BEGIN's own result (or error) as the
     * caller asked, or, when it sent more statements, the results of all of them.
     */
    private begin(args: any[]): any {
      const last = args.length - 1;
      const callback = typeof args[last] === 'function' ? (args[last] as Callback) : undefined;
      const first = args[0] as string | { text: string };
      const [opening, ...more] = (typeof first === 'string' ? first : first.text).replace(/;\s*$/, '').split(';');
      const text = [opening, ` SET LOCAL statement_timeout = ${Math.floor(bounds.statementTimeoutMs)}`, ...more].join(';');
      const both = [typeof first === 'string' ? text : { ...first, text }, ...args.slice(1, callback ? last : undefined)];
      const run = async () => {
        const results = await this.bounded(both);
        if (!Array.isArray(results)) return results;
        return more.length ? [results[0], ...results.slice(2)] : results[0];
      };
      if (!callback) return run();
      run().then((result) => callback(undefined, result), (err: Error) => callback(err));
      return undefined;
    }

    override end(...args: any[]): any {
      this.lost = true;
      return super.end(...(args as [never]));
    }

    override emit(event: string | symbol, ...args: any[]): boolean {
      if (event === 'error' && args[0] instanceof Error) {
        args[0] = this.unavailable(args[0]);
        // A client checked out between two statements (a transaction) has no 'error' listener: pg-pool
        // keeps one only on idle clients. Unheard, the error would crash the process; the client's
        // next query fails as unavailable instead, and the pool drops it on release.
        if (this.listenerCount('error') === 0) {
          this.lost = true;
          return false;
        }
      }
      return super.emit(event, ...args);
    }

    /** A failure after the connection went away is the connection's, whatever pg's message says. */
    private classify(err: Error): Error {
      // pg marks a client whose socket failed as not queryable (`_queryable`) before any event we see.
      const broken = this.lost || (this as unknown as { _queryable?: boolean })._queryable === false;
      return broken ? this.unavailable(err) : err;
    }

    private unavailable(err: Error): Error {
      if (err instanceof DatabaseUnavailableError) return err;
      return this.timedOut
        ? new DatabaseUnavailableError('57014', `no answer from the database within ${bounds.statementTimeoutMs + CLIENT_GRACE_MS} ms`, { cause: err })
        : new DatabaseUnavailableError('08006', 'the database connection was lost', { cause: err });
    }
  };
}

/** Whatever keeps pool.connect from handing out a client (refused, timed out, no free one in time, pool ended). */
const connectFailed = (err: Error): Error =>
  err instanceof DatabaseUnavailableError ? err : new DatabaseUnavailableError('08001', 'no database connection could be had', { cause: err });

/**
 * The PostgreSQL pool: a caller waits at most poolTimeoutMs for a client (pg-pool's
 * connectionTimeoutMillis covers both a busy pool and a new connection), then gets 08001.
 */
export class BoundedPool extends pg.Pool {
  constructor(config: pg.PoolConfig, bounds: Bounds) {
    super({ ...config, connectionTimeoutMillis: bounds.poolTimeoutMs, Client: boundedClientClass(bounds) } as pg.PoolConfig);
  }

  /**
   * A client, its backend noted for the write that asked (src/db/in-flight.ts). pg-pool may hand a
   * waiting caller its client from another request's release: the callback is bound to the caller's
   * async context first.
   */
  override connect(...args: any[]): any {
    const callback = args[0] as ((err: Error | undefined, client?: unknown, done?: unknown) => void) | undefined;
    if (typeof callback === 'function') {
      return super.connect(
        AsyncResource.bind((err: Error | undefined, client?: unknown, done?: unknown) => {
          if (!err) noteBackend((client as { processID?: number }).processID);
          callback(err && connectFailed(err), client, done);
        }),
      );
    }
    return super.connect().then(
      (client) => (noteBackend((client as { processID?: number }).processID), client),
      (err: Error) => {
        throw connectFailed(err);
      },
    );
  }
}

/**
 * PGlite is one connection inside this process and runs each statement on this thread, where nothing
 * can interrupt it. What can be bounded is the wait for its turn: calls queue here (a transaction
 * holds the turn until it ends), and one that waited poolTimeoutMs leaves the queue unrun with 08001.
 * A closed database answers 08006.
 */
export function gatePGlite(pglite: PGlite, poolTimeoutMs: number): PGlite {
  const turn = new Turnstile(poolTimeoutMs);
  const gated = async <T>(run: () => Promise<T>): Promise<T> => {
    if (pglite.closed) throw new DatabaseUnavailableError('08006', 'the embedded database is closed');
    const release = await turn.enter();
    try {
      if (pglite.closed) throw new DatabaseUnavailableError('08006', 'the embedded database is closed');
      return await run();
    } finally {
      release();
    }
  };
  const methods: Partial<Record<keyof PGlite, unknown>> = {
    query: (...args: Parameters<PGlite['query']>) => gated(() => pglite.query(...args)),
    exec: (...args: Parameters<PGlite['exec']>) => gated(() => pglite.exec(...args)),
    transaction: (...args: Parameters<PGlite['transaction']>) => gated(() => pglite.transaction(...args)),
  };
  return new Proxy(pglite, {
    get(target, prop) {
      if (prop in methods) return methods[prop as keyof PGlite];
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value; // PGlite's private fields need the real `this`
    },
  });
}

/** One at a time, first come first served; a waiter that waited `waitMs` gives up and never runs. */
class Turnstile {
  private busy = false;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly waitMs: number) {}

  enter(): Promise<() => void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve(() => this.leave());
    }
    return new Promise((resolve, reject) => {
      const admit = () => (clearTimeout(timer), resolve(() => this.leave()));
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(admit), 1);
        reject(new DatabaseUnavailableError('08001', `the embedded database was busy for ${this.waitMs} ms`));
      }, this.waitMs);
      this.waiting.push(admit);
    });
  }

  private leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy = false;
  }
}
