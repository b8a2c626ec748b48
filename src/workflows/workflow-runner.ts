// Running workflows (docs/workflows.md#runs): one step of the event worker (src/events/worker.ts),
// in every instance. A run is made in its event's transaction (the events table's trigger,
// prisma/migrations/*_workflow_runs); here due runs are claimed with FOR UPDATE SKIP LOCKED and a
// lease, and each step commits with its run's progress in one transaction, so a step's writes are
// applied once whatever fails, retries or restarts around it.
import { randomUUID } from 'node:crypto';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../logger.js';
import { emit, inTransaction } from '../events/emit.js';
import { envelope, type Envelope } from '../events/envelope.js';
import { retryDelay } from '../webhooks/delivery.service.js';
import { MAX_DEPTH, matches, waitMinutes, type Action, type Trigger } from '../studio/workflow-rules.js';
import { describe, loadSubject, Permanent, placeholderValues, plan, Skip, type StepContext } from './workflow-steps.js';

/** Attempts of a step before its run fails (3 retries). */
export const STEP_ATTEMPTS = 4;
/**
 * Runs claimed per step of the worker. A burst (an import, a batch) makes runs by the thousand: a
 * step claims many with one statement, reads their workflows and events with one statement each,
 * and works them RUN_CONCURRENCY at a time (BENCHMARKS.md "Workflows").
 */
export const RUN_BATCH = 200;
/**
 * Runs worked at once. Each step holds a pooled connection for its transaction: a few at a time keep
 * the pool (DATABASE_POOL_MAX, 10) for requests, where 50 at once left requests and the runs' own
 * steps waiting past the pool's timeout (a step then failed and waited for its retry).
 */
export const RUN_CONCURRENCY = 4;
export const LOOP = 'loop';
export const DEACTIVATED = 'The workflow was deactivated';

/** The runs' clock: tests move it (a wait of days passes at once), never sleep. */
export const clock = { now: (): number => Date.now() };

export type RunnerOptions = { retryBaseMs: number; leaseMs: number; mail: boolean; log: Logger; batch?: number; concurrency?: number };

export type StepRecord = { index: number; type: Action['type']; status: string; attempts: number; error: string | null; result: unknown };

type Claimed = { account_id: string; id: string; workflow_id: string; event_id: string; status: string; depth: number; next_step: number; steps: StepRecord[]; resume_at: Date | null };
type WorkflowRow = { id: string; active: boolean; trigger: unknown; actions: unknown };
type EventRow = Parameters<typeof envelope>[0];

/** One step of the worker: claims due runs and takes each as far as it goes now; true when it took a whole batch. */
export async function runDueWorkflows(db: PrismaClient, options: RunnerOptions): Promise<boolean> {
  const now = new Date(clock.now());
  const batch = options.batch ?? RUN_BATCH;
  // The lease keeps the run from other instances while this one works it; a crash frees it when it passes.
  const claimed = await db.$queryRaw<Claimed[]>`
    UPDATE workflow_runs r SET due_at = ${new Date(now.getTime() + options.leaseMs)}::timestamptz
    FROM (SELECT account_id, id FROM workflow_runs WHERE status IN ('pending', 'running', 'waiting') AND due_at <= ${now}::timestamptz
          ORDER BY due_at LIMIT ${batch} FOR UPDATE SKIP LOCKED) due
    WHERE r.account_id = due.account_id AND r.id = due.id
    RETURNING r.account_id::text, r.id::text, r.workflow_id::text, r.event_id::text, r.status, r.depth, r.next_step, r.steps, r.resume_at`;
  if (!claimed.length) return false;
  // The claimed runs' workflows and events, once for the batch, not once a run.
  const accounts = [...new Set(claimed.map((r) => r.account_id))];
  const [workflows, events] = await Promise.all([
    db.workflow.findMany({ where: { accountId: { in: accounts }, id: { in: [...new Set(claimed.map((r) => r.workflow_id))] } }, select: { id: true, accountId: true, active: true, trigger: true, actions: true } }),
    db.event.findMany({ where: { accountId: { in: accounts }, id: { in: claimed.map((r) => r.event_id) } } }),
  ]);
  const workflowOf = new Map(workflows.map((w) => [`${w.accountId}:${w.id}`, w]));
  const eventOf = new Map(events.map((e) => [`${e.accountId}:${e.id}`, e]));
  let next = 0;
  const work = async () => {
    while (next < claimed.length) {
      const run = claimed[next++]!;
      await advance(db, run, workflowOf.get(`${run.account_id}:${run.workflow_id}`) ?? null, eventOf.get(`${run.account_id}:${run.event_id}`) ?? null, options).catch((err: unknown) =>
        options.log.error({ err, runId: run.id }, 'workflow run: a step could not be recorded; retried after its lease'),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? RUN_CONCURRENCY, claimed.length) }, work));
  return claimed.length === batch;
}

/** Takes one claimed run through its steps until it ends, waits, or a step is to be retried. */
async function advance(db: PrismaClient, run: Claimed, workflow: WorkflowRow | null, event: EventRow | null, options: RunnerOptions): Promise<void> {
  const key = { accountId: run.account_id, id: run.id };
  const finish = (status: string, error: string | null, steps = run.steps) =>
    db.workflowRun.updateMany({ where: key, data: { status, error, steps: steps as Prisma.InputJsonValue, finishedAt: new Date(clock.now()), resumeAt: null } });
  if (!workflow || !event) return void (await finish('skipped', workflow ? 'The event is gone' : 'The workflow is gone'));
  if (!workflow.active) return void (await finish('skipped', DEACTIVATED));
  const trigger = workflow.trigger as Trigger | null;
  const env = envelope(event);
  if (run.status === 'pending') {
    // A run is made for every active workflow on the event's type; one whose conditions do not hold was never a run.
    if (!trigger || trigger.event !== event.type || !matches(trigger, env.data as never)) return void (await db.workflowRun.deleteMany({ where: key }));
    if (run.depth > MAX_DEPTH) return void (await finish('skipped', LOOP));
    // It becomes `running` with its first step's commit (one statement fewer a run).
  }
  const actions = workflow.actions as Action[];
  const actor = { type: 'workflow', id: workflow.id } as const;
  for (;;) {
    const index = run.next_step;
    const action = actions[index];
    if (!action) return void (await finish('succeeded', null));
    const previous = run.steps.find((s) => s.index === index);
    const attempts = (previous?.attempts ?? 0) + 1;
    const now = clock.now();
    if (action.type === 'wait' && !run.resume_at) {
      // The wait begins: the run sleeps (any instance resumes it), its row saying until when.
      const resumeAt = new Date(now + waitMinutes(action.params)! * 60_000);
      const steps = upsert(run.steps, { index, type: 'wait', status: 'waiting', attempts: 1, error: null, result: { resume_at: resumeAt.toISOString() } });
      await db.workflowRun.updateMany({ where: key, data: { status: 'waiting', resumeAt, dueAt: resumeAt, steps: steps as Prisma.InputJsonValue } });
      return;
    }
    // The last step's commit ends the run too.
    const last = index === actions.length - 1;
    try {
      await inTransaction(db, async (tx) => {
        // Ours still, at this step: a run taken over after its lease (this instance was slow) is not stepped twice.
        const [mine] = await tx.$queryRaw<{ n: number }[]>`
          SELECT set_config('crm.workflow_depth', ${String(run.depth)}, true) AS depth, 1 AS n FROM workflow_runs
          WHERE account_id = ${run.account_id}::uuid AND id = ${run.id}::uuid AND next_step = ${index} AND status IN ('pending', 'running', 'waiting') FOR UPDATE`;
        if (!mine) throw new Lost();
        let done: { status: string; error: string | null; result: unknown };
        if (action.type === 'wait') done = { status: 'succeeded', error: null, result: previous?.result ?? null };
        else {
          const ctx = await stepContext(tx, run, workflow.id, env, actor, options.mail, now, [action]);
          try {
            const planned = await plan(tx, action, ctx);
            done = { status: 'succeeded', error: null, result: planned.apply ? await planned.apply() : planned.result };
          } catch (err) {
            if (!(err instanceof Skip)) throw err;
            done = { status: 'skipped', error: err.message, result: null };
          }
        }
        const steps = upsert(run.steps, { index, type: action.type, ...done, attempts });
        const ended = last ? { status: 'succeeded', finishedAt: new Date(clock.now()) } : { status: 'running' };
        await tx.workflowRun.updateMany({ where: key, data: { ...ended, nextStep: index + 1, steps: steps as Prisma.InputJsonValue, resumeAt: null, error: null } });
        run.steps = steps;
      });
    } catch (err) {
      if (err instanceof Lost) return;
      const error = describe(err);
      const steps = upsert(run.steps, { index, type: action.type, status: 'failed', attempts, error, result: null });
      if (err instanceof Permanent || attempts >= STEP_ATTEMPTS) {
        await failRun(db, run, workflow.id, actor, steps, error);
        return;
      }
      options.log.warn({ runId: run.id, step: index, attempt: attempts, reason: error }, 'workflow run: a step failed; retrying');
      const retryAt = new Date(clock.now() + retryDelay(attempts, options.retryBaseMs));
      await db.workflowRun.updateMany({ where: key, data: { status: 'running', steps: upsert(run.steps, { ...steps.find((s) => s.index === index)!, status: 'running' }) as Prisma.InputJsonValue, dueAt: retryAt, error } });
      return;
    }
    if (last) return;
    run.next_step = index + 1;
    run.resume_at = null;
  }
}

/** The run failed for good: its step's error, and `workflow.run_failed` so that a webhook may alert. */
async function failRun(db: PrismaClient, run: Claimed, workflowId: string, actor: { type: 'workflow'; id: string }, steps: StepRecord[], error: string) {
  await inTransaction(db, async (tx) => {
    const [failed] = await tx.workflowRun.updateManyAndReturn({
      where: { accountId: run.account_id, id: run.id, status: { in: ['pending', 'running', 'waiting'] } },
      data: { status: 'failed', error, steps: steps as Prisma.InputJsonValue, finishedAt: new Date(clock.now()), resumeAt: null },
    });
    if (!failed) return;
    const workflow = await tx.workflow.findUnique({ where: { id: workflowId } });
    if (workflow) {
      await emit(tx, { type: 'workflow.run_failed', accountId: run.account_id, actor, object: workflow, extra: { run_id: run.id, event_id: run.event_id, step: run.next_step, error } });
    }
  });
}

class Lost extends Error {}

const upsert = (steps: StepRecord[], step: StepRecord): StepRecord[] => [...steps.filter((s) => s.index !== step.index), step].sort((a, b) => a.index - b.index);

/** A text param that names the account or the owner: only then are they read (up to four statements a step otherwise spent for nothing). */
const NAMES = /\{\{\s*(account\.name|record_owner\.name)\s*\}\}/;
const namesSomeone = (actions: Action[]) => actions.some((a) => Object.values(a.params).some((v) => typeof v === 'string' && NAMES.test(v)));

async function stepContext(tx: Prisma.TransactionClient, run: { account_id: string; id: string }, workflowId: string, event: Envelope, actor: StepContext['actor'], mail: boolean, now: number, actions: Action[]): Promise<StepContext> {
  const subject = await loadSubject(tx, run.account_id, event);
  const values = namesSomeone(actions) ? await placeholderValues(tx, run.account_id, subject) : { accountName: '', ownerName: null };
  return { accountId: run.account_id, workflowId, runId: run.id, event, subject, values, actor, mail, now };
}

/**
 * testWorkflow (docs/workflows.md#dry-runs): what a run of this event would do, writing and sending
 * nothing: `succeeded` with each step's would-be result when the conditions hold, else `skipped`
 * with no steps. Reads in a transaction that is rolled back whatever happens.
 */
export async function dryRun(db: PrismaClient, workflow: { id: string; accountId: string; trigger: unknown; actions: unknown }, eventRow: Parameters<typeof envelope>[0], mail: boolean) {
  const env = envelope(eventRow);
  const trigger = workflow.trigger as Trigger | null;
  const startedAt = new Date(clock.now());
  const base = { id: randomUUID(), accountId: workflow.accountId, workflowId: workflow.id, eventId: eventRow.id, startedAt, finishedAt: startedAt, resumeAt: null, error: null as string | null };
  if (!trigger || trigger.event !== eventRow.type || !matches(trigger, env.data as never)) return { ...base, status: 'skipped', steps: [] as StepRecord[] };
  const steps: StepRecord[] = [];
  const actor = { type: 'workflow', id: workflow.id } as const;
  await db
    .$transaction(async (tx) => {
      const ctx = await stepContext(tx, { account_id: workflow.accountId, id: base.id }, workflow.id, env, actor, mail, startedAt.getTime(), workflow.actions as Action[]);
      for (const [index, action] of (workflow.actions as Action[]).entries()) {
        try {
          const planned = await plan(tx, action, ctx);
          steps.push({ index, type: action.type, status: 'succeeded', attempts: 0, error: null, result: planned.result });
        } catch (err) {
          steps.push({ index, type: action.type, status: err instanceof Skip ? 'skipped' : 'failed', attempts: 0, error: describe(err), result: null });
        }
      }
      throw new DryRunDone();
    })
    .catch((err: unknown) => {
      if (!(err instanceof DryRunDone)) throw err;
    });
  return { ...base, status: 'succeeded', steps };
}

class DryRunDone extends Error {}
