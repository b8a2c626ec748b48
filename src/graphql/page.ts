import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Context } from '../context.js';
import { builder } from './builder.js';
import { sqlPage } from './page-sql.js';
import { countedTotal } from './totals.js';

/** Lists are newest first, stable across pages (docs/decisions.md §3). */
export const NEWEST_FIRST = [{ createdAt: 'desc' as const }, { id: 'desc' as const }];

export type PageSource<Where> = { where: Where; page: number; pageSize: number };

type PagedModel = 'Contact' | 'Deal' | 'Invoice';

// Loose on purpose: the three Prisma delegates share this call shape but not one TypeScript type.
type Delegate<Where> = {
  findMany(args: object): Promise<unknown[]>;
  count(args: { where: Where }): Promise<number>;
};

type Loaded = { nodes: unknown[]; total: number };
/** What the fields of one page asked for; both are answered by one load. */
type Wanted = { query?: object; queryKey?: string; total: boolean; loaded?: Promise<Loaded> };
const wanted = new WeakMap<object, Wanted>();

/**
 * `<Model>Page { nodes total page pageSize }`. `nodes` is a Prisma field so the plugin folds the
 * selected relations into the same query; `total` counts the same filter. Both fields register what
 * they need and wait for the end of the pass that resolves the page's fields, then one load serves
 * both: a single SQL statement (page-sql.ts) when it can, else Prisma's findMany and count.
 */
export function definePage<Where>(model: PagedModel, delegate: (ctx: Context) => Delegate<Where>) {
  const load = (source: PageSource<Where>, ctx: Context, field: 'nodes' | 'total', query?: object): Promise<Loaded> => {
    let want = wanted.get(source);
    if (!want) wanted.set(source, (want = { total: false }));
    if (field === 'total') want.total = true;
    else {
      const key = JSON.stringify(query);
      // Another alias of `nodes` with another selection: its own query (rare, GraphQL only).
      if (want.queryKey !== undefined && want.queryKey !== key) return findPage(delegate(ctx), source, query!, false);
      want.query = query;
      want.queryKey = key;
    }
    want.loaded ??= nextTurn().then(() => loadPage(ctx, model, counted(ctx, model, delegate(ctx)), source, want));
    return want.loaded;
  };
  return builder.objectRef<PageSource<Where>>(`${model}Page`).implement({
    fields: (t) => ({
      nodes: t.prismaField({
        type: [model],
        resolve: async (query, source, _args, ctx) => (await load(source, ctx, 'nodes', query)).nodes as never,
      }),
      total: t.int({ resolve: async (source, _args, ctx) => (await load(source, ctx, 'total')).total }),
      page: t.exposeInt('page'),
      pageSize: t.exposeInt('pageSize'),
    }),
  });
}

/** The delegate, with count() read from the per-account counters when the filter is one they keep (totals.ts). */
const counted = <Where>(ctx: Context, model: PagedModel, delegate: Delegate<Where>): Delegate<Where> => ({
  findMany: (args) => delegate.findMany(args),
  count: async (args) => (await countedTotal(ctx.reader.$replica(), model, args.where)) ?? delegate.count(args),
});

async function loadPage<Where>(ctx: Context, model: PagedModel, delegate: Delegate<Where>, source: PageSource<Where>, want: Wanted): Promise<Loaded> {
  if (!want.query) return { nodes: [], total: await delegate.count({ where: source.where }) };
  const skip = (source.page - 1) * source.pageSize;
  const fast = await sqlPage(ctx.reader.$replica(), model, source.where, want.query as Record<string, unknown>, skip, source.pageSize, want.total);
  return fast ?? findPage(delegate, source, want.query, want.total);
}

export async function findPage<Where>(delegate: Delegate<Where>, source: PageSource<Where>, query: object, withTotal: boolean): Promise<Loaded> {
  const [nodes, total] = await Promise.all([
    delegate.findMany({
      ...query,
      where: source.where,
      orderBy: NEWEST_FIRST,
      skip: (source.page - 1) * source.pageSize,
      take: source.pageSize,
    }),
    withTotal ? delegate.count({ where: source.where }) : 0,
  ]);
  return { nodes, total };
}
