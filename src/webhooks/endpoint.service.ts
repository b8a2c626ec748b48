import { z } from 'zod';
import { updateArgs, updateGuarded } from '../writes/update.js';
import { badInput, notFound, unavailable, type ErrorDetails } from '../errors.js';
import type { Prisma, PrismaClient, WebhookEndpoint } from '../generated/prisma/client.js';
import { emit } from '../events/emit.js';
import { EVENT_TYPES, type Actor } from '../events/types.js';
import { optionalText, text, uuid } from '../validation.js';
import { argsRuleOf, idField, type FieldSpec } from '../model/field-spec.js';
import { newSigningSecret } from './secret.js';
import { targetProblem } from './target.js';
import type { SecretBox, TargetPolicy } from '../deps.js';

const eventTypes = z
  .array(text().refine((t) => t === '*' || (EVENT_TYPES as readonly string[]).includes(t), 'Unknown event type (docs/events.md lists them)'))
  .min(1, 'At least one event type, or "*" for all')
  .max(EVENT_TYPES.length, `At most ${EVENT_TYPES.length} types`)
  .transform((types) => (types.includes('*') ? ['*'] : [...new Set(types)]));
const url = text().trim().max(2048, 'Must be at most 2048 characters');

export const createEndpointInput = z.object({ accountId: uuid, url, eventTypes, description: optionalText(500) });
export type CreateEndpointInput = z.output<typeof createEndpointInput>;

/** `update*(id:, input:, expectedUpdatedAt:)` like every other record's (docs/decisions.md §12). */
export const updateEndpointArgs = updateArgs(
  z.object({ url: url.optional(), eventTypes: eventTypes.optional(), description: optionalText(500).optional(), enabled: z.boolean().optional() }),
);
export type UpdateEndpointArgs = z.output<typeof updateEndpointArgs>;

/** How long the replaced secret still signs after a rotation, by default: a day (docs/decisions.md §24). */
export const OLD_SECRET_OVERLAP_S = 24 * 60 * 60;
const MAX_OVERLAP_S = 7 * OLD_SECRET_OVERLAP_S;

// The root fields' arguments, each declared once: their GraphQL arguments (argsOf, src/graphql/spec-fields.ts) and rules (argsRuleOf).
export const ENDPOINT_ARGS = {
  account: [idField('accountId')],
  endpoint: [idField('id')],
  rotate: [
    idField('id'),
    {
      name: 'expiresOldSecretIn',
      type: 'Int',
      rule: z.number().int('Must be an integer').min(0, 'Must be at least 0')
        .max(MAX_OVERLAP_S, `Must be at most ${MAX_OVERLAP_S} (7 days)`).nullish().transform((s) => s ?? OLD_SECRET_OVERLAP_S),
      description: `Seconds the old secret still signs beside the new one (default ${OLD_SECRET_OVERLAP_S}, a day; 0: it stops at once; at most 7 days)`,
    },
  ],
  sendTest: [idField('endpointId')],
  redeliver: [idField('endpointId'), idField('eventId')],
} as const satisfies Record<string, readonly FieldSpec[]>;

export const endpointsArgs = argsRuleOf(ENDPOINT_ARGS.account);
export const endpointArgs = argsRuleOf(ENDPOINT_ARGS.endpoint);
export const rotateArgs = argsRuleOf(ENDPOINT_ARGS.rotate);
export type RotateArgs = z.output<typeof rotateArgs>;
export const sendTestArgs = argsRuleOf(ENDPOINT_ARGS.sendTest);
export const redeliverArgs = argsRuleOf(ENDPOINT_ARGS.redeliver);

export type WebhookDeps = { box: SecretBox | null; policy: TargetPolicy };

const requireBox = (deps: WebhookDeps): SecretBox => {
  if (!deps.box) throw unavailable(); // production without WEBHOOK_SECRET_KEY (docs/security.md)
  return deps.box;
};

/**
 * A given URL's problem as details (none when it is fine or absent): the write's own check, and the
 * rules' `linked` check, which names it beside the form's problems in one 400.
 */
export async function urlDetails(url: unknown, policy: TargetPolicy): Promise<ErrorDetails> {
  if (typeof url !== 'string') return {};
  const problem = await targetProblem(url, policy);
  return problem ? { url: [problem] } : {};
}

async function assertTarget(raw: string, policy: TargetPolicy) {
  const details = await urlDetails(raw, policy);
  if (details.url) throw badInput(details);
}

/** Runs a write in one transaction (an Idempotency-Key's, when the request has one): `checked(info).write`. */
type Write = <T>(work: (tx: Prisma.TransactionClient) => Promise<T>) => Promise<T>;

/** An endpoint as a write answers it: never its sealed secrets, so a stored answer (a retry's) holds none. */
const unsealed = ({ secretCiphertext: _, previousSecretCiphertext: __, ...endpoint }: WebhookEndpoint) => endpoint;

/** A new endpoint and its secret, which the answer shows once; the database keeps it only sealed. */
export async function createEndpoint(db: PrismaClient, write: Write, input: CreateEndpointInput, deps: WebhookDeps, actor: Actor) {
  const box = requireBox(deps);
  await assertTarget(input.url, deps.policy);
  const secret = newSigningSecret();
  return withSecret(db, write, box, secret, async (tx) => {
    const draft = await tx.webhookEndpoint.create({ data: { ...input, secretCiphertext: 'pending' } });
    // Sealed under its own id, so a ciphertext copied to another row does not open.
    const created = await tx.webhookEndpoint.update({ where: { id: draft.id }, data: { secretCiphertext: box.seal(secret, draft.id) } });
    await emit(tx, { type: 'webhook_endpoint.created', accountId: created.accountId, actor, object: created });
    return created;
  });
}

/** A stale `expectedUpdatedAt` is CONFLICT (with currentUpdatedAt), and nothing is written (src/writes/update.ts). */
export async function updateEndpoint(write: Write, args: UpdateEndpointArgs, deps: WebhookDeps, actor: Actor) {
  const { input } = args;
  if (Object.keys(input).length === 0) throw badInput({ input: ['Nothing to change'] });
  if (input.url !== undefined) await assertTarget(input.url, deps.policy);
  return write(async (tx) => {
    const before = await tx.webhookEndpoint.findUniqueOrThrow({ where: { id: args.id } });
    const data: Prisma.WebhookEndpointUpdateInput = { ...input };
    if (input.enabled === true) Object.assign(data, { disabledReason: null, failingSince: null }); // a fresh start
    if (input.enabled === false && before.enabled) data.disabledReason = 'Disabled by the owner';
    const endpoint = await updateGuarded<WebhookEndpoint>(tx.webhookEndpoint, before, data, {}, args.expectedUpdatedAt);
    const previous = Object.fromEntries(Object.keys(input).map((k) => [k, before[k as keyof typeof before]]));
    await emit(tx, { type: 'webhook_endpoint.updated', accountId: endpoint.accountId, actor, object: endpoint, previous });
    return unsealed(endpoint);
  });
}

export function deleteEndpoint(write: Write, id: string, actor: Actor) {
  return write(async (tx) => {
    const endpoint = await tx.webhookEndpoint.delete({ where: { id } });
    await emit(tx, { type: 'webhook_endpoint.deleted', accountId: endpoint.accountId, actor, object: endpoint });
    return { id, deletedAt: new Date() };
  });
}

/**
 * A new secret (shown once, like the first) signs from now on; the one it replaces signs beside it
 * for `expiresOldSecretIn` seconds (0: it stops at once), so receivers switch without a gap. A
 * rotation within the overlap drops the oldest: two secrets at most.
 */
export async function rotateSecret(db: PrismaClient, write: Write, { id, expiresOldSecretIn }: RotateArgs, deps: WebhookDeps, actor: Actor) {
  const box = requireBox(deps);
  const secret = newSigningSecret();
  return withSecret(db, write, box, secret, async (tx) => {
    const until = expiresOldSecretIn > 0 ? new Date(Date.now() + expiresOldSecretIn * 1000) : null;
    // The row's own current ciphertext moves over (locked by this UPDATE), sealed as it was, under the endpoint's id.
    await tx.$executeRaw`
      UPDATE webhook_endpoints SET previous_secret_ciphertext = CASE WHEN ${until}::timestamptz IS NULL THEN NULL ELSE secret_ciphertext END,
             previous_secret_expires_at = ${until}::timestamptz
       WHERE id = ${id}::uuid`;
    const rotated = await tx.webhookEndpoint.update({ where: { id }, data: { secretCiphertext: box.seal(secret, id) } });
    await emit(tx, { type: 'webhook_endpoint.updated', accountId: rotated.accountId, actor, object: rotated });
    return rotated;
  });
}

/**
 * The endpoint `seal` wrote, answered with the secret it sealed. A retry (the write did not run
 * again, and its kept answer holds no secret) gets the one the endpoint signs with now, opened from
 * its sealed copy: the first answer's, unless the secret was rotated since, and then the one that
 * works. NOT_FOUND when the endpoint is gone.
 */
async function withSecret(db: PrismaClient, write: Write, box: SecretBox, secret: string, seal: (tx: Prisma.TransactionClient) => Promise<WebhookEndpoint>) {
  let sealed = false;
  const endpoint = await write(async (tx) => {
    const written = await seal(tx);
    sealed = true;
    return unsealed(written);
  });
  if (sealed) return { endpoint, secret };
  const row = await db.webhookEndpoint.findUnique({ where: { id: endpoint.id }, select: { secretCiphertext: true } });
  if (!row) throw notFound('Not found: the endpoint has been deleted since');
  return { endpoint, secret: box.open(row.secretCiphertext, endpoint.id) };
}
