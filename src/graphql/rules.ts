import type { GraphQLField, GraphQLResolveInfo, GraphQLSchema } from 'graphql/index.js';
import type { Context } from '../context.js';
import { admit, chargeAccount } from './admission.js';
import { authorize } from './access.js';
import type { Checked, FieldRules } from './field-rules.js';
import { judgeInput } from './input-rules.js';
import { writeOf } from './write.js';

// Every schema file takes its rules from here: the declaration (field-rules.ts) beside the checks that enforce it.
export type { FieldLimit, FieldRules } from './field-rules.js';
export { notHonoured } from './field-rules.js';
export { keyLacks, keyRefusal } from './access.js';

const checks = new WeakMap<GraphQLResolveInfo, Checked>();

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

/**
 * Every check a field declares, in the order of docs/decisions.md §2:
 * signed-in fields 401 -> 429 -> 400 -> 403 (-> 429 per account, so only those with access spend it);
 * public fields 429 -> 404 -> 400.
 */
export async function enforce(rules: FieldRules, args: Record<string, unknown>, ctx: Context, info: GraphQLResolveInfo): Promise<Checked> {
  const field = info.fieldName;
  const responseKey = info.path.key as string;
  const viewer = await admit(ctx, field, rules, responseKey);
  const { input, raw, target: found } = await judgeInput(rules, args, ctx);
  const allowed = await authorize({ rules, ctx, info, viewer, input, raw, target: found });
  if ('settled' in allowed) return remember(info, allowed.settled);
  const { role, accountId, target } = allowed;
  await chargeAccount(ctx, field, rules, responseKey, accountId);
  return remember(info, { viewer, input, role, target, write: writeOf({ rules, ctx, info, viewer, input, raw, target, accountId }) });
}

function remember(info: GraphQLResolveInfo, result: Checked): Checked {
  checks.set(info, result);
  return result;
}

/** The line of a write that locks the row its `id` names (an update, a status move, a delete). */
export const ownRow = (input: { id: string }) => `row:${input.id}`;
