import type { Logger } from '../logger.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { emit } from '../events/emit.js';
import { envelope } from '../events/envelope.js';
import { SYSTEM } from '../events/types.js';
import { signingSecrets } from './secret.js';
import { sendWebhook, type SendResult } from './send.js';
import type { SecretBox, TargetPolicy } from '../deps.js';

/** Retries stop, and a failing endpoint is disabled, after about three days (docs/events.md). */
export const RETRY_FOR_MS = 3 * 24 * 60 * 60 * 1000;
const MAX_DELAY_MS = 12 * 60 * 60 * 1000;

/** After `failed` failures: base × 4^(failed-1), capped at 12 h, with jitter (50–100 %) so retries spread out. */
export function retryDelay(failed: number, baseMs: number, random = Math.random): number {
  const full = Math.min(baseMs * 4 ** Math.max(0, failed - 1), MAX_DELAY_MS);
  return Math.round(full / 2 + (random() * full) / 2);
}

export type DeliveryOptions = { box: SecretBox; policy: TargetPolicy; retryBaseMs: number; leaseMs: number; log: Logger };

type Claimed = { account_id: string; id: string; endpoint_id: string; event_id: string; attempts: number; created_at: Date };

/**
 * Claims due messages: FOR UPDATE SKIP LOCKED picks rows no other instance is claiming, and the
 * lease (locked_until) keeps them from others while we send; a crash frees them when it passes, so
 * they go out again (at least once). Plain SQL over a job-queue library: the claim is one
 * statement on tables we already have, and it must join the outbox written in the same transaction.
 */
export function claimDue(db: PrismaClient, limit: number, leaseMs: number): Promise<Claimed[]> {
  return db.$queryRaw<Claimed[]>`
    UPDATE webhook_messages m SET locked_until = now() + ${leaseMs} * interval '1 millisecond', attempts = m.attempts + 1
    FROM (SELECT account_id, id FROM webhook_messages
          WHERE status = 'pending' AND next_attempt_at <= now() AND (locked_until IS NULL OR locked_until < now())
          ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED) due
    WHERE m.account_id = due.account_id AND m.id = due.id
    RETURNING m.account_id, m.id, m.endpoint_id, m.event_id, m.attempts, m.created_at`;
}

/**
 * A message that throws before it is sent (a secret that will not open, an event that will not
 * serialize) is a failed attempt with this reason, on its retry schedule; its third ends it
 * (docs/events.md): one message never stops the worker or loops for three days.
 */
export const INTERNAL_ERROR = 'Internal error: not sent';
const MAX_INTERNAL_ERRORS = 3;

/** Messages claimed per step of the event worker. */
export const DELIVERY_BATCH = 10;

/** One step of delivery for the event worker: claim what is due, send it. */
export async function deliverDue(db: PrismaClient, options: DeliveryOptions, signal?: AbortSignal): Promise<void> {
  await deliverClaimed(db, await claimDue(db, DELIVERY_BATCH, options.leaseMs), options, signal);
}

/** Sends the claimed messages and records each attempt. */
export async function deliverClaimed(db: PrismaClient, claimed: Claimed[], options: DeliveryOptions, signal?: AbortSignal): Promise<void> {
  if (claimed.length === 0) return;
  const [endpoints, events] = await Promise.all([
    db.webhookEndpoint.findMany({ where: { id: { in: [...new Set(claimed.map((m) => m.endpoint_id))] } } }),
    db.event.findMany({ where: { OR: claimed.map((m) => ({ accountId: m.account_id, id: m.event_id })) } }),
  ]);
  await Promise.all(claimed.map(async (message) => {
    const endpoint = endpoints.find((e) => e.id === message.endpoint_id);
    const event = events.find((e) => e.id === message.event_id);
    if (!endpoint || !event) return; // deleted meanwhile: the cascade took the message too
    let result: SendResult;
    try {
      if (!endpoint.enabled) result = { succeeded: false, statusCode: null, durationMs: 0, error: 'Endpoint disabled' };
      else {
        const secrets = signingSecrets(options.box, endpoint);
        result = await sendWebhook({ url: endpoint.url, secrets }, { id: event.id, body: JSON.stringify(envelope(event)) }, options.policy, signal);
      }
    } catch (err) {
      options.log.error({ err, messageId: message.id, endpointId: endpoint.id }, 'webhook: a message could not be sent');
      result = { succeeded: false, statusCode: null, durationMs: 0, error: INTERNAL_ERROR };
    }
    await recordAttempt(db, message, endpoint, result, options).catch((err: unknown) => options.log.error({ err }, 'webhook: recording an attempt failed'));
  }));
}

async function recordAttempt(
  db: PrismaClient,
  message: Claimed,
  endpoint: { id: string; accountId: string; enabled: boolean; failingSince: Date | null },
  result: SendResult,
  options: DeliveryOptions,
): Promise<void> {
  const now = new Date();
  await db.$transaction(async (tx) => {
    await tx.webhookDelivery.create({
      data: { accountId: message.account_id, endpointId: endpoint.id, eventId: message.event_id, attempt: message.attempts, ...result },
    });
    // Only while the claim is still ours (a re-claim after an expired lease bumps `attempts`).
    const ours = { accountId: message.account_id, id: message.id, attempts: message.attempts };
    if (result.succeeded) {
      await tx.webhookMessage.updateMany({ where: ours, data: { status: 'succeeded', lockedUntil: null } });
      if (endpoint.failingSince) await tx.webhookEndpoint.update({ where: { id: endpoint.id }, data: { failingSince: null } });
      return;
    }
    const internalErrors = result.error === INTERNAL_ERROR
      ? await tx.webhookDelivery.count({ where: { accountId: message.account_id, endpointId: endpoint.id, eventId: message.event_id, error: INTERNAL_ERROR } })
      : 0;
    const giveUp = !endpoint.enabled || internalErrors >= MAX_INTERNAL_ERRORS || now.getTime() - message.created_at.getTime() >= RETRY_FOR_MS;
    await tx.webhookMessage.updateMany({
      where: ours,
      data: giveUp ? { status: 'failed', lockedUntil: null } : { nextAttemptAt: new Date(now.getTime() + retryDelay(message.attempts, options.retryBaseMs)), lockedUntil: null },
    });
    if (!endpoint.enabled) return;
    const since = endpoint.failingSince ?? now;
    if (!endpoint.failingSince) await tx.webhookEndpoint.update({ where: { id: endpoint.id }, data: { failingSince: now } });
    if (now.getTime() - since.getTime() >= RETRY_FOR_MS) await disableEndpoint(tx, endpoint.id, 'Failed for three days');
  });
}

/** Disables an endpoint, gives up its pending messages, and says so with an event. */
async function disableEndpoint(tx: Parameters<Parameters<PrismaClient['$transaction']>[0]>[0], id: string, reason: string) {
  const { count } = await tx.webhookEndpoint.updateMany({ where: { id, enabled: true }, data: { enabled: false, disabledReason: reason } });
  if (count === 0) return;
  const endpoint = await tx.webhookEndpoint.findUniqueOrThrow({ where: { id } });
  await tx.webhookMessage.updateMany({ where: { accountId: endpoint.accountId, endpointId: id, status: 'pending' }, data: { status: 'failed' } });
  await emit(tx, { type: 'webhook_endpoint.disabled', accountId: endpoint.accountId, actor: SYSTEM, object: endpoint });
}

/** One attempt outside the queue (sendTestWebhook, redeliverEvent), logged like any other. */
export async function deliverNow(
  db: PrismaClient,
  endpoint: Parameters<typeof signingSecrets>[1] & { accountId: string; url: string },
  message: { eventId: string; body: string },
  options: Pick<DeliveryOptions, 'box' | 'policy'>,
) {
  const secrets = signingSecrets(options.box, endpoint);
  const result = await sendWebhook({ url: endpoint.url, secrets }, { id: message.eventId, body: message.body }, options.policy);
  const attempt = 1 + (await db.webhookDelivery.count({ where: { accountId: endpoint.accountId, endpointId: endpoint.id, eventId: message.eventId } }));
  return db.webhookDelivery.create({ data: { accountId: endpoint.accountId, endpointId: endpoint.id, eventId: message.eventId, attempt, ...result } });
}
