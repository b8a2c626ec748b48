// The invoice mail outbox (docs/decisions.md §20 "Sending"): sendInvoice writes a row in its own
// transaction; the event worker (src/events/worker.ts), woken by that transaction's event at its
// commit, runs deliverDueMail in every instance. The claim is webhook delivery's
// (src/webhooks/delivery.service.ts) with one difference: a claimed mail is never claimed again,
// so it goes out at most once, whatever instances stop or run beside it. A workflow's send_email step
// (docs/workflows.md#steps) writes its row here too, with its own subject and bodies.
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { retryDelay } from '../webhooks/delivery.service.js';
import { PermanentMailError, reasonOf, type Mailer, type OutboxMail } from './mail.js';

/** Attempts before a mail is given up (failed); retries wait MAIL_RETRY_BASE_MS × 4^(n−1), with jitter. */
export const MAIL_ATTEMPTS = 5;
/** How long a claimed mail may be under way; past it, with no outcome recorded, it is given up (never re-sent). */
export const MAIL_LEASE_MS = 5 * 60_000;
/** Mails claimed per step of the worker. */
export const MAIL_BATCH = 10;
export const OUTCOME_UNKNOWN = 'Outcome unknown: the instance sending it stopped; not sent again';

export type MailOutboxOptions = { mailer: Mailer; retryBaseMs: number; log: Logger; leaseMs?: number };

type Claimed = OutboxMail & { attempts: number };

/**
 * Claims due mails: FOR UPDATE SKIP LOCKED picks rows no other instance is claiming, and the claim
 * commits `sending` with a lease before anything is sent. A `sending` mail is never claimed again:
 * a claim whose lease passed without an outcome (its instance died mid-send, perhaps after the server
 * took the mail) is given up, so that no client gets the mail twice.
 */
export async function claimDueMail(db: PrismaClient, limit: number, leaseMs = MAIL_LEASE_MS): Promise<Claimed[]> {
  await db.$executeRaw`
    UPDATE invoice_mails SET status = 'failed', locked_until = NULL, last_error = ${OUTCOME_UNKNOWN}
    WHERE status = 'sending' AND locked_until < now()`;
  return db.$queryRaw<Claimed[]>`
    UPDATE invoice_mails m SET status = 'sending', locked_until = now() + ${leaseMs} * interval '1 millisecond', attempts = m.attempts + 1
    FROM (SELECT account_id, id FROM invoice_mails WHERE status = 'pending' AND next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED) due
    WHERE m.account_id = due.account_id AND m.id = due.id
    RETURNING m.account_id::text AS account_id, m.id::text AS id, m.invoice_id::text AS invoice_id, m."to", m.subject, m.text_body, m.html_body, m.attempts`;
}

/** One step of the event worker: claim the due mails, send each, record each outcome. */
export async function deliverDueMail(db: PrismaClient, options: MailOutboxOptions): Promise<void> {
  const claimed = await claimDueMail(db, MAIL_BATCH, options.leaseMs);
  await Promise.all(claimed.map(async (mail) => {
    let error: unknown = null;
    try {
      await options.mailer.send(mail);
    } catch (err) {
      error = err;
    }
    await recordOutcome(db, mail, error, options).catch((err: unknown) => options.log.error({ err, mailId: mail.id }, 'invoice mail: recording an attempt failed'));
  }));
}

async function recordOutcome(db: PrismaClient, mail: Claimed, error: unknown, options: MailOutboxOptions): Promise<void> {
  // Only while the claim is still ours: a mail given up meanwhile (its lease passed) stays given up.
  const ours = { accountId: mail.account_id, id: mail.id, status: 'sending', attempts: mail.attempts };
  if (error === null) {
    await db.invoiceMail.updateMany({ where: ours, data: { status: 'sent', sentAt: new Date(), lockedUntil: null, lastError: null } });
    return;
  }
  const lastError = reasonOf(error);
  const giveUp = error instanceof PermanentMailError || mail.attempts >= MAIL_ATTEMPTS;
  options.log.warn({ mailId: mail.id, invoiceId: mail.invoice_id, attempt: mail.attempts, reason: lastError, givenUp: giveUp }, 'invoice mail: an attempt failed');
  await db.invoiceMail.updateMany({
    where: ours,
    data: giveUp
      ? { status: 'failed', lockedUntil: null, lastError }
      : { status: 'pending', lockedUntil: null, lastError, nextAttemptAt: new Date(Date.now() + retryDelay(mail.attempts, options.retryBaseMs)) },
  });
}
