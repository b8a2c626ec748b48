/** Account.events · Contact.timeline · Subscription.accountEvents (docs/events.md) */
import { z } from 'zod';
import { builder } from '../graphql/builder.js';
import { EVENT_STREAMS } from '../graphql/limits.js';
import { text, uuid } from '../validation.js';
import { anyOf, eq, filtersOf, from, until, type Collection } from '../graphql/collection.js';
import { defineCollection } from '../graphql/connection.js';
import { pageField } from '../graphql/page.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { accountsOf, loadRole } from '../auth/access.js';
import { checked } from '../graphql/rules.js';
import type { Context } from '../context.js';
import type { Viewer } from '../auth/viewer.js';
import { fromEnvelope, type Envelope, type EventRow } from './envelope.js';
import { visibleEventTypes, visibleTo } from './visibility.js';

const EventActor = builder.objectRef<{ type: string; id: string | null }>('EventActor').implement({
  description: 'Who caused the change: user (id = user id), api_key (id = the API key\'s id), visitor (a public form) or system (CLI, worker).',
  fields: (t) => ({ type: t.exposeString('type'), id: t.exposeID('id', { nullable: true }) }),
});

export const EventRef = builder.objectRef<EventRow>('Event').implement({
  keyScope: 'EVENTS_READ',
  description: 'A change, as webhooks receive it (docs/events.md): data.object is the record as REST shows it.',
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.exposeString('type'),
    accountId: t.exposeID('accountId'),
    occurredAt: t.expose('occurredAt', { type: 'DateTime' }),
    actor: t.field({ type: EventActor, resolve: (e) => ({ type: e.actorType, id: e.actorId }) }),
    subjectId: t.exposeID('subjectId', { nullable: true, description: 'The id of the record the event is about' }),
    data: t.expose('data', { type: 'JSON', description: '{object, previous?}: snake_case, as in the webhook body' }),
  }),
});

const eventTypes = z.array(text().max(64, 'Must be at most 64 characters')).max(50, 'At most 50 types').nullish();

const EVENT_SELECT = { id: true, accountId: true, type: true, occurredAt: true, actorType: true, actorId: true, subjectId: true, contactId: true, data: true } as const;

/** The events collection (docs/fields.md#adding-a-filter): newest first, keyset cursors, like every other. */
const events = {
  name: 'Event',
  model: 'Event',
  table: 'events',
  orders: { CREATED_AT: { column: 'occurred_at', type: 'timestamptz' } },
  filter: filtersOf('EventFilter', {
    types: {
      field: (t) => t.stringList({ description: 'Event types, e.g. ["deal.status_changed"]' }),
      schema: eventTypes,
      sql: anyOf('type', 'text'),
      page: 'types',
    },
    subjectId: { field: (t) => t.id({ description: 'Only events about this record' }), schema: uuid.nullish(), sql: eq('subject_id', 'uuid') },
    occurredAfter: { field: (t) => t.field({ type: 'DateTime', description: 'Events at or after this time' }), schema: z.date().nullish(), sql: from('occurred_at'), page: 'since' },
    occurredBefore: { field: (t) => t.field({ type: 'DateTime' }), schema: z.date().nullish(), sql: until('occurred_at') },
  }, '`occurredAfter` is inclusive, `occurredBefore` exclusive.'),
  // Only the types the caller may read (visibility.ts): of those asked for, else all of them.
  narrow: async (filter, ctx, accountId) => {
    const visible = await visibleEventTypes(ctx, accountId);
    return visible ? { ...filter, types: (filter?.types ?? [...visible]).filter((type) => visible.has(type)) } : filter;
  },
} satisfies Collection<EventRow, { types?: string[] | null }>;

const eventConnection = defineCollection(events, EventRef);

builder.prismaObjectField('Account', 'events', eventConnection(null, 'Every change in the account, newest first; kept EVENT_RETENTION_DAYS (default 90).'));

builder.prismaObjectField('Contact', 'timeline', eventConnection('contact_id', "The contact's events and those of its deals, invoices, submissions and other records, newest first."));

// ---- the events feed on REST (docs/decisions.md §18): oldest first, for systems without webhooks ----

pageField('events', events, 'EVENTS_READ', { fixed: { field: 'CREATED_AT', direction: 'ASC' }, nodeRef: EventRef, follow: true, limit: READS_BEYOND_CONTRACT });

const eventArgs = z.object({ accountId: uuid.nullish(), id: uuid });
type EventArgs = z.output<typeof eventArgs>;

/**
 * The event by id in the account named, else in the caller's accounts (a key's one account): the
 * events table is keyed (and sharded, docs/scaling.md) by account, so each is one primary-key probe.
 */
async function eventById(ctx: Context, { accountId, id }: EventArgs) {
  if (accountId) return ctx.db.event.findUnique({ where: { accountId_id: { accountId, id } }, select: EVENT_SELECT });
  const viewer = await ctx.viewer();
  const accounts = viewer.apiKey ? [viewer.apiKey.accountId] : (await ctx.db.account.findMany({ where: accountsOf(viewer.id), select: { id: true } })).map((a) => a.id);
  return ctx.db.event.findFirst({ where: { accountId: { in: accounts }, id }, select: EVENT_SELECT });
}

// By id, like every other read by id; `accountId` is optional (docs/decisions.md §24).
builder.queryField('event', (t) =>
  t.field({
    type: EventRef,
    nullable: true,
    description: 'null when unknown, not in the account given, or not the caller\'s to see',
    args: { accountId: t.arg.id({ description: 'Optional: the account the event is in' }), id: t.arg.id({ required: true }) },
    rules: {
      access: 'member',
      scope: 'EVENTS_READ',
      input: eventArgs,
      // The event itself: a by-id read answers null (REST: 404) for an unknown one and for one the caller may not see.
      target: async (input: EventArgs, ctx: Context) => {
        const event = await eventById(ctx, input);
        const visible = event && (await visibleEventTypes(ctx, event.accountId));
        return event && (!visible || visible.has(event.type)) ? event : null;
      },
      hidden: 'null',
      limit: READS_BEYOND_CONTRACT,
    },
    resolve: (_root, _args, _ctx, info) => checked<EventArgs, EventRow | null>(info).target,
  }),
);

const accountEventsArgs = z.object({ accountId: uuid, types: eventTypes });
type AccountEventsArgs = z.output<typeof accountEventsArgs>;

/** Events that may take the subscriber's access away, or the owner's part of it: it is read again on each. */
const ACCESS_CHANGES = new Set(['member.removed', 'ownership.transferred', 'api_key.revoked']);
/** Otherwise it is read again once the last reading is a second old (docs/decisions.md §24), as a request's key check. */
const RECHECK_MS = 1_000;

/**
 * What the subscriber may read now: the event types (null: all), or false once it has left the
 * account or its key is revoked or expired. The role is read again, never the stream's first answer,
 * so an owner handed down to member stops hearing the owner's events. `now`: the key's row too.
 */
async function accessNow(ctx: Context, viewer: Viewer, accountId: string, now: boolean): Promise<Set<string> | null | false> {
  if (viewer.apiKey) return (await ctx.apiKeys.isLive(viewer.apiKey, now)) && visibleTo(viewer, null);
  const role = await loadRole(ctx.db, accountId, viewer.id);
  return role !== null && visibleTo(viewer, role);
}

builder.subscriptionField('accountEvents', (t) =>
  t.field({
    type: EventRef,
    description: 'Live events of the account over Server-Sent Events (docs/events.md); ends when the caller loses access.',
    args: { accountId: t.arg.id({ required: true }), types: t.arg.stringList() },
    rules: { access: 'member', scope: 'EVENTS_READ', input: accountEventsArgs, limit: EVENT_STREAMS },
    subscribe: (_root, _args, ctx, info) => {
      const { viewer, input } = checked<AccountEventsArgs>(info);
      const source = ctx.events.bus.subscribe('accountEvents', input.accountId);
      const wanted = input.types ? new Set(input.types) : null;
      return (async function* () {
        let checkedAt = performance.now();
        try {
          let visible = await visibleEventTypes(ctx, input.accountId);
          for await (const text of source) {
            const event = JSON.parse(text) as Envelope;
            const change = ACCESS_CHANGES.has(event.type);
            if (change || performance.now() - checkedAt >= RECHECK_MS) {
              const access = await accessNow(ctx, viewer!, input.accountId, change);
              if (access === false) return; // the stream completes
              visible = access;
              checkedAt = performance.now();
            }
            if ((!wanted || wanted.has(event.type)) && (!visible || visible.has(event.type))) yield event;
          }
        } finally {
          await source.return?.(undefined);
        }
      })();
    },
    resolve: (event: Envelope) => fromEnvelope(event),
  }),
);
