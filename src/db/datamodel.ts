import { readFileSync } from 'node:fs';
import { getDatamodel } from '../generated/pothos-types.js';
import { defaultPaths } from './prisma-paths.js';

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

let days: ReadonlyMap<string, ReadonlySet<string>> | undefined;

/**
 * The fields of `model` whose column holds a day (`@db.Date`), not a time. Prisma's datamodel reads
 * both as DateTime and keeps no native type, so they are read from schema.prisma itself, once.
 */
export function dayFieldsOf(model: string): ReadonlySet<string> {
  if (!days) {
    const found = new Map<string, Set<string>>();
    let current: Set<string> | undefined;
    for (const line of readFileSync(defaultPaths().schemaPath, 'utf8').split('\n')) {
      const opens = /^model\s+(\w+)\s*\{/.exec(line);
      if (opens) found.set(opens[1]!, (current = new Set()));
      else if (/^\}/.test(line)) current = undefined;
      else if (current && /@db\.Date(?![\w(])/.test(line)) current.add(line.trim().split(/\s+/)[0]!);
    }
    days = found;
  }
  return days.get(model) ?? new Set();
}
