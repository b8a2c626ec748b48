import { getDatamodel } from '../generated/pothos-types.js';

/** A field of a Prisma model, as the generated datamodel describes it (what the readers below use of it). */
export type ModelField = { name: string; kind: string; type: string; isRequired: boolean };

const models = getDatamodel().datamodel.models as unknown as Record<string, { fields: readonly ModelField[] }>;

/**
 * The fields of `model` from Prisma's datamodel, relations included (kind 'object'); none for a name
 * that is no model. The one reader of the datamodel for code that derives columns, events and filters
 * from the schema (schema.prisma stays the one place a column is declared).
 */
export const fieldsOf = (model: string): readonly ModelField[] => models[model]?.fields ?? [];

/** Every model's name, in schema order. */
export const modelNames = (): string[] => Object.keys(models);

/** Prisma's client property for `model` (`Contact` → `db.contact`), typed by what the caller calls on it. */
export const delegateOf = <Delegate>(db: object, model: string): Delegate =>
  (db as Record<string, Delegate>)[model.charAt(0).toLowerCase() + model.slice(1)]!;
