// One round trip for a list page: the page's rows, their to-one relations and the total of the
// same filter in one SQL statement that answers one row (definePage's fast path). Prisma spends
// three to five round trips (count, page, one per relation) and decodes every value of every row;
// here PostgreSQL builds the rows as one JSON text, dates typed back below (money stays exact text).
// Only what is known to translate exactly is taken: `where` built from equalities, (I)LIKE filters
// (contains/startsWith/endsWith), AND and OR; `include: { relation: true }` of the relations in
// JOINS. Anything else answers null and the caller uses Prisma as before.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { getDatamodel } from '../generated/pothos-types.js';
import { totalSql } from './totals.js';

/** Tables of the models a page may read, and the to-one relations it may join. */
const TABLES: Record<string, string> = { Contact: 'contacts', Deal: 'deals', Invoice: 'invoices', PipelineStage: 'pipeline_stages' };
const JOINS: Record<string, Record<string, { model: string; on: [from: string, to: string][] }>> = {
  Deal: {
    contact: { model: 'Contact', on: [['account_id', 'account_id'], ['contact_id', 'id']] },
    stage: { model: 'PipelineStage', on: [['account_id', 'account_id'], ['stage_id', 'id']] },
  },
  Invoice: { contact: { model: 'Contact', on: [['account_id', 'account_id'], ['contact_id', 'id']] } },
};

export type SqlPage = { nodes: Record<string, unknown>[]; total: number };

type Field = { name: string; kind: string; type: string };
const datamodel = getDatamodel().datamodel.models as Record<string, { fields: readonly Field[] }>;
/** Scalar and enum fields; their columns are the snake_case of the name (schema.prisma convention). */
const scalars = (model: string) => (datamodel[model]?.fields ?? []).filter((f) => f.kind === 'scalar' || f.kind === 'enum');
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

type Columns = Map<string, string>; // column -> type name (udt), from the catalogue
type Cache<T> = WeakMap<PrismaClient, Map<string, Promise<T>>>;
const catalogue: Cache<Columns> = new WeakMap();
const plans: Cache<Plan | null> = new WeakMap();

/** Per client (each test app has its own database), computed once; a failure is retried next time. */
function cached<T>(cache: Cache<T>, db: PrismaClient, key: string, make: () => Promise<T>): Promise<T> {
  let entries = cache.get(db);
  if (!entries) cache.set(db, (entries = new Map()));
  let entry = entries.get(key);
  if (!entry) {
    entries.set(key, (entry = make()));
    entry.catch(() => entries!.delete(key));
  }
  return entry;
}

/** The live columns of a table and their types (parameters are cast to them, keeping indexes usable). */
const columnsOf = (db: PrismaClient, table: string) =>
  cached(catalogue, db, table, async () => {
    const rows = await db.$queryRaw<{ column_name: string; udt_name: string }[]>`
      SELECT column_name, udt_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ${table}`;
    return new Map(rows.map((r) => [r.column_name, r.udt_name]));
  });

type Shape = { fields: Field[]; relations: { name: string; fields: Field[] }[] };
type Plan = Shape & { table: string; columns: Columns; object: string; joins: string };

/** `key, value` pairs of a row's fields for json_build_object; money as text, so no digit is lost. */
const jsonPairs = (alias: string, fields: Field[]) =>
  fields.map((f) => `${literal(f.name)}, ${alias}.${ident(snake(f.name))}${f.type === 'Decimal' ? '::text' : ''}`);

/** What to select and join for `model` with these relations, or null when something does not map. */
const planOf = (db: PrismaClient, model: string, include: string[]) =>
  cached(plans, db, `${model}:${include.join(',')}`, async (): Promise<Plan | null> => {
    const table = TABLES[model];
    const fields = scalars(model);
    const columns = table ? await columnsOf(db, table) : undefined;
    if (!table || !columns || !fields.every((f) => columns.has(snake(f.name)))) return null;
    const pairs = jsonPairs('t', fields);
    const joins: string[] = [];
    const relations: Shape['relations'] = [];
    for (const [i, name] of include.entries()) {
      const join = JOINS[model]?.[name];
      const target = join && TABLES[join.model];
      const targetFields = join ? scalars(join.model) : [];
      const targetColumns = target ? await columnsOf(db, target) : undefined;
      if (!join || !target || !targetColumns || !targetFields.every((f) => targetColumns.has(snake(f.name)))) return null;
      const alias = `r${i}`;
      relations.push({ name, fields: targetFields });
      pairs.push(`${literal(name)}, CASE WHEN ${alias}.id IS NULL THEN NULL ELSE json_build_object(${jsonPairs(alias, targetFields).join(', ')}) END`);
      joins.push(`LEFT JOIN ${ident(target)} ${alias} ON ${join.on.map(([from, to]) => `${alias}.${ident(to)} = t.${ident(from)}`).join(' AND ')}`);
    }
    // json_build_object takes at most 100 arguments: a wider row goes through Prisma.
    if (pairs.length > 50) return null;
    return { table, columns, fields, relations, object: `json_build_object(${pairs.join(', ')})`, joins: joins.join(' ') };
  });

/**
 * A model's row of `table` as one JSON object over alias `t` (every scalar, camelCase as Prisma
 * names them), and how to type its text back; null for a model or table this file does not know. The cursor connections
 * (connection.ts) read their page's rows with it in the statement that finds the page.
 */
export async function rowObject(db: PrismaClient, model: string, table: string): Promise<{ sql: Prisma.Sql; read(text: string): Record<string, unknown> } | null> {
  const plan = await planOf(db, model, []);
  if (!plan || plan.table !== table) return null;
  return {
    sql: Prisma.raw(plan.object),
    read: (text) => {
      const row = JSON.parse(text) as Record<string, unknown>;
      revive(row, plan.fields);
      return row;
    },
  };
}

type Filter = Record<string, unknown>;
const LIKE: Record<string, (v: string) => string> = { contains: (v) => `%${v}%`, startsWith: (v) => `${v}%`, endsWith: (v) => `%${v}` };

/** A Prisma `where` as SQL over alias `t`, or null when it uses anything not translated here. */
export function whereSql(where: unknown, fields: Set<string>, columns: Columns): Prisma.Sql | null {
  if (where === null || typeof where !== 'object' || Array.isArray(where)) return null;
  const parts: Prisma.Sql[] = [];
  for (const [key, value] of Object.entries(where as Filter)) {
    if (value === undefined) continue;
    if (key === 'AND' || key === 'OR') {
      const list = (Array.isArray(value) ? value : [value]).map((w) => whereSql(w, fields, columns));
      if (list.some((w) => w === null)) return null;
      if (key === 'OR') parts.push(list.length ? Prisma.sql`(${Prisma.join(list as Prisma.Sql[], ' OR ')})` : Prisma.sql`FALSE`);
      else if (list.length) parts.push(Prisma.sql`(${Prisma.join(list as Prisma.Sql[], ' AND ')})`);
      continue;
    }
    const type = fields.has(key) ? columns.get(snake(key)) : undefined;
    const sql = type ? filterSql(Prisma.raw(`t.${ident(snake(key))}`), type, value) : null;
    if (!sql) return null;
    parts.push(sql);
  }
  return parts.length ? Prisma.join(parts, ' AND ') : Prisma.sql`TRUE`;
}

function filterSql(column: Prisma.Sql, type: string, value: unknown): Prisma.Sql | null {
  if (value === null) return Prisma.sql`${column} IS NULL`;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return Prisma.sql`${column} = CAST(${value} AS ${Prisma.raw(ident(type))})`;
  }
  if (typeof value !== 'object' || Array.isArray(value) || value instanceof Date) return null;
  const { mode, ...rest } = value as Filter;
  if (mode !== undefined && mode !== 'default' && mode !== 'insensitive') return null;
  const parts: Prisma.Sql[] = [];
  for (const [op, operand] of Object.entries(rest)) {
    if (operand === undefined) continue;
    const sql =
      op === 'equals' && mode !== 'insensitive' ? filterSql(column, type, operand)
      // As Prisma does: the value goes into the pattern as is (callers escape % and _ themselves).
      : op in LIKE && typeof operand === 'string' ? Prisma.sql`${column} ${Prisma.raw(mode === 'insensitive' ? 'ILIKE' : 'LIKE')} ${LIKE[op]!(operand)}`
      : null;
    if (!sql) return null;
    parts.push(sql);
  }
  return parts.length ? Prisma.join(parts, ' AND ') : Prisma.sql`TRUE`;
}

/**
 * JSON's date strings back into the Dates Prisma itself would have returned. Money stays the exact
 * text PostgreSQL sent: its fields read it with `moneyOf`, as they read a Prisma Decimal, and a
 * Decimal per row was a tenth of this file's cost under load.
 */
function revive(row: Record<string, unknown>, fields: Field[]) {
  for (const f of fields) {
    const value = row[f.name];
    if (value !== null && value !== undefined && f.type === 'DateTime') row[f.name] = new Date(value as string);
  }
}

/**
 * The page (newest first) with the relations `query` includes, and the total when asked for; null
 * when the model, the filter or the selection is not one this translates (then use Prisma).
 */
export async function sqlPage(
  db: PrismaClient,
  model: string,
  where: unknown,
  query: Filter,
  skip: number,
  take: number,
  withTotal: boolean,
): Promise<SqlPage | null> {
  const { include, ...other } = query;
  if (Object.keys(other).length > 0 || (include !== undefined && (typeof include !== 'object' || include === null))) return null;
  const wanted = Object.entries((include ?? {}) as Filter).filter(([, v]) => v !== undefined && v !== false);
  if (wanted.some(([, v]) => v !== true)) return null; // nested selections and filters: Prisma's job
  const plan = await planOf(db, model, wanted.map(([name]) => name));
  const filter = plan && whereSql(where, new Set(plan.fields.map((f) => f.name)), plan.columns);
  if (!plan || !filter) return null;

  const table = Prisma.raw(ident(plan.table));
  // The page is cut first (the index serves ORDER BY ... LIMIT), then joined and turned into JSON:
  // a deep page handles 25 rows, not the 50,000 it skips.
  const [row] = await db.$queryRaw<{ total: number; nodes: string }[]>`
    SELECT ${withTotal ? Prisma.sql`${totalSql(model, where) ?? Prisma.sql`(SELECT count(*) FROM ${table} t WHERE ${filter})`}::int` : Prisma.sql`0`} AS total,
      (SELECT coalesce(json_agg(p.node ORDER BY p.created_at DESC, p.id DESC), '[]')::text FROM (
        SELECT ${Prisma.raw(plan.object)} AS node, t.created_at, t.id FROM (
          SELECT * FROM ${table} t WHERE ${filter} ORDER BY t.created_at DESC, t.id DESC LIMIT ${take} OFFSET ${skip}
        ) t ${Prisma.raw(plan.joins)}
      ) p) AS nodes`;
  const nodes = JSON.parse(row!.nodes) as Record<string, unknown>[];
  for (const node of nodes) {
    revive(node, plan.fields);
    for (const r of plan.relations) if (node[r.name]) revive(node[r.name] as Record<string, unknown>, r.fields);
  }
  return { nodes, total: Number(row!.total) };
}
