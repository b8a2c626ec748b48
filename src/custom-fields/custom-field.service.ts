// The fields a business defines for its contacts, deals, companies and invoices (docs/custom-fields.md,
// docs/decisions.md §23): their definitions and the rules that keep them consistent with the values
// records hold. Values themselves are judged on every write by src/writes/custom-values.ts.
import { z } from 'zod';
import { CustomFieldObject, CustomFieldType, Prisma, type CustomField } from '../generated/prisma/client.js';
import { badInput, conflict, MESSAGES } from '../errors.js';
import { fieldsOf } from '../db/datamodel.js';
import { snakeCase } from '../names.js';
import { oneOf, requiredText, text, uuid } from '../validation.js';
import { recordShapes } from '../model/shapes.js';
import { isUniqueViolation } from '../writes/update.js';
import type { Query } from '../db/client.js';

/** Active fields an object may have per account (archived ones do not count). */
export const ACTIVE_FIELDS_PER_OBJECT = 100;

export const KEY_RULE = 'Must start with a lower-case letter and hold only a-z, 0-9 and _ (at most 50)';
export const KEY_TAKEN = 'Already used by another field of this object (archived fields keep their keys)';
export const KEY_BUILT_IN = 'Is the name of a built-in field';
export const TOO_MANY = `At most ${ACTIVE_FIELDS_PER_OBJECT} active fields per object; archive one first`;
export const OPTIONS_NEEDED = 'A SELECT or MULTI_SELECT field needs at least one option';
export const NO_OPTIONS = 'Only SELECT and MULTI_SELECT fields take options';
export const OPTION_IN_USE = (options: string[]) => `Cannot remove ${options.map((o) => `"${o}"`).join(', ')}: records hold it; change them first`;

const MODEL_OF: Record<CustomFieldObject, string> = { CONTACT: 'Contact', DEAL: 'Deal', COMPANY: 'Company', INVOICE: 'Invoice' };
const WITH_OPTIONS = new Set<CustomFieldType>([CustomFieldType.SELECT, CustomFieldType.MULTI_SELECT]);

/** The record's own names in REST's spelling (`first_name`, `id`, `contact_id`, `custom_fields`): no key may take one. */
const builtInNames = (object: CustomFieldObject): Set<string> => new Set(fieldsOf(MODEL_OF[object]).map((field) => snakeCase(field.name)));

const key = z.string().regex(/^[a-z][a-z0-9_]{0,49}$/, KEY_RULE);
const label = requiredText(100);
const options = z
  .array(text().trim().min(1, 'Must not be blank').max(100, 'Must be at most 100 characters'))
  .max(200, 'At most 200 options')
  .refine((values) => new Set(values).size === values.length, 'Must not repeat an option')
  .nullish();
const position = z.number().int('Must be an integer').min(-1_000_000).max(1_000_000).nullish();

export const createCustomFieldArgs = z.object({
  accountId: uuid,
  input: z
    .object({ object: oneOf(CustomFieldObject), key, label, type: oneOf(CustomFieldType), options, required: z.boolean().nullish(), position })
    .superRefine((input, ctx) => {
      const wants = WITH_OPTIONS.has(input.type);
      if (wants && !input.options?.length) ctx.addIssue({ code: 'custom', path: ['options'], message: OPTIONS_NEEDED });
      if (!wants && input.options?.length) ctx.addIssue({ code: 'custom', path: ['options'], message: NO_OPTIONS });
      if (builtInNames(input.object).has(input.key)) ctx.addIssue({ code: 'custom', path: ['key'], message: KEY_BUILT_IN });
    }),
});
export type CreateCustomFieldArgs = z.output<typeof createCustomFieldArgs>;

export const updateCustomFieldArgs = z.object({
  id: uuid,
  expectedUpdatedAt: z.date().nullish().transform((value) => value ?? null),
  input: z
    .object({ label: label.optional(), options, required: z.boolean().nullish(), position, archived: z.boolean().nullish() })
    .refine((input) => Object.values(input).some((value) => value != null), 'Must change at least one field'),
});
export type UpdateCustomFieldArgs = z.output<typeof updateCustomFieldArgs>;

export const customFieldsArgs = z.object({ accountId: uuid, object: oneOf(CustomFieldObject).nullish() });

export const customFieldTarget = ({ id }: { id: string }, db: Prisma.TransactionClient) =>
  db.customField.findUnique({ where: { id }, select: { id: true, accountId: true } });

/** Definitions in the order records show them: position, then creation (docs/decisions.md §23). */
export const FIELD_ORDER = [{ object: 'asc' }, { position: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }] satisfies Prisma.CustomFieldOrderByWithRelationInput[];

/** Serialises the changes that count active fields of one object (two creates racing for the 100th place). */
const lockObject = (tx: Prisma.TransactionClient, accountId: string, object: CustomFieldObject) =>
  tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`custom_fields:${accountId}:${object}`}, 0))`;

async function assertRoom(tx: Prisma.TransactionClient, accountId: string, object: CustomFieldObject) {
  await lockObject(tx, accountId, object);
  const active = await tx.customField.count({ where: { accountId, object, archived: false } });
  if (active >= ACTIVE_FIELDS_PER_OBJECT) throw badInput({ key: [TOO_MANY] });
}

export async function createCustomField(tx: Prisma.TransactionClient, { accountId, input }: CreateCustomFieldArgs, query: Query = {}): Promise<CustomField> {
  await assertRoom(tx, accountId, input.object);
  const last = await tx.customField.aggregate({ where: { accountId, object: input.object }, _max: { position: true } });
  const data = {
    accountId,
    object: input.object,
    key: input.key,
    label: input.label,
    type: input.type,
    options: input.options ?? [],
    required: input.required ?? false,
    position: input.position ?? (last._max.position ?? -1) + 1,
  };
  return tx.customField.create({ ...query, data }).catch((error: unknown) => {
    throw isUniqueViolation(error) ? badInput({ key: [KEY_TAKEN] }) : error;
  });
}

/**
 * The options no longer offered that a record of the account still holds (SELECT: the value;
 * MULTI_SELECT: one of its values): those whose counters in custom_field_counts sum above zero, a
 * few rows by primary key where reading every record of the account took seconds at a million
 * (docs/custom-fields.md#which-index-serves-what). The counters are kept in the writes' own
 * transactions, so the sum is what this transaction's snapshot holds, as a read of the records was.
 */
async function optionsInUse(tx: Prisma.TransactionClient, field: CustomField, removed: string[]): Promise<string[]> {
  if (removed.length === 0) return [];
  const rows = await tx.$queryRaw<{ option: string }[]>`
    SELECT value AS option FROM custom_field_counts
     WHERE account_id = ${field.accountId}::uuid AND object = ${field.object}::custom_field_object AND key = ${field.key} AND value = ANY (${removed}::text[])
     GROUP BY value HAVING sum(n) > 0`;
  return rows.map((row) => row.option).sort();
}

export async function updateCustomField(tx: Prisma.TransactionClient, { id, input, expectedUpdatedAt }: UpdateCustomFieldArgs, query: Query = {}): Promise<CustomField> {
  await tx.$executeRaw`SELECT 1 FROM custom_field_definitions WHERE id = ${id}::uuid FOR UPDATE`;
  const field = await tx.customField.findUniqueOrThrow({ where: { id } });
  if (expectedUpdatedAt && field.updatedAt.getTime() !== expectedUpdatedAt.getTime()) throw conflict(MESSAGES.staleRecord, { currentUpdatedAt: field.updatedAt.toISOString() });
  const details: Record<string, string[]> = {};
  if (input.options != null) {
    if (!WITH_OPTIONS.has(field.type)) details.options = [NO_OPTIONS];
    else if (input.options.length === 0) details.options = [OPTIONS_NEEDED];
  }
  if (Object.keys(details).length) throw badInput(details);
  if (input.archived === false && field.archived) await assertRoom(tx, field.accountId, field.object);
  // A record's value is never left outside its field's options (the field is locked above).
  if (input.options != null) {
    const inUse = await optionsInUse(tx, field, field.options.filter((option) => !input.options!.includes(option)));
    if (inUse.length) throw conflict(OPTION_IN_USE(inUse));
  }
  const data = Object.fromEntries(Object.entries(input).filter(([, value]) => value != null));
  return tx.customField.update({ ...query, where: { id }, data });
}

/** After a change commits: this instance reads the account's definitions at once, others within a second (DEFINITIONS_FRESH_MS). */
export const definitionsChanged = (accountId: string) => recordShapes.forget(accountId);
