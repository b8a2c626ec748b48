import { Prisma } from '../generated/prisma/client.js';

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
