import type { Viewer } from '../auth/viewer.js';
import type { Context } from '../context.js';
import type { FieldLimit, FieldRules } from './field-rules.js';

// Root-field calls already admitted in this operation (by response key; keyed by the operation's
// context, so each operation of a batch is charged on its own): REST admits before it reads
// the body (decisions §2: 429 before 415/413/400); the resolver then does not charge again.
// Each keeps how to take its charge back, should its answer be a replay, and whether the
// account's limit was charged too.
type Admission = { undo: () => Promise<void>; accountCharged: boolean };
const admissions = new WeakMap<Context, Map<string, Admission>>();
const admissionsOf = (ctx: Context) => {
  let done = admissions.get(ctx);
  if (!done) admissions.set(ctx, (done = new Map()));
  return done;
};

/** The bucket a field's limit counts in: its shared name, or the field's own. */
const limitName = (field: string, limit: FieldLimit) => limit.name ?? field;

/**
 * Step 1, admit: the checks before any input is read: 401 for a non-public field, then the per-user
 * or per-IP limit. Once per response key and request, whoever asks first (REST, or the resolver).
 */
export async function admit(ctx: Context, field: string, rules: FieldRules, responseKey = field): Promise<Viewer | null> {
  const viewer = rules.access === 'public' ? null : await ctx.viewer();
  const done = admissionsOf(ctx);
  if (done.has(responseKey)) return viewer;
  const admission: Admission = { undo: async () => {}, accountCharged: false };
  done.set(responseKey, admission);
  const { limit } = rules;
  if (limit && limit.per !== 'account') {
    admission.undo = await ctx.charge({ name: limitName(field, limit), max: limit.max, window: limit.window }, limit.per === 'ip' ? ctx.limitAddress : viewer!.id);
  }
  return viewer;
}

/**
 * Step 4, the account's limit: charged once the caller's access is known, so only those with access
 * spend it; once per response key and request, like admit() (an upload's admitImport and
 * startImport run under one key).
 */
export async function chargeAccount(ctx: Context, field: string, rules: FieldRules, responseKey: string, accountId: string | undefined): Promise<void> {
  if (rules.limit?.per !== 'account' || !firstAccountCharge(ctx, responseKey)) return;
  const { max, window } = rules.limit;
  await ctx.charge({ name: limitName(field, rules.limit), max, window }, accountId!);
}

/** Whether this call has yet to be charged against its account's limit (and from now on, has been). */
function firstAccountCharge(ctx: Context, responseKey: string): boolean {
  const done = admissionsOf(ctx);
  const admission = done.get(responseKey) ?? { undo: async () => {}, accountCharged: false };
  done.set(responseKey, admission);
  if (admission.accountCharged) return false;
  admission.accountCharged = true;
  return true;
}

/** Takes back the call's admission charge: its answer is a replay (once, however many writes the field replays). */
export async function refundAdmission(ctx: Context, responseKey: string): Promise<void> {
  const admission = admissionsOf(ctx).get(responseKey);
  const undo = admission?.undo;
  if (admission) admission.undo = async () => {};
  await undo?.();
}
