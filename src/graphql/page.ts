// Pages (`<Model>Page { nodes total page pageSize nextCursor }`, REST's lists) of a collection
// (collection.ts): the account's own list (list.ts), numbered (OFFSET) or after a cursor (keyset.ts,
// docs/decisions.md §18), in any of its orders.
import { Kind, type GraphQLResolveInfo } from 'graphql/index.js';
import { z } from 'zod';
import { badInput } from '../errors.js';
import { listArgs, uuid } from '../validation.js';
import type { Context } from '../context.js';
import { builder } from './builder.js';
import { asArgs, type Collection, type Filters } from './collection.js';
import { customList } from './custom-field-filter.js';
import type { Order } from './keyset.js';
import { cursorOf, planOf, sliceOf, type Parent, type Plan, type Want } from './list.js';
import { OrderDirection } from './connection.js';
import { checked, type FieldRules } from './rules.js';
import { LIST_READS } from './limits.js';
import { narrowRelations } from './selection.js';

/** Lists are newest first, stable across pages (docs/decisions.md §3). */
export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

/** What REST's `sort` may name (docs/decisions.md §18); each is an order of every dated collection. */
export const ListSort = builder.enumType('ListSort', { values: ['CREATED_AT', 'UPDATED_AT'] as const });

/** A custom field's key (docs/decisions.md §23: at most 50 characters); whether the account has it is judged with its definitions (customList). */
const SORT_CUSTOM_FIELD = z.string().max(50, 'Unknown field').nullish();

/** A page: the account's list, and its number (null when read after a cursor). */
type PageSource = { plan: Plan; parent: Parent; page: number | null };

/**
 * `<Model>Page { nodes total page pageSize nextCursor }`. `nodes` is a Prisma field so the plugin
 * hands over the selected relations; `total` counts the same filter; one statement answers all.
 */
function definePage(collection: Collection & { model: string }, nodeRef: any, follow: boolean) {
  const slice = (source: PageSource, ctx: Context, want: Want) => sliceOf(ctx, source.plan, source.parent, want);
  return builder.objectRef<PageSource>(`${collection.model}Page`).implement({
    keyScope: { of: nodeRef ?? collection.model },
    fields: (t) => ({
      // A type that is not a Prisma object (events) reads its rows through the collection's `rows`.
      nodes: nodeRef
        ? t.field({ type: [nodeRef], resolve: async (source, _args, ctx) => (await slice(source, ctx, { nodes: {} })).rows.map((r) => r.node) as never })
        : t.prismaField({
            type: [collection.model as 'Contact'],
            resolve: async (query, source, _args, ctx, info) => (await slice(source, ctx, { nodes: narrowRelations(query, info) })).rows.map((r) => r.node) as never,
          }),
      total: t.int({ resolve: async (source, _args, ctx) => (await slice(source, ctx, { total: true })).total }),
      // §9 fixes `page: Int!`; a page read by cursor is the first one from there (REST leaves it out).
      page: t.int({ description: 'The page number; 1 on a page read by cursor (counted from the cursor)', resolve: (source) => source.page ?? 1 }),
      pageSize: t.int({ resolve: (source) => source.plan.size }),
      nextCursor: t.string({
        nullable: true,
        description: follow
          ? 'Pass as `cursor` for the rows after this page; the last page gives one too, to poll from (null only when there is no row yet)'
          : 'Pass as `cursor` for the rows after this page (same sort, order and filter); null on the last page',
        resolve: async (source, _args, ctx) => {
          const { plan } = source;
          const { rows, more } = await slice(source, ctx, { rows: true });
          const last = rows.at(-1) ?? (plan.after && { k: plan.after.value, id: plan.after.id, node: {} });
          // A feed's follower polls from its last page's end (docs/decisions.md §24): never by time again.
          return more || (follow && last) ? cursorOf(plan, last!) : null;
        },
      }),
    }),
  });
}

/**
 * Each `pageField`: its name, its node type, and its arguments in the order declared. REST's list
 * operations are written from these (src/rest/list-operations.ts, by `npm run generate`), so a
 * filter added to a collection reaches its GET list with no hand edit. `follow`: a feed, read by cursor only;
 * `by`: a record page's argument naming its record (`recordPageField`).
 */
export type PageFieldShape = { name: string; model: string; args: readonly string[]; follow: boolean; by?: string };
export const PAGE_FIELDS: PageFieldShape[] = [];

/** A page field's judged arguments: listArgs (src/validation.ts) and the page arguments of the collection's filter. */
type PageArgs = z.output<typeof listArgs> & Record<string, unknown>;

/** The page arguments of a filter's entries are declared as input fields; as arguments, `t.field` is `t.arg`. */
/**
 * `Query.<name>(accountId, page | cursor, pageSize, sort, order, updatedSince, createdSince, ...filters)`:
 * a member's page of the collection (REST's GET list), limited per user. Its filter arguments are
 * the collection filter's entries declared with `page` (collection.ts); the `...Since` arguments are
 * its updatedAfter and createdAfter. Options: `fixed` fixes the order, and leaves out `sort`,
 * `order` and the `...Since` arguments, for a list that is not dated so; `nodeRef` is the node type
 * when it is not the Prisma model's; `follow`: the last page gives a cursor too (a feed polled
 * forward: the events); `limit` the rate limit (LIST_READS unless said). Answers the page's
 * rules and how its judged arguments become the collection's filter.
 */
export function pageField(
  name: string,
  collection: Collection & { model: string; filter: Filters },
  scope: FieldRules['scope'],
  { fixed, nodeRef, follow = false, limit = LIST_READS }: { fixed?: Order; nodeRef?: any; follow?: boolean; limit?: FieldRules['limit'] } = {},
) {
  const type = definePage(collection, nodeRef, follow);
  // A collection ordered by the account's own fields takes one more ordering: a custom field's key.
  const custom = Boolean(collection.custom) && !fixed;
  const input = listArgs.extend({ ...collection.filter.page.shape, ...(custom ? { sortCustomField: SORT_CUSTOM_FIELD } : {}) } as z.ZodRawShape);
  const { filter } = collection.filter.page;
  const dated = fixed ? [] : ['sort', 'order', 'updatedSince', 'createdSince'];
  PAGE_FIELDS.push({ name, model: collection.model, args: ['accountId', 'page', 'pageSize', 'cursor', ...dated, ...Object.keys(collection.filter.page.shape), ...(custom ? ['sortCustomField'] : [])], follow });
  builder.queryField(name, (t) =>
    t.field({
      type,
      args: {
        accountId: t.arg.id({ required: true }),
        page: t.arg.int({ defaultValue: 1, description: 'Not with `cursor`' }),
        pageSize: t.arg.int({ defaultValue: 25 }),
        cursor: t.arg.string({ description: 'The `nextCursor` of the previous page (instead of `page`)' }),
        ...(fixed
          ? {}
          : {
              sort: t.arg({ type: ListSort, defaultValue: 'CREATED_AT' }),
              order: t.arg({ type: OrderDirection, defaultValue: 'DESC' }),
              updatedSince: t.arg({ type: 'DateTime', description: 'Rows changed at or after this time' }),
              createdSince: t.arg({ type: 'DateTime', description: 'Rows created at or after this time' }),
            }),
        ...collection.filter.page.args(asArgs(t)),
        ...(custom
          ? { sortCustomField: t.arg.string({ description: "A custom field's key to order by with `order`, instead of `sort`: rows without a value last either way, ties by id (docs/custom-fields.md#filters)" }) }
          : {}),
      },
      rules: { access: 'member', scope, input, limit },
      resolve: async (_root, _args, ctx, info) => {
        const { input: a } = checked<PageArgs>(info);
        // `page` has a default (§9): whether the caller gave it is in the request, not in its value.
        if (a.cursor != null && given(info, 'page')) throw badInput({ cursor: ['Give cursor or page, not both'] });
        // `sort` has a default too: one given beside a custom field's key is two orders.
        if (a.sortCustomField != null && given(info, 'sort')) throw badInput({ sortCustomField: ['Give sort or sortCustomField, not both'] });
        const asSorted: Order = fixed ?? { field: a.sort ?? 'CREATED_AT', direction: a.order ?? 'DESC' };
        const asked = fixed ? filter(a) : { ...filter(a), updatedAfter: a.updatedSince, createdAfter: a.createdSince };
        const narrowed = collection.narrow ? await collection.narrow(asked, ctx, a.accountId) : asked;
        const by = a.sortCustomField != null ? { key: a.sortCustomField as string, direction: a.order ?? 'DESC', arg: 'sortCustomField' } : null;
        const { filter: where, order, column } = await customList(collection, narrowed, asSorted, by, ctx.db, a.accountId);
        const page = a.cursor == null ? (a.page ?? 1) : null;
        const parent = { accountId: a.accountId, id: a.accountId };
        const args = { filter: where, order, column, size: a.pageSize, offset: ((page ?? 1) - 1) * a.pageSize, after: ['cursor', a.cursor] as [string, string | null], replica: true, cursorKey: ctx.cursorKey };
        return { plan: planOf(collection, null, parent, args), parent, page };
      },
    }),
  );
  return { input, filter };
}

/** A record page's judged arguments: the record's id (under its argument's name), the page or cursor, its size and direction. */
const recordPageArgs = listArgs.pick({ page: true, pageSize: true, cursor: true, order: true });

/**
 * `Query.<name>(<idArg>, page | cursor, pageSize, order)`: the page of the rows under one record
 * (an invoice's payments: `by` is their column pointing at it), as every list's envelope
 * (docs/decisions.md §3, §26), ordered by CREATED_AT only. The record is the field's `target`: an
 * unknown one or another account's is NOT_FOUND (REST's 404); the caller must be a member of its
 * account. Answers the same `<Model>Page` type as the account's list when `pageField` made one.
 */
export function recordPageField(
  name: string,
  collection: Collection & { model: string },
  { by, idArg, scope, target, limit = LIST_READS, description }: {
    by: string;
    idArg: string;
    scope: FieldRules['scope'];
    target: (id: string, ctx: Context) => Promise<{ id: string; accountId: string } | null>;
    limit?: FieldRules['limit'];
    description?: string;
  },
) {
  const type = definePage(collection, null, false);
  // A collection's filter entries declared with `page` are its arguments too (a workflow's runs by `status`).
  const filters = collection.filter?.page;
  const input = recordPageArgs.extend({ [idArg]: uuid, ...(filters?.shape ?? {}) } as z.ZodRawShape);
  PAGE_FIELDS.push({ name, model: collection.model, args: [idArg, 'page', 'pageSize', 'cursor', 'order', ...Object.keys(filters?.shape ?? {})], follow: false, by: idArg });
  type Args = z.output<typeof recordPageArgs> & Record<string, string>;
  builder.queryField(name, (t) =>
    t.field({
      type,
      description,
      args: {
        [idArg]: t.arg.id({ required: true }),
        page: t.arg.int({ defaultValue: 1, description: 'Not with `cursor`' }),
        pageSize: t.arg.int({ defaultValue: 25 }),
        cursor: t.arg.string({ description: 'The `nextCursor` of the previous page (instead of `page`)' }),
        order: t.arg({ type: OrderDirection, defaultValue: 'DESC', description: 'By creation, then id: DESC newest first (as every list), ASC oldest first' }),
        ...(filters ? filters.args(asArgs(t)) : {}),
      },
      rules: { access: 'member', scope, input, target: (a: Args, ctx: Context) => target(a[idArg]!, ctx), hidden: 'not-found', limit },
      resolve: (_root, _args, ctx, info) => {
        const { input: a, target: record } = checked<Args, { id: string; accountId: string }>(info);
        if (a.cursor != null && given(info, 'page')) throw badInput({ cursor: ['Give cursor or page, not both'] });
        const page = a.cursor == null ? (a.page ?? 1) : null;
        const parent = { accountId: record.accountId, id: record.id };
        const order: Order = { field: 'CREATED_AT', direction: a.order ?? 'DESC' };
        const args = { filter: filters ? filters.filter(a) : null, order, size: a.pageSize, offset: ((page ?? 1) - 1) * a.pageSize, after: ['cursor', a.cursor] as [string, string | null], replica: true, cursorKey: ctx.cursorKey };
        return { plan: planOf(collection, by, parent, args), parent, page };
      },
    }),
  );
}

/** Whether the request gives the field's argument `name` (a literal, or a variable with a value). */
function given(info: GraphQLResolveInfo, name: string): boolean {
  const arg = info.fieldNodes[0]?.arguments?.find((a) => a.name.value === name);
  if (!arg) return false;
  return arg.value.kind !== Kind.VARIABLE || info.variableValues[arg.value.name.value] != null;
}
