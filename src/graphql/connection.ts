// Cursor connections (docs/decisions.md §11; docs/connections.md) for every collection,
// root (Account.contacts) or nested (Contact.deals), through this one helper.
//
// Why not @pothos/plugin-relay's prismaConnection / relatedConnection: their cursors carry only the
// row's id and page with Prisma's `cursor` option (a sub-select of the cursor's row), so a deleted
// cursor row ends the paging, and a cursor from another ordering or filter is silently accepted.
// §11 wants keyset cursors that survive inserts and deletes and refuse a foreign ordering or filter,
// so a cursor here carries the ordering value and the id, plus a fingerprint of ordering and filter
// (keyset.ts; REST's cursor pages use the same).
//
// No N+1: every parent in a page asking for the same connection (same arguments) is answered by one
// statement, totals included (list.ts).
import { z } from 'zod';
import type { Context } from '../context.js';
import { badInput } from '../errors.js';
import { parseInput } from '../validation.js';
import { builder } from './builder.js';
import { asArgs, type Collection } from './collection.js';
import { customList } from './custom-field-filter.js';
import type { Direction } from './keyset.js';
import { cursorOf, planOf, sliceOf, type Parent, type Plan } from './list.js';

export const OrderDirection = builder.enumType('OrderDirection', { values: ['ASC', 'DESC'] as const });

/**
 * `<Name>OrderField` and `<Name>Order { field direction }` for a collection's orderings; `custom`: a
 * collection ordered by the account's own fields too, whose order takes `customField` instead of
 * `field` (exactly one of the two, docs/decisions.md §23).
 */
export function orderInputOf(name: string, fields: readonly string[], { custom = false } = {}) {
  const field = builder.enumType(`${name}OrderField`, { values: fields });
  return builder.inputType(`${name}Order`, {
    fields: (t) => ({
      field: t.field({ type: field, required: !custom, ...(custom ? { description: 'Not with `customField`' } : {}) }),
      ...(custom
        ? { customField: t.string({ description: "A custom field's key, instead of `field`: rows without a value last in either direction, ties by id (docs/custom-fields.md#filters)" }) }
        : {}),
      direction: t.field({ type: OrderDirection, required: true }),
    }),
  });
}

export const PageInfo = builder
  .objectRef<{ hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null }>('PageInfo')
  .implement({
    fields: (t) => ({
      hasNextPage: t.exposeBoolean('hasNextPage'),
      hasPreviousPage: t.exposeBoolean('hasPreviousPage', {
        description: 'Paging forward from a cursor: true (records may precede it). Paging backward: whether more precede this page.',
      }),
      startCursor: t.exposeString('startCursor', { nullable: true }),
      endCursor: t.exposeString('endCursor', { nullable: true }),
    }),
  });

const MAX_PAGE = 100;
const DEFAULT_PAGE = 25;
const count = z.number().int('Must be an integer').min(1, `Must be from 1 to ${MAX_PAGE}`).max(MAX_PAGE, `Must be from 1 to ${MAX_PAGE}`).nullish();
const cursorText = z.string().max(1000, 'Not a cursor of this list').nullish();
const pagingArgs = z
  .object({ first: count, last: count, after: cursorText, before: cursorText })
  .refine((a) => a.first == null || a.last == null, { message: 'Give first or last, not both', path: ['last'] });

type Source = { plan: Plan; parent: Parent };

type FieldArgs = z.input<typeof pagingArgs> & { filter?: unknown; orderBy?: { field?: string | null; customField?: string | null; direction: Direction } | null };

/**
 * A collection's `<Name>Connection { edges nodes pageInfo totalCount }` and `<Name>Edge`, and a
 * field factory for every parent that lists it (`by`: the column pointing at the parent; null when
 * the parent is the account itself).
 */
export function defineCollection<Node extends { id: string }, Filter>(spec: Collection<Node, Filter>, nodeRef: any) {
  const Edge = builder.objectRef<{ cursor: string; node: Node }>(`${spec.name}Edge`).implement({
    keyScope: { of: nodeRef },
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.field({ type: nodeRef, resolve: (edge) => edge.node as never }),
    }),
  });
  const rows = (source: Source, ctx: Context) => sliceOf(ctx, source.plan, source.parent, { nodes: {} });
  const Connection = builder.objectRef<Source>(`${spec.name}Connection`).implement({
    keyScope: { of: nodeRef },
    fields: (t) => ({
      edges: t.field({
        type: [Edge],
        resolve: async (source, _args, ctx) => (await rows(source, ctx)).rows.map((r) => ({ cursor: cursorOf(source.plan, r), node: r.node as Node })),
      }),
      nodes: t.field({ type: [nodeRef], resolve: async (source, _args, ctx) => (await rows(source, ctx)).rows.map((r) => r.node) as never }),
      pageInfo: t.field({
        type: PageInfo,
        resolve: async ({ plan, parent }, _args, ctx) => {
          const slice = await sliceOf(ctx, plan, parent, { rows: true });
          const [first, last] = [slice.rows[0], slice.rows.at(-1)];
          return {
            hasNextPage: plan.backward ? plan.before !== null : slice.more,
            hasPreviousPage: plan.backward ? slice.more : plan.after !== null,
            startCursor: first ? cursorOf(plan, first) : null,
            endCursor: last ? cursorOf(plan, last) : null,
          };
        },
      }),
      totalCount: t.int({
        description: 'Every record of the filter (all pages), exact',
        resolve: async (source, _args, ctx) => (await sliceOf(ctx, source.plan, source.parent, { total: true })).total,
      }),
    }),
  });

  /**
   * The connection field's options for `t.field` on a parent object type: the account (`by` null) or a
   * row of it that the collection's column `by` points at.
   */
  return function connection(by: string | null, description?: string, options: { pageArgs?: boolean } = {}) {
    // `pageArgs`: the filter's page arguments (Filters.page) as arguments of the field itself too (Account.trash's `types`).
    const page = options.pageArgs ? spec.filter?.page : undefined;
    return (t: any) =>
      t.field({
        type: Connection,
        description,
        args: {
          first: t.arg.int(),
          after: t.arg.string(),
          last: t.arg.int(),
          before: t.arg.string(),
          ...(spec.filter ? { filter: t.arg({ type: spec.filter.input }) } : {}),
          ...(spec.orderInput ? { orderBy: t.arg({ type: spec.orderInput }) } : {}),
          ...page?.args(asArgs(t)),
        },
        resolve: async (row: { id: string; accountId?: string }, args: FieldArgs, ctx: Context): Promise<Source> => {
          const parent = { accountId: by === null ? row.id : row.accountId!, id: row.id };
          const paging = parseInput(pagingArgs, { first: args.first, last: args.last, after: args.after, before: args.before });
          const given = spec.filter && args.filter != null ? (parseInput(spec.filter.schema, args.filter) as Filter) : null;
          const fromPage = page ? Object.fromEntries(Object.entries(page.filter(parseInput(z.object(page.shape), args))).filter(([, v]) => v != null)) : {};
          const asked = Object.keys(fromPage).length ? ({ ...given, ...fromPage } as Filter) : given;
          const filter = (spec.narrow ? await spec.narrow(asked, ctx, parent.accountId) : asked) as object | null;
          const { orderBy } = args;
          if (orderBy && (orderBy.field == null) === (orderBy.customField == null)) throw badInput({ orderBy: ['Give field or customField, exactly one'] });
          const asOrdered = orderBy?.field != null ? { field: orderBy.field, direction: orderBy.direction } : (spec.defaultOrder ?? { field: 'CREATED_AT', direction: 'DESC' as const });
          if (!spec.orders[asOrdered.field]) throw badInput({ 'orderBy.field': ['Not an ordering of this connection'] });
          const customOrder = orderBy?.customField != null ? { key: orderBy.customField, direction: orderBy.direction, arg: 'orderBy.customField' } : null;
          const { filter: judged, order, column } = await customList(spec, filter, asOrdered, customOrder, ctx.db, parent.accountId);
          const size = paging.first ?? paging.last ?? DEFAULT_PAGE;
          const plan = planOf(spec, by, parent, { filter: judged, order, column, size, backward: paging.last != null, after: ['after', paging.after], before: ['before', paging.before], cursorKey: ctx.cursorKey });
          return { plan, parent };
        },
      });
  };
}
