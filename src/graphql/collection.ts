// One declaration per collection (docs/fields.md#adding-a-filter), after PostGraphile's PgResource
// and Hasura's per-table metadata: the table, the Prisma model its rows come from, its filters
// (argument -> SQL condition), its orders (field -> indexed key), its to-one relations and how its
// total is known. The page (page.ts) and the cursor connection (connection.ts) read it through one
// statement (list.ts); the downloads page by their own keys (src/exports/pages.ts). Declarations
// live beside their domain (src/<domain>/*-reads.schema.ts); this file is the machinery and knows
// no domain.
import { z } from 'zod';
import type { Context } from '../context.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { delegateOf, fieldsOf, type ModelField as Field } from '../db/datamodel.js';
import type { RecordModel } from '../model/field-spec.js';
import { PLAN_EACH_TIME } from '../db/prepared.js';
import { builder } from './builder.js';
import { badInput } from '../errors.js';
import { snakeCase } from '../names.js';
import { externalIdFilter, uuid } from '../validation.js';

/** An indexed key a collection can be ordered by; `type` is the SQL type its cursor value is cast back to. */
export type OrderColumn = {
  column: string;
  type: 'timestamptz' | 'date' | 'numeric' | 'text';
  nullable?: boolean;
  /** false: a time that is not a write's stamp (a due time, a derived key), so an ascending page does not stop at the horizon (horizon.ts). */
  follows?: false;
  /** An expression over alias `t` ordering instead of the column (a custom field's value, custom-field-filter.ts). */
  sql?: Prisma.Sql;
  /** Rows without a value come last in either direction (a custom field, docs/custom-fields.md#filters), not as the largest value. */
  nullsLast?: true;
  /**
   * Rows of the account (`account`: SQL of a uuid) among which lie, in this order, the first `count`
   * of the whole account read forward (`direction`) from `after`, as `SELECT t.*` of the table: what
   * an unfiltered page of the account's own list reads instead of the table, where an index other
   * than the table's keeps the order (a NUMBER custom field: custom-field-filter.ts). The page still
   * orders, bounds and cuts them as it would the table.
   */
  candidates?: (account: Prisma.Sql, direction: 'ASC' | 'DESC', count: number, after: { value: string | null; id: string } | null) => Prisma.Sql;
};

/** What a list is ordered by over alias `t`: the column, or the order's own expression. */
export const orderValue = (column: OrderColumn) => column.sql ?? col(column.column);

/** A page argument (Query.<list>, REST's GET list) that sets a filter entry: `value` makes the entry's value of it. */
export type PageArg = { name: string; field: (t: any) => any; schema: z.ZodType; value: (given: any) => unknown };

/**
 * One filter argument: its GraphQL input field, its rule, its SQL condition(s) for a given value;
 * `page`: also an argument of the collection's page, under this name (same type) or as declared.
 */
export type FilterEntry<V = any> = {
  field: (t: any) => any;
  schema: z.ZodType<V>;
  sql: (value: NonNullable<V>) => Prisma.Sql | Prisma.Sql[];
  page?: string | PageArg;
  /**
   * The exact total of an account's own list when this entry is its only filter, from a structure
   * that keeps it cheaper than counting the rows (SQL of a count; `account`: SQL of a uuid); null
   * when this value's total must be counted.
   */
  total?: (value: NonNullable<V>, account: Prisma.Sql) => Prisma.Sql | null;
};

/**
 * A collection's filter: the GraphQL input, the zod object of its entries, the SQL of a parsed
 * value, and the page's arguments that set some of its entries (their fields, their rules, and the
 * filter of judged arguments).
 */
export type Filters<F = any> = {
  /** The names of its entries. */
  names: readonly string[];
  input: any;
  schema: z.ZodType<F>;
  sql: (filter: F) => Prisma.Sql[];
  /** The total of an account's own list filtered by `filter` alone, where its one given entry keeps it (FilterEntry.total); else null. */
  total: (filter: F, account: Prisma.Sql) => Prisma.Sql | null;
  page: { args: (t: any) => object; shape: z.ZodRawShape; filter: (input: Record<string, unknown>) => Partial<F> };
};

export type Collection<Node extends { id: string } = any, F = any> = {
  /** The node type's name: gives `<name>Connection` and `<name>Edge`. */
  name: string;
  table: string;
  /** The Prisma model: its rows are read by id through its delegate, unless `rows` says otherwise. */
  model?: string;
  /**
   * Rows are read as one JSON object built by PostgreSQL in the statement that finds them (every
   * scalar of `model`): no second round trip to read them by id, and none of Prisma's per-row work.
   * Unset: whenever every scalar reads back from JSON as Prisma reads it (no Decimal, BigInt or
   * Bytes). true: also a model with money, read as exact text, whose fields read it with `moneyOf`
   * (contacts, deals, invoices, stages). false: always by id.
   */
  json?: boolean;
  /**
   * Enum value (`CREATED_AT`; REST's `sort=created_at` is its lower case) -> indexed key. CREATED_AT,
   * newest first, is the default of every list (docs/decisions.md §3).
   */
  orders: Record<string, OrderColumn>;
  orderInput?: any;
  /** The connections' order when none is asked (CREATED_AT, newest first, unless said). */
  defaultOrder?: { field: string; direction: 'ASC' | 'DESC' };
  filter?: Filters<F>;
  /** To-one relations a page may join: the column of this table holding the target's id (same account). */
  relations?: Record<string, { to: Collection; by: string }>;
  /**
   * The filter listing values of the column record_counts keeps per account (docs/scaling.md#exact-totals):
   * a total filtered by that alone is a sum of counters, whatever the account's size. `true`: the
   * counters keep the account's total alone (a list filtered by anything is counted).
   */
  counter?: string | true;
  /** The rows of these ids, in any order (`accountIds` serves a key led by account_id). */
  rows?: (db: PrismaClient, ids: string[], accountIds: string[]) => Promise<Node[]>;
  /**
   * The record whose account-defined fields filter (a `customFields` entry: CUSTOM_FIELDS) and order
   * the list (custom-field-filter.ts, docs/custom-fields.md#filters).
   */
  custom?: RecordModel;
  /** Narrows a list's parsed filter to what the caller may read in the account (events: by kind, docs/decisions.md §15). */
  narrow?: (filter: F | null, ctx: Context, accountId: string) => Promise<F | null>;
};

/** The orders every dated collection has; its connection's ORDER BY is served by (account_id, created_at, id) and (account_id, updated_at, id). */
export const TIME_ORDERS = {
  CREATED_AT: { column: 'created_at', type: 'timestamptz' },
  UPDATED_AT: { column: 'updated_at', type: 'timestamptz' },
} as const;

export const col = (name: string) => Prisma.raw(`t."${name.replaceAll('"', '""')}"`);
export const ident = (name: string) => Prisma.raw(`"${name.replaceAll('"', '""')}"`);

/** How most filters combine their entries. */
const AND = 'All given conditions hold (AND); a list matches any of its values. `...After` is inclusive, `...Before` exclusive.';

/** The `<name>` input type and zod object of these entries; an absent (null) value adds no condition. */
export function filtersOf<E extends Record<string, FilterEntry>>(name: string, entries: E, description = AND): Filters<{ [K in keyof E]?: z.output<E[K]['schema']> }> {
  const list = Object.entries(entries);
  const args = list.flatMap(([key, e]) =>
    e.page === undefined ? [] : [{ key, ...(typeof e.page === 'string' ? { name: e.page, field: e.field, schema: e.schema, value: (v: unknown) => v } : e.page) }],
  );
  return {
    names: list.map(([key]) => key),
    page: {
      args: (t) => Object.fromEntries(args.map((a) => [a.name, a.field(t)])),
      shape: Object.fromEntries(args.map((a) => [a.name, a.schema])),
      filter: (input) => Object.fromEntries(args.map((a) => [a.key, input[a.name] == null ? null : a.value(input[a.name])])) as never,
    },
    input: builder.inputType(name, { description, fields: (t) => Object.fromEntries(list.map(([key, e]) => [key, e.field(t)])) }),
    schema: z.object(Object.fromEntries(list.map(([key, e]) => [key, e.schema]))) as never,
    sql: (filter) => list.flatMap(([key, e]) => ((filter as Record<string, unknown>)[key] == null ? [] : [e.sql((filter as Record<string, never>)[key])].flat())),
    total: (filter, account) => {
      const given = list.filter(([key]) => (filter as Record<string, unknown>)[key] != null);
      const [key, e] = given.length === 1 ? given[0]! : [];
      return e?.total ? e.total((filter as Record<string, never>)[key!], account) : null;
    },
  };
}

/**
 * A filter matching any of a list of `item` values (`[item!]`), with, when `page` names it, the
 * page argument giving one value (REST's `?type=client` for `types`).
 */
export function oneOrMore<V>(item: any, schema: z.ZodType<V>, sql: (values: readonly string[]) => Prisma.Sql, { page, max }: { page?: string; max?: [number, string] } = {}): FilterEntry<V[] | null | undefined> {
  const list = z.array(schema);
  return {
    field: (t) => t.field({ type: [item] }),
    schema: (max ? list.max(...max) : list).nullish(),
    sql: sql as never,
    ...(page ? { page: { name: page, field: (t: any) => t.field({ type: item }), schema: schema.nullish(), value: (one: unknown) => [one] } } : {}),
  };
}

/** A field builder's `t` for a filter entry's `field` when it declares an argument (`t.arg.id()`, `t.arg({type})`) rather than an input field. */
export const asArgs = (t: { arg: object }) => ({ ...t.arg, field: t.arg });

/** `[condition]` of a value: the shape every entry's `sql` answers. */
export const anyOf = (column: string, type: string) => (values: readonly string[]) =>
  // An empty list matches nothing.
  values.length === 0 ? Prisma.sql`FALSE` : Prisma.sql`${col(column)} IN (${Prisma.join(values.map((v) => Prisma.sql`CAST(${v} AS ${Prisma.raw(type)})`))})`;
export const eq = (column: string, type: string) => (value: unknown) => Prisma.sql`${col(column)} = CAST(${value} AS ${Prisma.raw(type)})`;
const dateOf = (type: string) => (d: Date) => Prisma.sql`CAST(${type === 'date' ? d.toISOString().slice(0, 10) : d.toISOString()} AS ${Prisma.raw(type)})`;
/** `after` inclusive, `before` exclusive (docs/decisions.md §11). */
export const from = (column: string, type = 'timestamptz') => (d: Date) => Prisma.sql`${col(column)} >= ${dateOf(type)(d)}`;
export const until = (column: string, type = 'timestamptz') => (d: Date) => Prisma.sql`${col(column)} < ${dateOf(type)(d)}`;

/** A record's id in `column`; `page`: also the page's argument of this name. */
export const idIn = (column: string, page?: string): FilterEntry<string | null | undefined> => ({ field: (t) => t.id(), schema: uuid.nullish(), sql: eq(column, 'uuid'), page });
/** The record's external id (docs/decisions.md §16), exactly. */
export const EXTERNAL_ID: FilterEntry<string | null | undefined> = {
  field: (t) => t.string({ description: 'The exact external id' }),
  schema: externalIdFilter,
  sql: eq('external_id', 'text'),
  page: 'externalId',
};

/**
 * The record's owner (docs/decisions.md §26), three ways: a user's id, `me` (the calling person,
 * made their id by `ownerMe` before the list is planned, so its cursors and total are those of the
 * id) or `none` (no owner). Served by (account_id, owner_id, created_at DESC, id DESC).
 */
export const OWNER_ID: FilterEntry<string | null | undefined> = {
  field: (t) => t.id({ description: "A user's id, `me` (the calling person; refused to an API key) or `none` (no owner)" }),
  schema: z
    .string()
    .refine((v) => v === 'me' || v === 'none' || uuid.safeParse(v).success, 'Must be a UUID, me or none')
    .nullish(),
  sql: (v) => {
    if (v === 'none') return Prisma.sql`${col('owner_id')} IS NULL`;
    if (v === 'me') throw new Error('ownerId `me` is read by ownerMe before the list is planned');
    return eq('owner_id', 'uuid')(v);
  },
  page: 'ownerId',
};

/** A collection's `narrow` for OWNER_ID: `me` becomes the caller's id; an API key is no person, so its `me` is a 400 on ownerId. */
export async function ownerMe<F extends { ownerId?: string | null }>(filter: F | null, ctx: Context): Promise<F | null> {
  if (filter?.ownerId !== 'me') return filter;
  const viewer = await ctx.viewer();
  if (viewer.apiKey) throw badInput({ ownerId: ["An API key is no person: give a user's id, or none"] });
  return { ...filter, ownerId: viewer.id };
}

/** `%`, `_` and `\` match themselves in (I)LIKE. */
export const likeEscape = (text: string) => text.replace(/[\\%_]/g, '\\$&');

/** Beside a pattern match (ILIKE, ~*): its statement is planned for each pattern, never prepared once for all (src/db/prepared.ts). */
export const PLANNED_EACH_TIME = Prisma.raw(PLAN_EACH_TIME);

const dateTime = (column: string, bound: typeof from): FilterEntry<Date | null | undefined> => ({
  field: (t) => t.field({ type: 'DateTime' }),
  schema: z.date().nullish(),
  sql: bound(column),
});
/** createdAfter/Before and (unless `updated` is false) updatedAfter/Before. REST's `updated_since` is updatedAfter. */
export const timeRanges = (updated = true) => ({
  createdAfter: dateTime('created_at', from),
  createdBefore: dateTime('created_at', until),
  ...(updated ? { updatedAfter: dateTime('updated_at', from), updatedBefore: dateTime('updated_at', until) } : {}),
});

/**
 * The counters' sum for `table` in `account` (SQL of a uuid); `keys` null = every key, else those
 * keys only (an empty list sums nothing). A numeric expression, one value.
 */
function counterSql(table: string, account: Prisma.Sql, keys: readonly string[] | null): Prisma.Sql {
  const only = keys === null ? Prisma.empty : keys.length === 0 ? Prisma.sql`AND FALSE` : Prisma.sql`AND c.key IN (${Prisma.join(keys)})`;
  return Prisma.sql`(SELECT coalesce(sum(c.n), 0) FROM record_counts c WHERE c.account_id = ${account} AND c.table_name = ${table} ${only})`;
}

/** The counter keys that give the total of this filter (null: every key), or undefined when it must be counted. */
export function countedKeys(collection: Collection, filter: object | null): { keys: string[] | null } | undefined {
  if (!collection.counter) return undefined;
  const given = Object.entries(filter ?? {}).filter(([, v]) => v != null);
  if (given.some(([name]) => name !== collection.counter)) return undefined;
  return { keys: given.length ? (given[0]![1] as string[]) : null };
}

/**
 * The total of a filter's rows (alias `t`; `where(filter)` is its condition with the account's own)
 * for `account` (SQL of a uuid). From the counters when they keep it (`countable`: the list is the
 * account's own, not a parent row's). A sync's filter (`updatedAfter`, with the counter's key or
 * not) counts the smaller side: its rows when a probe finds few, else the counter less the rows
 * changed before it, so the total costs what the page does however old the time is (BENCHMARKS.md,
 * "The sync list's total"). Both sides are read in the statement's one snapshot, as the counters
 * are kept in the writes' transactions: the sum stays exact.
 */
export function totalSql(collection: Collection, account: Prisma.Sql, filter: object | null, where: (filter: object | null) => Prisma.Sql, countable = true): Prisma.Sql {
  const kept = countable && filter ? collection.filter?.total(filter, account) : null;
  if (kept) return kept;
  const counted = countable && countedKeys(collection, filter);
  if (counted) return counterSql(collection.table, account, counted.keys);
  const table = ident(collection.table);
  const count = Prisma.sql`(SELECT count(*) FROM ${table} t WHERE ${where(filter)})`;
  const { updatedAfter, ...rest } = (filter ?? {}) as { updatedAfter?: Date | null };
  const others = countable && updatedAfter && collection.filter?.names.includes('updatedBefore') ? countedKeys(collection, rest) : undefined;
  if (!others) return count;
  const before = Prisma.sql`(SELECT count(*) FROM ${table} t WHERE ${where({ ...rest, updatedBefore: updatedAfter })})`;
  return Prisma.sql`(SELECT CASE WHEN probe.n < ${SYNC_PROBE} THEN probe.n ELSE ${counterSql(collection.table, account, others.keys)} - ${before} END
    FROM (SELECT count(*) AS n FROM (SELECT 1 FROM ${table} t WHERE ${where(filter)} LIMIT ${SYNC_PROBE}) AS rows) AS probe)`;
}

/** How many of a sync's rows are counted one by one before the total is taken from the other side. */
const SYNC_PROBE = 1000;

// ---- rows as JSON --------------------------------------------------------------------------------

/** Scalar and enum fields; their columns are the snake_case of the name (schema.prisma convention). */
const scalars = (model: string) => fieldsOf(model).filter((f) => f.kind === 'scalar' || f.kind === 'enum');
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * `key, value` pairs of a row's fields for json_build_object; money as text, so no digit is lost;
 * a timestamp or date as its milliseconds since the epoch (exact: `extract` answers numeric since
 * PostgreSQL 14, and the columns keep milliseconds), since a Date made from a number costs a fifth of
 * one parsed from ISO text: 50-100 of them a page.
 */
const jsonPairs = (alias: string, fields: Field[]) =>
  fields.map((f) => {
    const column = `${alias}."${snakeCase(f.name)}"`;
    const value = f.type === 'Decimal' ? `${column}::text` : f.type === 'DateTime' ? `floor(extract(epoch from ${column}) * 1000)` : column;
    return `${literal(f.name)}, ${value}`;
  });

/** What a page selects over alias `t` and joins for these relations, and how to type its text back. */
export type RowJson = { object: Prisma.Sql; joins: Prisma.Sql; read(row: Record<string, unknown>): Record<string, unknown> };
/** A to-one relation a page joins: its name, and the target's fields it reads (null: every scalar). */
export type Joined = { name: string; fields: readonly string[] | null };
const plans = new Map<string, RowJson | null>();
/** Plans kept: the shapes a service's operations ask for are few; a caller sending endless new selections gets its plan made each time. */
const MAX_PLANS = 1000;

/**
 * A row of the collection as one JSON object (camelCase as Prisma names the fields), with these
 * to-one relations joined; null when the collection is not read as JSON or a relation is unknown.
 */
export function rowJson(collection: Collection, include: readonly Joined[] = []): RowJson | null {
  const key = `${collection.name}:${include.map((r) => (r.fields ? `${r.name}(${r.fields.join(',')})` : r.name)).join(',')}`;
  const known = plans.get(key);
  if (known !== undefined) return known;
  const plan = planRow(collection, include);
  if (plans.size < MAX_PLANS) plans.set(key, plan);
  return plan;
}

/** Types JSON carries differently from Prisma: money only where the collection says its fields read it as text. */
const NOT_JSON = ['Decimal', 'BigInt', 'Bytes'];
const readAsJson = (collection: Collection) =>
  collection.model !== undefined && (collection.json ?? !scalars(collection.model).some((f) => NOT_JSON.includes(f.type)));

/**
 * The target's scalars a join reads: those named when every name is one (a deal's contact as REST
 * embeds it builds 3 of its 14 fields), else all of them.
 */
function joinedFields(model: string, names: readonly string[] | null): Field[] {
  const all = scalars(model);
  if (!names) return all;
  const picked = all.filter((f) => names.includes(f.name));
  return picked.length === names.length ? picked : all;
}

function planRow(collection: Collection, include: readonly Joined[]): RowJson | null {
  if (!readAsJson(collection)) return null;
  const fields = scalars(collection.model!);
  const pairs = jsonPairs('t', fields);
  const joins: string[] = [];
  const relations: { name: string; fields: Field[] }[] = [];
  for (const [i, { name, fields: names }] of include.entries()) {
    const relation = collection.relations?.[name];
    if (!relation || !readAsJson(relation.to)) return null;
    const alias = `r${i}`;
    const target = joinedFields(relation.to.model!, names);
    relations.push({ name, fields: target });
    pairs.push(`${literal(name)}, CASE WHEN ${alias}.id IS NULL THEN NULL ELSE json_build_object(${jsonPairs(alias, target).join(', ')}) END`);
    joins.push(`LEFT JOIN "${relation.to.table}" ${alias} ON ${alias}.account_id = t.account_id AND ${alias}.id = t."${relation.by}"`);
  }
  // json_build_object takes at most 100 arguments: a wider row is read by id.
  if (pairs.length > 50) return null;
  return {
    object: Prisma.raw(`json_build_object(${pairs.join(', ')})`),
    joins: Prisma.raw(joins.join(' ')),
    read: (row) => {
      revive(row, fields);
      for (const r of relations) if (row[r.name]) revive(row[r.name] as Record<string, unknown>, r.fields);
      return row;
    },
  };
}

/**
 * JSON's epoch milliseconds back into the Dates Prisma itself would have returned. Money stays the exact
 * text PostgreSQL sent: its fields read it with `moneyOf`, as they read a Prisma Decimal, and a
 * Decimal per row was a tenth of the page's cost under load.
 */
function revive(row: Record<string, unknown>, fields: Field[]) {
  for (const f of fields) {
    const value = row[f.name];
    if (value !== null && value !== undefined && f.type === 'DateTime') row[f.name] = new Date(value as number);
  }
}

/** The rows of these ids through the collection's `rows`, else its Prisma delegate. */
export function rowsById(db: PrismaClient, collection: Collection, ids: string[], accountIds: string[], query: object = {}): Promise<{ id: string }[]> {
  if (collection.rows && Object.keys(query).length === 0) return collection.rows(db, ids, accountIds);
  const model = collection.model!;
  const delegate = delegateOf<{ findMany(args: object): Promise<{ id: string }[]> }>(db, model);
  return delegate.findMany({ ...query, where: { id: { in: ids } } });
}
