// A write answers only what its caller may read (docs/decisions.md §26). An API key that may write
// contacts but not read them learns nothing of a contact through a write's answer that it did not
// know already: the record's id, its status where it has one, `updated_at` (what a sync resumes
// from and If-Match hands back), and the fields the key itself sent. One rule for every mutation:
// the rules plugin applies it to GraphQL's answer (each other field selected is a FORBIDDEN error
// at its path, the write itself stands), and the REST layer asks it which fields its answer keeps.
import { getNamedType, type GraphQLField } from 'graphql/index.js';
import type { Viewer } from '../auth/viewer.js';
import type { ApiScope } from '../scopes.js';
import { keyLacks } from './access.js';
import type { FieldRules } from './field-rules.js';

/** What any writer sees of the record it wrote. */
const ALWAYS = ['id', 'status', 'updatedAt'] as const;

/** What a key may read of a write's answer, and the scope the rest needs. */
export type WriteAnswerLimit = { fields: ReadonlySet<string>; scope: ApiScope };

/**
 * The scope a key needs to read the whole answer of `field`: the read scope of the records a
 * mutation answers with (a type's `keyScope`, docs/decisions.md §15). Undefined where the answer is
 * no record, or one the field's own scope already reads (an import, an export ticket).
 */
export function answerReadScope(field: GraphQLField<unknown, unknown>): ApiScope | undefined {
  const keyScope = (getNamedType(field.type).extensions?.pothosOptions as { keyScope?: unknown } | undefined)?.keyScope;
  if (typeof keyScope !== 'string' || keyScope === 'public') return undefined;
  const own = (field.extensions?.rules as FieldRules | undefined)?.scope;
  return keyScope === own ? undefined : (keyScope as ApiScope);
}

/**
 * The fields a caller sent: those of the `input` argument, and the arguments a field names as
 * written under their own name (`writes`, e.g. setLeadFormActive's `active`). Top-level arguments
 * are not taken by default: refundPayment's `amount` is the refund's, not the payment's.
 */
export function sentFields(rules: FieldRules, args: Record<string, unknown>): ReadonlySet<string> {
  const fields = new Set<string>(ALWAYS);
  const { input } = args;
  if (input && typeof input === 'object' && !Array.isArray(input)) for (const name of Object.keys(input)) fields.add(name);
  for (const name of rules.writes ?? []) if (args[name] !== undefined) fields.add(name);
  return fields;
}

/** What `viewer` may read of the answer of a write of `field` with `args`; null: all of it. */
export function writeAnswerLimit(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>, viewer: Viewer | null): WriteAnswerLimit | null {
  const key = viewer?.apiKey;
  const rules = field.extensions?.rules as FieldRules | undefined;
  const scope = rules && key ? answerReadScope(field) : undefined;
  if (!scope || !keyLacks(scope, key!)) return null;
  return { fields: sentFields(rules!, args), scope };
}
