// A record's fields as data (docs/fields.md#a-records-model): each field once, and what every
// list of them is derived from. Plain values read when a derivation runs, not only TypeScript types,
// so a list an account defines at run time (the custom fields to come) can join a record's built-in one.
import { z } from 'zod';
import { snakeCase } from '../names.js';
import { uuid } from '../validation.js';

/** One field of a record. Absent flags say no: a field is only where its spec puts it. */
export type FieldSpec = {
  /** As GraphQL, Prisma and the services name it (camelCase); its column and REST name are its snake_case. */
  name: string;
  /** Its GraphQL type in the inputs: a scalar's or an enum's name. */
  type: string;
  /** A client may write it: its create rule (trims, defaults; absent and null as the rule says). */
  rule?: z.ZodType;
  /** Required on create; optional when absent. On update null clears it, or is Required for a NOT NULL column. */
  required?: true;
  /** Left out of the update and batch inputs (a field only a create sets). */
  createOnly?: true;
  /** The longest text its column holds: a lead form's mapped value is cut to it too. */
  max?: number;
  /** Descriptions of its fields: one for every input and the record's type, or per input (`read`: the type's). */
  description?: string | Partial<Record<InputKind | 'read', string>>;
  /** The header of its column in the record's CSV export. */
  csv?: string;
  /** An import column feeds it (by its REST name or CSV label); `aliases`: other systems' headers for it. */
  import?: true | { aliases: readonly string[] };
  /** A lead form field may fill it: the HTML autocomplete token of the visitor's input. */
  form?: string;
  /** The create's REST answer carries it too (the contract's answer is a part of the record's fields). */
  createAnswer?: true;
  /** Not a field of the record's GraphQL type: the type answers its relation instead (a deal's `contact` for `contactId`). */
  read?: false;
  /** Left out of the REST item (lists, by id, batches): the contract's item lacks it, or shows its relation (`embeds`). */
  item?: false;
  /** Its field of the record's type is declared by hand in the file named (a value computed there, as an invoice's amountDue), not from the model. */
  typeFieldIn?: string;
};

/**
 * A record, declared once: its Prisma model and table, the kind its events name, and its fields in
 * order. Everything a door shows or takes of the record derives from this and the account's own
 * fields (src/model/shapes.ts).
 */
export type RecordModel<F extends readonly FieldSpec[] = readonly FieldSpec[]> = {
  model: string;
  table: string;
  /** Its events' prefix (`deal` in `deal.created`). */
  kind: string;
  /** Its REST collection and import object (`/api/v1/deals`). */
  collection: string;
  fields: F;
  /** Related records the REST item shows in place of their ids: the item's key -> the selection of the relation. */
  embeds?: Readonly<Record<string, string>>;
  /**
   * What an answer about one record (by id, its writes) shows beyond the item, in order: fields of its
   * GraphQL type, each declared beside its computation (an invoice's lines and totals); a field of
   * an object type brings every field of that type (src/rest/record-fragments.ts).
   */
  byId?: readonly string[];
};

export type InputKind = 'create' | 'update' | 'batch';

/** The field's REST name: snake_case, as the REST layer renames every input and answer (src/rest/field-names.ts). */
export const restName = (field: Pick<FieldSpec, 'name'>): string => snakeCase(field.name);

/** The fields of an input: those with a rule, the update's and batch's without the create-only ones. */
export const inputFields = <F extends FieldSpec>(fields: readonly F[], kind: InputKind): F[] =>
  fields.filter((field) => field.rule && (kind === 'create' || !field.createOnly));

export const descriptionOf = (field: FieldSpec, kind: InputKind | 'read'): string | undefined =>
  typeof field.description === 'string' ? field.description : field.description?.[kind];

/** Every field's rule, by name: what a rule of these fields parses. */
type RuleShape<F extends readonly FieldSpec[]> = {
  [Field in F[number] as Field extends { rule: z.ZodType } ? Field['name'] : never]: Field extends { rule: infer R extends z.ZodType } ? R : never;
};

/** The shape the create rule parses: `accountId` and every writable field's rule, by name. */
type CreateShape<F extends readonly FieldSpec[]> = { accountId: typeof uuid } & RuleShape<F>;

const shapeOf = (fields: readonly FieldSpec[]) => Object.fromEntries(inputFields(fields, 'create').map((field) => [field.name, field.rule!]));

/** The single create's zod rule: the account and each writable field (update and batch rules derive from it). */
export function createRuleOf<const F extends readonly FieldSpec[]>(fields: F): z.ZodObject<CreateShape<F>> {
  return z.object({ accountId: uuid, ...shapeOf(fields) }) as unknown as z.ZodObject<CreateShape<F>>;
}

/**
 * The rule of a root field's arguments declared as fields (`argsOf`, src/graphql/spec-fields.ts,
 * gives their GraphQL arguments): each field's rule, by name, nothing added.
 */
export function argsRuleOf<const F extends readonly FieldSpec[]>(fields: F): z.ZodObject<RuleShape<F>> {
  return z.object(shapeOf(fields)) as unknown as z.ZodObject<RuleShape<F>>;
}

/** A required id argument or field named `name` (`accountId`, `endpointId`). */
export const idField = <const N extends string>(name: N) => ({ name, type: 'ID', rule: uuid, required: true }) as const satisfies FieldSpec;

/** An import's columns: REST name -> field, the fields creating one needs, other headers -> REST name. */
export function importColumnsOf(fields: readonly FieldSpec[]) {
  const fed = fields.filter((field) => field.import);
  return {
    fields: Object.fromEntries(fed.map((field) => [restName(field), field.name])),
    required: fed.filter((field) => field.required).map((field) => field.name),
    aliases: Object.fromEntries(fed.flatMap((field) => (field.import === true ? [] : field.import!.aliases.map((alias) => [alias, restName(field)])))),
  };
}

/**
 * The CSV export's columns in spec order: the header and the SQL reading the cell. A time is read in
 * epoch ms (a number, cheap to carry) and written back as ISO 8601.
 */
export const csvColumnsOf = (fields: readonly FieldSpec[]): { label: string; sql: string; time: boolean }[] =>
  fields
    .filter((field) => field.csv)
    .map((field) => {
      const time = field.type === 'DateTime';
      const column = `"${restName(field)}"`;
      return { label: field.csv!, sql: time ? `(extract(epoch FROM ${column}) * 1000)::bigint` : column, time };
    });

/** What a lead form may map to, by REST name: the longest value its column holds and the input's autocomplete token. */
export const formTargetsOf = (fields: readonly FieldSpec[]): Record<string, { max: number; autocomplete: string }> =>
  Object.fromEntries(fields.filter((field) => field.form).map((field) => [restName(field), { max: field.max!, autocomplete: field.form! }]));
