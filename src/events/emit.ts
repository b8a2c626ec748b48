import { WRITE_TRANSACTION } from '../db/client.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { uuidv7 } from './ids.js';
import { serializeRecord } from './serialize.js';
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
  return { id: uuidv7(), accountId: input.accountId, type: input.type, actor: input.actor, subjectId, contactId, data: JSON.stringify(data) };
}

// Every enabled endpoint of the event's account that wants its type gets a message to deliver.
const QUEUE_FOR_ENDPOINTS = Prisma.sql`
    INSERT INTO webhook_messages (id, account_id, endpoint_id, event_id)
    SELECT gen_random_uuid(), w.account_id, w.id, e.id FROM e JOIN webhook_endpoints w ON w.account_id = e.account_id
    WHERE w.enabled AND (e.type = ANY (w.event_types) OR '*' = ANY (w.event_types))`;

/**
 * Writes the event in the caller's transaction (the outbox: a rolled-back change leaves no event)
 * and queues it for every enabled webhook endpoint of the account that wants its type, in one
 * statement. docs/events.md.
 */
export async function emit(tx: Prisma.TransactionClient, input: EmitInput): Promise<string> {
  const e = eventRow(input);
  await tx.$executeRaw`
    WITH e AS (
      INSERT INTO events (id, account_id, type, occurred_at, actor_type, actor_id, subject_id, contact_id, data)
      VALUES (${e.id}::uuid, ${e.accountId}::uuid, ${e.type}, ${new Date()}::timestamptz, ${e.actor.type},
              ${e.actor.id}, ${e.subjectId}::uuid, ${e.contactId}::uuid, ${e.data}::jsonb)
      RETURNING account_id, id, type)
    ${QUEUE_FOR_ENDPOINTS}`;
  return e.id;
}

/**
 * `emit` for many changes of one transaction in one statement (a job's batch: docs/decisions.md
 * §19 "Billing time"): the same rows and webhook queue, one round trip instead of one per event.
 */
export async function emitMany(tx: Prisma.TransactionClient, inputs: EmitInput[]): Promise<string[]> {
  if (inputs.length === 0) return [];
  const rows = inputs.map(eventRow);
  const column = <T>(pick: (e: (typeof rows)[number]) => T) => rows.map(pick);
  await tx.$executeRaw`
    WITH e AS (
      INSERT INTO events (id, account_id, type, occurred_at, actor_type, actor_id, subject_id, contact_id, data)
      SELECT id, account_id, type, ${new Date()}::timestamptz, actor_type, actor_id, subject_id, contact_id, data
      FROM unnest(${column((e) => e.id)}::uuid[], ${column((e) => e.accountId)}::uuid[], ${column((e) => e.type)}::text[],
                  ${column((e) => e.actor.type)}::text[], ${column((e) => e.actor.id)}::text[], ${column((e) => e.subjectId)}::uuid[],
                  ${column((e) => e.contactId)}::uuid[], ${column((e) => e.data)}::jsonb[])
        AS t (id, account_id, type, actor_type, actor_id, subject_id, contact_id, data)
      RETURNING account_id, id, type)
    ${QUEUE_FOR_ENDPOINTS}`;
  return rows.map((e) => e.id);
}

/**
 * Runs `work` in `db`'s transaction when it is one already (a transaction client has no `$connect`:
 * Prisma's ITXClientDenyList), else in a new one: a write and its event commit together either way.
 */
export function inTransaction<T>(db: PrismaClient | Prisma.TransactionClient, work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return '$connect' in db ? db.$transaction(work, WRITE_TRANSACTION) : work(db);
}
