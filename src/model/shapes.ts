// A record's shapes for one account (docs/fields.md#an-accounts-own-fields): the fields of its model
// and those the account defined for it (docs/decisions.md §23), and everything a door derives from
// them: the create rule, the import columns, the CSV columns and what a lead form may fill. A
// function of both, computed when an account's definitions change, never a constant fixed at load:
// the built-in fields are the same for every account, the account's own are its alone.
import { z } from 'zod';
import { csvColumnsOf, createRuleOf, formTargetsOf, importColumnsOf, type FieldSpec, type RecordModel } from './field-spec.js';
import { parseCalendarDate } from '../dates.js';
import { email, optionalText, TYPE_MESSAGES } from '../validation.js';

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

/** A value of the field's type, judged with create's words (decisions §23); absent or null passes unless required. */
export function customValueRule(field: CustomFieldDefinition): z.ZodType {
  const options = field.options ?? [];
  const byType: Record<CustomFieldType, z.ZodType> = {
    TEXT: z.string({ error: 'Expected a string' }).max(1000, 'Must be at most 1000 characters'),
    NUMBER: z
      .number({ error: TYPE_MESSAGES.number })
      .refine(Number.isFinite, TYPE_MESSAGES.number)
      .refine((value) => Math.abs(value * 1e6 - Math.round(value * 1e6)) < 1e-6 * Math.max(1, Math.abs(value)), 'Must have at most 6 decimals'),
    DATE: z.string({ error: TYPE_MESSAGES.day }).refine((value) => parseCalendarDate(value) !== null, TYPE_MESSAGES.day),
    BOOLEAN: z.boolean({ error: 'Expected true or false' }),
    SELECT: z.string({ error: 'Expected a string' }).refine((value) => options.includes(value), MUST_BE_OPTION(options)),
    MULTI_SELECT: z
      .array(z.string().refine((value) => options.includes(value), MUST_BE_OPTION(options)), { error: 'Expected a list of options' })
      .refine((values) => new Set(values).size === values.length, 'Must not repeat an option'),
    URL: z.url({ protocol: /^https?$/, error: 'Must be an http(s) URL' }),
    EMAIL: email,
    PHONE: optionalText(50),
  };
  const rule = byType[field.type];
  return field.required ? z.any().refine((value) => value != null, { message: 'Required', abort: true }).pipe(rule) : rule.nullish();
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

/** Everything a door derives from a record's fields for one account. */
export type RecordShapes = {
  /** The model's fields, then the account's active custom fields in position order (ties by key). */
  fields: readonly FieldSpec[];
  /** The single create's rule: the model's, with `customFields` judged field by field (unknown keys refused). */
  create: z.ZodType;
  importColumns: ReturnType<typeof importColumnsOf>;
  csvColumns: ReturnType<typeof csvColumnsOf>;
  formTargets: ReturnType<typeof formTargetsOf>;
};

/** The shapes of `model` with `definitions` (an account's, for this record): a pure function of the two. */
export function shapesOf(model: RecordModel, definitions: readonly CustomFieldDefinition[]): RecordShapes {
  const custom = definitions
    .filter((field) => !field.archived)
    .sort((a, b) => a.position - b.position || a.key.localeCompare(b.key))
    .map(customFieldSpec);
  const fields = [...model.fields, ...custom];
  const values = z.strictObject(Object.fromEntries(custom.map((field) => [field.name, field.rule!])), { error: 'Unknown field' });
  const create = custom.length ? createRuleOf(model.fields).extend({ customFields: custom.some((f) => f.required) ? values : values.nullish() }) : createRuleOf(model.fields);
  const csvColumns = csvColumnsOf(fields).map((column, i) => {
    const field = fields.filter((f) => f.csv)[i]!;
    // A custom field's cell is its value in the record's custom_fields object, as text.
    return isCustom(field) ? { ...column, sql: `("custom_fields" ->> '${field.name.replaceAll("'", "''")}')` } : column;
  });
  const imported = importColumnsOf(model.fields);
  const importColumns = {
    fields: { ...imported.fields, ...Object.fromEntries(custom.map((field) => [field.name, `customFields.${field.name}`])) },
    required: [...imported.required, ...custom.filter((field) => field.required).map((field) => `customFields.${field.name}`)],
    aliases: { ...imported.aliases, ...Object.fromEntries(custom.map((field) => [field.custom.label, field.name])) },
  };
  return { fields, create, importColumns, csvColumns, formTargets: formTargetsOf(model.fields) };
}

/** Where an account's definitions come from: a version that changes whenever any of them does, and the definitions of one record. */
export type DefinitionsSource = {
  version(accountId: string): Promise<string>;
  definitions(accountId: string, model: RecordModel): Promise<readonly CustomFieldDefinition[]>;
};

/** Until accounts define fields (decisions §23), every account has none: the model's shapes alone. */
export const NO_DEFINITIONS: DefinitionsSource = { version: async () => 'none', definitions: async () => [] };

/**
 * Shapes per account and record, kept while the account's definitions keep their version: a
 * request reads the version (one indexed read, §23), and the definitions and derivation run only
 * when it moved. At most `most` accounts' records are kept (the oldest kept goes first).
 */
export class AccountShapes {
  private readonly cache = new Map<string, { version: string; shapes: RecordShapes }>();

  constructor(private readonly source: DefinitionsSource = NO_DEFINITIONS, private readonly most = 10_000) {}

  async of(accountId: string, model: RecordModel): Promise<RecordShapes> {
    const key = `${accountId}:${model.model}`;
    const version = await this.source.version(accountId);
    const kept = this.cache.get(key);
    if (kept?.version === version) return kept.shapes;
    const shapes = shapesOf(model, await this.source.definitions(accountId, model));
    this.cache.delete(key);
    if (this.cache.size >= this.most) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { version, shapes });
    return shapes;
  }
}

/**
 * The service's shapes of every account's records. Accounts define no fields yet (decisions §23
 * gives this its source of definitions), so each account's shapes are its model's.
 */
export const recordShapes = new AccountShapes();
