// One statement reads every list (docs/connections.md#cost-of-a-page): a REST page is the account's
// own list at an offset or after a cursor (page.ts); a connection is the list under each parent of a
// page, forward or backward (connection.ts). Every parent asking for the same list (same arguments)
// is answered together, with the totals of the same filter when a field asked for them: one round
// trip whatever the number of parents or fields. Each parent's rows are cut first (an index range
// scan, ORDER BY ... LIMIT/OFFSET), then joined to their to-one relations and turned into JSON by
// PostgreSQL (a relation only as far as its selected fields need: selection.ts); a selection with
// more than to-one relations reads the rows through Prisma by id.
import DataLoader from 'dataloader';
import type { Context, RequestState } from '../context.js';
import { rawRead } from '../db/raw.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { col, ident, orderValue, rowJson, rowsById, totalSql, type Collection, type Joined, type OrderColumn } from './collection.js';
import { beyond, decodeCursor, encodeCursor, fingerprintOf, nullsSql, orderSql, type Cursor, type Order } from './keyset.js';
import { followsTime, horizonOf } from './horizon.js';

/** What a list hangs off: its account, and the parent row's id (the account's own id for the account's lists). */
export type Parent = { accountId: string; id: string };

/** A list's parsed arguments, shared by every parent asking for it. */
export type Plan = {
  collection: Collection;
  /** The column pointing at the parent; null when the parent is the account itself. */
  by: string | null;
  /** The collection's filter, parsed; null for none. */
  filter: object | null;
  order: Order;
  column: OrderColumn;
  fingerprint: string;
  size: number;
  offset: number;
  /** Read from the end (`last`): the reversed order, turned around. */
  backward: boolean;
  after: Cursor | null;
  before: Cursor | null;
  /** Read where REST's lists read (a replica when healthy; docs/scaling.md#read-replicas), else the primary. */
  replica: boolean;
  /** The service's cursor key: signs this list's cursors and checks the given ones (keyset.ts). */
  cursorKey: Buffer;
  key: string;
};

type PlanArgs = {
  filter: object | null;
  order: Order;
  /** What `order` orders by, when not one of the collection's `orders` (a custom field: custom-field-filter.ts). */
  column?: OrderColumn;
  size: number;
  offset?: number;
  backward?: boolean;
  /** The cursor arguments as given: [argument name, text]. */
  after?: [string, string | null | undefined];
  before?: [string, string | null | undefined];
  replica?: boolean;
  cursorKey: Buffer;
};

/** The plan of a list; its cursors must be of this list (an account's own list fingerprints the account too). */
export function planOf(collection: Collection, by: string | null, parent: Parent, a: PlanArgs): Plan {
  const column = a.column ?? collection.orders[a.order.field]!;
  const fingerprint = fingerprintOf(collection.name, a.order, a.filter, by === null ? parent.accountId : null);
  const { filter, order, size, offset = 0, backward = false, replica = false, cursorKey } = a;
  const decode = (arg?: [string, string | null | undefined]) => (arg ? decodeCursor(arg[0], arg[1], { key: cursorKey, fingerprint, column }) : null);
  const [after, before] = [decode(a.after), decode(a.before)];
  const key = JSON.stringify([collection.name, by, fingerprint, size, offset, backward, after, before, replica]);
  return { collection, by, filter, order, column, fingerprint, size, offset, backward, after, before, replica, cursorKey, key };
}

export type Row = { k: string | null; id: string; node: Record<string, unknown> };
/** A parent's rows in the list's order, whether more follow them, and the total of the filter (0 unless asked for). */
export type Slice = { rows: Row[]; more: boolean; total: number };

/** The cursor of a row of this list. */
export const cursorOf = (plan: Plan, row: Row) => encodeCursor(plan.cursorKey, plan.fingerprint, { value: row.k, id: row.id });

/**
 * What the fields of a list asked for: the total, the rows, and the Prisma selection of the nodes
 * (none: the rows are asked for their cursors only); `sent` once read.
 */
export type Wants = { total: boolean; rows: boolean; nodes?: object; nodesKey?: string; sent?: boolean };

/** A relation included whole (`true`), or as `{ select }` of its own fields (selection.ts): what it joins. */
function joined(name: string, value: unknown): Joined | null {
  if (value === true) return { name, fields: null };
  if (typeof value !== 'object' || value === null || Object.keys(value).length !== 1) return null;
  const { select } = value as { select?: Record<string, unknown> };
  if (typeof select !== 'object' || select === null || !Object.values(select).every((v) => v === true)) return null;
  return { name, fields: Object.keys(select).sort() };
}

/** The to-one relations `query` includes, or null when it selects anything else. */
function toOne(query: Record<string, unknown>): Joined[] | null {
  const { include, ...other } = query;
  if (Object.keys(other).length > 0 || (include !== undefined && (typeof include !== 'object' || include === null))) return null;
  const picked = Object.entries((include ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined && v !== false);
  const relations = picked.map(([name, v]) => joined(name, v));
  return relations.every((r) => r !== null) ? (relations as Joined[]) : null;
}

/**
 * The slices of these parents, one statement (a second reads the rows by id when they are not read
 * as JSON); rows stamped at or after `horizon` (horizon.ts) are left for a later page. Exported for
 * the property test that compares a page with Prisma's own paging.
 */
export async function readSlices(db: PrismaClient, plan: Plan, parents: readonly Parent[], wants: Wants, horizon: string | null = null): Promise<Slice[]> {
  const { collection, column, order, backward } = plan;
  // One parent (every REST page) is named by its values, so the rows' sub-select is planned for this
  // account, not as a lateral reference with a generic estimate: that estimate took page 2,000 of
  // 100,000 contacts from an index scan to a sort of the whole account on disk (BENCHMARKS.md "A page
  // answered row by row").
  const [account, parentId] =
    parents.length === 1 ? [Prisma.sql`CAST(${parents[0]!.accountId} AS uuid)`, Prisma.sql`CAST(${parents[0]!.id} AS uuid)`] : [Prisma.sql`p.account_id`, Prisma.sql`p.id`];
  const own = plan.by ? Prisma.sql`t.account_id = ${account} AND ${col(plan.by)} = ${parentId}` : Prisma.sql`t.account_id = ${account}`;
  const whereOf = (filter: object | null) => Prisma.join([own, ...(filter ? collection.filter!.sql(filter) : [])], ' AND ');
  const where = whereOf(plan.filter);
  const ascending = order.direction === 'ASC';
  const bounds = [
    ...(plan.after ? [beyond(column, plan.after, ascending ? 'greater' : 'less', ascending)] : []),
    ...(plan.before ? [beyond(column, plan.before, ascending ? 'less' : 'greater', ascending)] : []),
    ...(horizon ? [Prisma.sql`${col(column.column)} < CAST(${horizon} AS timestamptz)`] : []),
  ];
  const dir = ascending !== backward ? 'ASC' : 'DESC';
  const include = toOne((wants.nodes ?? {}) as Record<string, unknown>);
  const json = include && rowJson(collection, include);
  // The counters keep an account's own totals, not a parent row's.
  const total = wants.total ? Prisma.sql`${totalSql(collection, account, plan.filter, whereOf, plan.by === null)}::int` : Prisma.sql`0`;
  const v = orderValue(column);
  // An order kept by an index of its own (a NUMBER custom field's) reads its candidates there, when
  // nothing else narrows the account's rows: a filter's rows may lie beyond them.
  const given = Object.values(plan.filter ?? {}).some((value) => value != null);
  const from = column.candidates && parents.length === 1 && !plan.by && !backward && !plan.before && !given
    ? Prisma.sql`(${column.candidates(account, dir, plan.size + 1 + plan.offset, plan.after)})`
    : ident(collection.table);
  // The cut selects the table's own columns and nothing computed: an extra column made the scan build
  // a new tuple for every row an OFFSET skips (page 2,000 took 2.5-3 times as long; BENCHMARKS.md).
  // One row more than the page tells whether another follows. The rows come back one by one, each
  // parent's in the list's order, each as the JSON text [key, id, row]: gathered into one text per
  // parent (json_agg), a page of 50 events grew PostgreSQL's heap past what malloc gives back after
  // each statement and grew it again in the next (5 brk calls a statement), and the statement took
  // 2-3 times the CPU (BENCHMARKS.md "A page answered row by row"). Each parent answers at least one
  // row (LEFT JOIN; a NULL row when it has none) carrying its total, which the fenced sub-select
  // (OFFSET 0) computes once per parent, not once per row.
  // The parents are a VALUES list: portable to PGlite, unlike array parameters through every adapter.
  const answer = await rawRead<{ ord: number; total: number; row: string | null }>(db, Prisma.sql`
    SELECT p.ord, p.total, CASE WHEN x.id IS NULL THEN NULL ELSE json_build_array(x.k, x.id, x.node)::text END AS row
    FROM (
      SELECT p.ord, ${total} AS total, p.account_id, p.id
      FROM (VALUES ${Prisma.join(parents.map((p, i) => Prisma.sql`(CAST(${p.accountId} AS uuid), CAST(${p.id} AS uuid), ${i}::int)`))}) AS p(account_id, id, ord)
      OFFSET 0
    ) p
    LEFT JOIN LATERAL (
      SELECT ${json ? json.object : Prisma.sql`NULL`} AS node, ${v} AS v, ${v}::text AS k, t.id FROM (
        SELECT * FROM ${from} t WHERE ${Prisma.join([where, ...bounds], ' AND ')} ORDER BY ${orderSql(column, dir, ascending)}
        LIMIT ${wants.rows ? plan.size + 1 : 0} OFFSET ${plan.offset}
      ) t ${json ? json.joins : Prisma.empty}
    ) x ON true
    ORDER BY p.ord, x.v ${Prisma.raw(dir)} ${nullsSql(column, dir, ascending)}, x.id ${Prisma.raw(dir)}`);
  const slices: Slice[] = parents.map(() => ({ rows: [], more: false, total: 0 }));
  for (const { ord, total: n, row } of answer) {
    const slice = slices[ord]!;
    slice.total = Number(n);
    if (row === null) continue;
    const [k, id, node] = JSON.parse(row) as [string | null, string, Record<string, unknown> | null];
    if (slice.rows.length === plan.size) slice.more = true;
    else slice.rows.push({ k, id, node: node && json ? json.read(node) : node! });
  }
  if (backward) for (const slice of slices) slice.rows.reverse();
  if (json || !wants.rows || !wants.nodes) return slices;
  const ids = [...new Set(slices.flatMap((s) => s.rows.map((r) => r.id)))];
  const found = new Map((ids.length ? await rowsById(db, collection, ids, [...new Set(parents.map((p) => p.accountId))], wants.nodes) : []).map((r) => [r.id, r]));
  // A row deleted between the two statements is left out rather than answered half-loaded.
  for (const slice of slices) slice.rows = slice.rows.flatMap((r) => (found.has(r.id) ? [{ ...r, node: found.get(r.id) as Record<string, unknown> }] : []));
  return slices;
}

type Entry = { wants: Wants; loader: DataLoader<Parent, Slice, string> };
const perRequest = new WeakMap<RequestState, Map<string, Entry>>();

function entryOf(ctx: Context, plan: Plan, key: string): Entry {
  let entries = perRequest.get(ctx.state);
  if (!entries) perRequest.set(ctx.state, (entries = new Map()));
  let entry = entries.get(key);
  if (!entry) {
    const wants: Wants = { total: false, rows: false };
    // The batch waits for the end of the pass that resolves the fields, so that it knows all they want.
    const read = async (parents: readonly Parent[]) => {
      wants.sent = true;
      // A list followed forward in time stops at its accounts' horizon, read on the primary first; its
      // rows are then read where every write committed before it is (the primary, or a replica caught up).
      const horizon = followsTime(plan.order, plan.column) ? await horizonOf(ctx.db, plan.collection.table, parents.map((p) => p.accountId)) : null;
      const db = !plan.replica ? ctx.db : horizon ? await ctx.reader.$caughtUp() : ctx.reader.$replica();
      return readSlices(db, plan, parents, wants, horizon);
    };
    const loader = new DataLoader<Parent, Slice, string>(read, {
      cacheKeyFn: (p) => `${p.accountId}/${p.id}`,
      batchScheduleFn: (run) => setImmediate(run),
      maxBatchSize: 1000,
    });
    entries.set(key, (entry = { wants, loader }));
  }
  return entry;
}

/** What one field of a list wants: the total, the rows, or the rows with this Prisma selection. */
export type Want = { total?: boolean; rows?: boolean; nodes?: object };

/** The slice of `parent` in the list `plan`, with what this field wants. */
export function sliceOf(ctx: Context, plan: Plan, parent: Parent, want: Want): Promise<Slice> {
  const nodesKey = want.nodes && JSON.stringify(want.nodes);
  const answers = (w: Wants) =>
    (nodesKey === undefined || w.nodesKey === nodesKey || (w.nodesKey === undefined && !w.sent)) &&
    (!w.sent || ((!want.total || w.total) && (!want.rows || w.rows)));
  // Another alias of `nodes` with another selection, or a field resolved after its list was read (a
  // deferred fragment): a statement of its own (rare, GraphQL only).
  let key = plan.key;
  let entry = entryOf(ctx, plan, key);
  while (!answers(entry.wants)) entry = entryOf(ctx, plan, (key += '+'));
  if (want.total) entry.wants.total = true;
  if (want.rows || want.nodes) entry.wants.rows = true;
  if (want.nodes) Object.assign(entry.wants, { nodes: want.nodes, nodesKey });
  return entry.loader.load(parent);
}
