import { z } from 'zod';
import { conflict, MESSAGES, notFound } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';
import { fieldsOf } from '../db/datamodel.js';
import { uuid } from '../validation.js';
import { createRuleOf, type FieldSpec } from '../model/field-spec.js';
import type { Query } from '../db/client.js';
import { mergedValues } from './custom-values.js';

// docs/decisions.md §12: how every update* reads its input and writes its change.


/** Columns of `model` that cannot hold null (the schema says so once: prisma/schema.prisma). */
const notNullColumns = (model: string): string[] =>
  fieldsOf(model).filter((f) => f.kind !== 'object' && f.isRequired).map((f) => f.name);

/** A value another record of the account already holds (a unique index per account refused it). */
export const TAKEN = 'Already used in this account';

export const isUniqueViolation = (error: unknown): boolean => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';

export const NOTHING_TO_CHANGE = 'Must change at least one field';

/** `null` is refused with `Required` before the field's own rules see it (which may read null as "the default"). */
// Checked again after them: a blank optional text becomes null, which a NOT NULL column cannot take either.
const present = (schema: z.ZodType) =>
  z
    .any()
    .refine((value) => value !== null, { message: 'Required', abort: true })
    .pipe(schema)
    .pipe(z.any().refine((value) => value !== null, 'Required'));

export type UpdateOf<Create> = Partial<Omit<Create, 'accountId'>>;

/**
 * The update input, derived from the create input's schema so the rules are written once: no
 * `accountId`, every field optional (absent = unchanged), `null` clears a nullable column and is
 * `Required` for a NOT NULL one (or for a field named in `required`); an empty input is refused.
 */
export function updateInputOf<Shape extends z.ZodRawShape>(create: z.ZodObject<Shape>, model: string, required: string[] = []) {
  const notNull = new Set([...notNullColumns(model), ...required]);
  const fields: Record<string, z.ZodType> = {};
  for (const [key, schema] of Object.entries(create.shape)) {
    if (key !== 'accountId') fields[key] = (notNull.has(key) ? present(schema as z.ZodType) : (schema as z.ZodType)).optional();
  }
  return z
    .object(fields)
    .refine((input) => Object.values(input).some((value) => value !== undefined), { message: NOTHING_TO_CHANGE }) as unknown as z.ZodType<
    UpdateOf<z.output<z.ZodObject<Shape>>>
  >;
}

/** The arguments of an `update*(id:, input:, expectedUpdatedAt:)` field. */
export const updateArgs = <I extends z.ZodType>(input: I) =>
  z.object({ id: uuid, input, expectedUpdatedAt: z.date().nullish().transform((value) => value ?? null) });
export type UpdateArgs<Input> = { id: string; input: Input; expectedUpdatedAt: Date | null };

/** A record's write rules, from its model: the create's (createRuleOf), the update's (updateInputOf) and an update's arguments. */
export function writeRulesOf<const F extends readonly FieldSpec[]>({ model, fields }: { model: string; fields: F }) {
  const create = createRuleOf(fields);
  const update = updateInputOf(create, model);
  return { create, update, updateArgs: updateArgs(update) };
}

/** Prisma's model delegates differ in types, not in the calls made here. */
type Delegate = { update(args: object): Promise<unknown>; findUnique(args: object): Promise<unknown> };
/** Re-exported for the domains' services, which take it from here beside the update helpers. */
export type { Query };

const isNoRecord = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025';

/**
 * One conditional UPDATE ... RETURNING (the resolver's `query` selects what comes back):
 * `WHERE id = $1 AND account_id = $2 [AND updated_at = $3] [AND <condition>]`. Concurrent writers with the same
 * `expectedUpdatedAt` queue on the row lock and re-check the condition, so exactly one wins; the
 * others get CONFLICT with the current `updatedAt`, and nothing of theirs is written.
 */
export async function updateGuarded<T>(
  delegate: Delegate,
  record: { id: string; accountId: string },
  data: object,
  query: Query,
  expectedUpdatedAt: Date | null,
  condition: object = {},
): Promise<T> {
  const where = { ...condition, id: record.id, accountId: record.accountId, ...(expectedUpdatedAt ? { updatedAt: expectedUpdatedAt } : {}) };
  // A change always moves updatedAt forward (the clock may not have, within a millisecond).
  const stamp = expectedUpdatedAt ? { updatedAt: new Date(Math.max(Date.now(), expectedUpdatedAt.getTime() + 1)) } : {};
  try {
    // Custom values are a patch of what the record holds (docs/custom-fields.md#values).
    return (await delegate.update({ ...query, where, data: { ...(await mergedValues(delegate, record, data as { customFields?: Readonly<Record<string, unknown>> })), ...stamp } })) as T;
  } catch (error) {
    if (!isNoRecord(error)) throw error;
    // Models without updatedAt take no expectedUpdatedAt: for them no row means it is gone.
    const current = expectedUpdatedAt ? await delegate.findUnique({ where: { id: record.id }, select: { updatedAt: true } }) : null;
    if (!current) throw notFound(MESSAGES.notFound);
    throw conflict(MESSAGES.staleRecord, { currentUpdatedAt: (current as { updatedAt: Date }).updatedAt.toISOString() });
  }
}

/** A record an id-addressed mutation loads (its `target`): only its id, account and what its rules read. */
export const notFoundUnless = <T>(row: T | null): T => {
  if (!row) throw notFound(MESSAGES.notFound);
  return row;
};
