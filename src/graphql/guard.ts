import type { z } from 'zod';
import type { Role } from '../auth/access.js';
import type { Viewer } from '../auth/viewer.js';
import type { Context } from '../context.js';
import { forbidden, MESSAGES } from '../errors.js';
import type { LimitRule } from '../ratelimit/limiter.js';
import { parseInput } from '../validation.js';

type Guarded<S extends z.ZodType> = { viewer: Viewer; input: z.output<S>; role: Role };

type GuardOptions<S extends z.ZodType> = {
  /** Validates the arguments; its output must name the account. */
  schema: S;
  args: unknown;
  /** Per-user limit, charged before validation; or per account, charged after access. */
  limit?: LimitRule & { per?: 'user' | 'account' };
  /** The least role the caller needs in the account (default: any member). */
  role?: Role;
  forbiddenMessage?: string;
};

/**
 * The order of checks for every account-scoped field (decisions.md §2):
 * 401 token -> 429 limit -> 400 input -> 403 access -> work. A per-account limit (the account
 * export) is charged only after access, so nobody but the owner can use it up.
 */
export async function guard<S extends z.ZodType<{ accountId: string }>>(
  ctx: Context,
  { schema, args, limit, role = 'member', forbiddenMessage = MESSAGES.noAccess }: GuardOptions<S>,
): Promise<Guarded<S>> {
  const viewer = await ctx.viewer();
  if (limit && limit.per !== 'account') await ctx.charge(limit, viewer.id);
  const input = parseInput(schema, args);
  const actual = await ctx.role(input.accountId);
  if (!actual || (role === 'owner' && actual !== 'owner')) throw forbidden(actual ? forbiddenMessage : MESSAGES.noAccess);
  if (limit?.per === 'account') await ctx.charge(limit, input.accountId);
  return { viewer, input, role: actual };
}

/** For a record addressed by id: its account must be one the caller can see, else NOT_FOUND-like 403. */
export async function requireAccountAccess(ctx: Context, accountId: string | null | undefined, role: Role = 'member') {
  const actual = accountId ? await ctx.role(accountId) : null;
  if (!actual || (role === 'owner' && actual !== 'owner')) throw forbidden(actual ? MESSAGES.ownerOnly : MESSAGES.noAccess);
  return actual;
}
