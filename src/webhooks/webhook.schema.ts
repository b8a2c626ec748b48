/** Query.webhookEndpoints · webhookEndpoint · Mutation.createWebhookEndpoint · updateWebhookEndpoint · deleteWebhookEndpoint · rotateWebhookSecret · sendTestWebhook · redeliverEvent · Account.webhookEndpoints */
import { WRITES, SETTINGS } from '../graphql/limits.js';
import { z } from 'zod';
import { builder } from '../graphql/builder.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { checked, ownRow } from '../graphql/rules.js';
import { argsOf } from '../graphql/spec-fields.js';
import { forbidden, MESSAGES, notFound, unavailable } from '../errors.js';
import type { Context } from '../context.js';
import type { WebhookDelivery, WebhookEndpoint } from '../generated/prisma/client.js';
import { DeletedRecord } from '../graphql/changes.schema.js';
import { defineCollection } from '../graphql/connection.js';
import { envelope } from '../events/envelope.js';
import { uuidv7 } from '../events/ids.js';
import { userActor } from '../events/types.js';
import { deliverNow } from './delivery.service.js';
import {
  createEndpoint, createEndpointInput, deleteEndpoint, ENDPOINT_ARGS, endpointArgs, endpointsArgs, redeliverArgs, rotateArgs, rotateSecret,
  sendTestArgs, updateEndpoint, updateEndpointArgs, urlDetails, type CreateEndpointInput, type RotateArgs, type UpdateEndpointArgs,
} from './endpoint.service.js';

const WebhookDeliveryRef = builder.objectRef<WebhookDelivery>('WebhookDelivery').implement({
  keyScope: false,
  description: 'One attempt to send an event to an endpoint. No response bodies are stored.',
  fields: (t) => ({
    id: t.exposeID('id'),
    eventId: t.exposeID('eventId'),
    attempt: t.exposeInt('attempt'),
    statusCode: t.exposeInt('statusCode', { nullable: true }),
    durationMs: t.exposeInt('durationMs', { nullable: true }),
    error: t.exposeString('error', { nullable: true }),
    succeeded: t.exposeBoolean('succeeded'),
    attemptedAt: t.expose('attemptedAt', { type: 'DateTime' }),
  }),
});
// The deliveries log pages like every other collection (src/graphql/connection.ts), newest first.
const deliveryConnection = defineCollection<WebhookDelivery, never>(
  {
    name: 'WebhookDelivery',
    table: 'webhook_deliveries',
    orders: { CREATED_AT: { column: 'attempted_at', type: 'timestamptz' } },
    rows: (db, ids, accountIds) => db.webhookDelivery.findMany({ where: { accountId: { in: accountIds }, id: { in: ids } } }),
  },
  WebhookDeliveryRef,
);

/** Never its sealed secrets (a write's answer leaves them out: src/webhooks/endpoint.service.ts). */
type Endpoint = Omit<WebhookEndpoint, 'secretCiphertext' | 'previousSecretCiphertext'>;

const WebhookEndpointRef = builder.objectRef<Endpoint>('WebhookEndpoint').implement({
  keyScope: false,
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    eventTypes: t.exposeStringList('eventTypes', { description: '["*"] means every type' }),
    description: t.exposeString('description', { nullable: true }),
    enabled: t.exposeBoolean('enabled'),
    disabledReason: t.exposeString('disabledReason', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    deliveries: deliveryConnection('endpoint_id', 'Attempts, newest first')(t),
  }),
});

const CreatedRef = builder.objectRef<{ endpoint: Endpoint; secret: string }>('WebhookEndpointCreated').implement({
  fields: (t) => ({
    endpoint: t.field({ type: WebhookEndpointRef, resolve: (c) => c.endpoint }),
    secret: t.exposeString('secret', { description: 'whsec_...: shown here only (and to a retry with the same Idempotency-Key), never again' }),
  }),
});

builder.prismaObjectFields('Account', (t) => ({
  webhookEndpoints: t.field({
    type: [WebhookEndpointRef],
    description: 'Owner only.',
    maxItems: ENDPOINTS_PER_ACCOUNT,
    resolve: async (account, _args, ctx) => {
      if ((await ctx.role(account.id)) !== 'owner') throw forbidden(MESSAGES.ownerOnly);
      return ctx.db.webhookEndpoint.findMany({ where: { accountId: account.id }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
    },
  }),
}));

const CreateInput = builder.inputType('CreateWebhookEndpointInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    url: t.string({ required: true, description: 'https (http outside production); never a private, loopback or link-local address' }),
    eventTypes: t.stringList({ required: true, description: 'Types from docs/events.md, or ["*"]' }),
    description: t.string(),
  }),
});
const UpdateInput = builder.inputType('UpdateWebhookEndpointInput', {
  fields: (t) => ({ url: t.string(), eventTypes: t.stringList(), description: t.string(), enabled: t.boolean() }),
});

const endpointTarget = ({ id }: { id: string }, ctx: Context) => ctx.db.webhookEndpoint.findUnique({ where: { id } });
const OWNER = { access: 'owner', forbidden: MESSAGES.ownerOnly } as const;
const deps = (ctx: Context) => ({ box: ctx.events.box, policy: ctx.events.policy });
/** The URL judged with the form, so one 400 names it beside the form's problems (the write judges it again). */
const urlLinked = (fields: Record<string, unknown>, _db: unknown, _accountId: string, ctx: Context) => urlDetails(fields.url, deps(ctx).policy);
/**
 * The most endpoints the cost (docs/graphql.md#cost-and-budget) counts an account as having: nothing
 * enforces a number (createWebhookEndpoint adds one more each time), so this is the cost's assumption;
 * every endpoint's first 100 deliveries still fit the ceiling (1 + 25 × 101 objects).
 */
const ENDPOINTS_PER_ACCOUNT = 25;

// Root reads, so REST's /api/v1/webhook_endpoints routes (docs/decisions.md §18) have fields of their own.
builder.queryFields((t) => ({
  webhookEndpoints: t.field({
    type: [WebhookEndpointRef],
    description: 'Owner only. The account\'s endpoints, oldest first (no secrets).',
    maxItems: ENDPOINTS_PER_ACCOUNT,
    args: argsOf(ENDPOINT_ARGS.account, t.arg),
    rules: { ...OWNER, input: endpointsArgs, limit: READS_BEYOND_CONTRACT },
    resolve: (_root, _args, ctx, info) =>
      ctx.db.webhookEndpoint.findMany({ where: { accountId: checked<z.output<typeof endpointsArgs>>(info).input.accountId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
  }),
  webhookEndpoint: t.field({
    type: WebhookEndpointRef,
    nullable: true,
    description: 'Owner only; null when unknown or not visible to the caller.',
    args: argsOf(ENDPOINT_ARGS.endpoint, t.arg),
    rules: { ...OWNER, input: endpointArgs, target: endpointTarget, hidden: 'null', limit: READS_BEYOND_CONTRACT },
    resolve: (_root, _args, _ctx, info) => checked<unknown, WebhookEndpoint | null>(info).target,
  }),
}));

builder.mutationFields((t) => ({
  createWebhookEndpoint: t.field({
    type: CreatedRef,
    description: 'Owner only. The answer (and a retry of it with the same Idempotency-Key) is the only place the signing secret appears.',
    args: { input: t.arg({ type: CreateInput, required: true }) },
    rules: { ...OWNER, input: createEndpointInput, from: 'input', linked: urlLinked, limit: SETTINGS, idempotent: true },
    resolve: (_root, _args, ctx, info) => {
      const { viewer, input, write } = checked<CreateEndpointInput>(info);
      return createEndpoint(ctx.db, write, input, deps(ctx), userActor(viewer));
    },
  }),
  updateWebhookEndpoint: t.field({
    type: WebhookEndpointRef,
    description: 'Owner only. enabled: true re-enables a disabled endpoint. CONFLICT (with currentUpdatedAt) when expectedUpdatedAt is stale; nothing is written.',
    args: {
      id: t.arg.id({ required: true }),
      input: t.arg({ type: UpdateInput, required: true }),
      expectedUpdatedAt: t.arg({ type: 'DateTime' }),
    },
    rules: { ...OWNER, input: updateEndpointArgs, linked: urlLinked, target: endpointTarget, hidden: 'not-found', line: ownRow, limit: WRITES, idempotent: true },
    resolve: (_root, _args, ctx, info) => {
      const { viewer, input, write } = checked<UpdateEndpointArgs>(info);
      return updateEndpoint(write, input, deps(ctx), userActor(viewer));
    },
  }),
  deleteWebhookEndpoint: t.field({
    type: DeletedRecord,
    description: 'Owner only.',
    args: argsOf(ENDPOINT_ARGS.endpoint, t.arg),
    rules: { ...OWNER, input: endpointArgs, target: endpointTarget, hidden: 'not-found', line: ownRow, limit: WRITES, idempotent: true },
    resolve: (_root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<{ id: string }>(info);
      return deleteEndpoint(write, input.id, userActor(viewer));
    },
  }),
  rotateWebhookSecret: t.field({
    type: CreatedRef,
    description: 'Owner only. Deliveries carry both signatures (new, old) until the old secret expires.',
    args: argsOf(ENDPOINT_ARGS.rotate, t.arg),
    rules: { ...OWNER, input: rotateArgs, target: endpointTarget, hidden: 'not-found', line: ownRow, limit: SETTINGS, idempotent: true },
    resolve: (_root, _args, ctx, info) => {
      const { viewer, input, write } = checked<RotateArgs>(info);
      return rotateSecret(ctx.db, write, input, deps(ctx), userActor(viewer));
    },
  }),
  sendTestWebhook: t.field({
    type: WebhookDeliveryRef,
    description: 'Owner only. Sends a webhook_endpoint.test event now and answers the attempt.',
    args: argsOf(ENDPOINT_ARGS.sendTest, t.arg),
    rules: { ...OWNER, input: sendTestArgs, target: ({ endpointId }: z.output<typeof sendTestArgs>, ctx) => endpointTarget({ id: endpointId }, ctx), hidden: 'not-found', limit: SETTINGS,
      notIdempotent: 'each call is one more test send (a new event id), and stores nothing but its delivery attempt' },
    resolve: (_root, _args, ctx, info) => {
      const { viewer, target } = checked<unknown, WebhookEndpoint>(info);
      const box = deps(ctx).box;
      if (!box) throw unavailable(); // production without WEBHOOK_SECRET_KEY
      const test = {
        id: uuidv7(), accountId: target.accountId, type: 'webhook_endpoint.test', occurredAt: new Date(), actorType: 'user', actorId: viewer!.id,
        subjectId: target.id, contactId: null, data: { object: { id: target.id, url: target.url } },
      };
      return deliverNow(ctx.db, target, { eventId: test.id, body: JSON.stringify(envelope(test)) }, { box, policy: ctx.events.policy });
    },
  }),
  redeliverEvent: t.field({
    type: WebhookDeliveryRef,
    description: 'Owner only. Sends one event of the account to the endpoint again now, with the same webhook-id (the event id).',
    args: argsOf(ENDPOINT_ARGS.redeliver, t.arg),
    rules: { ...OWNER, input: redeliverArgs, target: ({ endpointId }: z.output<typeof redeliverArgs>, ctx) => endpointTarget({ id: endpointId }, ctx), hidden: 'not-found', limit: WRITES,
      notIdempotent: 'each call sends once more; the receiver tells repeats apart by webhook-id, the event id every send of it carries' },
    resolve: async (_root, _args, ctx, info) => {
      const { input, target } = checked<z.output<typeof redeliverArgs>, WebhookEndpoint>(info);
      const event = await ctx.db.event.findUnique({ where: { accountId_id: { accountId: target.accountId, id: input.eventId } } });
      if (!event) throw notFound('Event not found');
      const box = deps(ctx).box;
      if (!box) throw unavailable(); // production without WEBHOOK_SECRET_KEY
      return deliverNow(ctx.db, target, { eventId: event.id, body: JSON.stringify(envelope(event)) }, { box, policy: ctx.events.policy });
    },
  }),
}));
