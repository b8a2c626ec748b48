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
import type { RequestsInFlight } from '../http/requests-in-flight.js';
import { MAX_DEPTH, matches, waitMinutes, type Action, type Trigger } from '../studio/workflow-rules.js';
import { applyAll, describe, loadSubject, loadSubjects, Permanent, placeholderValues, plan, Skip, type Planned, type StepContext } from './workflow-steps.js';

/** Attempts of a step before its run fails (3 retries). */
export const STEP_ATTEMPTS = 4;
/**
 * Runs claimed per step of the worker. A burst (an import, a batch) makes runs by the thousand: a
 * step claims many with one statement and reads their workflows and events with one statement each
 * (BENCHMARKS.md "Workflows").
 */
export const RUN_BATCH = 200;
/**
 * Runs stepped together in one transaction: their locks, subjects, notes, tasks, events and progress
 * each one statement for all (a note a run took 8 round trips and 7.9 ms of CPU alone). Bounded, so
 * that one transaction holds its locks and the main thread briefly, and a step that fails costs its
 * chunk a redo run by run.
 */
export const RUN_CHUNK = 50;
/**
 * Chunks worked at once. Each holds a pooled connection for its transaction; two keep the pool
 * (DATABASE_POOL_MAX, 10) and the service's one thread for requests (50 runs at once once left
 * requests waiting past the pool's timeout).
 */
export const RUN_CONCURRENCY = 2;
/**
 * Requests in flight without a pause for this long keep the instance busy: the runs' next claim or
 * step then waits for a quiet moment (stepAside). A request alone (a list, 5 ms) does not: the runs
 * waiting out each one only moved their work into the gaps before the next.
 */
export const BUSY_MS = 50;
/** The longest a claim or step waits for that quiet moment: under requests that never pause the runs still go on. */
export const YIELD_AT_MOST_MS = 200;
export const LOOP = 'loop';
export const DEACTIVATED = 'The workflow was deactivated';

/** The runs' clock: tests move it (a wait of days passes at once), never sleep. */
export const clock = { now: (): number => Date.now() };

export type RunnerOptions = {
  retryBaseMs: number; leaseMs: number; mail: boolean; log: Logger; batch?: number; chunk?: number; concurrency?: number;
  /** The requests the runs step aside for (the process's requestsInFlight; none: they never wait), busy after `busyMs` (BUSY_MS). */
  yieldTo?: { requests: RequestsInFlight; busyMs?: number };
};

export type StepRecord = { index: number; type: Action['type']; status: string; attempts: number; error: string | null; result: unknown };

type Claimed = { account_id: string; id: string; workflow_id: string; event_id: string; status: string; depth: number; next_step: number; steps: StepRecord[]; resume_at: Date | null };
type WorkflowRow = { id: string; active: boolean; trigger: unknown; actions: unknown };
type EventRow = Parameters<typeof envelope>[0];
/** A claimed run whose workflow and event are there and whose conditions hold. */
type Live = { run: Claimed; workflow: WorkflowRow; event: EventRow; env: Envelope };

/** One step of the worker: claims due runs and takes each as far as it goes now; true when it took a whole batch. */
export async function runDueWorkflows(db: PrismaClient, options: RunnerOptions): Promise<boolean> {
  await stepAside(options);
  const now = new Date(clock.now());
  const batch = options.batch ?? RUN_BATCH;
  // The lease keeps the run from other instances while this one works it; a crash frees it when it passes.
  // The claimed rows are found again by ctid (as the events worker's steps: src/events/worker.ts): a
  // join back by key, planned on statistics of a table still small, read the whole primary key once a
  // claim (6.5 s a claim during a burst; BENCHMARKS.md "Workflows").
  const claimed = await db.$queryRaw<Claimed[]>`
    UPDATE workflow_runs SET due_at = ${new Date(now.getTime() + options.leaseMs)}::timestamptz
    WHERE ctid = ANY(ARRAY(SELECT ctid FROM workflow_runs WHERE status IN ('pending', 'running', 'waiting') AND due_at <= ${now}::timestamptz
                           ORDER BY due_at LIMIT ${batch} FOR UPDATE SKIP LOCKED))
    RETURNING account_id::text, id::text, workflow_id::text, event_id::text, status, depth, next_step, steps, resume_at`;
  if (!claimed.length) return false;
  // The claimed runs' workflows and events, once for the batch, not once a run.
  const accounts = [...new Set(claimed.map((r) => r.account_id))];
  const [workflows, events] = await Promise.all([
    db.workflow.findMany({ where: { accountId: { in: accounts }, id: { in: [...new Set(claimed.map((r) => r.workflow_id))] } }, select: { id: true, accountId: true, active: true, trigger: true, actions: true } }),
    db.event.findMany({ where: { accountId: { in: accounts }, id: { in: claimed.map((r) => r.event_id) } } }),
  ]);
  const workflowOf = new Map(workflows.map((w) => [`${w.accountId}:${w.id}`, w]));
  const eventOf = new Map(events.map((e) => [`${e.accountId}:${e.id}`, e]));
  // Runs that end before a step (their workflow or event gone, deactivated, a loop) in one statement,
  // those that never were (conditions that fail) in another.
  const ended: { run: Claimed; status: string; error: string }[] = [];
  const never: Claimed[] = [];
  const live: Live[] = [];
  for (const run of claimed) {
    const workflow = workflowOf.get(`${run.account_id}:${run.workflow_id}`);
    const event = eventOf.get(`${run.account_id}:${run.event_id}`);
    if (!workflow || !event) ended.push({ run, status: 'skipped', error: workflow ? 'The event is gone' : 'The workflow is gone' });
    else if (!workflow.active) ended.push({ run, status: 'skipped', error: DEACTIVATED });
    else {
      const env = envelope(event);
      const trigger = workflow.trigger as Trigger | null;
      // A run is made for every active workflow on the event's type; one whose conditions do not hold was never a run.
      if (run.status === 'pending' && (!trigger || trigger.event !== event.type || !matches(trigger, env.data as never))) never.push(run);
      else if (run.status === 'pending' && run.depth > MAX_DEPTH) ended.push({ run, status: 'skipped', error: LOOP });
      else live.push({ run, workflow, event, env });
    }
  }
  await endBeforeAStep(db, ended, never).catch((err: unknown) => options.log.error({ err }, 'workflow runs: could not be ended; retried after their lease'));
  // Chunks of one depth (a transaction says its runs' depth to the events trigger), at most RUN_CHUNK each.
  const size = options.chunk ?? RUN_CHUNK;
  const chunks: Live[][] = [];
  for (const depth of new Set(live.map((l) => l.run.depth))) {
    const same = live.filter((l) => l.run.depth === depth);
    for (let i = 0; i < same.length; i += size) chunks.push(same.slice(i, i + size));
  }
  let next = 0;
  const work = async () => {
    while (next < chunks.length) {
      await stepTogether(db, chunks[next++]!, options);
      // A turn of the event loop between chunks: requests waiting on this thread go first.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? RUN_CONCURRENCY, chunks.length) }, work));
  return claimed.length === batch;
}

/** Runs that end before any step: one UPDATE for those skipped, one DELETE for those that never were. */
async function endBeforeAStep(db: PrismaClient, ended: { run: Claimed; status: string; error: string }[], never: Claimed[]) {
  if (never.length) {
    await db.$executeRaw`DELETE FROM workflow_runs WHERE (account_id, id) IN (SELECT * FROM unnest(${never.map((r) => r.account_id)}::uuid[], ${never.map((r) => r.id)}::uuid[]))`;
  }
  if (ended.length) {
    await db.$executeRaw`
      UPDATE workflow_runs r SET status = t.status, error = t.error, finished_at = ${new Date(clock.now())}::timestamptz, resume_at = NULL
      FROM unnest(${ended.map((e) => e.run.account_id)}::uuid[], ${ended.map((e) => e.run.id)}::uuid[], ${ended.map((e) => e.status)}::text[], ${ended.map((e) => e.error)}::text[]) AS t (account_id, id, status, error)
      WHERE r.account_id = t.account_id AND r.id = t.id`;
  }
}

/**
 * Takes a chunk of runs (one depth) through their steps together, a transaction a step for the whole
 * chunk: each commits its runs' writes with their progress, so a step's writes are applied once
 * whatever fails around it. A step that fails (not a skip) rolls the chunk's transaction back; a
 * chunk of several is then taken run by run the same way, and a run alone records its failure
 * (stepFailed: retried later, or failed for good).
 */
async function stepTogether(db: PrismaClient, chunk: Live[], options: RunnerOptions): Promise<void> {
  let going = chunk;
  while (going.length) {
    await stepAside(options);
    let moved: Moved[];
    try {
      moved = await stepOnce(db, going, options);
    } catch (err) {
      if (going.length === 1) {
        await stepFailed(db, going[0]!, err, options).catch((error: unknown) =>
          options.log.error({ err: error, runId: going[0]!.run.id }, 'workflow run: a step could not be recorded; retried after its lease'),
        );
        return;
      }
      options.log.warn({ err, runs: going.length }, 'workflow runs: a step of the chunk failed; its runs are taken one by one');
      for (const live of going) await stepTogether(db, [live], options);
      return;
    }
    // Committed: the runs' own records follow, and those with steps left go on.
    for (const m of moved) Object.assign(m.live.run, { steps: m.steps, next_step: m.nextStep, resume_at: null, status: 'running' });
    going = moved.filter((m) => m.more).map((m) => m.live);
  }
}

type Moved = { live: Live; steps: StepRecord[]; nextStep: number; more: boolean };
type Progress = { run: Claimed; status: string; nextStep: number; steps: StepRecord[]; resumeAt: Date | null; dueAt: Date | null; finishedAt: Date | null };

/** One step of each run of the chunk, in one transaction: what moved (the runs another instance took meanwhile are left out). */
async function stepOnce(db: PrismaClient, runs: Live[], options: RunnerOptions): Promise<Moved[]> {
  const now = clock.now();
  return inTransaction(db, async (tx) => {
    // Ours still, at this step: a run taken over after its lease (this instance was slow) is not stepped twice.
    const mine = await tx.$queryRaw<{ id: string }[]>`
      SELECT set_config('crm.workflow_depth', ${String(runs[0]!.run.depth)}, true) AS depth, id::text FROM workflow_runs
      WHERE (account_id, id, next_step) IN (SELECT * FROM unnest(${runs.map((l) => l.run.account_id)}::uuid[], ${runs.map((l) => l.run.id)}::uuid[], ${runs.map((l) => l.run.next_step)}::int[]))
        AND status IN ('pending', 'running', 'waiting') FOR UPDATE`;
    const held = new Set(mine.map((r) => r.id));
    const ours = runs.filter((l) => held.has(l.run.id));
    const progress: Progress[] = [];
    const moved: Moved[] = [];
    const acting: { live: Live; index: number; action: Action; attempts: number }[] = [];
    for (const live of ours) {
      const { run } = live;
      const actions = live.workflow.actions as Action[];
      const index = run.next_step;
      const action = actions[index];
      const previous = run.steps.find((s) => s.index === index);
      const attempts = (previous?.attempts ?? 0) + 1;
      if (!action) {
        progress.push({ run, status: 'succeeded', nextStep: index, steps: run.steps, resumeAt: null, dueAt: null, finishedAt: new Date(clock.now()) });
      } else if (action.type === 'wait' && !run.resume_at) {
        // The wait begins: the run sleeps (any instance resumes it), its row saying until when.
        const resumeAt = new Date(now + waitMinutes(action.params)! * 60_000);
        const steps = upsert(run.steps, { index, type: 'wait', status: 'waiting', attempts: 1, error: null, result: { resume_at: resumeAt.toISOString() } });
        progress.push({ run, status: 'waiting', nextStep: index, steps, resumeAt, dueAt: resumeAt, finishedAt: null });
      } else if (action.type === 'wait') {
        moved.push(stepDone(progress, live, index, { index, type: 'wait', status: 'succeeded', attempts, error: null, result: previous?.result ?? null }));
      } else acting.push({ live, index, action, attempts });
    }
    // The steps that act: their subjects read at once, planned one by one, written kind by kind.
    const subjects = await loadSubjects(tx, acting.map(({ live }) => ({ accountId: live.run.account_id, event: live.env })));
    const planned: { at: (typeof acting)[number]; planned: Planned; actor: StepContext['actor'] }[] = [];
    for (const [i, at] of acting.entries()) {
      const { run, workflow, env } = at.live;
      const actor = { type: 'workflow', id: workflow.id } as const;
      const subject = subjects[i]!;
      const values = namesSomeone([at.action]) ? await placeholderValues(tx, run.account_id, subject) : { accountName: '', ownerName: null };
      try {
        planned.push({ at, actor, planned: await plan(tx, at.action, { accountId: run.account_id, workflowId: workflow.id, runId: run.id, event: env, subject, values, actor, mail: options.mail, now }) });
      } catch (err) {
        if (!(err instanceof Skip)) throw err;
        moved.push(stepDone(progress, at.live, at.index, { index: at.index, type: at.action.type, status: 'skipped', attempts: at.attempts, error: err.message, result: null }));
      }
    }
    const results = await applyAll(tx, planned);
    planned.forEach(({ at }, i) => moved.push(stepDone(progress, at.live, at.index, { index: at.index, type: at.action.type, status: 'succeeded', attempts: at.attempts, error: null, result: results[i] })));
    await recordProgress(tx, progress);
    return moved;
  });
}

/**
 * Before a claim or a step: while requests have kept the instance busy (in flight without a pause for
 * BUSY_MS), the runs wait for a quiet moment, at most YIELD_AT_MOST_MS, and leave the requests the
 * event loop, the pool and the cores (docs/workflows.md#the-job-runner-and-why).
 */
export function stepAside({ yieldTo }: Pick<RunnerOptions, 'yieldTo'>): Promise<void> {
  return yieldTo ? yieldTo.requests.quiet({ busyMs: yieldTo.busyMs ?? BUSY_MS, atMostMs: YIELD_AT_MOST_MS }) : Promise.resolve();
}

/** A step done: the run's progress to record, and whether it goes on (its last step's commit ends it). */
function stepDone(progress: Progress[], live: Live, index: number, step: StepRecord): Moved {
  const steps = upsert(live.run.steps, step);
  const last = index === (live.workflow.actions as Action[]).length - 1;
  progress.push({ run: live.run, status: last ? 'succeeded' : 'running', nextStep: index + 1, steps, resumeAt: null, dueAt: null, finishedAt: last ? new Date(clock.now()) : null });
  return { live, steps, nextStep: index + 1, more: !last };
}

/** The chunk's runs' progress, one UPDATE for all. */
async function recordProgress(tx: Prisma.TransactionClient, progress: Progress[]) {
  if (!progress.length) return;
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  await tx.$executeRaw`
    UPDATE workflow_runs r SET status = t.status, next_step = t.next_step::int, steps = t.steps::jsonb, error = NULL, resume_at = t.resume_at::timestamptz,
           due_at = coalesce(t.due_at::timestamptz, r.due_at), finished_at = t.finished_at::timestamptz
    FROM unnest(${progress.map((p) => p.run.account_id)}::uuid[], ${progress.map((p) => p.run.id)}::uuid[], ${progress.map((p) => p.status)}::text[],
                ${progress.map((p) => String(p.nextStep))}::text[], ${progress.map((p) => JSON.stringify(p.steps))}::text[], ${progress.map((p) => iso(p.resumeAt))}::text[],
                ${progress.map((p) => iso(p.dueAt))}::text[], ${progress.map((p) => iso(p.finishedAt))}::text[])
      AS t (account_id, id, status, next_step, steps, resume_at, due_at, finished_at)
    WHERE r.account_id = t.account_id AND r.id = t.id`;
}

/** A run's step failed (its transaction rolled back): retried after a backoff, or, when permanent or out of attempts, the run fails. */
async function stepFailed(db: PrismaClient, { run, workflow }: Live, err: unknown, options: RunnerOptions): Promise<void> {
  const index = run.next_step;
  const action = (workflow.actions as Action[])[index]!;
  const attempts = (run.steps.find((s) => s.index === index)?.attempts ?? 0) + 1;
  const error = describe(err);
  const steps = upsert(run.steps, { index, type: action.type, status: 'failed', attempts, error, result: null });
  if (err instanceof Permanent || attempts >= STEP_ATTEMPTS) return failRun(db, run, workflow.id, { type: 'workflow', id: workflow.id }, steps, error);
  options.log.warn({ runId: run.id, step: index, attempt: attempts, reason: error }, 'workflow run: a step failed; retrying');
  const retryAt = new Date(clock.now() + retryDelay(attempts, options.retryBaseMs));
  await db.workflowRun.updateMany({
    where: { accountId: run.account_id, id: run.id },
    data: { status: 'running', steps: upsert(run.steps, { ...steps.find((s) => s.index === index)!, status: 'running' }) as Prisma.InputJsonValue, dueAt: retryAt, error },
  });
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
