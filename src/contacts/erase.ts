import { Prisma } from '../generated/prisma/client.js';
// The one import up a layer: erasure reaches the keys an import keeps of the person (docs/decisions.md §24),
// and imports/ stands above contacts/ because an import writes contacts.
import { forgetKeys } from '../imports/keys.js';

/** What an erased person's events keep: the ids of what they were about, nothing else. */
const IDS_ONLY = Prisma.sql`jsonb_build_object('object', jsonb_strip_nulls(jsonb_build_object(
  'id', data->'object'->'id', 'contact_id', data->'object'->'contact_id', 'form_id', data->'object'->'form_id')))`;

/**
 * For eraseContact (docs/decisions.md §13), in its transaction: the account's earlier events about
 * the person keep ids only. Those are the events of the contact itself and of records linked to it,
 * and every `form.submitted` of a submission that carried the person's e-mail, whoever sent it:
 * `submissionIds` (those the erasure emptied) and any whose values still hold the address.
 * Deliveries store no payloads (a webhook is built from its event when sent); an event not yet
 * relayed has its copy in the relay's queue (docs/events.md), scrubbed alike. Returns how many
 * events were scrubbed.
 */
export async function scrubContactFromEvents(
  tx: Prisma.TransactionClient,
  accountId: string,
  contact: { id: string; email: string | null },
  submissionIds: string[],
): Promise<number> {
  const about = Prisma.sql`account_id = ${accountId}::uuid
       AND (contact_id = ${contact.id}::uuid OR subject_id = ${contact.id}::uuid OR subject_id = ANY(${submissionIds}::uuid[])
            OR (${contact.email}::text IS NOT NULL AND type = 'form.submitted'
                AND EXISTS (SELECT 1 FROM jsonb_each_text(data->'object'->'data') v WHERE lower(btrim(v.value)) = lower(${contact.email}::text))))`;
  await tx.$executeRaw`UPDATE event_queue SET data = ${IDS_ONLY} WHERE ${about}`;
  return tx.$executeRaw`UPDATE events SET data = ${IDS_ONLY} WHERE ${about}`;
}

/**
 * For eraseContact (docs/decisions.md §24 "Erasure reaches every copy"), in its transaction: the
 * import rows that carry the person, waiting for the worker (import_rows) or refused (import_errors,
 * the import's errors file), keep their place and width but lose every cell. A row carries the person
 * when a cell holds their e-mail, or the column a contacts import reads external ids from holds
 * theirs. An emptied waiting row is then refused (its required field: Required), never written. The text
 * search only narrows the rows read: a cell must equal the value, so a longer address is not taken
 * for it. Returns how many rows were emptied.
 */
export async function scrubContactFromImports(
  tx: Prisma.TransactionClient,
  contacts: Parameters<typeof forgetKeys>[1], // the contacts' batch kind: its keys say how they compare
  accountId: string,
  contact: { email: string | null; externalId: string | null },
): Promise<number> {
  const { email, externalId } = contact;
  if (!email && !externalId) return 0;
  // A value as it reads inside the cells' JSON text (escaped as to_json escapes it): what the text search looks for.
  const needle = (value: string | null) => Prisma.sql`btrim(to_json(${value}::text)::text, '"')`;
  await forgetKeys(tx, contacts, accountId, contact);
  let emptied = 0;
  for (const table of [Prisma.raw('import_rows'), Prisma.raw('import_errors')]) {
    emptied += await tx.$executeRaw`
      UPDATE ${table} r SET cells = coalesce((SELECT json_agg(''::text) FROM json_array_elements(r.cells)), '[]'::json)
        FROM imports i
       WHERE r.account_id = ${accountId}::uuid AND i.account_id = r.account_id AND i.id = r.import_id
         AND (strpos(lower(r.cells::text), lower(${needle(email)})) > 0 OR strpos(r.cells::text, ${needle(externalId)}) > 0)
         AND EXISTS (SELECT 1 FROM json_array_elements_text(r.cells) WITH ORDINALITY AS c(value, n)
                      WHERE lower(btrim(c.value)) = lower(${email}::text)
                         OR (i.object = 'contacts' AND btrim(c.value) = ${externalId}::text
                             AND i.columns ->> (c.n::int - 1) = 'externalId'))`;
  }
  return emptied;
}

/**
 * For eraseContact (docs/decisions.md §24 "Erasure reaches every copy"): the invoice mail to the
 * person's address loses the address, and what was still waiting is given up. Returns how many.
 */
export function forgetMailTo(tx: Prisma.TransactionClient, accountId: string, email: string | null): Promise<number> {
  if (!email) return Promise.resolve(0);
  return tx.$executeRaw`
    UPDATE invoice_mails SET "to" = '',
           last_error = CASE WHEN status = 'pending' THEN ${CONTACT_ERASED} ELSE last_error END,
           status = CASE WHEN status = 'pending' THEN 'failed' ELSE status END
    WHERE account_id = ${accountId}::uuid AND lower("to") = lower(${email}::text)`;
}
export const CONTACT_ERASED = 'The contact was erased: not sent';
