// restoreContact / restoreDeal / restoreCompany (docs/trash.md, docs/decisions.md §22): the record
// comes back from the trash (trash.ts) with every link it had. Its own links to records since gone
// stay empty; the rows that pointed at it point at it again if they still exist and point nowhere;
// the rows that went with it (notes about it alone) come back. The record_counts and report_sums
// triggers count it again as any insert.
import { Prisma } from '../generated/prisma/client.js';
import { delegateOf, fieldsOf, type ModelField } from '../db/datamodel.js';
import { referencesTo, tableOf } from '../db/references.js';
import { sqlStateOf, errorChain } from '../db/sql-state.js';
import { badInput, MESSAGES, notFound } from '../errors.js';
import { emitRow, withColumns } from '../events/record.js';
import type { Actor, EventType } from '../events/types.js';
import { camelCase, snakeCase } from '../names.js';
import type { Query, RecordKey } from '../db/client.js';
import { goesAlone, linkKey, TRASH_KINDS, type TrashKind, type TrashLinks } from './trash.js';
import { TAKEN } from './update.js';

type Row = Record<string, unknown>;
type Relation = ModelField & { relationFromFields?: readonly string[] };

/** The trash row of the account's record `id`, locked for the restore; null when the trash holds none. */
export async function trashedRow(tx: Prisma.TransactionClient, kind: TrashKind, { id, accountId }: RecordKey) {
  const [item] = await tx.$queryRaw<{ id: string; row: Row; links: TrashLinks }[]>`
    SELECT id::text AS id, "row", links FROM trash_items
     WHERE account_id = ${accountId}::uuid AND record_id = ${id}::uuid AND record_type = ${kind.kind} FOR UPDATE`;
  return item ?? null;
}

/**
 * Clears, in each of `rows` (snake_case, as to_jsonb wrote them), the links of `model` whose target is
 * gone: a record of the account no longer there (deleted, trashed, merged away), or an owner who is
 * no longer the account's owner or a member (docs/decisions.md §21). Read from the datamodel's
 * relations, one query a relation.
 */
async function withLiveLinks(tx: Prisma.TransactionClient, model: string, accountId: string, rows: Row[]): Promise<Row[]> {
  const relations = (fieldsOf(model) as readonly Relation[]).filter((f) => f.kind === 'object' && f.relationFromFields?.length && f.type !== 'Account');
  for (const relation of relations) {
    const column = snakeCase(relation.relationFromFields!.at(-1)!);
    const ids = [...new Set(rows.map((r) => r[column]).filter((v): v is string => typeof v === 'string'))];
    if (ids.length === 0) continue;
    const wanted = Prisma.sql`ARRAY(SELECT json_array_elements_text(${JSON.stringify(ids)}::json)::uuid)`;
    const live = relation.type !== 'User'
      ? Prisma.sql`SELECT id::text AS id FROM ${Prisma.raw(`"${tableOf(relation.type)}"`)} WHERE account_id = ${accountId}::uuid AND id = ANY(${wanted})`
      : column === 'owner_id'
        ? Prisma.sql`SELECT owner_id::text AS id FROM accounts WHERE id = ${accountId}::uuid AND owner_id = ANY(${wanted})
            UNION SELECT user_id::text FROM team_members WHERE account_id = ${accountId}::uuid AND user_id = ANY(${wanted})`
        : Prisma.sql`SELECT id::text AS id FROM users WHERE id = ANY(${wanted})`;
    const found = new Set((await tx.$queryRaw<{ id: string }[]>(live)).map((r) => r.id));
    const gone = rows.filter((r) => typeof r[column] === 'string' && !found.has(r[column] as string));
    // A target in the trash gets the link back when it is restored in its turn, as if it had been unlinked by its own delete.
    if (trashKindOf(relation.type)) for (const r of gone) await addToTrashedLinks(tx, accountId, r[column] as string, `${tableOf(model)}.${column}`, r.id as string);
    rows = rows.map((r) => (gone.includes(r) ? { ...r, [column]: null } : r));
  }
  return rows;
}

/** The trash kind of a model, or undefined for one the trash never holds (a pipeline stage, a note). */
const trashKindOf = (model: string): TrashKind | undefined => Object.values(TRASH_KINDS).find((k) => k.model === model);

/** Adds `pointingId` to the links of the trashed record `recordId` under `key` (`<table>.<column>`); nothing when it is not in the trash. */
function addToTrashedLinks(tx: Prisma.TransactionClient, accountId: string, recordId: string, key: string, pointingId: string) {
  return tx.$executeRaw`
    UPDATE trash_items SET links = jsonb_set(links, ARRAY['unlinked', ${key}::text], coalesce(links->'unlinked'->${key}::text, '[]'::jsonb) || to_jsonb(${pointingId}::text))
     WHERE account_id = ${accountId}::uuid AND record_id = ${recordId}::uuid`;
}

/** The field a unique key taken since the delete names (`<table>_account_id_<column>_key`): external_id, a company's domain. */
function takenField(error: unknown, table: string): string | null {
  if (sqlStateOf(error) !== '23505') return null;
  for (const e of errorChain(error)) {
    const c = e.constraint as string | { index?: unknown; fields?: unknown } | undefined;
    const named = typeof c === 'string' ? c : typeof c?.index === 'string' ? c.index : null;
    const fields = typeof c === 'object' && Array.isArray(c.fields) ? (c.fields as string[]) : [];
    const column = named ? new RegExp(`^${table}_(?:account_id_)?(\\w+)_key$`).exec(named)?.[1] : fields.find((f) => f.replace(/"/g, '') !== 'account_id');
    if (column) return camelCase(column.replace(/^"|"$/g, ''));
  }
  return 'id';
}

/** Inserts `rows` (to_jsonb's shape) into `table` as they are: every column, in the table's own order. */
const insertRows = (tx: Prisma.TransactionClient, table: string, rows: Row[]) =>
  tx.$executeRaw`INSERT INTO ${Prisma.raw(`"${table}"`)} SELECT * FROM jsonb_populate_recordset(NULL::${Prisma.raw(`"${table}"`)}, ${JSON.stringify(rows)}::jsonb)`;

/**
 * Restores the account's record `key` from the trash, in the caller's transaction, and emits
 * `<kind>.restored` with the record as it is back. NOT_FOUND when the trash holds none; a unique
 * value another record took since (an external id, a company's domain) is a 400 naming its field
 * (TAKEN, as an update that collides), and nothing is written. Its updated_at moves: a sync
 * following changes sees it come back.
 */
export async function restoreRecord<T>(tx: Prisma.TransactionClient, kind: TrashKind, key: RecordKey, actor: Actor, query: Query = {}): Promise<T> {
  const { accountId, id } = key;
  const item = await trashedRow(tx, kind, key);
  if (!item) throw notFound(MESSAGES.notFound);
  const [row] = await withLiveLinks(tx, kind.model, accountId, [{ ...item.row, updated_at: new Date().toISOString() }]);
  try {
    await insertRows(tx, kind.table, [row!]);
  } catch (error) {
    const field = takenField(error, kind.table);
    throw field ? badInput({ [field]: [TAKEN] }) : error;
  }
  for (const ref of referencesTo(kind.model)) {
    const back = item.links.unlinked?.[linkKey(ref)] ?? [];
    if (back.length > 0) {
      // Only rows that point nowhere: one linked elsewhere since keeps its new link.
      await tx.$executeRaw`
        UPDATE ${Prisma.raw(`"${ref.table}"`)} SET ${Prisma.raw(`"${ref.column}"`)} = ${id}::uuid${Prisma.raw(ref.stamped ? ', updated_at = now()' : '')}
         WHERE account_id = ${accountId}::uuid AND ${Prisma.raw(`"${ref.column}"`)} IS NULL
           AND id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(back)}::json)::uuid))`;
      // Those in the trash themselves (a deal deleted after the contact) point at it again once they are restored in their turn.
      const pointing = trashKindOf(ref.model);
      if (pointing) {
        await tx.$executeRaw`
          UPDATE trash_items SET "row" = jsonb_set("row", ARRAY[${ref.column}::text], to_jsonb(${id}::text))
           WHERE account_id = ${accountId}::uuid AND record_type = ${pointing.kind} AND "row"->>${ref.column}::text IS NULL
             AND record_id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(back)}::json)::uuid))`;
      }
    }
    const removed = goesAlone(ref) ? (item.links.removed?.[ref.table] ?? []) : [];
    if (removed.length > 0) await insertRows(tx, ref.table, await withLiveLinks(tx, ref.model, accountId, removed));
  }
  await tx.$executeRaw`DELETE FROM trash_items WHERE account_id = ${accountId}::uuid AND id = ${item.id}::uuid`;
  const delegate = delegateOf<{ findUniqueOrThrow(args: object): Promise<Row & { accountId: string }> }>(tx, kind.model);
  const restored = await delegate.findUniqueOrThrow({ ...withColumns(kind.model, query), where: { id } });
  await emitRow(tx, `${kind.kind}.restored` as EventType, kind.model, actor, restored);
  return restored as T;
}
