// Numbered pages (`<Model>Page { nodes total page pageSize }`, REST's lists) of a collection
// (collection.ts): the page's rows, their to-one relations and the total of the same filter in one
// SQL statement that answers one row. Prisma would spend three to five round trips (count, page, one
// per relation) and decode every value of every row; here PostgreSQL builds the rows as one JSON text.
// A selection with more than to-one relations (nested lists, aliases) reads the page's ids in that
// statement and the rows through Prisma by id.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { z } from 'zod';
import type { Context } from '../context.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { builder } from './builder.js';
import { ident, rowJson, rowsById, totalSql, type Collection } from './collection.js';
import { checked, type FieldRules } from './rules.js';

/** Lists are newest first, stable across pages (docs/decisions.md §3). */
export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

/** A page of the account's rows matching `filter` (the collection's filter, already parsed). */
export type PageSource = { accountId: string; filter: object; page: number; pageSize: number };

export type Loaded = { nodes: Record<string, unknown>[]; total: number };
/** What the fields of one page asked for; both are answered by one load. */
type Wanted = { query?: object; queryKey?: string; total: boolean; loaded?: Promise<Loaded> };
const wanted = new WeakMap<object, Wanted>();

/**
 * `<Model>Page { nodes total page pageSize }`. `nodes` is a Prisma field so the plugin hands over
 * the selected relations; `total` counts the same filter. Both fields register what they need and
 * wait for the end of the pass that resolves the page's fields, then one load serves both.
 */
function definePage(collection: Collection & { model: string }) {
  const load = (source: PageSource, ctx: Context, field: 'nodes' | 'total', query?: object): Promise<Loaded> => {
    let want = wanted.get(source);
    if (!want) wanted.set(source, (want = { total: false }));
    const db = ctx.reader.$replica();
    if (field === 'total') want.total = true;
    else {
      const key = JSON.stringify(query);
      // Another alias of `nodes` with another selection: its own query (rare, GraphQL only).
      if (want.queryKey !== undefined && want.queryKey !== key) return readPage(db, collection, source, query!, false);
      want.query = query;
      want.queryKey = key;
    }
    want.loaded ??= nextTurn().then(() => readPage(db, collection, source, want.query ?? null, want.total));
    return want.loaded;
  };
  return builder.objectRef<PageSource>(`${collection.model}Page`).implement({
    fields: (t) => ({
      nodes: t.prismaField({
        type: [collection.model as 'Contact'],
        resolve: async (query, source, _args, ctx) => (await load(source, ctx, 'nodes', query)).nodes as never,
      }),
      total: t.int({ resolve: async (source, _args, ctx) => (await load(source, ctx, 'total')).total }),
      page: t.exposeInt('page'),
      pageSize: t.exposeInt('pageSize'),
    }),
  });
}

/**
 * `Query.<name>(accountId, page, pageSize, ...filters)`: a member's numbered page of the collection
 * (REST's GET list), 60 a minute per user. `args` adds the page's own filter arguments, `input`
 * judges them all, `filter` turns the judged input into the collection's filter.
 */
export function pageField<Input extends { accountId: string; page: number; pageSize: number }>(
  name: string,
  collection: Collection & { model: string },
  args: (t: any) => object,
  input: z.ZodType<Input>,
  filter: (input: Input) => object,
  scope: FieldRules['scope'],
) {
  const type = definePage(collection);
  builder.queryField(name, (t) =>
    t.field({
      type,
      args: { accountId: t.arg.id({ required: true }), page: t.arg.int({ defaultValue: 1 }), pageSize: t.arg.int({ defaultValue: 25 }), ...args(t.arg) },
      rules: { access: 'member', scope, input, limit: { max: 60, window: '1m', per: 'user' } },
      resolve: (_root, _args, _ctx, info) => {
        const { input: a } = checked<Input>(info);
        return { accountId: a.accountId, filter: filter(a), page: a.page, pageSize: a.pageSize };
      },
    }),
  );
}

/** The to-one relations `query` includes as a list, or null when it selects anything else. */
function toOne(query: Record<string, unknown>): string[] | null {
  const { include, ...other } = query;
  if (Object.keys(other).length > 0 || (include !== undefined && (typeof include !== 'object' || include === null))) return null;
  const picked = Object.entries((include ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined && v !== false);
  return picked.every(([, v]) => v === true) ? picked.map(([name]) => name) : null;
}

/**
 * One page (newest first) with what `query` selects (null: no rows wanted), and the total when
 * asked for. Exported for the property test that compares it with Prisma's own paging.
 */
export async function readPage(db: PrismaClient, collection: Collection, source: PageSource, query: object | null, withTotal: boolean): Promise<Loaded> {
  const account = Prisma.sql`CAST(${source.accountId} AS uuid)`;
  const where = Prisma.join([Prisma.sql`t.account_id = ${account}`, ...(collection.filter?.sql(source.filter) ?? [])], ' AND ');
  const include = query && toOne(query as Record<string, unknown>);
  const json = include && rowJson(collection, include);
  const take = query ? source.pageSize : 0;
  // The page is cut first (the index serves ORDER BY ... LIMIT), then joined and turned into JSON:
  // a deep page handles 25 rows, not the 50,000 it skips.
  const [row] = await db.$queryRaw<{ total: number; nodes: string }[]>`
    SELECT ${withTotal ? Prisma.sql`${totalSql(collection, account, source.filter, where)}::int` : Prisma.sql`0`} AS total,
      (SELECT coalesce(json_agg(p.node ORDER BY p.created_at DESC, p.id DESC), '[]')::text FROM (
        SELECT ${json ? json.object : Prisma.sql`to_json(t.id)`} AS node, t.created_at, t.id FROM (
          SELECT * FROM ${ident(collection.table)} t WHERE ${where} ORDER BY t.created_at DESC, t.id DESC
          LIMIT ${take} OFFSET ${(source.page - 1) * source.pageSize}
        ) t ${json ? json.joins : Prisma.empty}
      ) p) AS nodes`;
  const total = Number(row!.total);
  if (json) return { nodes: (JSON.parse(row!.nodes) as Record<string, unknown>[]).map(json.read), total };
  const ids = JSON.parse(row!.nodes) as string[];
  if (!ids.length) return { nodes: [], total };
  const found = new Map((await rowsById(db, collection, ids, [source.accountId], query!)).map((r) => [r.id, r]));
  return { nodes: ids.flatMap((id) => (found.has(id) ? [found.get(id) as Record<string, unknown>] : [])), total };
}
