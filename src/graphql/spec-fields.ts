import type { ArgBuilder, ArgumentRef, InputFieldBuilder, InputFieldRef } from '@pothos/core';
import type { builder } from './builder.js';
import { fieldsOf } from '../db/datamodel.js';
import { descriptionOf, inputFields, type FieldSpec, type InputKind, type RecordModel } from '../model/field-spec.js';
import { CUSTOM_VALUES, recordShapes } from '../model/shapes.js';
import type { Context } from '../context.js';
import { moneyOf } from './scalars.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/**
 * A record's create, update or batch input fields from its field spec (src/model/field-spec.ts), in spec
 * order. A type is named by its name (`String`, `ID`, `ContactType`): the schema build resolves it,
 * and fails for a name no type has. Only the create input requires anything: an update changes what
 * it names, and an upsert may match without its create's required fields.
 */
export function inputFieldsOf(fields: readonly FieldSpec[], kind: InputKind) {
  return (t: InputFieldBuilder<Types, 'InputObject'>): Record<string, InputFieldRef<Types, unknown>> =>
    Object.fromEntries(
      inputFields(fields, kind).map((field) => [
        field.name,
        t.field({ type: field.type as 'String', required: kind === 'create' && field.required === true, description: descriptionOf(field, kind) }),
      ]),
    );
}

/**
 * A root field's arguments from fields (src/model/field-spec.ts), in their order: each its type,
 * required when the field is, and its description; `argsRuleOf` of the same fields is their rule, so
 * an argument is declared once. `arg` is the field builder's `t.arg`.
 */
export function argsOf(fields: readonly FieldSpec[], arg: ArgBuilder<Types>) {
  return Object.fromEntries(
    fields.map((field) => [field.name, arg({ type: field.type as 'String', required: field.required === true, description: descriptionOf(field, 'read') })]),
  ) as Record<string, ArgumentRef<Types, unknown>>;
}

/**
 * The record type's fields of its model, each its column as stored: nullable where the column is
 * (Prisma's datamodel), so a field added with its migration is read on every door at once. Money
 * (a numeric column) answers a number; the account's own fields (`customFields`) answer the values
 * of the account's active fields; a field with `read: false` is left to its relation, one with
 * `typeFieldIn` to the file that declares it.
 */
export function exposedFieldsOf(record: RecordModel) {
  const { model, fields } = record;
  const columns = new Map(fieldsOf(model).map((column) => [column.name, column]));
  type Builder = { expose: (name: string, options: object) => unknown; float: (options: object) => unknown; field: (options: object) => unknown };
  return (t: Builder) =>
    Object.fromEntries(
      fields
        .filter((field) => field.read !== false && !field.typeFieldIn)
        .map((field) => {
          const column = columns.get(field.name);
          if (!column) throw new Error(`${model} has no column for its spec's field ${field.name}`);
          if (field.name === CUSTOM_VALUES.name) {
            // No `select`: the column is a scalar every row of the type carries (Prisma's default
            // selection, a list's JSON, a batch's written rows), and a field with one made the
            // plugin load each row again that no Prisma query of its own had loaded: 100 findUniques
            // behind every batch answer (BENCHMARKS.md, "The batch's extra cost, profiled").
            return [field.name, t.field({ type: 'JSON', description: descriptionOf(field, 'read'),
              resolve: async (row: { accountId: string; customFields: unknown }, _args: unknown, ctx: Context) => (await recordShapes.of(ctx.db, row.accountId, record)).visible(row.customFields) })];
          }
          const options = { nullable: !column.isRequired, description: descriptionOf(field, 'read') };
          if (column.type === 'Decimal') {
            return [field.name, t.float({ ...options, resolve: (row: Record<string, unknown>) => (row[field.name] == null ? null : moneyOf(row[field.name] as never)) })];
          }
          return [field.name, t.expose(field.name, { ...options, type: field.type })];
        }),
    ) as Record<string, never>;
}
