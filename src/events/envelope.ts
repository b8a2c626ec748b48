import { Prisma, type Event } from '../generated/prisma/client.js';
import { isoTimeSql } from './serialize.js';

export type EventRow = Pick<Event, 'id' | 'accountId' | 'type' | 'occurredAt' | 'actorType' | 'actorId' | 'subjectId' | 'contactId' | 'data'>;

/** The event as webhooks and docs/events.md show it (docs/decisions.md §13): snake_case JSON. */
export function envelope(event: EventRow) {
  return {
    id: event.id,
    type: event.type,
    account_id: event.accountId,
    occurred_at: event.occurredAt.toISOString(),
    actor: { type: event.actorType, id: event.actorId },
    data: event.data,
  };
}

export type Envelope = ReturnType<typeof envelope>;

/**
 * `envelope()` as PostgreSQL writes it, as JSON text, from a row of event_queue (alias `q`): the
 * relay hands it on unread, building no objects for the service to collect (reading the events
 * through Prisma grew the main thread's heap ~4 MB/s during an import; BENCHMARKS.md). The same
 * JSON as `envelope()`: test/events/outbox.test.ts compares them. Times are stored to the
 * millisecond, as toISOString writes them.
 */
export const ENVELOPE_TEXT = Prisma.sql`json_build_object(
  'id', q.event_id, 'type', q.type, 'account_id', q.account_id,
  'occurred_at', ${Prisma.raw(isoTimeSql('q.occurred_at'))},
  'actor', json_build_object('type', q.actor_type, 'id', q.actor_id), 'data', q.data)::text`;

/** Back from JSON (the pub/sub channel): the row shape the GraphQL `Event` type reads. */
export const fromEnvelope = (e: Envelope): EventRow => ({
  id: e.id,
  accountId: e.account_id,
  type: e.type,
  occurredAt: new Date(e.occurred_at),
  actorType: e.actor.type,
  actorId: e.actor.id,
  subjectId: ((e.data as { object?: { id?: string } }).object?.id as string | undefined) ?? null,
  contactId: null,
  data: e.data,
});
