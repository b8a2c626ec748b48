// A record's shapes for one account (docs/fields.md#an-accounts-own-fields): the fields of its model
// and those the account defined for it (docs/decisions.md §23), and everything a door derives from
// them: the judge of its values, the import columns and the CSV columns. A
// function of both, computed when an account's definitions change, never a constant fixed at load:
// the built-in fields are the same for every account, the account's own are its alone.
import { z } from 'zod';
import { csvColumnsOf, importColumnsOf, restName, type FieldSpec, type RecordModel } from './field-spec.js';
import { parseCalendarDate } from '../dates.js';
import { email, isStorableText, optionalText, TYPE_MESSAGES, UNSTORABLE_TEXT } from '../validation.js';
import type { ErrorDetails } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';

export type CustomFieldType = 'TEXT' | 'NUMBER' | 'DATE' | 'BOOLEAN' | 'SELECT' | 'MULTI_SELECT' | 'URL' | 'EMAIL' | 'PHONE';

/** A field an account defined for one of its records (decisions §23): what the derivations read of it. */
export type CustomFieldDefinition = {
  key: string;
  label: string;
  type: CustomFieldType;
  options: readonly string[] | null;
  required: boolean;
  archived: boolean;
  position: number;
};

/** A custom field's place among a record's fields: stored in the record's `custom_fields` object under its key. */
export type CustomFieldSpec = FieldSpec & { custom: CustomFieldDefinition };

const MUST_BE_OPTION = (options: readonly string[]) => `Must be one of: ${[...options].sort().join(', ')}`;
const TEXT_MAX = 1000;
/** A number stored with at most six decimals (what the NUMBER type keeps exactly); a whole one has none (1e308 times 1e6 is no number). */
const sixDecimals = (value: number) => Number.isInteger(value) || Math.abs(value * 1e6 - Math.round(value * 1e6)) < 1e-6 * Math.max(1, Math.abs(value));

/** A value of the field's type, judged with create's words (decisions §23); absent or null passes unless required. */
export function customValueRule(field: CustomFieldDefinition): z.ZodType {
  const options = field.options ?? [];
  const byType: Record<CustomFieldType, z.ZodType> = {
    // Text the database cannot keep in JSON (a NUL, an unpaired surrogate) is refused by name, never a 500.
    TEXT: z.string({ error: 'Expected a string' }).max(TEXT_MAX, `Must be at most ${TEXT_MAX} characters`).refine(isStorableText, UNSTORABLE_TEXT),
    NUMBER: z
      .number({ error: TYPE_MESSAGES.number })
      .refine(Number.isFinite, TYPE_MESSAGES.number)
      .refine(sixDecimals, 'Must have at most 6 decimals'),
    DATE: z.string({ error: TYPE_MESSAGES.day }).refine((value) => parseCalendarDate(value) !== null, TYPE_MESSAGES.day),
    BOOLEAN: z.boolean({ error: 'Expected true or false' }),
    SELECT: z.string({ error: 'Expected a string' }).refine((value) => options.includes(value), MUST_BE_OPTION(options)),
    MULTI_SELECT: z
      .array(z.string().refine((value) => options.includes(value), MUST_BE_OPTION(options)), { error: 'Expected a list of options' })
      .refine((values) => new Set(values).size === values.length, 'Must not repeat an option'),
    URL: z.url({ protocol: /^https?$/, error: 'Must be an http(s) URL' }).refine(isStorableText, UNSTORABLE_TEXT),
    EMAIL: email,
    PHONE: optionalText(50),
  };
  const rule = byType[field.type];
  return field.required ? z.any().refine((value) => value != null, { message: 'Required', abort: true }).pipe(rule) : rule.nullish();
}

/**
 * The values customValueRule passes as they are, told without running it: a batch of 100 records
 * with 20 values spent ~2 ms in zod alone (BENCHMARKS.md, "Custom field values on writes"), and
 * nearly every value a client sends is one of these. Anything else (null, a refusal to word) goes to
 * the rule, and URLs, e-mails and phones always do: their rule is the one reading of them (it trims).
 * A unit test holds the two to the same answers (test/unit/record-shapes.test.ts).
 */
export function plainlyValid(field: Pick<CustomFieldDefinition, 'type' | 'options'>): ((value: unknown) => boolean) | null {
  const options = new Set(field.options ?? []);
  switch (field.type) {
    case 'TEXT':
      return (value) => typeof value === 'string' && value.length <= TEXT_MAX && isStorableText(value);
    case 'NUMBER':
      return (value) => typeof value === 'number' && Number.isFinite(value) && sixDecimals(value);
    case 'DATE':
      return (value) => typeof value === 'string' && parseCalendarDate(value) !== null;
    case 'BOOLEAN':
      return (value) => typeof value === 'boolean';
    case 'SELECT':
      return (value) => typeof value === 'string' && options.has(value);
    case 'MULTI_SELECT':
      return (value) => Array.isArray(value) && value.every((o) => typeof o === 'string' && options.has(o)) && new Set(value).size === value.length;
    default:
      return null;
  }
}

/** How a door reads a number and a day from text: its own formats (an import reads `1.234,50` and `3/31/2027`). */
export type TextReaders = { number(text: string): number | null; day(text: string): string | null };

const TRUE_WORDS = new Set(['true', 'yes', '1', 'on']);
const FALSE_WORDS = new Set(['false', 'no', '0', 'off']);

/**
 * A value of the field's type from the text a door receives (an import's cell, a lead form's input:
 * docs/custom-fields.md#where-values-go), for customValueRule to judge as a create does: a number;
 * true or false (also yes/no, 1/0, on/off: a checkbox sends `yes`); a day as `readers` reads one; a
 * MULTI_SELECT's options split on `;` (on `,` when there is no `;`), unless the whole text is one
 * option; text otherwise. Text that reads as none of these stays as it is, to be refused by name.
 */
export function valueOfText(field: Pick<CustomFieldDefinition, 'type' | 'options'>, value: string, readers: TextReaders): unknown {
  const text = value.trim();
  switch (field.type) {
    case 'NUMBER':
      return readers.number(text) ?? value;
    case 'BOOLEAN':
      return TRUE_WORDS.has(text.toLowerCase()) ? true : FALSE_WORDS.has(text.toLowerCase()) ? false : value;
    case 'DATE':
      return readers.day(text) ?? value;
    case 'MULTI_SELECT':
      if (field.options?.includes(text)) return [text];
      return text.split(text.includes(';') ? ';' : ',').map((part) => part.trim()).filter(Boolean);
    case 'SELECT':
      return text;
    default:
      return value;
  }
}

const SCALAR_OF: Record<CustomFieldType, string> = {
  TEXT: 'String', NUMBER: 'Float', DATE: 'Date', BOOLEAN: 'Boolean', SELECT: 'String', MULTI_SELECT: 'JSON', URL: 'String', EMAIL: 'String', PHONE: 'String',
};

/** A definition as one of the record's fields: it reaches the CSV by its label, imports by its key or label. */
export const customFieldSpec = (field: CustomFieldDefinition): CustomFieldSpec => ({
  name: field.key,
  type: SCALAR_OF[field.type],
  rule: customValueRule(field),
  ...(field.required ? { required: true as const } : {}),
  csv: field.label,
  import: { aliases: [field.label] },
  custom: field,
});

export const isCustom = (field: FieldSpec): field is CustomFieldSpec => 'custom' in field;

/**
 * The record's `customFields` (REST `custom_fields`): its values of the account's fields, by key. As
 * a field of the model it reaches every input, the REST item and the create's answer; its form is
 * judged here (an object), its values by the account's definitions where the write knows the account
 * (RecordShapes.judge). Absent on update: unchanged; a key set to null: cleared.
 */
export const CUSTOM_VALUES = {
  name: 'customFields',
  type: 'JSON',
  rule: z
    .record(z.string(), z.unknown(), { error: 'Expected an object of values by field key' })
    .nullish()
    // Values are JSON (the scalar parsed them): typed as Prisma stores a JSON object.
    .transform((values) => (values ?? undefined) as Prisma.InputJsonObject | undefined),
  createAnswer: true,
  description: {
    create: "Values of the account's own fields by key (docs/custom-fields.md)",
    update: 'Values by key: a key absent is unchanged, a key set to null is cleared',
    batch: "Values of the account's own fields by key; on a match, absent keys are unchanged",
    read: "Values of the account's active fields that have one, by key",
  },
} as const satisfies FieldSpec;

/** Everything a door derives from a record's fields for one account. */
export type RecordShapes = {
  /** The model's fields, then the account's active custom fields in position order (ties by key). */
  fields: readonly FieldSpec[];
  /** The account's active custom fields alone, in the same order. */
  custom: readonly CustomFieldSpec[];
  importColumns: ReturnType<typeof importColumnsOf>;
  csvColumns: ReturnType<typeof csvColumnsOf>;
  /**
   * A write's custom values judged by the account's fields (docs/custom-fields.md#values): every
   * failing key named `customFields.<key>`. `create`: a required field must be given; `update`: a
   * patch (absent unchanged, null clears; null on a required field is Required). `values`: what to
   * store or merge, without nulls on create.
   */
  judge(values: Readonly<Record<string, unknown>> | undefined, mode: 'create' | 'update'): { values: Record<string, unknown>; details: ErrorDetails };
  /** A stored object as reads show it: the active fields' values only (archived ones are hidden, kept). */
  visible(stored: unknown): Record<string, unknown>;
};

export const UNKNOWN_FIELD = 'Unknown field';
const detailKey = (key: string) => `${CUSTOM_VALUES.name}.${key}`;

/**
 * A custom field's CSV cell (docs/custom-fields.md#where-values-go), read from the record's
 * custom_fields object: a number as a number (so `-5` is no formula to guard), a MULTI_SELECT's
 * options joined by `; ` in their stored order, anything else as its text.
 */
function customCellSql(field: CustomFieldDefinition): string {
  const key = `'${field.key.replaceAll("'", "''")}'`;
  if (field.type === 'NUMBER') return `(CASE WHEN jsonb_typeof("custom_fields" -> ${key}) = 'number' THEN ("custom_fields" -> ${key})::numeric END)`;
  if (field.type === 'MULTI_SELECT') {
    return `(SELECT string_agg(o.v, '; ' ORDER BY o.n) FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof("custom_fields" -> ${key}) = 'array' THEN "custom_fields" -> ${key} END) WITH ORDINALITY AS o(v, n))`;
  }
  return `("custom_fields" ->> ${key})`;
}

/** The shapes of `model` with `definitions` (an account's, for this record): a pure function of the two. */
export function shapesOf(model: RecordModel, definitions: readonly CustomFieldDefinition[]): RecordShapes {
  const custom = definitions
    .filter((field) => !field.archived)
    .sort((a, b) => a.position - b.position || a.key.localeCompare(b.key))
    .map(customFieldSpec);
  const byKey = new Map(custom.map((field) => [field.name, field]));
  const fields = [...model.fields, ...custom];
  const csvColumns = csvColumnsOf(fields).map((column, i) => {
    const field = fields.filter((f) => f.csv)[i]!;
    return isCustom(field) ? { ...column, sql: customCellSql(field.custom) } : column;
  });
  // A custom field's column is `custom_fields.<key>` (its REST path: what a `mapping` names and a
  // refusal says); a header of its key or its label finds it too (docs/imports.md#columns).
  const imported = importColumnsOf(model.fields);
  const column = (field: CustomFieldSpec) => `${restName(CUSTOM_VALUES)}.${field.name}`;
  const importColumns = {
    fields: { ...imported.fields, ...Object.fromEntries(custom.map((field) => [column(field), `${CUSTOM_VALUES.name}.${field.name}`])) },
    required: [...imported.required, ...custom.filter((field) => field.required).map((field) => `${CUSTOM_VALUES.name}.${field.name}`)],
    aliases: { ...imported.aliases, ...Object.fromEntries(custom.flatMap((field) => [[field.name, column(field)], [field.custom.label, column(field)]])) },
  };
  const plain = new Map(custom.map((field) => [field.name, plainlyValid(field.custom)]));
  const judge: RecordShapes['judge'] = (given, mode) => {
    const out: Record<string, unknown> = {};
    const details: ErrorDetails = {};
    for (const key of Object.keys(given ?? {})) {
      const value = given![key];
      const field = byKey.get(key);
      if (!field) {
        details[detailKey(key)] = [UNKNOWN_FIELD];
        continue;
      }
      if (plain.get(key)?.(value)) {
        out[key] = value;
        continue;
      }
      const judged = field.rule!.safeParse(value);
      if (!judged.success) details[detailKey(key)] = [...new Set(judged.error.issues.map((issue) => issue.message))];
      else if (judged.data != null || mode === 'update') out[key] = judged.data ?? null;
    }
    if (mode === 'create') for (const field of custom) if (field.required && !(field.name in (given ?? {}))) details[detailKey(field.name)] = ['Required'];
    return { values: out, details };
  };
  const visible = (stored: unknown): Record<string, unknown> => {
    if (!stored || typeof stored !== 'object') return {};
    const all = stored as Record<string, unknown>;
    // Most records hold only active fields: the stored object itself, not a copy.
    return Object.keys(all).every((key) => byKey.has(key)) ? all : Object.fromEntries(Object.entries(all).filter(([key]) => byKey.has(key)));
  };
  return { fields, custom, importColumns, csvColumns, judge, visible };
}

/** A definition as stored (decisions §23): the record it is for, and what moves when it changes. */
export type StoredDefinition = CustomFieldDefinition & { object: string; updatedAt: Date };

/** Where an account's definitions come from: every one of the account (archived included), read with `db`. */
export type DefinitionsSource = (db: Prisma.TransactionClient, accountId: string) => Promise<readonly StoredDefinition[]>;

/** The definitions table (prisma/schema.prisma CustomField): one indexed read of the account's few hundred rows at most. */
export const STORED_DEFINITIONS: DefinitionsSource = (db, accountId) =>
  db.customField.findMany({
    where: { accountId },
    select: { object: true, key: true, label: true, type: true, options: true, required: true, archived: true, position: true, updatedAt: true },
  });

/** The object a record's definitions name: its model's name in capitals (Contact -> CONTACT). */
export const objectOf = (model: RecordModel): string => model.model.toUpperCase();

/**
 * How long an account's definitions, once read, are trusted without reading them again: a change
 * made through one instance reaches every other within a second (docs/custom-fields.md#limits),
 * in every set-up, at one small read a second per account in use, never one per request. The
 * instance that made the change forgets at once (forget()).
 */
export const DEFINITIONS_FRESH_MS = 900;

type Entry = { checkedAt: number; definitions: readonly StoredDefinition[]; fingerprint: Map<string, string>; shapes: Map<string, RecordShapes> };

/**
 * Shapes per account and record, kept while fresh; when stale the definitions are read again and a
 * record's shapes derived again only when its definitions changed. At most `most` accounts are kept
 * (the oldest kept goes first).
 */
export class AccountShapes {
  private readonly cache = new Map<string, Entry>();
  /**
   * Reads under way, per account and database handle: the items of one batch (each resolving its
   * `customFields`) share one read instead of one each. Per handle: one transaction's failure must
   * not fail another's read. forget() drops them, so a read begun before a change is never joined after it.
   */
  private readonly reading = new Map<string, Map<object, Promise<Entry>>>();
  /** Counts forget() calls: a read begun before one may answer its callers but is not kept. */
  private forgotten = 0;

  constructor(
    private readonly source: DefinitionsSource = STORED_DEFINITIONS,
    private readonly options: { freshMs?: number; most?: number } = {},
  ) {}

  async of(db: Prisma.TransactionClient, accountId: string, model: RecordModel): Promise<RecordShapes> {
    const kept = this.cache.get(accountId);
    const fresh = kept && performance.now() - kept.checkedAt < (this.options.freshMs ?? DEFINITIONS_FRESH_MS);
    // Stale if the read fails: a record just written answers its values while the database is
    // gone for a moment, rather than a 503 for a write that committed (docs/faults.md "A write in doubt").
    const entry = fresh ? kept : await this.shared(db, accountId, kept).catch((err: unknown) => (kept ? kept : Promise.reject(err)));
    const object = objectOf(model);
    let shapes = entry.shapes.get(object);
    if (!shapes) entry.shapes.set(object, (shapes = shapesOf(model, this.definitionsOf(entry, object))));
    return shapes;
  }

  /** Reads the account's definitions at its next use (the instance that changed them calls it after the change commits). */
  forget(accountId: string): void {
    const kept = this.cache.get(accountId);
    if (kept) kept.checkedAt = -Infinity; // stale: read again, but a record whose definitions did not change keeps its shapes
    this.reading.delete(accountId);
    this.forgotten++;
  }

  private definitionsOf(entry: Entry, object: string): StoredDefinition[] {
    return entry.definitions.filter((d) => d.object === object);
  }

  private shared(db: Prisma.TransactionClient, accountId: string, kept: Entry | undefined): Promise<Entry> {
    const byHandle = this.reading.get(accountId) ?? new Map<object, Promise<Entry>>();
    this.reading.set(accountId, byHandle);
    let read = byHandle.get(db);
    if (!read) {
      read = this.refresh(db, accountId, kept).finally(() => {
        byHandle.delete(db);
        if (byHandle.size === 0 && this.reading.get(accountId) === byHandle) this.reading.delete(accountId);
      });
      byHandle.set(db, read);
    }
    return read;
  }

  private async refresh(db: Prisma.TransactionClient, accountId: string, kept: Entry | undefined): Promise<Entry> {
    const before = this.forgotten;
    const definitions = await this.source(db, accountId);
    const fingerprint = new Map<string, string>();
    for (const d of definitions) fingerprint.set(d.object, `${fingerprint.get(d.object) ?? ''}${d.key}@${d.updatedAt.getTime()};`);
    // A record whose definitions did not change keeps its shapes (derived once, not per refresh).
    const shapes = new Map([...(kept?.shapes ?? [])].filter(([object]) => kept!.fingerprint.get(object) === fingerprint.get(object)));
    const entry: Entry = { checkedAt: performance.now(), definitions, fingerprint, shapes };
    if (this.forgotten !== before) return entry; // perhaps read before a change: its callers may use it, later ones read again
    this.cache.delete(accountId);
    if (this.cache.size >= (this.options.most ?? 10_000)) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(accountId, entry);
    return entry;
  }
}

/** The service's shapes of every account's records: definitions read from the database (docs/custom-fields.md). */
export const recordShapes = new AccountShapes();
