import {
  getArgumentValues,
  getNamedType,
  getNullableType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql/index.js';

/** The page size a connection is charged for when it names none (docs/decisions.md §11: `first: 25`). */
export const DEFAULT_PAGE = 25;
const PAGE_ARGS = ['first', 'last', 'pageSize'];

/**
 * A document's cost before it runs (docs/decisions.md §11, docs/graphql.md#cost-and-budget), as
 * GitHub counts it: 1 per object it can return; a field with `first`/`last` (a `*Connection`) or
 * `pageSize` (a §9 page) returns that many of each list in it (`edges`, `nodes`), so nested
 * connections multiply; leaves are free. A plain list (not in a connection or page) returns as many
 * as it can hold, and what is under it multiplies the same way: its own `first` when it takes one
 * (`search`), else the `maxItems` its field declares (listBound). The one number is both held to
 * the ceiling and charged to the budget, root fields with a REST limit of their own included: that
 * limit counts calls, not what a call returns (docs/graphql.md#cost-and-budget). Decided by types and
 * arguments, so connections added anywhere are covered; a plain list added anywhere must say its
 * bound, or the schema does not build (unboundedLists).
 *
 * Written here rather than taken from a library: graphql-armor's cost-limit weighs depth, not the
 * page a field asks for, and @pothos/plugin-complexity needs a multiplier declared on every field.
 */
export function documentCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
): number | null {
  const operation = getOperationAST(document, operationName);
  const root = operation && (operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType());
  if (!operation || !root) return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  let cost = 0;

  const visit = (set: SelectionSetNode, type: GraphQLCompositeType, count: number, page: number | undefined, seen: string[]) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        if (on && isCompositeType(on)) visit(selection.selectionSet, on, count, page, seen);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        const on = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && on && isCompositeType(on) && !seen.includes(fragment.name.value)) {
          visit(fragment.selectionSet, on, count, page, [...seen, fragment.name.value]);
        }
        continue;
      }
      const field = 'getFields' in type ? type.getFields()[selection.name.value] : undefined;
      const named = field && getNamedType(field.type);
      if (!field || !selection.selectionSet || !isCompositeType(named)) continue; // leaves and __typename are free
      const list = isListType(getNullableType(field.type));
      // A list bounded by its own argument (search's `first`) holds that many; its items page nothing.
      const own = list ? pageOf(field, selection, variables) : undefined;
      const objects = count * (!list ? 1 : (own ?? page ?? listBound(field)));
      cost += objects;
      visit(selection.selectionSet, named, objects, own === undefined ? pageOf(field, selection, variables) : undefined, seen);
    }
  };
  visit(operation.selectionSet, root, 1, undefined, []);
  return cost;
}

/**
 * The most items a plain list field can return: the `maxItems` declared with it (its `maxItems`
 * option, kept in the field's extensions by the rules plugin). A list declaring none is charged the
 * default page: only a schema built elsewhere has one (tests), as this app's refuses to build.
 */
export function listBound(field: GraphQLField<unknown, unknown>): number {
  const declared = field.extensions?.maxItems;
  return typeof declared === 'number' ? declared : DEFAULT_PAGE;
}

/**
 * The list fields of objects (`Type.field`) whose size nothing bounds for the cost: not bounded by
 * an argument of their own (`first`/`last`/`pageSize`), not a list of a connection or page (a type
 * every field returning it pages), and declaring no `maxItems`. Lists of scalars and enums are free.
 */
export function unboundedLists(schema: GraphQLSchema): string[] {
  const types = Object.values(schema.getTypeMap()).filter((t) => !t.name.startsWith('__') && (isObjectType(t) || isInterfaceType(t)));
  const fields = types.flatMap((t) => Object.values((t as GraphQLCompositeType & { getFields(): Record<string, GraphQLField<unknown, unknown>> }).getFields()).map((f) => ({ t, f })));
  const paged = (name: string) => {
    const returning = fields.filter(({ f }) => getNamedType(f.type).name === name);
    return returning.length > 0 && returning.every(({ f }) => !isListType(getNullableType(f.type)) && f.args.some((a) => PAGE_ARGS.includes(a.name)));
  };
  return fields
    .filter(({ f }) => isListType(getNullableType(f.type)) && isCompositeType(getNamedType(f.type)))
    .filter(({ t, f }) => !f.args.some((a) => PAGE_ARGS.includes(a.name)) && typeof f.extensions?.maxItems !== 'number' && !paged(t.name))
    .map(({ t, f }) => `${t.name}.${f.name}`);
}

/**
 * What this field's `first`/`last`/`pageSize` asks for (the default page when it names none), or none if
 * it takes none: how many items each list of its object holds (a connection, a page), or, for a list
 * field taking one (`search`), how many it holds itself.
 */
function pageOf(field: GraphQLField<unknown, unknown>, node: Parameters<typeof getArgumentValues>[1], variables: Record<string, unknown>) {
  if (!field.args.some((arg) => PAGE_ARGS.includes(arg.name))) return undefined;
  let args: Record<string, unknown> = {};
  try {
    args = getArgumentValues(field, node, variables);
  } catch {
    // A value that does not coerce: the field refuses it when it runs; charge the default meanwhile.
  }
  const sizes = PAGE_ARGS.map((name) => args[name]).filter((n): n is number => typeof n === 'number');
  return sizes.length > 0 ? Math.max(0, ...sizes) : DEFAULT_PAGE;
}
