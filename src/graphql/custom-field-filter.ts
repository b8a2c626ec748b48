// Lists filtered and ordered by an account's own fields (docs/custom-fields.md#filters, docs/decisions.md §23).
// A condition names a key; what the key is (its type, its options) is the account's definition for
// the record (src/model/shapes.ts), so a condition is judged once the account is known, before the
// list is planned (customList), never by a rule fixed at load. A key the account has not defined,
// or has archived, is refused; SQL is only ever made from judged conditions, with the key and the
// value as parameters.
import { z } from 'zod';
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import { badInput, type ErrorDetails } from '../errors.js';
import type { RecordModel } from '../model/field-spec.js';
import { customValueRule, objectOf, recordShapes, UNKNOWN_FIELD, type CustomFieldSpec, type CustomFieldType } from '../model/shapes.js';
import { searchText } from '../validation.js';
import { builder } from './builder.js';
import { likeEscape, PLANNED_EACH_TIME, type Collection, type FilterEntry, type OrderColumn } from './collection.js';
import type { Order } from './keyset.js';

/** Conditions a list takes at most: each is a clause of its statement. */
const MAX_CONDITIONS = 50;
/**
 * Values a list's `in`s take at most, all conditions together: each is a clause of its statement
 * too (60,000 held one list past its statement timeout, 28 s; 5,000 took 7 s: docs/custom-fields.md#limits).
 */
export const MAX_IN_VALUES = 100;
/** The types gt, gte, lt and lte compare, and those contains reads. */
const COMPARED: readonly CustomFieldType[] = ['NUMBER', 'DATE'];
const SEARCHED: readonly CustomFieldType[] = ['TEXT', 'EMAIL', 'URL', 'PHONE'];
const RANGES = ['gt', 'gte', 'lt', 'lte'] as const;
const OPERATORS = ['eq', 'in', ...RANGES, 'contains', 'isSet'] as const;

export const CustomFieldCondition = builder.inputType('CustomFieldCondition', {
  description: "A condition on one of the account's own fields (docs/custom-fields.md#filters); every operator given holds (AND)",
  fields: (t) => ({
    key: t.string({ required: true, description: "The field's key; an unknown or archived one is refused" }),
    eq: t.field({ type: 'JSON', description: 'Equal to this value; a MULTI_SELECT field: holds this option' }),
    in: t.field({ type: ['JSON'], description: 'Equal to any of these (a MULTI_SELECT field: holds any of them)' }),
    gt: t.field({ type: 'JSON', description: 'Greater than (NUMBER and DATE fields)' }),
    gte: t.field({ type: 'JSON', description: 'At least (NUMBER and DATE fields)' }),
    lt: t.field({ type: 'JSON', description: 'Less than (NUMBER and DATE fields)' }),
    lte: t.field({ type: 'JSON', description: 'At most (NUMBER and DATE fields)' }),
    contains: t.string({ description: 'Case-insensitive substring (TEXT, EMAIL, URL and PHONE fields)' }),
    isSet: t.boolean({ description: 'Has a value (true) or none (false)' }),
  }),
});

/** A JSON value; null is as absent. */
const given = z.unknown().optional();
const condition = z.object({
  key: z.string(),
  eq: given,
  in: z.array(z.unknown()).nullish(),
  gt: given,
  gte: given,
  lt: given,
  lte: given,
  contains: z.string().nullish(),
  isSet: z.boolean().nullish(),
});
type Condition = z.output<typeof condition>;

/** A condition judged by the account's definition: its field's type, its values as stored. */
type Judged = { key: string; type: CustomFieldType; object?: string } & Partial<Record<(typeof RANGES)[number] | 'eq', unknown>> & { in?: unknown[]; contains?: string; isSet?: boolean };

/** A value given as text (a REST query string) as the field's type: a NUMBER's number, a BOOLEAN's true or false. */
function typed(type: CustomFieldType, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (type === 'NUMBER' && /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(value)) return Number(value);
  if (type === 'BOOLEAN' && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/** What eq and in compare with: one value of the field (a MULTI_SELECT's: one of its options). */
const comparedRule = (field: CustomFieldSpec) =>
  field.custom.type === 'MULTI_SELECT' ? customValueRule({ ...field.custom, type: 'SELECT', required: true }) : customValueRule({ ...field.custom, required: true });

/** The conditions judged against the account's active fields, or BAD_USER_INPUT naming every failing key (`customFields.<key>[.<operator>]`). */
export function judgeConditions(conditions: readonly Condition[], custom: readonly CustomFieldSpec[]): Judged[] {
  const details: ErrorDetails = {};
  const fail = (name: string, message: string) => (details[name] ??= []).push(message);
  let inValues = 0;
  const judged = conditions.map((c) => {
    const at = `customFields.${c.key}`;
    const field = custom.find((f) => f.name === c.key);
    if (!field) return fail(at, UNKNOWN_FIELD);
    const { type } = field.custom;
    if (OPERATORS.every((op) => c[op] == null)) return fail(at, `Give at least one of ${OPERATORS.join(', ')}`);
    const out: Judged = { key: c.key, type };
    const value = (op: string, rule: z.ZodType, v: unknown) => {
      const parsed = rule.safeParse(typed(type, v));
      if (parsed.success) return parsed.data;
      for (const message of new Set(parsed.error.issues.map((i) => i.message))) fail(`${at}.${op}`, message);
    };
    if (c.eq != null) out.eq = value('eq', comparedRule(field), c.eq);
    if (c.in != null) {
      if ((inValues += c.in.length) > MAX_IN_VALUES) fail(`${at}.in`, `At most ${MAX_IN_VALUES} values in all of a list's in conditions`);
      else out.in = c.in.map((v) => value('in', comparedRule(field), v));
    }
    for (const op of RANGES) {
      if (c[op] == null) continue;
      if (!COMPARED.includes(type)) fail(`${at}.${op}`, `gt, gte, lt and lte compare NUMBER and DATE fields; ${c.key} is ${type}`);
      else out[op] = value(op, customValueRule({ ...field.custom, required: true }), c[op]);
    }
    if (c.contains != null) {
      if (!SEARCHED.includes(type)) fail(`${at}.contains`, `contains reads TEXT, EMAIL, URL and PHONE fields; ${c.key} is ${type}`);
      else out.contains = value('contains', searchText, c.contains) as string | undefined;
    }
    if (c.isSet != null) out.isSet = c.isSet;
    return out;
  });
  if (Object.keys(details).length) throw badInput(details);
  return judged as Judged[];
}

// The value of `key` in a row's custom_fields, over alias `t`; as a number or a day only where the
// stored JSON is one (the casts never meet anything else, whatever a row holds).
const text = (key: string) => Prisma.sql`(t.custom_fields ->> CAST(${key} AS text))`;
const number = (key: string) =>
  Prisma.sql`(CASE WHEN jsonb_typeof(t.custom_fields -> CAST(${key} AS text)) = 'number' THEN (t.custom_fields ->> CAST(${key} AS text))::numeric END)`;
// A day is `YYYY-MM-DD` (values are judged on write), so its text orders as the day; "C" compares bytes.
const day = (key: string) =>
  Prisma.sql`(CASE WHEN jsonb_typeof(t.custom_fields -> CAST(${key} AS text)) = 'string' THEN (t.custom_fields ->> CAST(${key} AS text)) END) COLLATE "C"`;
/** Containment, which the GIN index (custom_fields jsonb_path_ops) serves; a MULTI_SELECT holds the option among others. */
const holds = (c: Judged, value: unknown) =>
  Prisma.sql`t.custom_fields @> CAST(${JSON.stringify({ [c.key]: c.type === 'MULTI_SELECT' ? [value] : value })} AS jsonb)`;
const OP_SQL = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function conditionSql(c: Judged): Prisma.Sql[] {
  if (!c.type) throw new Error('customFields conditions are judged by customList before the list is planned');
  const out: Prisma.Sql[] = [];
  if (c.eq !== undefined) out.push(holds(c, c.eq));
  if (c.in !== undefined) out.push(c.in.length ? Prisma.sql`(${Prisma.join(c.in.map((v) => holds(c, v)), ' OR ')})` : Prisma.sql`FALSE`);
  for (const op of RANGES) {
    if (c[op] === undefined) continue;
    out.push(
      c.type === 'NUMBER'
        ? Prisma.sql`${number(c.key)} ${Prisma.raw(OP_SQL[op])} CAST(${String(c[op])} AS numeric)`
        : Prisma.sql`${day(c.key)} ${Prisma.raw(OP_SQL[op])} CAST(${c[op]} AS text)`,
    );
  }
  // As the lists' search (docs/decisions.md §3): a case-insensitive substring, planned for each pattern.
  if (c.contains) out.push(Prisma.sql`${text(c.key)} ILIKE ${`%${likeEscape(c.contains)}%`} ${PLANNED_EACH_TIME}`);
  if (c.isSet !== undefined) out.push(c.isSet ? Prisma.sql`(t.custom_fields ? CAST(${c.key} AS text))` : Prisma.sql`NOT (t.custom_fields ? CAST(${c.key} AS text))`);
  return out;
}

/**
 * The exact total of ranges on one NUMBER field (and nothing else): the entries of
 * custom_field_numbers in that range, an index-only count (migration *_custom_field_numbers keeps a
 * row per record and key holding a JSON number, in the transaction of every write, so the count is
 * the rows' own). Null for any other condition: counted over the rows.
 */
function numberTotal(conditions: readonly Judged[], account: Prisma.Sql): Prisma.Sql | null {
  const [first] = conditions;
  const ranged = (c: Judged) =>
    c.type === 'NUMBER' && c.object !== undefined && c.key === first!.key && c.eq === undefined && c.in === undefined && c.contains === undefined && c.isSet === undefined && RANGES.some((op) => c[op] !== undefined);
  if (!first || !conditions.every(ranged)) return null;
  const bounds = conditions.flatMap((c) => RANGES.filter((op) => c[op] !== undefined).map((op) => Prisma.sql`n.value ${Prisma.raw(OP_SQL[op])} CAST(${String(c[op])} AS numeric)`));
  return Prisma.sql`(SELECT count(*) FROM custom_field_numbers n
    WHERE n.account_id = ${account} AND n.object = CAST(${first.object} AS custom_field_object) AND n.key = ${first.key} AND ${Prisma.join(bounds, ' AND ')})`;
}

/** The types whose values custom_field_counts counts, one counter per value. */
const COUNTED: readonly CustomFieldType[] = ['SELECT', 'BOOLEAN', 'MULTI_SELECT'];

/**
 * The exact total of one equality on a SELECT, BOOLEAN or MULTI_SELECT field (`eq`, or `in` on the
 * first two, whose values no record holds twice): the sum of the values' counters in
 * custom_field_counts (migration *_custom_field_counts keeps them in the transaction of every write),
 * a few rows read by primary key where counting the matches read each one (1.7 s for 90,000 at a
 * million contacts). Null for anything else: counted over the rows.
 */
function choiceTotal(conditions: readonly Judged[], account: Prisma.Sql): Prisma.Sql | null {
  if (conditions.length !== 1) return null;
  const c = conditions[0]!;
  const other = RANGES.some((op) => c[op] !== undefined) || c.contains !== undefined || c.isSet !== undefined;
  if (!COUNTED.includes(c.type) || c.object === undefined || other || (c.eq === undefined) === (c.in === undefined)) return null;
  const values = [...new Set((c.eq !== undefined ? [c.eq] : c.in!).map(String))];
  // A MULTI_SELECT record may hold several of the options: their counters' sum would count it twice.
  if (values.length === 0 || (c.type === 'MULTI_SELECT' && values.length > 1)) return null;
  return Prisma.sql`(SELECT coalesce(sum(k.n), 0) FROM custom_field_counts k
    WHERE k.account_id = ${account} AND k.object = CAST(${c.object} AS custom_field_object) AND k.key = ${c.key} AND k.value IN (${Prisma.join(values)}))`;
}

/** The `customFields` entry of a collection's filter (and its page's argument), for a collection declaring `custom`. */
export const CUSTOM_FIELDS: FilterEntry<Condition[] | null | undefined> = {
  field: (t) => t.field({ type: [CustomFieldCondition], description: "Conditions on the account's own fields, all of which hold (docs/custom-fields.md#filters)" }),
  schema: z.array(condition).max(MAX_CONDITIONS, `At most ${MAX_CONDITIONS} conditions`).nullish(),
  sql: (conditions) => (conditions as unknown as Judged[]).flatMap(conditionSql),
  total: (conditions, account) => numberTotal(conditions as unknown as Judged[], account) ?? choiceTotal(conditions as unknown as Judged[], account),
  page: 'customFields',
};

/** The order of a custom field's value: rows without one last, either way; a number as a number, a day as its text. */
function orderOf(field: CustomFieldSpec, table: string, object: string): OrderColumn {
  const { type } = field.custom;
  const sql = type === 'NUMBER' ? number(field.name) : type === 'DATE' ? day(field.name) : text(field.name);
  const column: OrderColumn = { column: 'custom_fields', type: type === 'NUMBER' ? 'numeric' : 'text', nullable: true, nullsLast: true, follows: false, sql };
  return type === 'NUMBER' ? { ...column, candidates: numberCandidates(field.name, table, object) } : column;
}

/**
 * The first rows of an order by a NUMBER field, from custom_field_numbers' btree (value, then id: the
 * order's own) instead of every record's JSON: the first `count` entries from the cursor, joined to
 * their rows; then, only when fewer than `count` hold a value there, the rows without one (which
 * come last either way) in id order, from the table's (account_id, id) index. At most 2 × count rows.
 */
function numberCandidates(key: string, table: string, object: string): NonNullable<OrderColumn['candidates']> {
  const from = Prisma.raw(`"${table}"`);
  return (account, direction, count, after) => {
    const dir = Prisma.raw(direction);
    const beyond = Prisma.raw(direction === 'ASC' ? '>' : '<');
    // A cursor among the rows without a value: none with one follows it.
    const valuedAfter = !after ? Prisma.empty
      : after.value === null ? Prisma.sql`AND FALSE`
      : Prisma.sql`AND (n.value, n.record_id) ${beyond} (CAST(${after.value} AS numeric), CAST(${after.id} AS uuid))`;
    const valued = Prisma.sql`SELECT n.record_id FROM custom_field_numbers n
      WHERE n.account_id = ${account} AND n.object = CAST(${object} AS custom_field_object) AND n.key = ${key} ${valuedAfter}
      ORDER BY n.value ${dir}, n.record_id ${dir} LIMIT ${count}`;
    const noneAfter = after?.value === null ? Prisma.sql`AND t.id ${beyond} CAST(${after.id} AS uuid)` : Prisma.empty;
    return Prisma.sql`SELECT t.* FROM (${valued}) v JOIN ${from} t ON t.id = v.record_id AND t.account_id = ${account}
      UNION ALL
      (SELECT t.* FROM ${from} t WHERE t.account_id = ${account} AND jsonb_typeof(t.custom_fields -> CAST(${key} AS text)) IS DISTINCT FROM 'number' ${noneAfter}
         AND (SELECT count(*) FROM (${valued}) g) < ${count}
       ORDER BY t.id ${dir} LIMIT ${count})`;
  };
}

/** The order asked for by a custom field's key, and the argument that named it (refusals name it). */
export type CustomOrder = { key: string; direction: Order['direction']; arg: string };

/**
 * A list's filter and order with the account's own fields judged (`model`: the collection's
 * `custom`): conditions typed by their fields, a custom order as the column it reads. The account's
 * definitions are read only when a condition or order names one (they are kept in memory: shapes.ts).
 */
export async function customList<F extends object>(
  collection: Collection & { custom?: RecordModel },
  filter: F | null,
  order: Order,
  by: CustomOrder | null,
  db: PrismaClient,
  accountId: string,
): Promise<{ filter: F | null; order: Order; column?: OrderColumn }> {
  const conditions = (filter as { customFields?: Condition[] | null } | null)?.customFields;
  if (!collection.custom || (!conditions?.length && !by)) return { filter, order };
  const { custom } = await recordShapes.of(db, accountId, collection.custom);
  // The object names the conditions' rows of custom_field_numbers and custom_field_counts (numberTotal, choiceTotal).
  const object = objectOf(collection.custom);
  const judged = conditions?.length ? { ...filter, customFields: judgeConditions(conditions, custom).map((c) => ({ ...c, object })) } : filter;
  if (!by) return { filter: judged as F, order };
  const field = custom.find((f) => f.name === by.key);
  if (!field) throw badInput({ [by.arg]: [UNKNOWN_FIELD] });
  if (field.custom.type === 'MULTI_SELECT') throw badInput({ [by.arg]: ['A MULTI_SELECT field does not order a list'] });
  // `cf.` sets a custom order apart from every built-in one in the cursors' fingerprint (keyset.ts).
  return { filter: judged as F, order: { field: `cf.${by.key}`, direction: by.direction }, column: orderOf(field, collection.table, object) };
}
