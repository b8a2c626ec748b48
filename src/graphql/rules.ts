import type { GraphQLField, GraphQLResolveInfo, GraphQLSchema } from 'graphql/index.js';
import type { z } from 'zod';
import type { Role } from '../auth/access.js';
import type { Viewer } from '../auth/viewer.js';
import type { Context } from '../context.js';
import { badInput, forbidden, lacksScope, MESSAGES, notFound, type ErrorDetails } from '../errors.js';
import type { ApiScope } from '../scopes.js';
import type { Prisma } from '../generated/prisma/client.js';
import { WRITE_TRANSACTION } from '../db/client.js';
import { idempotencyKeyProblems, once, readIdempotencyKey, storedAnswer } from '../idempotency/idempotency.service.js';
import { markReplayed } from './replayed.plugin.js';
import { isUuid, toDetails } from '../validation.js';

/**
 * The rules of a root field, declared once with the field (`rules: {...}` beside `type` and
 * `resolve`; docs/fields.md). The resolver wrapper (rules.plugin.ts) enforces them in the order of
 * docs/decisions.md §2, the REST layer charges the same limit before it reads a body, and the
 * OpenAPI document describes the same limit, input, access and idempotency.
 */
export type FieldRules = {
  /**
   * Who may call it: anyone (`public`, limited per client IP), any signed-in user (`user`), or a
   * `member` / `owner` of the account the input names (`accountId`) or the `target` belongs to.
   */
  access: 'public' | 'user' | 'member' | 'owner';
  /**
   * The scope an API key needs to call it (docs/decisions.md §15); a field without one is refused
   * to keys (managing members, webhooks and keys needs a person). For a key, the scope also
   * stands in for `owner` (EXPORTS allows the account export).
   */
  scope?: ApiScope;
  /**
   * A scope a key needs beside `scope`, chosen by the parsed input (an import writes its object's
   * records: CONTACTS_WRITE or DEALS_WRITE); `may` lists every one it can name, for the reference.
   */
  inputScope?: { of: (input: any) => ApiScope; may: ApiScope[] };
  /** Parses the arguments (`from: 'args'`, the default) or the `input` argument; 400 with details. */
  input?: z.ZodType;
  from?: 'args' | 'input';
  /**
   * The record the field addresses. Public fields look it up from the raw arguments before the
   * input is judged (404 `missing`); others after, and answer the account's 403 when it is unknown.
   */
  target?: (args: any, ctx: Context) => Promise<{ accountId: string } | null>;
  /** The 404 message of a public field's missing target. */
  missing?: string;
  /**
   * What a target that is unknown or not the caller's answers, the same either way (docs/decisions.md
   * §9 amended): NOT_FOUND (a by-id mutation) or `null` (a by-id read: the checks pass with no
   * target and the resolver answers null). Every field with a target says which.
   */
  hidden?: 'not-found' | 'null';
  /** The rate limit; `per` says what it counts: the caller, the client address, or the account. */
  limit?: FieldLimit;
  /** Honours an `Idempotency-Key` header: the field's writes go through `checked(info).write`. */
  idempotent?: true;
  /**
   * Why a mutation cannot honour `Idempotency-Key` (every mutation says one or the other). The
   * plugin appends it to the field's description, which the OpenAPI document repeats on its route.
   * A key sent to it changes nothing.
   */
  notIdempotent?: string;
  /**
   * The one database lock that concurrent calls of the field's write can wait on (a record's row, an
   * e-mail's advisory lock, an account's next invoice number), as a key; null: none this time. Writes
   * of one key wait in line in the instance before their transaction, holding no pooled connection
   * (src/db/queue-by-key.ts, docs/faults.md#under-overload). `ownRow` for a write of the row `id` names.
   */
  line?: (input: any, target: any) => string | null;
  /** The 403 message for a member calling an owner-only field. */
  forbidden?: string;
  /** Moves a record along a §8 state machine: a refused move is INVALID_TRANSITION (REST: 409 naming `status`). */
  machine?: true;
  /** The shape of the input for the REST reference, when the field validates it itself (form values). */
  documents?: z.ZodType;
  /**
   * A public field's checks of its arguments against its `target` (a form's values against the
   * form's own fields), problems by field, none when they pass: judged with the input, after the
   * target's 404, so one 400 names them beside every other failing field. The service runs them
   * again with its write.
   */
  targetChecks?: (args: any, target: any) => ErrorDetails;
  /**
   * The record input's checks beyond its form, against the account's own rows (a linked contact or
   * stage must be the account's) or the world (a webhook URL must resolve to an address webhooks may
   * reach), problems by field. The service runs them again with its write; when the
   * input's form fails, a caller who may reach the account hears them in the same 400, so one
   * answer names every failing field (docs/decisions.md §4). `target`: the record an update
   * addresses, when the field has one (a draft invoice's new lines are judged in its currency).
   */
  linked?: (fields: Record<string, unknown>, db: Prisma.TransactionClient, accountId: string, ctx: Context, target: { id?: string; accountId: string } | null) => Promise<ErrorDetails>;
};

/** The sentence a field's description ends with when it cannot honour Idempotency-Key. */
export const notHonoured = (rules: FieldRules) => rules.notIdempotent && `Idempotency-Key: not honoured: ${rules.notIdempotent}.`;

/** `name`: a bucket several fields share (else each field counts on its own). */
export type FieldLimit = { max: number; window: `${number}${'s' | 'm' | 'h'}`; per: 'user' | 'ip' | 'account'; name?: string };

/** What the checks established, for the resolver: who, the parsed input, their role, the target. */
export type Checked<Input = unknown, Target = unknown> = {
  viewer: Viewer | null;
  input: Input;
  role: Role | null;
  target: Target;
  /**
   * Runs the field's write in one transaction: once per Idempotency-Key when the field is
   * idempotent (the transaction also stores the answer, which is what a retry gets back).
   * `scope` narrows who may reuse a key (e.g. one form's submissions); `request` stands in for the
   * arguments as what a retry must repeat (an upload: its settings and file, not its own copy's id).
   */
  write<T>(work: (db: Prisma.TransactionClient) => Promise<T>, claim?: { accountId?: string; scope?: string; request?: unknown; oneStatement?: boolean }): Promise<T>;
};

const checks = new WeakMap<GraphQLResolveInfo, Checked>();

/**
 * Fields that answered without reading Prisma's selection, by design: the record is unknown or
 * hidden (null: nothing to read), the write was one statement (its row comes back from that
 * statement), or a retry got the key's stored answer. Their selected relations are loaded by the
 * Prisma plugin's fallback, so its unused-query warning (builder.ts) says nothing worth fixing there.
 */
const withoutSelection = new WeakSet<GraphQLResolveInfo>();
export const answeredWithoutSelection = (info: GraphQLResolveInfo) => withoutSelection.has(info);

/** The checks' outcome for the field being resolved (`info` is the resolver's 4th argument). */
export function checked<Input = unknown, Target = unknown>(info: GraphQLResolveInfo): Checked<Input, Target> {
  const found = checks.get(info);
  if (!found) throw new Error(`${info.parentType.name}.${info.fieldName} declares no rules`);
  return found as Checked<Input, Target>;
}

/** The rules declared on a root field of the built schema (src/graphql/rules.plugin.ts puts them there). */
export function rulesOf(field: GraphQLField<unknown, unknown> | undefined): FieldRules | undefined {
  return field?.extensions?.rules as FieldRules | undefined;
}

export function rootRules(schema: GraphQLSchema, kind: 'query' | 'mutation', name: string): FieldRules | undefined {
  const root = kind === 'query' ? schema.getQueryType() : schema.getMutationType();
  return rulesOf(root?.getFields()[name]);
}

const limitName = (field: string, limit: FieldLimit) => limit.name ?? field;

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

/** An answer stored for the Idempotency-Key, given again: said so, and its call not charged again (docs/rest.md#idempotency). */
async function replayed(ctx: Context, responseKey: string): Promise<void> {
  markReplayed(ctx, responseKey);
  const admission = admissionsOf(ctx).get(responseKey);
  const undo = admission?.undo;
  if (admission) admission.undo = async () => {}; // taken back once, however many writes the field replays
  await undo?.();
}

/**
 * The checks before any input is read: 401 for a non-public field, then the per-user or per-IP
 * limit. Once per response key and request, whoever asks first (REST, or the resolver).
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

/** Whether this call has yet to be charged against its account's limit (and from now on, has been). */
function firstAccountCharge(ctx: Context, responseKey: string): boolean {
  const done = admissionsOf(ctx);
  const admission = done.get(responseKey) ?? { undo: async () => {}, accountCharged: false };
  done.set(responseKey, admission);
  if (admission.accountCharged) return false;
  admission.accountCharged = true;
  return true;
}

/**
 * Every check a field declares, in the order of docs/decisions.md §2:
 * signed-in fields 401 -> 429 -> 400 -> 403 (-> 429 per account, so only those with access spend it);
 * public fields 429 -> 404 -> 400.
 */
export async function enforce(rules: FieldRules, args: Record<string, unknown>, ctx: Context, info: GraphQLResolveInfo): Promise<Checked> {
  const field = info.fieldName;
  const viewer = await admit(ctx, field, rules, info.path.key as string);
  let target: { accountId: string } | null = null;
  if (rules.access === 'public' && rules.target) {
    target = await rules.target(args, ctx);
    if (!target) throw notFound(rules.missing ?? 'Not found');
  }
  const raw = parsedOf(rules, args);
  const own = ownProblems(rules, raw, ctx, target);
  if (Object.keys(own.details).length > 0) throw badInput(await inputProblems(rules, args, ctx, target));
  const input = own.data;

  if (viewer?.apiKey) requireScope(rules, viewer);
  if (viewer?.apiKey && rules.inputScope) requireKeyScope(rules.inputScope.of(own.data), viewer);
  let role: Role | null = null;
  let accountId: string | undefined;
  if (rules.access === 'member' || rules.access === 'owner') {
    if (rules.target) target = await rules.target(input, ctx);
    if (rules.target && !target && rules.idempotent) {
      // A retry of a write whose record it removed (a delete): the first answer, as the key promises.
      const replay = await replayOf(field, raw, viewer, ctx);
      if (replay) {
        const answer = async () => {
          withoutSelection.add(info);
          await replayed(ctx, info.path.key as string);
          return replay.answer as never;
        };
        return remember(info, { viewer, input, role: null, target: null, write: answer });
      }
    }
    accountId = rules.target ? target?.accountId : (input as { accountId?: string }).accountId;
    role = accountId ? await ctx.role(accountId) : null;
    if (!role && rules.target && rules.hidden === 'null') {
      withoutSelection.add(info);
      return remember(info, { viewer, input, role, target: null, write: noWrite });
    }
    if (!role) throw rules.target && rules.hidden === 'not-found' ? notFound(MESSAGES.notFound) : forbidden(MESSAGES.noAccess);
    if (rules.access === 'owner' && role !== 'owner' && !viewer?.apiKey) throw forbidden(rules.forbidden ?? MESSAGES.ownerOnly);
  }
  // Once per response key and request, like admit(): an upload's admitImport and startImport run under one key.
  if (rules.limit?.per === 'account' && firstAccountCharge(ctx, info.path.key as string)) {
    const { max, window } = rules.limit;
    await ctx.charge({ name: limitName(field, rules.limit), max, window }, accountId!);
  }

  const transaction: Checked['write'] = async (work, claim = {}) => {
    const key = rules.idempotent ? readIdempotencyKey(ctx.request.headers) : null;
    if (claim.oneStatement) withoutSelection.add(info);
    // One transaction either way: the answer is what the write's own statements returned.
    // A write that is one statement is atomic by itself: BEGIN and COMMIT would be two more round trips.
    if (key === null && claim.oneStatement) return work(ctx.db as unknown as Prisma.TransactionClient);
    if (key === null) return ctx.db.$transaction(work, WRITE_TRANSACTION);
    const who = whoOf(viewer, ctx);
    const owner = claim.accountId ?? accountId ?? target?.accountId;
    if (!owner) throw new Error(`${field}: an idempotent write needs the account it writes to`);
    let wrote = false;
    const answer = await once(ctx.db, { operation: field, accountId: owner, scope: claim.scope ? `${who}:${claim.scope}` : who, key, request: claim.request ?? raw }, (tx) => {
      wrote = true;
      return work(tx);
    });
    if (!wrote) {
      withoutSelection.add(info);
      await replayed(ctx, info.path.key as string);
    }
    return answer;
  };
  const write: Checked['write'] = (work, claim) => ctx.queue.run(rules.line?.(input, target) ?? null, () => transaction(work, claim));
  return remember(info, { viewer, input, role, target, write });
}

/** Who may reuse an Idempotency-Key: the user, the API key, or a visitor's address. */
const whoOf = (viewer: Viewer | null, ctx: Context) => (viewer ? `${viewer.apiKey ? 'key' : 'user'}:${viewer.id}` : `ip:${ctx.clientIp}`);

/** The stored answer of this caller's earlier call with the request's Idempotency-Key and this input, if any. */
async function replayOf(field: string, request: unknown, viewer: Viewer | null, ctx: Context) {
  const key = readIdempotencyKey(ctx.request.headers);
  return key === null ? null : storedAnswer(ctx.db, { operation: field, scope: whoOf(viewer, ctx), key, request });
}

/** A key calls only fields that declare a scope it holds: 403 naming the scope (a 403, so after the 400). */
function requireScope(rules: FieldRules, viewer: Viewer): void {
  requireKeyScope(rules.scope ?? false, viewer);
}

/** A key needs `scope` (false: no key may): 403 naming it. */
export function requireKeyScope(scope: ApiScope | false, viewer: Viewer): void {
  if (keyLacks(scope, viewer.apiKey!)) throw keyRefusal(scope);
}

export const keyLacks = (scope: ApiScope | false, key: { scopes: ReadonlySet<ApiScope> }) => scope === false || !key.scopes.has(scope);

/** The 403 of a key without `scope`: naming it, or saying no key may. */
export const keyRefusal = (scope: ApiScope | false) => (scope ? lacksScope(scope) : forbidden(MESSAGES.notForKeys));

function remember(info: GraphQLResolveInfo, result: Checked): Checked {
  checks.set(info, result);
  return result;
}

/** The line of a write that locks the row its `id` names (an update, a status move, a delete). */
export const ownRow = (input: { id: string }) => `row:${input.id}`;

const noWrite: Checked['write'] = () => {
  throw new Error('a field whose target is hidden writes nothing');
};
