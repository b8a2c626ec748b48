// REST's words for a list's custom-field conditions (docs/custom-fields.md#filters): `cf.<key>=a,b`
// (any of them), `cf.<key>.gt=` (`.gte`, `.lt`, `.lte`, `.contains`, `.is_set`) and `sort=cf.<key>`,
// reshaped into the list operation's `customFields` and `sortCustomField` variables. Nothing here
// knows a field: the key, the value's type and what it may be compared with are the core's to judge
// (src/graphql/custom-field-filter.ts), and its refusals come back under these names (restCustomFieldName).
import type { OperationDefinitionNode } from 'graphql/index.js';
import { snakeCase } from '../names.js';

/** The prefix of a custom field's query parameters, and of `sort`'s value ordering by one. */
export const CF = 'cf.';
/** The variables filled from `cf.*` and `sort=cf.*` alone: never read from the query string by their own names. */
export const CUSTOM_VARIABLES = ['customFields', 'sortCustomField'] as const;
/** A parameter's suffix -> the condition's operator. */
const OPERATORS: Record<string, string> = { gt: 'gt', gte: 'gte', lt: 'lt', lte: 'lte', contains: 'contains', is_set: 'isSet' };
const UNKNOWN = `Unknown filter: give ${CF}<key>, or ${CF}<key>.${Object.keys(OPERATORS).join(', .')}`;

/** Whether a list's operation takes custom-field conditions (its route then reads `cf.*`). */
export const takesCustomFields = (operation: OperationDefinitionNode) => (operation.variableDefinitions ?? []).some((d) => d.variable.name.value === CUSTOM_VARIABLES[0]);

/**
 * The `customFields` conditions (one per key) and the `sortCustomField` of a query string; `fail`
 * names a parameter that says nothing a condition can (an unknown suffix, two values for one bound).
 */
export function customFieldVariables(params: URLSearchParams, fail: (name: string, message: string) => void): { customFields?: Record<string, unknown>[]; sortCustomField?: string } {
  const conditions = new Map<string, Record<string, unknown>>();
  for (const name of new Set(params.keys())) {
    if (!name.startsWith(CF)) continue;
    const [key, suffix, ...more] = name.slice(CF.length).split('.');
    const operator = suffix === undefined ? 'in' : OPERATORS[suffix];
    if (!key || !operator || more.length) {
      fail(name, UNKNOWN);
      continue;
    }
    const values = params.getAll(name);
    const condition = conditions.get(key) ?? { key };
    conditions.set(key, condition);
    if (operator === 'in') {
      // Comma-separated or repeated: any of them.
      const any = values.flatMap((v) => v.split(',')).filter(Boolean);
      if (any.length) condition.in = any;
      else fail(name, 'Give at least one value');
    } else if (values.length > 1) fail(name, 'Give one value');
    else if (operator !== 'isSet') condition[operator] = values[0];
    else if (values[0] === 'true' || values[0] === 'false') condition.isSet = values[0] === 'true';
    else fail(name, 'Expected true or false');
  }
  const sort = params.get('sort');
  return {
    ...(conditions.size ? { customFields: [...conditions.values()] } : {}),
    ...(sort?.startsWith(CF) ? { sortCustomField: sort.slice(CF.length) } : {}),
  };
}

/**
 * The REST name of a problem the core names on these variables: `customFields.<key>` (and its `eq`
 * and `in`) is `cf.<key>`, `customFields.<key>.isSet` is `cf.<key>.is_set`, `sortCustomField` is
 * `sort`; undefined for any other path.
 */
export function restCustomFieldName(path: string): string | undefined {
  if (path === CUSTOM_VARIABLES[1]) return 'sort';
  const [variable, key, operator, ...more] = path.split('.');
  if (variable !== CUSTOM_VARIABLES[0] || more.length) return undefined;
  if (key === undefined) return 'cf'; // the list as a whole (its length)
  return operator === undefined || operator === 'eq' || operator === 'in' ? `${CF}${key}` : `${CF}${key}.${snakeCase(operator)}`;
}

// ---- the OpenAPI document (src/rest/openapi.ts) ----------------------------------------------------

/** A custom field's key as a query parameter names it (docs/decisions.md §23). */
const KEY = '[a-z][a-z0-9_]{0,49}';

/**
 * The `cf.*` parameters, which OpenAPI cannot list by name (each account names its own fields): one
 * object parameter, exploded as a form, so its properties are the query's names (`cf.tier=gold`),
 * and its names' pattern says which it takes.
 */
export const CUSTOM_FIELD_PARAMETER = {
  name: 'cf',
  in: 'query',
  required: false,
  style: 'form',
  explode: true,
  description:
    "Conditions on the account's own fields (docs/custom-fields.md#filters), all of which hold: `cf.<key>=<value>` (comma-separated: any of them; a MULTI_SELECT field holds the option), " +
    '`cf.<key>.gt`, `.gte`, `.lt`, `.lte` (NUMBER and DATE fields), `cf.<key>.contains` (TEXT, EMAIL, URL and PHONE fields, case-insensitive), `cf.<key>.is_set=true|false`. ' +
    'A key the account has not defined for the object, or has archived, is a 400 `Invalid query` naming `cf.<key>`.',
  schema: {
    type: 'object',
    propertyNames: { pattern: `^cf\\.${KEY}(\\.(${Object.keys(OPERATORS).join('|')}))?$` },
    additionalProperties: { type: 'string' },
  },
} as const;

/** `sort` of a list that orders by a custom field too: its values, or `cf.<key>`. */
export const customSort = <P extends { schema: object; description?: string }>(parameter: P): P => ({
  ...parameter,
  description: `${parameter.description ? `${parameter.description} ` : ''}Or \`cf.<key>\`: a custom field's value, with \`order\`; records without one come last either way, ties by id.`,
  schema: { anyOf: [parameter.schema, { type: 'string', pattern: `^cf\\.${KEY}$` }] },
});
