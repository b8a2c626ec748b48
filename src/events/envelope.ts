import type { Event } from '../generated/prisma/client.js';

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
