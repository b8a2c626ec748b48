// Batches and upserts (docs/decisions.md §16, docs/batches.md), and the single creates, on one path:
// every item judged by its single create's or update's zod rules, the whole set's same-account ids
// checked in one query, upsert keys locked and their records read in one statement each, and the
// rows written with their events by writeSet in one statement. Nothing here knows GraphQL or HTTP.
import type { z } from 'zod';
import { badInput, NOT_A_MEMBER, NOT_IN_ACCOUNT, type ErrorDetails } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';
import type { Actor } from '../events/types.js';
import { isUuid, toDetails } from '../validation.js';
import { newId, readRows, writeSet, type Row, type SetChange, type SetModel, type Written } from './set-write.js';
import { brokenLink } from '../db/sql-state.js';
import { mapInSlices } from './yielding.js';
import { camelCase, snakeCase } from '../names.js';
import { recordShapes } from '../model/shapes.js';
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { writeRulesOf } from './update.js';
import { patched } from './custom-values.js';

export const MAX_BATCH = 100;
export const DUPLICATE = 'Duplicate in this batch';
export const NOT_WRITTEN = 'Not written: another record of the batch failed';

export type ItemStatus = 'CREATED' | 'UPDATED' | 'UNCHANGED' | 'FAILED';
export type BatchItem = { index: number; status: ItemStatus; record: Row | null; details: ErrorDetails | null };
export type BatchResult = { created: number; updated: number; unchanged: number; failed: number; items: BatchItem[] };

/** What upserts match on: a case-insensitive e-mail (the oldest record if several, as §5), a company's domain, or the exact external id. */
export type MatchOn = 'email' | 'domain' | 'externalId';

/** A key of a record type: what upserts may match on, and what the account holds once. */
export type KeyRule = {
  /** Unique in the account: what an item whose value another record holds fails with. */
  taken?: string;
  /** Compared case-insensitively (SQL reads it by `lower()`, as its index does). */
  caseless?: true;
};
export type BatchMode = { mode: 'create' } | { mode: 'upsert'; on: MatchOn };
/**
 * `records: false` (an import): items carry their status, not their record (null), so the write
 * statement returns ids alone instead of every written row as JSON to be parsed back.
 */
export type BatchHow = BatchMode & {
  allOrNothing: boolean;
  records?: boolean;
  /** Called once the write statement is on its way to the database: an import judges its next chunk meanwhile (docs/imports.md#the-worker). */
  whileWriting?: () => void;
};

/** One record type on this path: its model (table, fields, the account's own fields), its rules, and how a valid create input becomes a row. */
export type BatchKind = {
  spec: SetModel & RecordModel;
  /** The single create's rules (with `accountId`): defaults applied, text trimmed. */
  create: z.ZodType;
  /** The single update's rules: absent = unchanged, null = cleared or Required. */
  update: z.ZodType;
  /** Its keys, each compared as parsed (a domain is normalised by its rules): those upserts match on, and those unique in the account. */
  keys: Partial<Record<MatchOn, KeyRule>>;
  /** Every column of a new row from a parsed create input. */
  newRow(input: Record<string, unknown>, id: string, now: Date): Row;
  /** Ids that must name records of the same account: field -> table. */
  refs?: Record<string, 'contacts' | 'pipeline_stages'>;
  /** The kind's own checks over the whole set, after `refs` (src/links/company-owner.ts): may fail items. */
  links?: (tx: Prisma.TransactionClient, accountId: string, judged: Judged[]) => Promise<void>;
  /** A new row's company found by this domain in the write's own statement, where it names none (writeSet's `companyByDomain`). */
  companyByDomain?: (row: Row) => string | null;
};

/**
 * A record's kind on this path from its model: the single create's and update's rules derived from
 * it (writeRulesOf, also answered as `rules` for the record's own fields), the items' `customFields`
 * judged by the account's definitions of it (docs/custom-fields.md); `parts`: what the model does not say.
 */
export function batchKindOf<const F extends readonly FieldSpec[]>(model: SetModel & RecordModel<F>, parts: Omit<BatchKind, 'spec' | 'create' | 'update'>) {
  const rules = writeRulesOf(model);
  return { spec: model, create: rules.create, update: rules.update, ...parts, rules } satisfies BatchKind & { rules: unknown };
}

/** Details as REST names them (docs/decisions.md §16): `expected_close_date`, never a GraphQL variable path. */
const restDetails = (details: ErrorDetails): ErrorDetails =>
  Object.fromEntries(Object.entries(details).map(([key, messages]) => [key.split('.').map(snakeCase).join('.'), messages]));

/** A key's value as the kind compares it; null for none. */
export const matchKey = (kind: BatchKind, field: MatchOn, value: unknown): string | null =>
  typeof value !== 'string' || value === '' ? null : kind.keys[field]?.caseless ? value.toLowerCase() : value;

const uniqueFields = (kind: BatchKind): MatchOn[] => (Object.keys(kind.keys) as MatchOn[]).filter((field) => kind.keys[field]!.taken);

/** The keys two items of one set may not share: the upsert's match key, and every key unique in the account. */
export const setKeys = (kind: BatchKind, how: BatchMode): MatchOn[] => [...new Set([...(how.mode === 'upsert' ? [how.on] : []), ...uniqueFields(kind)])];

/** The transaction lock of an upsert key: the form submit's contact match takes the same one per e-mail. */
export const lockKey = (accountId: string, table: string, on: MatchOn, key: string): string =>
  on === 'email' ? `${accountId}:${key}` : `${accountId}:${table}:${snakeCase(on)}:${key}`;

/**
 * An item after its rules: its parsed data, or its problems (and what it gave, so its links are
 * judged too). An upsert item also carries its create's verdict, used if it matches nothing.
 */
export type Judged =
  | { index: number; data: Record<string, unknown>; asCreate?: { data: Record<string, unknown> } | { details: ErrorDetails } }
  | { index: number; details: ErrorDetails; input?: Record<string, unknown> };

/** A batch's answer when `allOrNothing` kept everything back: thrown inside the write so its transaction rolls back. */
export class BatchRolledBack extends Error {
  constructor(readonly result: BatchResult) {
    super('batch rolled back');
  }
}

/**
 * Writes `inputs` (raw items, as the GraphQL input gave them) to `accountId` in the caller's
 * transaction; each item reports. With `allOrNothing`, one failure writes nothing (thrown as
 * BatchRolledBack when it is found only after the write, so the transaction ends with it).
 */
export async function writeBatch(
  tx: Prisma.TransactionClient,
  kind: BatchKind,
  accountId: string,
  inputs: Record<string, unknown>[],
  how: BatchHow,
  actor: Actor,
): Promise<BatchResult> {
  return writeJudged(tx, kind, accountId, await judgeBatch(kind, accountId, inputs, how), how, actor);
}

/**
 * Every item of a set by its rules, and the later of two with one key failed: what needs no
 * database, so it can run before the transaction (an import judges its next chunk while the
 * current one's statement runs).
 */
export async function judgeBatch(kind: BatchKind, accountId: string, inputs: Record<string, unknown>[], how: BatchMode): Promise<Judged[]> {
  const judged = await mapInSlices(inputs, (input, index) => judge(kind, how, accountId, input, index));
  markDuplicates(kind, judged, how);
  return judged;
}

/**
 * A single create's one item, judged already: the field's rules parsed it with the kind's `create`
 * rule (src/graphql/input-rules.ts), so parsing it again would redo the same work (about a tenth of
 * a create's process CPU went to zod, twice). A copy: the links fill in its data (linkByEmailDomain).
 */
export const parsedOne = (input: Record<string, unknown>): Judged[] => [{ index: 0, data: { ...input } }];

/** writeBatch of items judgeBatch judged with the same `kind`, account and mode (`judged` is the caller's no more: it is changed). */
export async function writeJudged(
  tx: Prisma.TransactionClient,
  kind: BatchKind,
  accountId: string,
  judged: Judged[],
  how: BatchHow,
  actor: Actor,
): Promise<BatchResult> {
  const now = new Date();
  const count = judged.length;
  await checkRefs(tx, kind, accountId, judged);
  await kind.links?.(tx, accountId, judged);
  await judgeValues(tx, kind.spec, accountId, judged, how);

  const existing = how.mode === 'upsert' ? matchesByKey(kind, how.on, await lockAndRead(tx, kind, accountId, how.on, judged)) : null;
  const items: BatchItem[] = [];
  const creates: { index: number; row: Row }[] = [];
  const updates: { index: number; change: SetChange }[] = [];
  const records = how.records !== false;
  await mapInSlices(judged, (item) => {
    if ('details' in item) {
      items[item.index] = failed(item.index, item.details);
      return;
    }
    const planned = how.mode === 'upsert' ? plan(kind, item, existing!, now, how.on) : { create: kind.newRow(item.data, newId(), now) };
    if ('details' in planned) items[item.index] = failed(item.index, planned.details);
    else if ('create' in planned) creates.push({ index: item.index, row: planned.create });
    else if ('update' in planned) updates.push({ index: item.index, change: planned.update });
    else items[item.index] = { index: item.index, status: 'UNCHANGED', record: records ? planned.unchanged : null, details: null };
  });
  if (how.allOrNothing && items.some((i) => i?.status === 'FAILED')) return keptBack(count, items);

  const unique = uniqueFields(kind);
  let written: Written | null = null;
  if (creates.length || updates.length) {
    try {
      written = await writeSet(tx, kind.spec, actor, creates.map((c) => c.row), updates.map((u) => u.change), { records, whileWriting: how.whileWriting, unique, companyByDomain: kind.companyByDomain });
    } catch (error) {
      // One item whose linked record went between its check and the write (its foreign key refused
      // it): that field's 400, as if the record had gone before the check, not a 500.
      const column = count === 1 ? brokenLink(error, kind.spec.table) : null;
      if (!column) throw error;
      const result = summary([failed(0, { [column]: [column === 'owner_id' ? NOT_A_MEMBER : NOT_IN_ACCOUNT] })]);
      if (how.allOrNothing) throw new BatchRolledBack(result);
      return result;
    }
  }
  const skipped = creates.filter(({ row }) => !written?.created.has(row.id));
  // ON CONFLICT DO NOTHING skipped them: a unique index refused each (another record took the value meanwhile).
  const why = skipped.length ? await whyTaken(tx, kind, accountId, skipped.map((c) => c.row)) : null;
  for (const { index, row } of creates) {
    const record = written?.created.get(row.id);
    items[index] = record ? { index, status: 'CREATED', record: records ? record : null, details: null } : failed(index, why!(row));
  }
  for (const { index, change } of updates) items[index] = { index, status: 'UPDATED', record: records ? (written!.updated.get(change.row.id) ?? null) : null, details: null };
  const result = summary(items);
  if (how.allOrNothing && result.failed > 0) throw new BatchRolledBack(keptBack(count, items));
  return result;
}

function judge(kind: BatchKind, how: BatchMode, accountId: string, input: Record<string, unknown>, index: number): Judged {
  // An upsert item is judged as an update (only what it gives); one that matches nothing is judged again as a create.
  const parsed = how.mode === 'create' ? kind.create.safeParse({ ...input, accountId }) : kind.update.safeParse(input);
  const details: ErrorDetails = parsed.success ? {} : toDetails(parsed.error);
  if (how.mode === 'upsert' && !details[how.on] && matchKey(kind, how.on, parsed.success ? (parsed.data as Record<string, unknown>)[how.on] : input[how.on]) === null) {
    details[how.on] = ['Required'];
  }
  if (Object.keys(details).length) return { index, details: restDetails(details), input };
  const data = parsed.data as Record<string, unknown>;
  if (how.mode === 'create') return { index, data };
  const asCreate = kind.create.safeParse({ ...data, accountId });
  return { index, data, asCreate: asCreate.success ? { data: asCreate.data as Record<string, unknown> } : { details: restDetails(toDetails(asCreate.error)) } };
}

/**
 * Each item's custom values by the account's definitions, beside its other problems: a create's
 * (required fields given; stored without nulls, `{}` for none, so every new row of the set has the
 * column), an upsert's as a patch and, for the create it becomes when it matches nothing, as a create.
 */
async function judgeValues(tx: Prisma.TransactionClient, model: RecordModel, accountId: string, judged: Judged[], how: BatchMode) {
  const shapes = await recordShapes.of(tx, accountId, model);
  for (const [i, item] of judged.entries()) {
    const given = ('data' in item ? item.data.customFields : item.input?.customFields) as Record<string, unknown> | undefined;
    const verdict = shapes.judge(given, how.mode === 'create' ? 'create' : 'update');
    const details: ErrorDetails = { ...('details' in item ? item.details : {}), ...restDetails(verdict.details) };
    if (Object.keys(details).length) {
      judged[i] = { index: item.index, details, input: 'data' in item ? item.data : item.input };
      continue;
    }
    const ok = item as Extract<Judged, { data: unknown }>;
    if (how.mode === 'create') ok.data.customFields = verdict.values;
    else {
      if (given !== undefined) ok.data.customFields = verdict.values;
      if (ok.asCreate && 'data' in ok.asCreate) {
        const asCreate = shapes.judge(given, 'create');
        ok.asCreate = Object.keys(asCreate.details).length ? { details: restDetails(asCreate.details) } : { data: { ...ok.asCreate.data, customFields: asCreate.values } };
      }
    }
  }
}

/**
 * Two items with one key: the later one fails (its match key, and in any mode its unique keys). It
 * keeps what it gave, as parsed, so its links are judged too and an import can name the first line.
 */
function markDuplicates(kind: BatchKind, judged: Judged[], how: BatchMode) {
  for (const field of setKeys(kind, how)) {
    const seen = new Set<string>();
    for (const [i, item] of judged.entries()) {
      if (!('data' in item)) continue;
      const key = matchKey(kind, field, item.data[field]);
      if (key === null) continue;
      if (seen.has(key)) judged[i] = { index: item.index, details: { [snakeCase(field)]: [DUPLICATE] }, input: item.data };
      else seen.add(key);
    }
  }
}

/** The id an item links in `field`: parsed, or as given by an item that failed its other rules (when it is an id at all). */
const linked = (item: Judged, field: string): string | undefined => {
  const value = 'data' in item ? item.data[field] : item.input?.[field];
  return typeof value === 'string' && isUuid(value) ? value : undefined;
};

/**
 * Same-account ids of the whole set in one query; an item naming another account's record fails on
 * that field, beside any other problem it has (every failing field is named at once).
 */
async function checkRefs(tx: Prisma.TransactionClient, kind: BatchKind, accountId: string, judged: Judged[]) {
  if (!kind.refs) return;
  const wanted = Object.entries(kind.refs).flatMap(([field, table]) =>
    judged.flatMap((item) => {
      const id = linked(item, field);
      return id ? [{ table, id }] : [];
    }),
  );
  if (wanted.length === 0) return;
  const found = await tx.$queryRaw<{ t: string; id: string }[]>`
    SELECT 'contacts' AS t, id::text FROM contacts WHERE account_id = ${accountId}::uuid
      AND id IN (SELECT (w->>'id')::uuid FROM json_array_elements(${JSON.stringify(wanted)}::json) w WHERE w->>'table' = 'contacts')
    UNION ALL
    SELECT 'pipeline_stages', id::text FROM pipeline_stages WHERE account_id = ${accountId}::uuid
      AND id IN (SELECT (w->>'id')::uuid FROM json_array_elements(${JSON.stringify(wanted)}::json) w WHERE w->>'table' = 'pipeline_stages')`;
  const known = new Set(found.map((r) => `${r.t}:${r.id}`));
  for (const [i, item] of judged.entries()) {
    const details: ErrorDetails = 'details' in item ? { ...item.details } : {};
    for (const [field, table] of Object.entries(kind.refs)) {
      const id = linked(item, field);
      if (id && !known.has(`${table}:${id}`) && !details[snakeCase(field)]) details[snakeCase(field)] = [NOT_IN_ACCOUNT];
    }
    if (Object.keys(details).length) judged[i] = { index: item.index, details };
  }
}

/**
 * Takes the transaction lock of every key (sorted, so two batches never wait on each other in
 * opposite orders), then reads, locked, the records the keys match and those holding the items'
 * unique keys (external ids, domains). After the lock, a concurrent upsert of the same new key has committed or not begun:
 * exactly one creates it.
 */
async function lockAndRead(tx: Prisma.TransactionClient, kind: BatchKind, accountId: string, on: MatchOn, judged: Judged[]): Promise<Row[]> {
  const valid = judged.flatMap((item) => ('data' in item ? [item.data] : []));
  const valuesOf = (field: MatchOn) => [...new Set(valid.map((d) => matchKey(kind, field, d[field])).filter((k): k is string => k !== null))].sort();
  const keys = valuesOf(on);
  if (keys.length === 0) return [];
  const locks = keys.map((key) => lockKey(accountId, kind.spec.table, on, key));
  await tx.$queryRaw`SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))::int AS n FROM (SELECT json_array_elements_text(${JSON.stringify(locks)}::json) AS k ORDER BY 1) s`;
  return readRows(tx, kind.spec, Prisma.sql`t.account_id = ${accountId}::uuid AND t.id IN (SELECT id FROM matched)`, holdersOf(kind, accountId, [on, ...uniqueFields(kind)], valuesOf));
}

/**
 * `WITH matched AS MATERIALIZED (...)`: the ids of the records holding any of `values(field)` in
 * any of `fields`, each field looked up on its own index and computed once, then the records locked:
 * `lower(email) IN (...) OR external_id IN (...)` in one WHERE was planned as a filter over every
 * record of the account (an import's chunk took a second at 200,000 contacts, more as the account
 * grew), and the lookups as a subquery were re-run per record of a table without statistics yet
 * (10 s timeouts).
 */
function holdersOf(kind: BatchKind, accountId: string, fields: MatchOn[], values: (field: MatchOn) => string[]): Prisma.Sql {
  const table = Prisma.raw(`"${kind.spec.table}"`);
  const lookups = [...new Set(fields)].map((field) => {
    const column = Prisma.raw(kind.keys[field]?.caseless ? `lower(m."${snakeCase(field)}")` : `m."${snakeCase(field)}"`);
    return Prisma.sql`SELECT m.id FROM ${table} m WHERE m.account_id = ${accountId}::uuid AND ${column} IN (SELECT json_array_elements_text(${JSON.stringify(values(field))}::json))`;
  });
  return Prisma.sql`WITH matched AS MATERIALIZED (${Prisma.join(lookups, ' UNION ALL ')}) `;
}

type Plan = { create: Row } | { update: SetChange } | { unchanged: Row } | { details: ErrorDetails };

/** The locked records by match key (the oldest first, as read) and by each unique key's value: one lookup per item, not a scan of them all. */
type Matches = { byKey: Map<string, Row>; held: Held };
type Held = Map<MatchOn, Map<string, Row[]>>;

function heldBy(kind: BatchKind, rows: Row[]): Held {
  const held: Held = new Map(uniqueFields(kind).map((field) => [field, new Map()]));
  for (const row of rows) {
    for (const [field, byValue] of held) {
      const key = matchKey(kind, field, row[field]);
      if (key !== null) byValue.set(key, [...(byValue.get(key) ?? []), row]);
    }
  }
  return held;
}

function matchesByKey(kind: BatchKind, on: MatchOn, rows: Row[]): Matches {
  const byKey = new Map<string, Row>();
  for (const row of rows) {
    const key = matchKey(kind, on, row[on]);
    if (key !== null && !byKey.has(key)) byKey.set(key, row);
  }
  return { byKey, held: heldBy(kind, rows) };
}

/** The unique keys of `data` that a record other than `self` holds, each named with its message. */
function takenIn(kind: BatchKind, data: Record<string, unknown>, held: Held, self?: string): ErrorDetails {
  const details: ErrorDetails = {};
  for (const [field, byValue] of held) {
    const key = matchKey(kind, field, data[field]);
    if (key !== null && (byValue.get(key) ?? []).some((row) => row.id !== self)) details[snakeCase(field)] = [kind.keys[field]!.taken!];
  }
  return details;
}

/**
 * Why ON CONFLICT DO NOTHING skipped these new rows: the unique keys of each that a record holds,
 * read after the statement (a record another transaction committed meanwhile is seen by now).
 */
async function whyTaken(tx: Prisma.TransactionClient, kind: BatchKind, accountId: string, rows: Row[]): Promise<(row: Row) => ErrorDetails> {
  const fields = uniqueFields(kind);
  const values = (field: MatchOn) => [...new Set(rows.map((row) => matchKey(kind, field, row[field])).filter((k): k is string => k !== null))];
  const held = heldBy(kind, await readRows(tx, kind.spec, Prisma.sql`t.account_id = ${accountId}::uuid AND t.id IN (SELECT id FROM matched)`, holdersOf(kind, accountId, fields, values)));
  // Seen nowhere (the holder went again): the row's unique keys are all that could have refused it.
  return (row) => {
    const details = takenIn(kind, row, held);
    return Object.keys(details).length ? details : Object.fromEntries(fields.filter((f) => row[f] != null).map((f) => [snakeCase(f), [kind.keys[f]!.taken!]]));
  };
}

const same = (a: unknown, b: unknown): boolean =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime()
  : a && b && typeof a === 'object' && typeof b === 'object' && !Prisma.Decimal.isDecimal(a) ? JSON.stringify(a) === JSON.stringify(b)
  : Prisma.Decimal.isDecimal(a) || Prisma.Decimal.isDecimal(b) ? a != null && b != null && new Prisma.Decimal(a as number).equals(b as number)
  : a === b;

/** An upsert item against what the database holds: create, update only the given fields, or nothing to change. */
function plan(kind: BatchKind, item: Extract<Judged, { data: unknown }>, existing: Matches, now: Date, on: MatchOn): Plan {
  const key = matchKey(kind, on, item.data[on]);
  // Read oldest first: the first match is the oldest (docs/decisions.md §5).
  const match = key === null ? undefined : existing.byKey.get(key);
  const taken = takenIn(kind, item.data, existing.held, match?.id);
  if (Object.keys(taken).length) return { details: taken };
  if (!match) return 'data' in item.asCreate! ? { create: kind.newRow(item.asCreate.data, newId(), now) } : { details: item.asCreate!.details };
  // Custom values are a patch of what the match holds (docs/custom-fields.md#values).
  const data = item.data.customFields ? { ...item.data, customFields: patched(match.customFields, item.data.customFields as Record<string, unknown>) } : item.data;
  const given = Object.entries(data).filter(([field, value]) => value !== undefined && !same(match[field], value));
  if (given.length === 0) return { unchanged: match };
  const row = { ...match, ...Object.fromEntries(given), updatedAt: now } as Row;
  return { update: { row: normalize(row), previous: Object.fromEntries(given.map(([field]) => [field, match[field]])) } };
}

/** Money as a Decimal, as Prisma gives it, so events show it as a number. */
const normalize = (row: Row): Row => {
  if (typeof row.value === 'number') row.value = new Prisma.Decimal(row.value);
  return row;
};

/** A REST detail's path as the input names it: `custom_fields.tier_level` -> `customFields.tier_level` (a field's key is the account's, never renamed). */
const inputPath = (key: string): string => {
  const [field, ...rest] = key.split('.');
  return [camelCase(field!), ...rest].join('.');
};

/** The one record of a batch of one, or its failure as the single create's 400 (named as its input names fields). */
export function single<T>(result: BatchResult): T {
  const [item] = result.items;
  if (item?.status === 'FAILED') throw badInput(Object.fromEntries(Object.entries(item.details ?? {}).map(([key, messages]) => [inputPath(key), messages])));
  return item!.record as T;
}

const failed = (index: number, details: ErrorDetails): BatchItem => ({ index, status: 'FAILED', record: null, details });

/** allOrNothing: every item fails; those that were valid say why they were not written. */
function keptBack(count: number, items: (BatchItem | undefined)[]): BatchResult {
  return summary(Array.from({ length: count }, (_, index) => (items[index]?.status === 'FAILED' ? items[index] : failed(index, { all_or_nothing: [NOT_WRITTEN] }))));
}

function summary(items: BatchItem[]): BatchResult {
  const count = (status: ItemStatus) => items.filter((i) => i.status === status).length;
  return { created: count('CREATED'), updated: count('UPDATED'), unchanged: count('UNCHANGED'), failed: count('FAILED'), items };
}

