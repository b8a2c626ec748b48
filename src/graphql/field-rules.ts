import type { z } from 'zod';
import type { Role } from '../auth/access.js';
import type { Viewer } from '../auth/viewer.js';
import type { Context } from '../context.js';
import type { ErrorDetails } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { ApiScope } from '../scopes.js';

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
  /**
   * Arguments besides `input` that the write stores under their own name in the record it answers
   * (setLeadFormActive's `active`): a key without the record's read scope still reads them back
   * (src/graphql/write-answer.ts, docs/decisions.md §26).
   */
  writes?: readonly string[];
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
  write: Write;
};

/** How a checked field runs its write (src/graphql/write.ts). */
export type Write = <T>(work: (db: Prisma.TransactionClient) => Promise<T>, claim?: { accountId?: string; scope?: string; request?: unknown; oneStatement?: boolean }) => Promise<T>;
