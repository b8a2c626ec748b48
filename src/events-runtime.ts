import { publicBaseUrl, type Config } from './config.js';
import type { Listen } from './db/listen.js';
import { Prisma, type PrismaClient } from './generated/prisma/client.js';
import { rawWrite } from './db/raw.js';
import type { Logger } from './logger.js';
// The events runtime is where the outboxes are wired in (webhooks, invoice mail, workflow runs): it stands at the
// top, beside src/runtime.ts, so that events/ imports no domain.
import { deliverDue } from './webhooks/delivery.service.js';
import { createMailer } from './invoices/mail.js';
import { deliverDueMail } from './invoices/mail-outbox.js';
import { runDueWorkflows } from './workflows/workflow-runner.js';
import { requestsInFlight } from './http/requests-in-flight.js';
import { loadSecretBox } from './webhooks/secret.js';
import { createEventBus } from './events/bus.js';
import { wakeAfterCommit } from './events/emit.js';
import { MIN_STEP_GAP_MS, startWorker, type Delivery } from './events/worker.js';
import type { Events, PdfPool, TargetPolicy } from './deps.js';

/** The channel the events table's trigger notifies at each commit (prisma/migrations/*_events_notify). */
export const EVENTS_CHANNEL = 'crm_events';

export async function openEvents(
  config: Config,
  db: PrismaClient,
  log: Logger,
  opts: { worker?: boolean; listen?: Listen; pdfs?: PdfPool } = {},
): Promise<Events> {
  const { bus, listened, close: closeBus } = createEventBus(config.redisUrl);
  const box = await loadSecretBox(config);
  if (!box) log.error('WEBHOOK_SECRET_KEY is not set: webhook endpoints are refused and nothing is delivered');
  const policy: TargetPolicy = { production: config.production, allowPrivate: config.events.allowPrivateTargets };
  if (policy.allowPrivate && config.production) log.warn('WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhooks may reach private addresses');
  const runsWorker = opts.worker ?? config.events.worker;
  const deliveries: Delivery[] = [];
  if (runsWorker && box) deliveries.push((signal) => deliverDue(db, { box, policy, retryBaseMs: config.events.retryBaseMs, leaseMs: config.events.leaseMs, log }, signal));
  // Invoice mail (docs/decisions.md §20 "Sending"): sendInvoice's event wakes the worker at its commit.
  const mail = config.mail;
  const mailer = runsWorker && mail ? createMailer(db, mail, publicBaseUrl(config), { pdfs: opts.pdfs, log }) : null;
  if (mailer && mail) deliveries.push(() => deliverDueMail(db, { mailer, retryBaseMs: mail.retryBaseMs, log }));
  // Workflows (docs/workflows.md#the-job-runner-and-why): their runs are this worker's too, woken by the commit of the event that made them.
  if (runsWorker) {
    // The runs step aside while this process's requests keep it busy (src/http/requests-in-flight.ts).
    const yieldTo = { requests: requestsInFlight };
    const workflows = { retryBaseMs: config.events.workflowRetryBaseMs, leaseMs: config.events.workflowLeaseMs, mail: Boolean(mail), log, yieldTo };
    deliveries.push(() => runDueWorkflows(db, workflows));
  }
  const worker = runsWorker
    ? startWorker(db, {
        live: { bus, listened },
        deliveries,
        pollMs: config.events.pollMs,
        retentionDays: config.events.retentionDays,
        log,
      })
    : null;
  // Committed events wake the worker at once; its poll only catches what a lost notification missed.
  const unlisten = worker && opts.listen ? await opts.listen(EVENTS_CHANNEL, worker.nudge) : null;
  // The service's own writes wake the workers after their commit (emit.ts), this instance's directly
  // and every instance's, this one's included, through one NOTIFY in a transaction of its own, which
  // writes nothing worth a WAL flush (synchronous_commit off for it alone); under a stream of commits
  // one per worker step's gap at most, as often as a worker would step anyway.
  const notify = coalesced(async () => {
    await rawWrite(db, Prisma.sql`SELECT set_config('synchronous_commit', 'off', true), pg_notify(${EVENTS_CHANNEL}, '')`);
  }, (err) => log.warn({ err }, 'events: the wake-up after a commit failed; the workers poll'), MIN_STEP_GAP_MS);
  const stopWaking = wakeAfterCommit(db, () => {
    worker?.nudge();
    notify();
  });
  return {
    bus,
    box,
    policy,
    worker,
    close: async () => {
      stopWaking();
      await notify.idle();
      await unlisten?.();
      await worker?.close(); // finishes the deliveries under way
      mailer?.close();
      await closeBus();
    },
  };
}

/**
 * `send` at most once at a time, and at most once per `minGapMs`: a call while one is under way (or
 * within the gap after it started) is answered by one more send after it, however many calls came
 * meanwhile; every call is followed by a send that starts after it. An isolated call sends at once.
 */
export function coalesced(send: () => Promise<void>, onError: (err: unknown) => void, minGapMs = 0) {
  let running: Promise<void> | null = null;
  let again = false;
  const run = async () => {
    do {
      again = false;
      const started = Date.now();
      try {
        await send();
      } catch (err) {
        onError(err);
      }
      const rest = minGapMs - (Date.now() - started);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    } while (again);
    running = null;
  };
  return Object.assign(
    () => {
      if (running) again = true;
      else running = run();
    },
    { idle: () => running ?? Promise.resolve() },
  );
}
