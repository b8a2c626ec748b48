// Pages (`<Model>Page { nodes total page pageSize nextCursor }`, REST's lists) of a collection
// (collection.ts), numbered (OFFSET) or after a cursor (keyset.ts, docs/decisions.md §18), in any
// of its orders: the page's rows, their to-one relations and the total of the same filter in one
// SQL statement that answers one row. Prisma would spend three to five round trips (count, page, one
// per relation) and decode every value of every row; here PostgreSQL builds the rows as one JSON text.
// A selection with more than to-one relations (nested lists, aliases) reads the page's ids in that
// statement and the rows through Prisma by id.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Kind, type GraphQLResolveInfo } from 'graphql';
import type { z } from 'zod';
import { badInput } from '../errors.js';
import { listArgs } from '../validation.js';
import type { Context } from '../context.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { builder } from './builder.js';
import { col, ident, rowJson, rowsById, totalSql, type Collection, type Filters, type OrderColumn } from './collection.js';
import { after, decodeCursor, encodeCursor, fingerprintOf, orderSql, type Cursor, type Order } from './keyset.js';
import { OrderDirection } from './connection.js';
import { checked, type FieldRules } from './rules.js';

/** Lists are newest first, stable across pages (docs/decisions.md §3). */
export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

/** What REST's `sort` may name (docs/decisions.md §18); each is an order of every dated collection. */
export const ListSort = builder.enumType('ListSort', { values: ['CREATED_AT', 'UPDATED_AT'] as const });

/**
 * A page of the account's rows matching `filter` (the collection's filter, already parsed), in
 * `order`: the numbered `page` (OFFSET), or the rows after the cursor `after` when `page` is null.
 */
export type PageSource = {
  accountId: string;
  filter: object;
  page: number | null;
  pageSize: number;
  order: Order;
  column: OrderColumn;
  fingerprint: string;
  after: Cursor | null;
};

/** `nextCursor`: the cursor of the page's last row when more rows follow it, else null. */
export type Loaded = { nodes: Record<string, unknown>[]; total: number; nextCursor: string | null };
/** What the fields of one page asked for; all are answered by one load. */
type Wanted = { query?: object; queryKey?: string; total: boolean; rows: boolean; loaded?: Promise<Loaded> };
const wanted = new WeakMap<object, Wanted>();

/**
 * `<Model>Page { nodes total page pageSize nextCursor }`. `nodes` is a Prisma field so the plugin
 * hands over the selected relations; `total` counts the same filter. The fields register what they
 * need and wait for the end of the pass that resolves the page's fields, then one load serves all.
 */
function definePage(collection: Collection & { model: string }, nodeRef?: any) {
  const load = (source: PageSource, ctx: Context, field: 'nodes' | 'total' | 'nextCursor', query?: object): Promise<Loaded> => {
    let want = wanted.get(source);
    if (!want) wanted.set(source, (want = { total: false, rows: false }));
    const db = ctx.reader.$replica();
    if (field === 'total') want.total = true;
    else if (field === 'nextCursor') want.rows = true;
    else {
      const key = JSON.stringify(query);
      // Another alias of `nodes` with another selection: its own query (rare, GraphQL only).
      if (want.queryKey !== undefined && want.queryKey !== key) return readPage(db, collection, source, query!, false);
      want.query = query;
      want.queryKey = key;
    }
    // The next cursor needs the page's rows even when `nodes` is not selected: their ids are enough.
    want.loaded ??= nextTurn().then(() => readPage(db, collection, source, want.query ?? (want.rows ? {} : null), want.total));
    return want.loaded;
  };
  return builder.objectRef<PageSource>(`${collection.model}Page`).implement({
    fields: (t) => ({
      // A type that is not a Prisma object (events) reads its rows through the collection's `rows`.
      nodes: nodeRef
        ? t.field({ type: [nodeRef], resolve: async (source, _args, ctx) => (await load(source, ctx, 'nodes', {})).nodes as never })
        : t.prismaField({
            type: [collection.model as 'Contact'],
            resolve: async (query, source, _args, ctx) => (await load(source, ctx, 'nodes', query)).nodes as never,
          }),
      total: t.int({ resolve: async (source, _args, ctx) => (await load(source, ctx, 'total')).total }),
      // §9 fixes `page: Int!`; a page read by cursor is the first one from there (REST leaves it out).
      page: t.int({ description: 'The page number; 1 on a page read by cursor (counted from the cursor)', resolve: (source) => source.page ?? 1 }),
      pageSize: t.exposeInt('pageSize'),
      nextCursor: t.string({
        nullable: true,
        description: 'Pass as `cursor` for the rows after this page (same sort, order and filter); null on the last page',
        resolve: async (source, _args, ctx) => (await load(source, ctx, 'nextCursor')).nextCursor,
      }),
    }),
  });
}

/** A page field's judged arguments: listArgs (src/validation.ts) and the page arguments of the collection's filter. */
type PageArgs = z.output<typeof listArgs> & Record<string, unknown>;

/** The page arguments of a filter's entries are declared as input fields; as arguments, `t.field` is `t.arg`. */
const asArgs = (t: { arg: object }) => ({ ...t.arg, field: t.arg });

/**
 * `Query.<name>(accountId, page | cursor, pageSize, sort, order, updatedSince, createdSince, ...filters)`:
 * a member's page of the collection (REST's GET list), limited per user. Its filter arguments are
 * the collection filter's entries declared with `page` (collection.ts); the `...Since` arguments are
 * its updatedAfter and createdAfter. Options: `fixed` fixes the order, and leaves out `sort`,
 * `order` and the `...Since` arguments, for a list that is not dated so; `nodeRef` is the node type
 * when it is not the Prisma model's; `perMinute` the limit (60 unless said). Answers the page's
 * rules and how its judged arguments become the collection's filter.
 */
export function pageField(
  name: string,
  collection: Collection & { model: string; filter: Filters },
  scope: FieldRules['scope'],
  { fixed, nodeRef, perMinute = 60 }: { fixed?: Order; nodeRef?: any; perMinute?: number } = {},
) {
  const type = definePage(collection, nodeRef);
  const input = listArgs.extend(collection.filter.page.shape);
  const { filter } = collection.filter.page;
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
      },
      rules: { access: 'member', scope, input, limit: { max: perMinute, window: '1m', per: 'user' } },
      resolve: (_root, _args, _ctx, info) => {
        const { input: a } = checked<PageArgs>(info);
        // `page` has a default (§9): whether the caller gave it is in the request, not in its value.
        if (a.cursor != null && given(info, 'page')) throw badInput({ cursor: ['Give cursor or page, not both'] });
        const order: Order = fixed ?? { field: a.sort ?? 'CREATED_AT', direction: a.order ?? 'DESC' };
        const column = collection.orders[order.field]!;
        const where = fixed ? filter(a) : { ...filter(a), updatedAfter: a.updatedSince, createdAfter: a.createdSince };
        const fingerprint = fingerprintOf(collection.name, order, where, a.accountId);
        const cursor = decodeCursor('cursor', a.cursor, { fingerprint, column });
        return { accountId: a.accountId, filter: where, page: cursor ? null : (a.page ?? 1), pageSize: a.pageSize, order, column, fingerprint, after: cursor };
      },
    }),
  );
  return { input, filter };
}

/** Whether the request gives the field's argument `name` (a literal, or a variable with a value). */
function given(info: GraphQLResolveInfo, name: string): boolean {
  const arg = info.fieldNodes[0]?.arguments?.find((a) => a.name.value === name);
  if (!arg) return false;
  return arg.value.kind !== Kind.VARIABLE || info.variableValues[arg.value.name.value] != null;
}

/** The to-one relations `query` includes as a list, or null when it selects anything else. */
function toOne(query: Record<string, unknown>): string[] | null {
  const { include, ...other } = query;
  if (Object.keys(other).length > 0 || (include !== undefined && (typeof include !== 'object' || include === null))) return null;
  const picked = Object.entries((include ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined && v !== false);
  return picked.every(([, v]) => v === true) ? picked.map(([name]) => name) : null;
}

/**
 * One page with what `query` selects (null: no rows wanted), and the total when asked for. Exported
 * for the property test that compares it with Prisma's own paging.
 */
export async function readPage(db: PrismaClient, collection: Collection, source: PageSource, query: object | null, withTotal: boolean): Promise<Loaded> {
  const account = Prisma.sql`CAST(${source.accountId} AS uuid)`;
  const where = Prisma.join([Prisma.sql`t.account_id = ${account}`, ...(collection.filter?.sql(source.filter) ?? [])], ' AND ');
  const include = query && toOne(query as Record<string, unknown>);
  const json = include && rowJson(collection, include);
  const { column, order, after: cursor } = source;
  const bounded = cursor ? Prisma.join([where, after(column, order.direction, cursor)], ' AND ') : where;
  const dir = Prisma.raw(order.direction);
  // One row more than the page tells whether another page follows.
  const take = query ? source.pageSize + 1 : 0;
  const skip = source.page === null ? 0 : (source.page - 1) * source.pageSize;
  // The page is cut first (the index serves ORDER BY ... LIMIT), then joined and turned into JSON:
  // a deep page handles 25 rows, not the 50,000 it skips. The cut selects the table's own columns
  // and nothing computed: an extra column made the scan build a new tuple for every skipped row too
  // (page 2,000's statement took 2.5-3 times as long in psql; BENCHMARKS.md). Each row comes as [key, id, row].
  const v = col(column.column);
  const [row] = await db.$queryRaw<{ total: number; nodes: string }[]>`
    SELECT ${withTotal ? Prisma.sql`${totalSql(collection, account, source.filter, where)}::int` : Prisma.sql`0`} AS total,
      (SELECT coalesce(json_agg(json_build_array(p.k, p.id, p.node) ORDER BY p.v ${dir}, p.id ${dir}), '[]')::text FROM (
        SELECT ${json ? json.object : Prisma.sql`to_json(t.id)`} AS node, ${v} AS v, ${v}::text AS k, t.id FROM (
          SELECT * FROM ${ident(collection.table)} t WHERE ${bounded} ORDER BY ${orderSql(column, order.direction)}
          LIMIT ${take} OFFSET ${skip}
        ) t ${json ? json.joins : Prisma.empty}
      ) p) AS nodes`;
  const total = Number(row!.total);
  const all = JSON.parse(row!.nodes) as [string | null, string, unknown][];
  const rows = all.slice(0, source.pageSize);
  const last = rows.at(-1);
  const nextCursor = all.length > rows.length && last ? encodeCursor(source.fingerprint, { value: last[0], id: last[1] }) : null;
  if (json) return { nodes: rows.map(([, , node]) => json.read(node as Record<string, unknown>)), total, nextCursor };
  if (!rows.length) return { nodes: [], total, nextCursor };
  const ids = rows.map(([, id]) => id);
  const found = new Map((await rowsById(db, collection, ids, [source.accountId], query!)).map((r) => [r.id, r]));
  return { nodes: ids.flatMap((id) => (found.has(id) ? [found.get(id) as Record<string, unknown>] : [])), total, nextCursor };
}
