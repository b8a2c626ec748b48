import { Prisma } from '../generated/prisma/client.js';
import { fieldsOf } from '../db/datamodel.js';
import type { Query } from '../db/client.js';
import { emit, emitMany } from './emit.js';
import { uuidv7 } from './ids.js';
import type { Actor, EventType } from './types.js';

// The events of the §12 writes (docs/events.md): every service write passes its row through here,
// in its own transaction, so the change and its event commit together.

const columnsCache = new Map<string, string[]>();

/** The model's columns (no relations): what an event's `object` shows. */
function columnsOf(model: string): string[] {
  let columns = columnsCache.get(model);
  if (!columns) columnsCache.set(model, (columns = fieldsOf(model).filter((f) => f.kind !== 'object').map((f) => f.name)));
  return columns;
}

/** The resolver's `query` widened so the write's RETURNING also has every column the event shows (still one statement). */
export function withColumns(model: string, query: Query = {}): Query {
  if (!query.select) return query; // no select (or include): Prisma returns every column already
  return { select: { ...Object.fromEntries(columnsOf(model).map((c) => [c, true])), ...query.select } };
}

/** The row's columns only (a resolver's include may have added relations). */
export function columnsIn(model: string, row: object): Record<string, unknown> {
  const all = row as Record<string, unknown>;
  return Object.fromEntries(columnsOf(model).filter((c) => c in all).map((c) => [c, all[c]]));
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The tables whose updates carry `previous`: a closed set, so no caller's string reaches the SQL. */
export type UpdatedTable = 'contacts' | 'deals' | 'companies' | 'notes' | 'tasks' | 'invoices' | 'pipeline_stages' | 'lead_forms' | 'proposals' | 'contracts' | 'galleries' | 'bookings' | 'workflows';

/**
 * Runs an update of `fields` and emits `<kind>.updated` with the changed fields' old values
 * (`previous`). The row is locked before its old values are read, so no concurrent write slips between.
 */
export async function updatedWithEvent<T extends object>(
  tx: Prisma.TransactionClient,
  spec: { type: EventType; model: string; table: UpdatedTable; actor: Actor },
  record: { id: string; accountId: string },
  fields: string[],
  update: () => Promise<T>,
): Promise<T> {
  await tx.$executeRaw`SELECT 1 FROM ${Prisma.raw(`"${spec.table}"`)} WHERE id = ${record.id}::uuid FOR UPDATE`;
  const delegate = (tx as unknown as Record<string, { findUnique(a: object): Promise<Record<string, unknown> | null> }>)[
    spec.model.charAt(0).toLowerCase() + spec.model.slice(1)
  ]!;
  const before = fields.length ? await delegate.findUnique({ where: { id: record.id }, select: Object.fromEntries(fields.map((f) => [f, true])) }) : null;
  const row = await update();
  const after = row as Record<string, unknown>;
  const previous = Object.fromEntries(fields.filter((f) => before && f in after && !same(before[f], after[f])).map((f) => [f, before![f]]));
  await emit(tx, { type: spec.type, accountId: record.accountId, actor: spec.actor, object: columnsIn(spec.model, row), previous });
  return row;
}

/** The fields an update input changes (absent = unchanged). */
export const changedFields = (input: object): string[] => Object.entries(input).filter(([, v]) => v !== undefined).map(([k]) => k);

/** Emits `type` about `row` (its columns only). */
export function emitRow(tx: Prisma.TransactionClient, type: EventType, model: string, actor: Actor, row: object & { accountId: string }) {
  return emit(tx, { type, accountId: row.accountId, actor, object: columnsIn(model, row) });
}

/**
 * New rows of many inputs and each one's `type` event, in two statements whatever the count (a burst
 * of workflow runs' steps: docs/workflows.md#runs). `insert` is the model's createManyAndReturn. The
 * ids are made here (time-ordered, as uuid(7)) so each row meets its item whatever order RETURNING gives.
 */
export async function createdWithEvents<D extends object, R extends { id: string; accountId: string }>(
  tx: Prisma.TransactionClient,
  spec: { type: EventType; model: string },
  items: { data: D; actor: Actor }[],
  insert: (data: (D & { id: string })[]) => Promise<R[]>,
): Promise<R[]> {
  const data = items.map((item) => ({ ...item.data, id: uuidv7() }));
  const byId = new Map((await insert(data)).map((row) => [row.id, row]));
  const rows = data.map((d) => byId.get(d.id)!);
  await emitMany(tx, rows.map((row, k) => ({ type: spec.type, accountId: row.accountId, actor: items[k]!.actor, object: columnsIn(spec.model, row) })));
  return rows;
}
