import { WRITE_TRANSACTION } from '../db/client.js';
import { hasRawTransactions, rawTransaction, rawWrite } from '../db/raw.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { eventId } from './ids.js';
import { outbox } from './outbox.js';
import { isoTimeSql, serializeRecord } from './serialize.js';
import type { Actor, EventType, RecordKind } from './types.js';

export type EmitInput = {
  type: EventType;
  accountId: string;
  actor: Actor;
  /** The record after the change (a Prisma row); serialized as REST shows it. `contact.erased`: `{ id }` only. */
  object: { id?: string } & object;
  /** Updates only: the changed fields' old values (Prisma field names). */
  previous?: Record<string, unknown>;
  /** Facts of the event beside the record, as `data` carries them (`invoice.sent`: `emailed_to`). */
  extra?: Record<string, unknown>;
};

const kindOf = (type: EventType) => type.slice(0, type.indexOf('.')) as RecordKind;

/** The event's row (what `events` stores) from what happened. */
function eventRow(input: EmitInput) {
  const kind = kindOf(input.type);
  const row = input.object as Record<string, unknown>;
  const object = input.type === 'contact.erased' ? { id: row.id } : serializeRecord(input.type === 'form.submitted' ? 'submission' : kind, row);
  const data = { object, ...(input.previous ? { previous: serializeRecord(kind, input.previous) } : {}), ...input.extra };
  const subjectId = typeof row.id === 'string' ? row.id : null;
  const contactId = kind === 'contact' ? subjectId : typeof row.contactId === 'string' ? row.contactId : null;
  return { id: eventId(), accountId: input.accountId, type: input.type, actor: input.actor, subjectId, contactId, data: JSON.stringify(data) };
}

// --- Waking the workers: after the commit, not inside it -----------------------------------------
// The `events_notify` trigger NOTIFYs inside the writing transaction, and PostgreSQL holds one
// database-wide lock from a notifying transaction's pre-commit until its end, its WAL flush included:
// every notifying commit waits for the one before (BENCHMARKS.md, "Writes as fast as reads"). So a
// write the service commits itself tells the trigger not to (a transaction-local setting in the same
// statement) and wakes the workers once it has committed: this instance's at once, the others with one
// NOTIFY of its own, coalesced (one in flight per instance) and without a WAL flush to wait for. Any
// other write still notifies from the trigger. An instance that dies between its commit and its
// NOTIFY leaves the event to the workers' poll, as a lost notification always could.

/** Each open events runtime's wake-up, by the client its writes go through (src/events-runtime.ts). */
const wakers = new WeakMap<object, () => void>();
/** Transactions inTransaction opened with a wake-up to call at their commit; whether one wrote events. */
const waking = new WeakMap<object, { wrote: boolean }>();

/** Registers `wake` for the writes through `db`; returns its removal (at shutdown), which puts back the one it replaced. */
export function wakeAfterCommit(db: PrismaClient, wake: () => void): () => void {
  const replaced = wakers.get(db);
  wakers.set(db, wake);
  return () => {
    if (wakers.get(db) !== wake) return;
    if (replaced) wakers.set(db, replaced);
    else wakers.delete(db);
  };
}

/**
 * How a statement writing events through `db` wakes the workers: `after` (the transaction calls the
 * wake-up at its commit), `now` (a statement outside any transaction: committed when it returns), or
 * null (the trigger notifies).
 */
function wakeOf(db: object): { sql: Prisma.Sql; then: () => void } | null {
  const tx = waking.get(db);
  if (tx) {
    tx.wrote = true;
    return { sql: WAKE_AFTER_COMMIT, then: () => {} };
  }
  const wake = '$connect' in db ? wakers.get(db) : undefined;
  return wake ? { sql: WAKE_AFTER_COMMIT, then: wake } : null;
}

/** Tells `events_notify` that the writer wakes the workers itself (prisma/migrations/*_events_wake_after_commit). */
const WAKE_AFTER_COMMIT = Prisma.sql`set_config('crm.events_wake', 'after_commit', true)`;

/**
 * A FROM item (or a column) that sets the events trigger's setting for the rest of the transaction
 * when the writer wakes the workers itself (else nothing); `then` runs once the statement has returned.
 */
export function wakeSource(db: object): { from: Prisma.Sql; column: Prisma.Sql; then: () => void } {
  const wake = wakeOf(db);
  if (!wake) return { from: Prisma.empty, column: Prisma.empty, then: () => {} };
  // `column`: for a statement whose answer is one aggregate row, which evaluates it whatever the rows.
  return { from: Prisma.sql`CROSS JOIN (SELECT ${wake.sql}) AS wake_after_commit`, column: Prisma.sql`, (SELECT ${wake.sql}) AS wake_after_commit`, then: wake.then };
}

/**
 * Writes the event in the caller's transaction (the outbox: a rolled-back change leaves no event)
 * and queues it for every enabled webhook endpoint of the account that wants its type, in one
 * statement. docs/events.md.
 */
export async function emit(tx: Prisma.TransactionClient, input: EmitInput): Promise<string> {
  const e = eventRow(input);
  const wake = wakeSource(tx);
  await tx.$executeRaw`
    WITH ${outbox(Prisma.sql`
      SELECT ${e.id}::uuid, ${e.accountId}::uuid, ${e.type}, ${new Date()}::timestamptz, ${e.actor.type},
             ${e.actor.id}, ${e.subjectId}::uuid, ${e.contactId}::uuid, ${e.data}::jsonb
      FROM (VALUES (1)) AS one ${wake.from}`)}
    SELECT 1`;
  wake.then();
  return e.id;
}

/**
 * `emit` for many changes of one transaction in one statement (a job's batch: docs/decisions.md
 * §19 "Billing time"): the same rows and webhook queue, one round trip instead of one per event.
 * `records`: data-modifying CTEs (`name AS (INSERT ... RETURNING ...),`) that write the records
 * themselves in the same statement, when their events can be made before (the form submit's new
 * contact); `stamped`: a relation of those rows' (id, created_at, updated_at), whose events then show
 * the times the rows were stored with, not the ones the service made the events with.
 */
export async function emitMany(
  tx: Prisma.TransactionClient | RawTransaction,
  inputs: EmitInput[],
  records: { ctes: Prisma.Sql; stamped: Prisma.Sql } | null = null,
): Promise<string[]> {
  if (inputs.length === 0) return [];
  const rows = inputs.map(eventRow);
  const column = <T>(pick: (e: (typeof rows)[number]) => T) => rows.map(pick);
  const wake = wakeSource(tx);
  // The stamps trigger moves a time taken before the transaction began to its start, so an event
  // made beforehand takes the row's own (as the set-based write's do: src/writes/set-write.ts).
  const data = records
    ? Prisma.raw(`CASE WHEN r.id IS NULL THEN t.data ELSE jsonb_set(jsonb_set(t.data,
        '{object,created_at}', to_jsonb(${isoTimeSql('r.created_at')}), false),
        '{object,updated_at}', to_jsonb(${isoTimeSql('r.updated_at')}), false) END`)
    : Prisma.sql`t.data`;
  // rawWrite: in a Prisma transaction through it, in rawTransaction's on its pg client.
  await rawWrite(tx, Prisma.sql`
    WITH ${records?.ctes ?? Prisma.empty} ${outbox(Prisma.sql`
      SELECT t.id, t.account_id, t.type, ${new Date()}::timestamptz, t.actor_type, t.actor_id, t.subject_id, t.contact_id, ${data}
      FROM unnest(${column((e) => e.id)}::uuid[], ${column((e) => e.accountId)}::uuid[], ${column((e) => e.type)}::text[],
                  ${column((e) => e.actor.type)}::text[], ${column((e) => e.actor.id)}::text[], ${column((e) => e.subjectId)}::uuid[],
                  ${column((e) => e.contactId)}::uuid[], ${column((e) => e.data)}::jsonb[])
        AS t (id, account_id, type, actor_type, actor_id, subject_id, contact_id, data)
        ${records ? Prisma.sql`LEFT JOIN ${records.stamped} AS r (id, created_at, updated_at) ON r.id = t.subject_id` : Prisma.empty} ${wake.from}`)}
    SELECT 1`);
  wake.then();
  return rows.map((e) => e.id);
}

/**
 * Runs `work` in `db`'s transaction when it is one already (a transaction client has no `$connect`:
 * Prisma's ITXClientDenyList), else in a new one: a write and its event commit together either way.
 * A new one that wrote events wakes the workers once it has committed (see wakeAfterCommit).
 */
export async function inTransaction<T>(db: PrismaClient | Prisma.TransactionClient, work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  if (!('$connect' in db)) return work(db);
  const wake = wakers.get(db);
  if (!wake) return db.$transaction(work, WRITE_TRANSACTION);
  return wakingAfter(wake, (mark) => db.$transaction((tx) => work(mark(tx)), WRITE_TRANSACTION));
}

/** A transaction of rawTransaction's (src/db/raw.ts): statements in it go through rawWrite and emitMany. */
export type RawTransaction = object;

/**
 * inTransaction on a client of `db`'s pg pool rather than Prisma's (for `work` that needs no Prisma
 * model call); null when `db` has no pool (PGlite, a transaction's client): take inTransaction then.
 */
export function inRawTransaction<T>(
  db: PrismaClient,
  work: (tx: RawTransaction, read: unknown[]) => Promise<T>,
  options: { lock?: string; read?: Prisma.Sql } = {},
): Promise<T> | null {
  if (!hasRawTransactions(db)) return null;
  const wake = wakers.get(db);
  return wake ? wakingAfter(wake, (mark) => rawTransaction(db, (tx, read) => work(mark(tx), read), options)) : rawTransaction(db, work, options);
}

/** Runs `open`, whose transaction `mark`s itself as one that wakes the workers at commit; wakes them if it wrote events. */
async function wakingAfter<T>(wake: () => void, open: (mark: <X extends object>(tx: X) => X) => Promise<T>): Promise<T> {
  const state = { wrote: false };
  const answer = await open((tx) => (waking.set(tx, state), tx));
  if (state.wrote) wake();
  return answer;
}
