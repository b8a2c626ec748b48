// The trash (docs/trash.md, docs/decisions.md §22): a contact, deal or company that is deleted is
// first copied here, whole, with every row that points at it as the reference map reads them from
// the datamodel (src/db/references.ts), so a restore (restore.ts) puts back the record and each link.
// Merge, restore, delete and erase all read who points at what from that one map.
import { Prisma } from '../generated/prisma/client.js';
import { referencesTo, type Reference, type Referenced } from '../db/references.js';
import { uuidv7 } from '../events/ids.js';
import type { Actor, RecordKind } from '../events/types.js';

/** A record the trash holds: its reference-map target, its table and its events' kind (`record_type`). */
export type TrashKind = { model: Referenced; table: 'contacts' | 'deals' | 'companies'; kind: RecordKind & ('contact' | 'deal' | 'company') };

export const TRASH_KINDS = {
  contact: { model: 'Contact', table: 'contacts', kind: 'contact' },
  deal: { model: 'Deal', table: 'deals', kind: 'deal' },
  company: { model: 'Company', table: 'companies', kind: 'company' },
} as const satisfies Record<string, TrashKind>;

/**
 * What a trash row keeps of the rows that pointed at its record (its `links` column): the ids of those
 * whose link the delete cleared, by `<table>.<column>`, and the whole rows that went with the record
 * (notes about it alone, docs/decisions.md §21), by table.
 */
export type TrashLinks = { unlinked: Record<string, string[]>; removed: Record<string, Record<string, unknown>[]> };

export const linkKey = (ref: Reference) => `${ref.table}.${ref.column}`;

/**
 * The other columns of `ref`'s table that point at a contact, a deal or a company: a row of a
 * `release` reference with none of them set points at the record alone and goes with it (a note; a
 * task stays, unlinked: src/links/targets.ts).
 */
export function otherTargets(ref: Reference): string[] {
  return (['Contact', 'Deal', 'Company'] as const).flatMap((target) => referencesTo(target)).filter((r) => r.model === ref.model && r.column !== ref.column).map((r) => r.column);
}

/** A row of a `release` reference pointing at the record alone goes with it: notes do, tasks keep their row (releaseTargets). */
export const goesAlone = (ref: Reference) => ref.onGone === 'release' && ref.model === 'Note';

/** The `links` object of each record, built by PostgreSQL from the pointing rows (each read through its (account_id, <column>) index). */
function linksSql(kind: TrashKind): Prisma.Sql {
  const unlinked: Prisma.Sql[] = [];
  const removed: Prisma.Sql[] = [];
  for (const ref of referencesTo(kind.model)) {
    if (ref.onGone === 'cascade') continue; // a cache drawn again (an invoice's PDF)
    const table = Prisma.raw(`"${ref.table}"`);
    const column = Prisma.raw(`x."${ref.column}"`);
    const alone = goesAlone(ref) ? Prisma.raw(otherTargets(ref).map((c) => `x."${c}" IS NULL`).join(' AND ')) : null;
    const pointing = Prisma.sql`FROM ${table} x WHERE x.account_id = t.account_id AND ${column} = t.id`;
    unlinked.push(Prisma.sql`${linkKey(ref)}::text, (SELECT coalesce(jsonb_agg(x.id), '[]'::jsonb) ${pointing}${alone ? Prisma.sql` AND NOT (${alone})` : Prisma.empty})`);
    if (alone) removed.push(Prisma.sql`${ref.table}::text, (SELECT coalesce(jsonb_agg(to_jsonb(x)), '[]'::jsonb) ${pointing} AND ${alone})`);
  }
  const object = (pairs: Prisma.Sql[]) => (pairs.length ? Prisma.sql`jsonb_build_object(${Prisma.join(pairs)})` : Prisma.sql`'{}'::jsonb`);
  return Prisma.sql`jsonb_build_object('unlinked', ${object(unlinked)}, 'removed', ${object(removed)})`;
}

/**
 * Copies the account's records of `ids` to the trash, in the caller's transaction and before the
 * delete lets go of them (one statement, whatever the count): each row whole (to_jsonb) and its links.
 * The records' rows are locked first, so no link is added between this copy and the delete: a new
 * link's foreign key check waits on that lock. Answers how many were copied.
 */
export async function toTrash(tx: Prisma.TransactionClient, kind: TrashKind, accountId: string, ids: readonly string[], actor: Actor, deletedAt = new Date()): Promise<number> {
  if (ids.length === 0) return 0;
  const wanted = Prisma.sql`ARRAY(SELECT json_array_elements_text(${JSON.stringify(ids)}::json)::uuid)`;
  // Locked first (a no-op when the caller holds them already): a link added between this copy and the delete would be lost.
  await tx.$executeRaw`SELECT 1 FROM ${Prisma.raw(`"${kind.table}"`)} WHERE account_id = ${accountId}::uuid AND id = ANY(${wanted}) ORDER BY id FOR UPDATE`;
  const items = JSON.stringify(ids.map((id) => ({ id: uuidv7(), record_id: id })));
  return tx.$executeRaw`
    INSERT INTO trash_items (id, account_id, record_type, record_id, "row", links, deleted_at, actor_type, actor_id)
    SELECT w.id, t.account_id, ${kind.kind}, t.id, to_jsonb(t), ${linksSql(kind)}, ${deletedAt}::timestamptz, ${actor.type}, ${actor.id}
      FROM ${Prisma.raw(`"${kind.table}"`)} t JOIN json_to_recordset(${items}::json) AS w(id uuid, record_id uuid) ON w.record_id = t.id
     WHERE t.account_id = ${accountId}::uuid`;
}
