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
// statement (a LATERAL subquery per parent, each an index range scan) that also reads the rows of a
// collection read as JSON (collection.ts; else the rows by one more), and the totals by one more,
// however many parents there are (DataLoader batches them per request).
import DataLoader from 'dataloader';
import { z } from 'zod';
import type { Context, RequestState } from '../context.js';
import { badInput } from '../errors.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { parseInput } from '../validation.js';
import { builder } from './builder.js';
import { col, ident, rowJson, rowsById, totalSql, type Collection, type OrderColumn } from './collection.js';
import { beyond, decodeCursor, encodeCursor, fingerprintOf, orderSql, type Cursor, type Direction, type Order } from './keyset.js';

type Row = { id: string };

export const OrderDirection = builder.enumType('OrderDirection', { values: ['ASC', 'DESC'] as const });

/** `<Name>OrderField` and `<Name>Order { field direction }` for a collection's orderings. */
export function orderInputOf(name: string, fields: readonly string[]) {
  const field = builder.enumType(`${name}OrderField`, { values: fields });
  return builder.inputType(`${name}Order`, {
    fields: (t) => ({
      field: t.field({ type: field, required: true }),
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

export type Paging = { first?: number | null; last?: number | null; after?: string | null; before?: string | null };
/** The parent a connection hangs off: its account, and its id when it is not the account itself. */
type Parent = { accountId: string; id: string };

/** What the parsed arguments of one connection field resolve to, shared by every parent asking it. */
type Plan<Filter> = {
  spec: Collection<Row, Filter>;
  by: string | null;
  column: OrderColumn;
  order: Order;
  fingerprint: string;
  filter: object | null;
  conditions: Prisma.Sql[];
  size: number;
  backward: boolean;
  after: Cursor | null;
  before: Cursor | null;
  key: string;
};

// ---- SQL -------------------------------------------------------------------------------------

/** The parents as a VALUES list (portable to PGlite, unlike array parameters through every adapter). */
const parentsSql = (parents: readonly Parent[]) =>
  Prisma.join(parents.map((p, i) => Prisma.sql`(CAST(${p.accountId} AS uuid), CAST(${p.id} AS uuid), ${i}::int)`));

function scope(plan: Plan<unknown>): Prisma.Sql {
  const own = plan.by ? Prisma.sql`t.account_id = p.account_id AND ${col(plan.by)} = p.id` : Prisma.sql`t.account_id = p.account_id`;
  return Prisma.join([own, ...plan.conditions], ' AND ');
}

/** A parent's page: ids and cursor values, and the rows themselves when the slice's statement read them. */
type Slice = { rows: { id: string; k: string | null; node?: Row }[]; more: boolean };

async function loadSlices(db: PrismaClient, plan: Plan<unknown>, parents: readonly Parent[]): Promise<Slice[]> {
  // The rows come with their page in the same statement when the collection is read as JSON: one
  // round trip less per connection than reading them by id after.
  const object = rowJson(plan.spec);
  const { column, order, backward } = plan;
  // A backward page reads the reversed order from its end, then is turned around.
  const direction: Direction = (order.direction === 'ASC') !== backward ? 'ASC' : 'DESC';
  const ascending = order.direction === 'ASC';
  const bounds: Prisma.Sql[] = [];
  if (plan.after) bounds.push(beyond(column, plan.after, ascending ? 'greater' : 'less'));
  if (plan.before) bounds.push(beyond(column, plan.before, ascending ? 'less' : 'greater'));
  const where = Prisma.join([scope(plan), ...bounds], ' AND ');
  // The outer ORDER BY repeats the inner one over the (at most size + 1) rows each parent got.
  const outer = Prisma.raw(`x.v ${direction}, x.id ${direction}`);
  const rows = await db.$queryRaw<{ ord: number; id: string; k: string | null; node: string | null }[]>`
    SELECT p.ord, x.id::text AS id, x.v::text AS k, x.node FROM (VALUES ${parentsSql(parents)}) AS p(account_id, id, ord)
    CROSS JOIN LATERAL (
      SELECT t.id, ${col(column.column)} AS v, ${object ? Prisma.sql`${object.object}::text` : Prisma.sql`NULL::text`} AS node
      FROM ${ident(plan.spec.table)} t WHERE ${where}
      ORDER BY ${orderSql(column, direction)} LIMIT ${plan.size + 1}
    ) x ORDER BY p.ord, ${outer}`;
  const slices: Slice[] = parents.map(() => ({ rows: [], more: false }));
  for (const row of rows) {
    slices[row.ord]!.rows.push({ id: row.id, k: row.k, ...(object && row.node !== null ? { node: object.read(JSON.parse(row.node)) as Row } : {}) });
  }
  for (const slice of slices) {
    slice.more = slice.rows.length > plan.size;
    slice.rows = slice.rows.slice(0, plan.size);
    if (backward) slice.rows.reverse();
  }
  return slices;
}

async function loadTotals(db: PrismaClient, plan: Plan<unknown>, parents: readonly Parent[]): Promise<number[]> {
  // The counters keep an account's own totals, not a parent row's.
  const total = totalSql(plan.spec, Prisma.sql`p.account_id`, plan.filter, scope(plan), plan.by === null);
  const rows = await db.$queryRaw<{ ord: number; n: number }[]>`
    SELECT p.ord, ${total}::int AS n
    FROM (VALUES ${parentsSql(parents)}) AS p(account_id, id, ord)`;
  const totals = parents.map(() => 0);
  for (const row of rows) totals[row.ord] = Number(row.n);
  return totals;
}

// ---- per-request batching --------------------------------------------------------------------

type Loaded<Node> = { edges: { cursor: string; node: Node }[]; nodes: Node[]; pageInfo: typeof PageInfo.$inferType };
type Loaders = { page: DataLoader<Parent, Loaded<Row>, string>; total: DataLoader<Parent, number, string> };
const perRequest = new WeakMap<RequestState, Map<string, Loaders>>();
const parentKey = (p: Parent) => `${p.accountId}/${p.id}`;

function loadersFor(ctx: Context, plan: Plan<unknown>): Loaders {
  let all = perRequest.get(ctx.state);
  if (!all) perRequest.set(ctx.state, (all = new Map()));
  let loaders = all.get(plan.key);
  if (loaders) return loaders;
  const page = new DataLoader<Parent, Loaded<Row>, string>(
    async (parents) => {
      const slices = await loadSlices(ctx.db, plan, parents);
      const found = new Map(slices.flatMap((s) => s.rows.flatMap((r) => (r.node ? [[r.id, r.node] as const] : []))));
      const ids = [...new Set(slices.flatMap((s) => s.rows.map((r) => r.id)))].filter((id) => !found.has(id));
      const accounts = [...new Set(parents.map((p) => p.accountId))];
      for (const row of ids.length ? await rowsById(ctx.db, plan.spec, ids, accounts) : []) found.set(row.id, row as Row);
      return slices.map((slice) => {
        // A row deleted between the two statements is left out rather than answered half-loaded.
        const edges = slice.rows
          .filter((r) => found.has(r.id))
          .map((r) => ({ cursor: encodeCursor(plan.fingerprint, { value: r.k, id: r.id }), node: found.get(r.id)! }));
        const pageInfo = {
          hasNextPage: plan.backward ? plan.before !== null : slice.more,
          hasPreviousPage: plan.backward ? slice.more : plan.after !== null,
          startCursor: edges[0]?.cursor ?? null,
          endCursor: edges.at(-1)?.cursor ?? null,
        };
        return { edges, nodes: edges.map((e) => e.node), pageInfo };
      });
    },
    { cacheKeyFn: parentKey, maxBatchSize: 1000 },
  );
  const total = new DataLoader<Parent, number, string>((parents) => loadTotals(ctx.db, plan, parents), { cacheKeyFn: parentKey });
  all.set(plan.key, (loaders = { page, total }));
  return loaders;
}

// ---- the GraphQL side ------------------------------------------------------------------------

type Source = { plan: Plan<unknown>; parent: Parent; ctx: Context };

type FieldArgs = Paging & { filter?: unknown; orderBy?: { field: string; direction: Direction } | null };

/** The plan of one connection field's arguments; an account's own list (`by` null) fingerprints the account too. */
function planOf<Filter>(spec: Collection<Row, Filter>, by: string | null, args: FieldArgs, parent: Parent): Plan<Filter> {
  const paging = parseInput(pagingArgs, { first: args.first, last: args.last, after: args.after, before: args.before });
  const filter = spec.filter && args.filter != null ? parseInput(spec.filter.schema, args.filter) : null;
  const order: Order = args.orderBy ?? { field: 'CREATED_AT', direction: 'DESC' };
  const column = spec.orders[order.field];
  if (!column) throw badInput({ 'orderBy.field': ['Not an ordering of this connection'] });
  const fingerprint = fingerprintOf(spec.name, order, filter as object | null, by === null ? parent.accountId : null);
  const backward = paging.last != null;
  const plan = {
    spec,
    by,
    column,
    order,
    fingerprint,
    filter: filter as object | null,
    conditions: filter ? spec.filter!.sql(filter) : [],
    size: paging.first ?? paging.last ?? DEFAULT_PAGE,
    backward,
    after: null as Cursor | null,
    before: null as Cursor | null,
    key: '',
  };
  plan.after = decodeCursor('after', paging.after, plan);
  plan.before = decodeCursor('before', paging.before, plan);
  plan.key = JSON.stringify([spec.name, by, fingerprint, plan.size, backward, plan.after, plan.before]);
  return plan;
}

/**
 * A collection's `<Name>Connection { edges nodes pageInfo totalCount }` and `<Name>Edge`, and a
 * field factory for every parent that lists it (`by`: the column pointing at the parent; null when
 * the parent is the account itself).
 */
export function defineCollection<Node extends Row, Filter>(spec: Collection<Node, Filter>, nodeRef: any) {
  const Edge = builder.objectRef<{ cursor: string; node: Node }>(`${spec.name}Edge`).implement({
    fields: (t) => ({
      cursor: t.exposeString('cursor'),
      node: t.field({ type: nodeRef, resolve: (edge) => edge.node as never }),
    }),
  });
  const page = (source: Source) => loadersFor(source.ctx, source.plan).page.load(source.parent) as Promise<Loaded<Node>>;
  const Connection = builder.objectRef<Source>(`${spec.name}Connection`).implement({
    fields: (t) => ({
      edges: t.field({ type: [Edge], resolve: async (source) => (await page(source)).edges }),
      nodes: t.field({ type: [nodeRef], resolve: async (source) => (await page(source)).nodes as never }),
      pageInfo: t.field({ type: PageInfo, resolve: async (source) => (await page(source)).pageInfo }),
      totalCount: t.int({
        description: 'Every record of the filter (all pages), exact',
        resolve: (source) => loadersFor(source.ctx, source.plan).total.load(source.parent),
      }),
    }),
  });

  /** The connection field's options for `t.field` on a parent object type. */
  return function connection<Parent extends object>(by: string | null, parentOf: (parent: Parent) => { accountId: string; id: string }, description?: string) {
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
        },
        resolve: (parent: Parent, args: FieldArgs, ctx: Context) => {
          const of = parentOf(parent);
          return { plan: planOf(spec as Collection<Row, Filter>, by, args, of), parent: of, ctx };
        },
      });
  };
}
