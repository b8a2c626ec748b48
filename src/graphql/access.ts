import type { GraphQLResolveInfo } from 'graphql/index.js';
import type { Role } from '../auth/access.js';
import type { Viewer } from '../auth/viewer.js';
import type { Context } from '../context.js';
import { forbidden, lacksScope, MESSAGES, notFound } from '../errors.js';
import type { ApiScope } from '../scopes.js';
import type { Checked, FieldRules } from './field-rules.js';
import { answersWithoutSelection, noWrite, replayOfRemoved } from './write.js';

/** Who asks, and what the input step let through. */
export type Asking = { rules: FieldRules; ctx: Context; info: GraphQLResolveInfo; viewer: Viewer | null; input: unknown; raw: unknown; target: { accountId: string } | null };

/** Who may go on: the caller's role in the account the call addresses, and its target. */
export type Allowed = { role: Role | null; accountId: string | undefined; target: { accountId: string } | null };

/**
 * Step 3, access (403 after the 400): a key's scopes, then for a `member` or `owner` field the
 * caller's role in the account the input or its target names. Settled early: a retry of a write that
 * removed its target answers as the first time; a hidden target of a by-id read answers null.
 */
export async function authorize({ rules, ctx, info, viewer, input, raw, target: found }: Asking): Promise<Allowed | { settled: Checked }> {
  if (viewer?.apiKey) requireKeyScope(rules.scope ?? false, viewer);
  if (viewer?.apiKey && rules.inputScope) requireKeyScope(rules.inputScope.of(input), viewer);
  if (rules.access !== 'member' && rules.access !== 'owner') return { role: null, accountId: undefined, target: found };
  const target = rules.target ? await rules.target(input, ctx) : found;
  if (rules.target && !target && rules.idempotent) {
    const replay = await replayOfRemoved(ctx, info, viewer, raw);
    if (replay) return { settled: { viewer, input, role: null, target: null, write: replay } };
  }
  const accountId = rules.target ? target?.accountId : (input as { accountId?: string }).accountId;
  const role = accountId ? await ctx.role(accountId) : null;
  if (!role && rules.target && rules.hidden === 'null') {
    answersWithoutSelection(info);
    return { settled: { viewer, input, role, target: null, write: noWrite } };
  }
  if (!role) throw rules.target && rules.hidden === 'not-found' ? notFound(MESSAGES.notFound) : forbidden(MESSAGES.noAccess);
  if (rules.access === 'owner' && role !== 'owner' && !viewer?.apiKey) throw forbidden(rules.forbidden ?? MESSAGES.ownerOnly);
  return { role, accountId, target };
}

/** A key needs `scope` (false: no key may): 403 naming it. A field without a scope is refused to keys. */
export function requireKeyScope(scope: ApiScope | false, viewer: Viewer): void {
  if (keyLacks(scope, viewer.apiKey!)) throw keyRefusal(scope);
}

export const keyLacks = (scope: ApiScope | false, key: { scopes: ReadonlySet<ApiScope> }) => scope === false || !key.scopes.has(scope);

/** The 403 of a key without `scope`: naming it, or saying no key may. */
export const keyRefusal = (scope: ApiScope | false) => (scope ? lacksScope(scope) : forbidden(MESSAGES.notForKeys));
