import type { Prisma } from '../generated/prisma/client.js';

/**
 * For eraseContact (docs/decisions.md §13), in its transaction: the account's earlier events about
 * the person (the contact itself, and records linked to it) keep ids only. Deliveries store no
 * payloads, so nothing else holds a copy. Returns how many events were scrubbed.
 */
export function scrubContactFromEvents(tx: Prisma.TransactionClient, accountId: string, contactId: string): Promise<number> {
  return tx.$executeRaw`
    UPDATE events SET data = jsonb_build_object('object', jsonb_strip_nulls(jsonb_build_object(
      'id', data->'object'->'id', 'contact_id', data->'object'->'contact_id', 'form_id', data->'object'->'form_id')))
    WHERE account_id = ${accountId}::uuid AND (contact_id = ${contactId}::uuid OR subject_id = ${contactId}::uuid)`;
}
