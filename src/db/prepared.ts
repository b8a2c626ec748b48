// Statements the service sends often are prepared once per connection, then only bound and run.
// PostgreSQL parses, analyses and plans an unnamed statement every time it arrives: that took a
// contact create 0.7 ms of the server's CPU beyond running it, and a companies page 0.3 ms, where
// PostGraphile, which names its statements, spent 0.1 (BENCHMARKS.md "Prepared statements"). As
// Npgsql's automatic preparation: a parameterised text seen PREPARE_AFTER times gets a name made of
// its own hash, so one name always means one text, on every connection and every instance. As pgx's
// statement cache: each connection keeps at most MAX_PREPARED, and deallocates the one it used least
// recently to make room (src/db/bounds.ts).
//
// Only on a connection that is PostgreSQL's own backend. A pooler between us and the server
// (PgBouncer in transaction mode) hands each transaction whichever server connection is free, where
// our name may be missing or already taken; it shows itself by the process id it announces, which
// is its own, not the backend's (`isBackend`). Such a connection sends every statement unnamed, as
// before (docs/scaling.md#pgbouncer).
import { createHash } from 'node:crypto';

/** Uses of a text before it is prepared: one-off statements (an import's chunk, a rare report) stay unnamed. */
export const PREPARE_AFTER = 3;
/** Prepared statements a connection holds at most (a plan each). */
export const MAX_PREPARED = 200;
/** Texts counted or named here; both start over when one is full (a name is the same when made again). */
const MAX_REMEMBERED = 5_000;

const names = new Map<string, string>();
const counts = new Map<string, number>();

/** The name `text` runs under, or undefined while it should still go unnamed. */
export function statementName(text: string): string | undefined {
  const known = names.get(text);
  if (known !== undefined || text.includes(PLAN_EACH_TIME)) return known;
  const seen = (counts.get(text) ?? 0) + 1;
  if (seen < PREPARE_AFTER) {
    if (counts.size >= MAX_REMEMBERED) counts.clear();
    counts.set(text, seen);
    return undefined;
  }
  counts.delete(text);
  if (names.size >= MAX_REMEMBERED) names.clear();
  const name = `crm_${createHash('sha1').update(text).digest('base64url')}`;
  names.set(text, name);
  return name;
}

/**
 * In a statement's text, keeps it unnamed, so PostgreSQL plans it for each set of values: a search
 * pattern (`ILIKE $1`, `~* $1`) is read through a trigram index whose cost depends on the pattern
 * itself, which a plan made once for every value cannot know (a contacts search took 26.8 ms a
 * statement planned each time, 33.7 under the generic plan; BENCHMARKS.md "Prepared statements").
 */
export const PLAN_EACH_TIME = '/* planned each time */';

/** The statement that tells whether a connection reaches the backend itself: its answer is compared with the announced process id. */
export const BACKEND_PID = 'SELECT pg_backend_pid() AS pid';

/** Whether the backend's own process id (BACKEND_PID's answer) is the one the connection announced at start (BackendKeyData). */
export const isBackend = (announced: number | null, backendPid: unknown): boolean => announced !== null && Number(backendPid) === announced;

/**
 * SQLSTATE 0A000 "cached plan must not change result type": a migration changed the columns a
 * prepared statement answers with (a `RETURNING *` of a table that gained one). The connection's
 * prepared statements are then dropped; outside a transaction the statement is sent again.
 */
export const PLAN_CHANGED = '0A000';
