// A list's to-one relations read no more than their selected fields need. The Prisma plugin includes a
// relation whole (`include: { contact: true }`): for a page that builds its rows in SQL (list.ts), every
// column of the related row, where REST's deal shows three of the contact's fourteen. The GraphQL
// selection says which fields are asked for; a field made with `t.exposeX('name')` (Pothos marks it
// `extensions.pothosExposedField`) reads the column `name` and nothing else, so when every selected field
// of the relation is one, the relation is included as `{ select }` of those columns. Any other field (a
// resolver reading what it likes, a nested relation) keeps the whole row.
import { getNamedType, isObjectType, Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql/index.js';

/** Columns a related row always carries: the rules read a row's id and account (rules.plugin.ts). */
const ALWAYS = ['id', 'accountId'];

/** The fields selected under these nodes, fragments spread (a superset: type conditions and @skip are not judged). */
function selected(info: GraphQLResolveInfo, nodes: readonly FieldNode[]): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  const seen = new Set<string>();
  const visit = (set: SelectionSetNode | undefined) => {
    for (const s of set?.selections ?? []) {
      if (s.kind === Kind.FIELD) fields.set(s.name.value, [...(fields.get(s.name.value) ?? []), s]);
      else if (s.kind === Kind.INLINE_FRAGMENT) visit(s.selectionSet);
      else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        visit(info.fragments[s.name.value]?.selectionSet);
      }
    }
  };
  for (const node of nodes) visit(node.selectionSet);
  return fields;
}

/** Whether the field resolving now (`info`'s) has `name` selected under it, in any fragment (a superset, as `selected`). */
export const selects = (info: GraphQLResolveInfo, name: string): boolean => selected(info, info.fieldNodes).has(name);

/**
 * The Prisma query of a list's nodes (the field resolving them is `info`'s) with each relation it
 * includes whole narrowed to the columns its selected fields expose, where every one exposes a column.
 */
export function narrowRelations(query: Record<string, unknown>, info: GraphQLResolveInfo): Record<string, unknown> {
  const include = query.include as Record<string, unknown> | undefined;
  const nodeType = getNamedType(info.returnType);
  if (!include || !isObjectType(nodeType)) return query;
  const underNodes = selected(info, info.fieldNodes);
  const narrowed = Object.fromEntries(
    Object.entries(include).map(([name, value]) => {
      const field = nodeType.getFields()[name];
      const target = field && getNamedType(field.type);
      const asked = underNodes.get(name);
      // The field of that name must be the relation itself (the Prisma plugin's relation fields carry pothosPrismaSelect).
      if (value !== true || !asked || !isObjectType(target) || !field?.extensions?.pothosPrismaSelect) return [name, value];
      const columns = new Set(ALWAYS);
      for (const sub of selected(info, asked).keys()) {
        if (sub === '__typename') continue;
        const column = target.getFields()[sub]?.extensions?.pothosExposedField;
        if (typeof column !== 'string') return [name, value];
        columns.add(column);
      }
      return [name, { select: Object.fromEntries([...columns].sort().map((c) => [c, true])) }];
    }),
  );
  return { ...query, include: narrowed };
}
