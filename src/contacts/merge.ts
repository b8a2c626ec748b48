// Records merged into one (docs/decisions.md §22, docs/duplicates.md): the primary keeps its values,
// each empty field takes the first non-empty value among the duplicates (oldest first), every
// reference moves to the primary (src/links/move.ts, from the reference map), the duplicates are
// deleted, each with its `<kind>.deleted` (`merged_into`), and `<kind>.merged` names them. Contacts
// here; companies (src/companies/merge.ts) use the same engine.
import { z } from 'zod';
import { Prisma } from '../generated/prisma/client.js';
import { delegateOf, fieldsOf } from '../db/datamodel.js';
import { MESSAGES, notFound } from '../errors.js';
import { emitMany } from '../events/emit.js';
import { columnsIn, withColumns } from '../events/record.js';
import type { Actor, EventType } from '../events/types.js';
import { moveReferences } from '../links/move.js';
import type { Query, RecordKey } from '../db/client.js';
import { uuid } from '../validation.js';
import { CUSTOM_VALUES } from '../model/shapes.js';

export const MAX_DUPLICATES = 10;

/** `primaryId` and 1–10 `duplicateIds`, none repeated, none the primary: else a 400 naming `duplicateIds`. */
export const mergeArgs = z.object({
  primaryId: uuid,
  duplicateIds: z
    .array(uuid)
    .min(1, 'Give at least one duplicate')
    .max(MAX_DUPLICATES, `At most ${MAX_DUPLICATES} duplicates`)
    .refine((ids) => new Set(ids.map((id) => id.toLowerCase())).size === ids.length, 'Each duplicate once'),
}).superRefine((args, ctx) => {
  if (args.duplicateIds.some((id) => id.toLowerCase() === args.primaryId.toLowerCase())) {
    ctx.addIssue({ code: 'custom', path: ['duplicateIds'], message: 'Must not hold the primary' });
  }
});
export type MergeArgs = z.output<typeof mergeArgs>;

/** What a merge is of: the model (the reference map's target), its table and its events' kind. */
export type MergeKind = { model: 'Contact' | 'Company'; table: 'contacts' | 'companies'; kind: 'contact' | 'company' };

export const CONTACTS: MergeKind = { model: 'Contact', table: 'contacts', kind: 'contact' };

/** Columns a merge never fills from a duplicate: the record's identity, its account, its stamps, and its id in another system (named in the event instead). */
const KEPT = new Set(['id', 'accountId', 'externalId', 'createdAt', 'updatedAt']);

const empty = (value: unknown) => value === null || value === undefined || (typeof value === 'string' && value.trim() === '');

/**
 * The primary's empty fields, each with the first non-empty value among `duplicates` (oldest first);
 * its account's own fields (`customFields`, docs/custom-fields.md) key by key alike.
 */
export function filledFrom(model: string, primary: Record<string, unknown>, duplicates: readonly Record<string, unknown>[]): Record<string, unknown> {
  const fill: Record<string, unknown> = {};
  for (const field of fieldsOf(model)) {
    if (field.kind === 'object' || KEPT.has(field.name)) continue;
    if (field.name === CUSTOM_VALUES.name) {
      const values = filledValues(primary[field.name], duplicates.map((d) => d[field.name]));
      if (values) fill[field.name] = values;
      continue;
    }
    if (!empty(primary[field.name])) continue;
    const donor = duplicates.find((d) => !empty(d[field.name]));
    if (donor) fill[field.name] = donor[field.name];
  }
  return fill;
}

/** The primary's custom values with each key it lacks taken from the first duplicate that has it; null when none is missing. */
function filledValues(primary: unknown, duplicates: readonly unknown[]): Record<string, unknown> | null {
  const kept = { ...((primary as Record<string, unknown> | null) ?? {}) };
  let added = false;
  for (const values of duplicates) {
    for (const [key, value] of Object.entries((values as Record<string, unknown> | null) ?? {})) {
      if (key in kept || empty(value)) continue;
      kept[key] = value;
      added = true;
    }
  }
  return added ? kept : null;
}

type Delegate = {
  findMany(args: object): Promise<Record<string, unknown>[]>;
  deleteMany(args: object): Promise<{ count: number }>;
  update(args: object): Promise<Record<string, unknown> & { accountId: string }>;
};

/**
 * Merges `duplicateIds` into `primary`, in the caller's transaction. The rows are locked first, in
 * one order (ids sorted), so two merges over the same records queue instead of deadlocking: the
 * second finds a record the first deleted missing and answers NOT_FOUND, writing nothing. A
 * duplicate that is not the account's (unknown, another account's, already merged away) is the
 * same NOT_FOUND.
 *
 * Set-based: a fixed number of statements whatever the number of duplicates (the lock, one read of
 * them all, one update per referencing table, one delete, the primary's update, one insert of every
 * event), where it used to delete and emit once per duplicate (BENCHMARKS.md "Merge").
 */
export async function mergeRecords<T>(tx: Prisma.TransactionClient, kind: MergeKind, primary: RecordKey, duplicateIds: readonly string[], actor: Actor, query: Query = {}): Promise<T> {
  const { accountId } = primary;
  const ids = [primary.id, ...duplicateIds].sort();
  const locked = await tx.$queryRaw<{ id: string }[]>`
    SELECT id::text AS id FROM ${Prisma.raw(`"${kind.table}"`)}
     WHERE account_id = ${accountId}::uuid AND id = ANY(${ids}::uuid[])
     ORDER BY id FOR UPDATE`;
  if (locked.length !== ids.length) throw notFound(MESSAGES.notFound);

  const delegate = delegateOf<Delegate>(tx, kind.model);
  // Locked above, so these are the rows the delete removes: their events are made from them.
  const rows = await delegate.findMany({ where: { accountId, id: { in: locked.map((r) => r.id) } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const before = rows.find((r) => r.id === primary.id)!;
  const duplicates = rows.filter((r) => r !== before);
  const fill = filledFrom(kind.model, before, duplicates);
  const mergedIds = duplicates.map((d) => d.id as string);

  await moveReferences(tx, kind.model, { accountId, fromIds: mergedIds, toId: primary.id });
  // Deleted before the primary takes their values: a company's domain is unique in its account.
  // One statement: the record_counts triggers count its rows once.
  await delegate.deleteMany({ where: { accountId, id: { in: mergedIds } } });
  // Written even when nothing was empty: the merge is a change of the primary (its updated_at moves, as its ETag).
  const after = await delegate.update({ ...withColumns(kind.model, query), where: { id: primary.id }, data: { ...fill, updatedAt: new Date() } });
  // Every event in one statement, in the order they happened: each duplicate's delete, then the merge.
  await emitMany(tx, [
    ...duplicates.map((row) => ({ type: `${kind.kind}.deleted` as EventType, accountId, actor, object: columnsIn(kind.model, row), extra: { merged_into: primary.id } })),
    {
      type: `${kind.kind}.merged` as EventType,
      accountId,
      actor,
      object: columnsIn(kind.model, after),
      extra: { merged_ids: mergedIds, merged_external_ids: duplicates.map((d) => d.externalId ?? null) },
    },
  ]);
  return after as T;
}
