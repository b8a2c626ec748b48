import type { Context } from '../context.js';
import { badInput, notFound, type ErrorDetails } from '../errors.js';
import { idempotencyKeyProblems } from '../idempotency/idempotency.service.js';
import { isUuid, toDetails } from '../validation.js';
import type { FieldRules } from './field-rules.js';

/** What the rules parse: the `input` argument (`from: 'input'`) or all the arguments. */
const parsedOf = (rules: FieldRules, args: Record<string, unknown>): unknown => (rules.from === 'input' ? args.input : args);

/** The record's own fields in what the rules parse: the input itself, or the `input` argument beside others. */
function recordOf(rules: FieldRules, parsed: unknown): Record<string, unknown> {
  const record = rules.from === 'input' ? parsed : (parsed as { input?: unknown } | null)?.input;
  return record && typeof record === 'object' && !Array.isArray(record) ? (record as Record<string, unknown>) : {};
}

/**
 * The form's problems keyed as the input names its fields, whichever way it is passed: an `input`
 * argument beside others (update*(id:, input:)) reports `title`, as create*(input:) does.
 */
function formProblems(rules: FieldRules, parsed: unknown): { data: unknown } | { details: ErrorDetails } {
  if (!rules.input) return { data: parsed };
  const result = rules.input.safeParse(parsed);
  if (result.success) return { data: result.data };
  const details = Object.create(null) as ErrorDetails;
  for (const [key, messages] of Object.entries(toDetails(result.error))) details[key.replace(/^input\./, '')] = messages;
  return { details };
}

/**
 * The problems the request shows by itself, with no look-up: the form's; a malformed
 * Idempotency-Key header's, for a field that honours one (judged as a payload field,
 * `idempotency_key`); and a public field's checks against its target, once found.
 */
function ownProblems(rules: FieldRules, parsed: unknown, ctx: Context, target: unknown): { data: unknown; details: ErrorDetails } {
  const form = formProblems(rules, parsed);
  const details = 'details' in form ? form.details : (Object.create(null) as ErrorDetails);
  const more = [rules.idempotent ? idempotencyKeyProblems(ctx.request.headers) : {}, rules.targetChecks && target ? rules.targetChecks(parsed, target) : {}];
  for (const problems of more) for (const [key, messages] of Object.entries(problems)) details[key] ??= messages;
  return { data: 'data' in form ? form.data : undefined, details };
}

/**
 * Every problem of the field's arguments (empty when they pass), without writing anything: the
 * request's own (ownProblems), and for a caller who may reach the account, the failing links of
 * the fields whose form passed. Both transports answer with it: /graphql when any of the request's
 * own checks fails, REST also when its own type check refused some arguments, so either names
 * every failing field in one answer. `target`: a public field's, when already found (else looked up).
 */
export async function inputProblems(rules: FieldRules, args: Record<string, unknown>, ctx: Context, target?: unknown): Promise<ErrorDetails> {
  const parsed = parsedOf(rules, args);
  const found = target ?? (rules.access === 'public' && rules.target && rules.targetChecks ? await rules.target(args, ctx) : null);
  const { details } = ownProblems(rules, parsed, ctx, found);
  if (!rules.linked) return details;
  const reached = await reachableAccount(rules, parsed, details, ctx);
  if (!reached) return details;
  const record = recordOf(rules, parsed);
  const passed = Object.fromEntries(Object.entries(record).filter(([key]) => !details[key]));
  for (const [key, messages] of Object.entries(await rules.linked(passed, ctx.db, reached.accountId, ctx, reached.target))) details[key] ??= messages;
  return details;
}

/**
 * The account a (possibly refused) input addresses, if the caller may reach it; null otherwise, so
 * an outsider learns nothing of other accounts' ids (docs/decisions.md §2: 400 before 403). Read
 * from what passed: the target its `id` names, or the input's `accountId`.
 */
async function reachableAccount(rules: FieldRules, parsed: unknown, details: ErrorDetails, ctx: Context): Promise<{ accountId: string; target: { id?: string; accountId: string } | null } | null> {
  if (rules.access !== 'member' && rules.access !== 'owner') return null;
  let accountId: unknown;
  let target: { id?: string; accountId: string } | null = null;
  if (rules.target) accountId = details.id ? null : (target = await rules.target(parsed, ctx))?.accountId;
  else accountId = details.accountId ? null : recordOf(rules, parsed).accountId;
  if (typeof accountId !== 'string' || !isUuid(accountId)) return null;
  const role = await ctx.role(accountId);
  return role && (rules.access === 'member' || role === 'owner') ? { accountId, target } : null;
}

/**
 * Step 2, input: a public field's target first (404 `missing`), then every problem of the arguments
 * in one 400; what passes is the parsed input (`raw`: what the rules parsed it from).
 */
export async function judgeInput(rules: FieldRules, args: Record<string, unknown>, ctx: Context): Promise<{ input: unknown; raw: unknown; target: { accountId: string } | null }> {
  let target: { accountId: string } | null = null;
  if (rules.access === 'public' && rules.target) {
    target = await rules.target(args, ctx);
    if (!target) throw notFound(rules.missing ?? 'Not found');
  }
  const raw = parsedOf(rules, args);
  const own = ownProblems(rules, raw, ctx, target);
  if (Object.keys(own.details).length > 0) throw badInput(await inputProblems(rules, args, ctx, target));
  return { input: own.data, raw, target };
}
