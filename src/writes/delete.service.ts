// deleteContacts (docs/decisions.md §16) in a fixed number of statements, whatever the count: the
// contacts are read and locked, copied to the trash with their links (trash.ts, docs/trash.md), then
// in one statement every record that may point at them loses the link (as deleteContact does), they go, and each has its `contact.deleted` event and webhook messages. The
// links' foreign keys are checked at the end of that statement, after the unlinking sub-statements;
// the record_counts triggers keep the counters exact.
import type { ErrorDetails } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';
import { eventId } from '../events/ids.js';
import { outbox } from '../events/outbox.js';
import { serializeRecord } from '../events/serialize.js';
import type { Actor } from '../events/types.js';
import { DUPLICATE } from './batch.service.js';
import { NOT_IN_ACCOUNT } from '../errors.js';
import { readRows, type SetModel } from './set-write.js';
import { referencesTo } from '../db/references.js';
import { toTrash, TRASH_KINDS } from './trash.js';

const SPEC: SetModel = { model: 'Contact', table: 'contacts', kind: 'contact' };

export type DeleteResult = { deleted: number; failed: number; items: { index: number; id: string; deleted: boolean; details: ErrorDetails | null }[] };

/** The rows that may link a contact and are unlinked when it goes (the reference map, src/db/references.ts); each moves its updated_at (its ETag). */
const LINKED = () => referencesTo('Contact').filter((ref) => ref.onGone === 'unlink');

export async function deleteContacts(tx: Prisma.TransactionClient, accountId: string, ids: string[], actor: Actor): Promise<DeleteResult> {
  const unique = [...new Set(ids)];
  // Read (and locked) first: each event carries the contact as it was, serialized as every event is.
  const rows = await readRows(tx, SPEC, Prisma.sql`t.account_id = ${accountId}::uuid AND t.id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(unique)}::json)::uuid))`);
  const found = new Set(rows.map((r) => r.id));
  if (rows.length > 0) {
    // To the trash first, each with every row that points at it (docs/trash.md).
    await toTrash(tx, TRASH_KINDS.contact, accountId, rows.map((r) => r.id), actor);
    const wanted = JSON.stringify(rows.map((r) => r.id));
    const events = rows.map((row) => ({ id: eventId(), subject_id: row.id, data: { object: serializeRecord('contact', row) } }));
    const unlinks = LINKED().map(
      ({ table, column, stamped }) => Prisma.sql`${Prisma.raw(`unlink_${table}`)} AS (
        UPDATE ${Prisma.raw(table)} SET ${Prisma.raw(column)} = NULL${Prisma.raw(stamped ? ', updated_at = now()' : '')}
        WHERE account_id = ${accountId}::uuid AND ${Prisma.raw(column)} IN (SELECT id FROM wanted) RETURNING 1)`,
    );
    // Notes about these people alone go; the other notes and the tasks lose the link (docs/decisions.md §21).
    // Disjoint rows: one statement's sub-statements must not both change a row.
    const activities = Prisma.sql`
      notes_gone AS (DELETE FROM notes WHERE account_id = ${accountId}::uuid AND contact_id IN (SELECT id FROM wanted)
        AND deal_id IS NULL AND company_id IS NULL RETURNING 1),
      notes_unlinked AS (UPDATE notes SET contact_id = NULL WHERE account_id = ${accountId}::uuid AND contact_id IN (SELECT id FROM wanted)
        AND (deal_id IS NOT NULL OR company_id IS NOT NULL) RETURNING 1),
      tasks_unlinked AS (UPDATE tasks SET contact_id = NULL WHERE account_id = ${accountId}::uuid AND contact_id IN (SELECT id FROM wanted) RETURNING 1)`;
    await tx.$executeRaw`
      WITH wanted AS (SELECT json_array_elements_text(${wanted}::json)::uuid AS id),
      ${Prisma.join(unlinks, ',\n')},
      ${activities},
      gone AS (DELETE FROM contacts WHERE account_id = ${accountId}::uuid AND id IN (SELECT id FROM wanted) RETURNING id, account_id),
      ${outbox(Prisma.sql`
        SELECT e.id, g.account_id, 'contact.deleted', ${new Date()}::timestamptz, ${actor.type}, ${actor.id}, g.id, g.id, e.data
        FROM gone g JOIN json_to_recordset(${JSON.stringify(events)}::json) AS e(id uuid, subject_id uuid, data jsonb) ON e.subject_id = g.id`)}
      SELECT count(*) FROM gone`;
  }
  const items = ids.map((id, index) =>
    found.has(id) && ids.indexOf(id) === index
      ? { index, id, deleted: true, details: null }
      : { index, id, deleted: false, details: { id: [ids.indexOf(id) === index ? NOT_IN_ACCOUNT : DUPLICATE] } },
  );
  const deleted = items.filter((i) => i.deleted).length;
  return { deleted, failed: items.length - deleted, items };
}
