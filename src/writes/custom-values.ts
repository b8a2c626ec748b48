// The account's own fields on a write (docs/custom-fields.md#values): every create, update and batch
// of a contact, deal, company or invoice judges its `customFields` by the account's definitions here,
// and an update merges its patch into what the record holds. The form of the value (an object) is
// the model's rule (CUSTOM_VALUES); what each key may hold is the account's (RecordShapes.judge).
import type { Prisma } from '../generated/prisma/client.js';
import { badInput, type ErrorDetails } from '../errors.js';
import { CUSTOM_VALUES, recordShapes } from '../model/shapes.js';
import type { RecordModel } from '../model/field-spec.js';
import type { RecordKey } from '../db/client.js';

type Values = Readonly<Record<string, unknown>> | undefined;
type WithValues = { customFields?: Values };

/** Every failing key of a write's values, named `customFields.<key>` (empty when they pass). */
export async function customValueProblems(db: Prisma.TransactionClient, accountId: string, model: RecordModel, values: unknown, mode: 'create' | 'update'): Promise<ErrorDetails> {
  if (mode === 'update' && values === undefined) return {};
  if (values !== undefined && (values === null || typeof values !== 'object' || Array.isArray(values))) return {}; // the model's rule names it
  return (await recordShapes.of(db, accountId, model)).judge(values as Values, mode).details;
}

/**
 * A create's input with its values as stored (nulls dropped, `{}` for none), or a 400 naming every
 * failing key beside `more` (the write's other problems, found by the caller).
 */
export async function createWithValues<I extends WithValues>(db: Prisma.TransactionClient, accountId: string, model: RecordModel, input: I, more: ErrorDetails = {}): Promise<I & { customFields: Prisma.InputJsonObject }> {
  const { values, details } = (await recordShapes.of(db, accountId, model)).judge(input.customFields, 'create');
  if (Object.keys(more).length || Object.keys(details).length) throw badInput({ ...more, ...details });
  return { ...input, customFields: values as Prisma.InputJsonObject };
}

/** An update's problems beside `more`: a 400 naming every failing key of its patch, when any fails. */
export async function assertUpdateValues(db: Prisma.TransactionClient, accountId: string, model: RecordModel, input: WithValues, more: ErrorDetails = {}): Promise<void> {
  const details = { ...more, ...(await customValueProblems(db, accountId, model, input.customFields, 'update')) };
  if (Object.keys(details).length) throw badInput(details);
}

/** `stored` with a patch applied: a key set to null is cleared, others replaced; the rest kept. */
export function patched(stored: unknown, patch: Readonly<Record<string, unknown>>): Prisma.InputJsonObject {
  const out: Record<string, unknown> = { ...((stored as Record<string, unknown> | null) ?? {}) };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out as Prisma.InputJsonObject;
}

type Delegate = { findUnique(args: object): Promise<unknown> };

/**
 * An update's data with its values patch merged into what the record holds. Called inside
 * updatedWithEvent (the row is locked), so no concurrent write's values are lost between the read
 * and the update.
 */
export async function mergedValues<D extends WithValues>(delegate: Delegate, record: RecordKey, data: D): Promise<D> {
  if (!data.customFields) return data;
  const row = (await delegate.findUnique({ where: { id: record.id }, select: { [CUSTOM_VALUES.name]: true } })) as { customFields: unknown } | null;
  return { ...data, customFields: patched(row?.customFields, data.customFields) };
}
