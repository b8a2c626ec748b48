import { WRITE_TRANSACTION } from '../db/client.js';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
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
};

const kindOf = (type: EventType) => type.slice(0, type.indexOf('.')) as RecordKind;

/**
 * Writes the event in the caller's transaction (the outbox: a rolled-back change leaves no event)
 * and queues it for every enabled webhook endpoint of the account that wants its type, in one
 * statement. docs/events.md.
 */
export async function emit(tx: Prisma.TransactionClient, input: EmitInput): Promise<string> {
  const kind = kindOf(input.type);
  const row = input.object as Record<string, unknown>;
  const object = input.type === 'contact.erased' ? { id: row.id } : serializeRecord(input.type === 'form.submitted' ? 'submission' : kind, row);
  const data = input.previous ? { object, previous: serializeRecord(kind, input.previous) } : { object };
  const subjectId = typeof row.id === 'string' ? row.id : null;
  const contactId = kind === 'contact' ? subjectId : typeof row.contactId === 'string' ? row.contactId : null;
  const id = uuidv7();
  await tx.$executeRaw`
    WITH e AS (
      INSERT INTO events (id, account_id, type, occurred_at, actor_type, actor_id, subject_id, contact_id, data)
      VALUES (${id}::uuid, ${input.accountId}::uuid, ${input.type}, ${new Date()}::timestamptz, ${input.actor.type},
              ${input.actor.id}, ${subjectId}::uuid, ${contactId}::uuid, ${JSON.stringify(data)}::jsonb)
      RETURNING account_id, id, type)
    INSERT INTO webhook_messages (id, account_id, endpoint_id, event_id)
    SELECT gen_random_uuid(), w.account_id, w.id, e.id FROM e JOIN webhook_endpoints w ON w.account_id = e.account_id
    WHERE w.enabled AND (e.type = ANY (w.event_types) OR '*' = ANY (w.event_types))`;
  return id;
}

/**
 * Runs `work` in `db`'s transaction when it is one already (a transaction client has no `$connect`:
 * Prisma's ITXClientDenyList), else in a new one: a write and its event commit together either way.
 */
export function inTransaction<T>(db: PrismaClient | Prisma.TransactionClient, work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return '$connect' in db ? db.$transaction(work, WRITE_TRANSACTION) : work(db);
}
