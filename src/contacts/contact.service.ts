import { z } from 'zod';
import { letGo } from '../links/let-go.js';
import { toTrash, TRASH_KINDS } from '../writes/trash.js';
import { type Contact, type Prisma } from '../generated/prisma/client.js';
import { isUniqueViolation, TAKEN, updateGuarded, type Query, type UpdateArgs } from '../writes/update.js';
import { badInput } from '../errors.js';
import { batchKindOf, parsedOne, single, writeJudged } from '../writes/batch.service.js';
import { rowOf } from '../writes/set-write.js';
import { forgetMailTo, scrubContactFromEvents, scrubContactFromImports } from './erase.js';
import { forgetQueuedName } from './duplicate-groups.js';
import { emit } from '../events/emit.js';
import { changedFields, emitRow, updatedWithEvent, withColumns } from '../events/record.js';
import type { Actor } from '../events/types.js';
import { CONTACT_MODEL } from './contact.model.js';
import { assertUpdateValues, customValueProblems } from '../writes/custom-values.js';
import { checkOwnership, ownershipProblems } from '../links/company-owner.js';
import { linkableDomain } from '../links/domain.js';
import type { RecordKey } from '../db/client.js';

/** Contacts on the set-based write path (src/writes/): the model, its batch keys, a new row, and its links. */
export const contactBatch = batchKindOf(CONTACT_MODEL, {
  keys: { email: { caseless: true }, externalId: { taken: TAKEN } },
  // Every new row of a set gives the same columns (writeSet inserts those of the first).
  newRow: (input, id, now) => rowOf('Contact', { ...input, companyId: input.companyId ?? null, ownerId: input.ownerId ?? null, id, createdAt: now, updatedAt: now }),
  // docs/decisions.md §21: a company and an owner of the account.
  links: checkOwnership,
  // docs/decisions.md §21: a new contact without a company takes its e-mail domain's (never free mail's).
  companyByDomain: (row) => (row.companyId ? null : linkableDomain(row.email as string | null)),
});

/** Its single create's and update's rules, derived from the model (each field as it writes it). */
export const { create: createContactInput, update: updateContactInput, updateArgs: updateContactArgs } = contactBatch.rules;
export type CreateContactInput = z.output<typeof createContactInput>;
export type UpdateContactInput = z.output<typeof updateContactInput>;
export type UpdateContactArgs = UpdateArgs<UpdateContactInput>;

/**
 * A batch of one on the set-based path: the contact and its `contact.created` event in one
 * statement, answered from what it returned (every column). A taken external id is a 400 on it.
 * `input`: as the field's rules parsed it (createContactInput), not parsed again.
 */
export async function createContact(db: Prisma.TransactionClient, input: CreateContactInput, actor: Actor): Promise<Contact> {
  return single<Contact>(await writeJudged(db, contactBatch, input.accountId, parsedOne(input), { mode: 'create', allOrNothing: false }, actor));
}

// --- Changing and removing contacts (docs/decisions.md §12) -------------------------------------

/** The contact an id-addressed mutation names: its account (for access) and its e-mail (for erasure). */
export const contactTarget = ({ id }: { id: string }, db: Prisma.TransactionClient) =>
  db.contact.findUnique({ where: { id }, select: { id: true, accountId: true, email: true } });

/** What eraseContact erases: a live contact, or one in the trash (docs/trash.md: an erasure reaches that copy too). */
export type ErasedContact = RecordKey & { email: string | null; trashed?: true };

/** The contact eraseContact names: the live one, else the trash's copy of it (its account and e-mail as it was). */
export async function erasableContact({ id }: { id: string }, db: Prisma.TransactionClient): Promise<ErasedContact | null> {
  const live = await contactTarget({ id }, db);
  if (live) return live;
  const item = await db.trashItem.findFirst({ where: { recordId: id, recordType: 'contact' }, select: { accountId: true, row: true } });
  return item && { id, accountId: item.accountId, email: ((item.row as { email?: string | null }).email ?? null), trashed: true };
}

/**
 * The `linked` rule of contact writes (src/graphql/rules.ts): a company of the account, an owner who
 * is one of its people, and values the account's fields take (a create's, or an update's patch: `target` is the contact).
 */
export const contactLinks = async (fields: Record<string, unknown>, db: Prisma.TransactionClient, accountId: string, _ctx?: unknown, target?: unknown) => ({
  ...(await ownershipProblems(db, accountId, fields)),
  ...(await customValueProblems(db, accountId, CONTACT_MODEL, fields.customFields, target ? 'update' : 'create')),
});

export async function updateContact(tx: Prisma.TransactionClient, contact: RecordKey, args: UpdateContactArgs, query: Query, actor: Actor) {
  await assertUpdateValues(tx, contact.accountId, CONTACT_MODEL, args.input, await ownershipProblems(tx, contact.accountId, args.input));
  const spec = { type: 'contact.updated', model: 'Contact', table: 'contacts', actor } as const;
  return updatedWithEvent(tx, spec, contact, changedFields(args.input), () =>
    updateGuarded<Contact>(tx.contact, contact, args.input, withColumns('Contact', query), args.expectedUpdatedAt),
  ).catch((error: unknown) => {
    // external_id is the one unique value a contact's update can collide on; the transaction ends with it.
    throw isUniqueViolation(error) ? badInput({ externalId: [TAKEN] }) : error;
  });
}

/** Removes the contact; its deals, invoices, submissions and other records stay, unlinked. */
export async function deleteContact(tx: Prisma.TransactionClient, contact: RecordKey, actor: Actor) {
  // To the trash first, with every row that points at it (docs/trash.md); then let go as ever.
  await toTrash(tx, TRASH_KINDS.contact, contact.accountId, [contact.id], actor);
  await letGo(tx, 'Contact', contact);
  const row = await tx.contact.delete({ where: { id: contact.id } });
  await emitRow(tx, 'contact.deleted', 'Contact', actor, row);
  return { id: contact.id, deletedAt: new Date() };
}

/**
 * GDPR Art. 17, in the caller's transaction: every submission linked to the contact or carrying its
 * e-mail loses its values, metadata, client IP and user agent; stored idempotent answers that name
 * the contact or its e-mail are removed; import rows carrying it (waiting, or in an errors file)
 * lose their cells; invoice mail to the e-mail loses it (waiting mail is given up); deals and
 * invoices stay, unlinked; the contact goes, from the trash too when it is there (docs/trash.md:
 * never through it); and an audit row records
 * the erasure by contact id and counts only; earlier events of the person and of those submissions
 * keep ids only. Webhook deliveries store no payload: what they send is built from those events.
 */
export async function eraseContact(tx: Prisma.TransactionClient, contact: ErasedContact, erasedBy: string, actor: Actor) {
  const { id, accountId, email } = contact;
  const erased = await tx.$queryRaw<{ id: string }[]>`
    UPDATE form_submissions
       SET data = '{}'::jsonb, referrer = NULL, page = NULL, client_ip = NULL, user_agent = NULL, contact_id = NULL
     WHERE account_id = ${accountId}::uuid
       AND (contact_id = ${id}::uuid
            OR (${email}::text IS NOT NULL
                AND EXISTS (SELECT 1 FROM jsonb_each_text(data) v WHERE lower(btrim(v.value)) = lower(${email}::text))))
    RETURNING id::text AS id`;
  const submissionsErased = erased.length;
  // Answers are JSON; strpos, not LIKE, so nothing in an address acts as a wildcard.
  const answersRemoved = await tx.$executeRaw`
    DELETE FROM idempotency_keys
     WHERE account_id = ${accountId}::uuid
       AND result IS NOT NULL
       AND (strpos(result::text, ${id}::text) > 0
            OR (${email}::text IS NOT NULL AND strpos(lower(result::text), lower(${email}::text)) > 0))`;
  // Every row pointing at the person stays, unlinked; notes about the person alone go (docs/decisions.md §21).
  // A contact in the trash was let go of when deleted: its trash row, the notes kept in it too, goes (docs/trash.md).
  const { unlinked, externalId } = contact.trashed ? await forgetTrashed(tx, contact) : {
    unlinked: await letGo(tx, 'Contact', contact),
    externalId: (await tx.contact.delete({ where: { id } })).externalId,
  };
  await scrubContactFromImports(tx, contactBatch, accountId, { email, externalId });
  await forgetMailTo(tx, accountId, email);
  await forgetQueuedName(tx, accountId, id);
  // docs/decisions.md §13: earlier events of the person keep ids only, those of others' submissions
  // that carried the address too; the erasure's own event carries the id alone.
  await scrubContactFromEvents(tx, accountId, contact, erased.map((s) => s.id));
  await emit(tx, { type: 'contact.erased', accountId, actor, object: { id } });
  const erasedAt = new Date();
  const receipt = { contactId: id, erasedAt, submissionsErased, dealsUnlinked: unlinked.Deal ?? 0, invoicesUnlinked: unlinked.Invoice ?? 0 };
  await tx.erasureLog.create({
    data: { accountId, userId: erasedBy, contactId: id, submissionsErased, dealsUnlinked: receipt.dealsUnlinked, invoicesUnlinked: receipt.invoicesUnlinked, answersRemoved, createdAt: erasedAt },
  });
  return receipt;
}

/** The trash's copy of an erased contact goes; what it pointed at was let go of when it was deleted, so nothing more is unlinked now. */
async function forgetTrashed(tx: Prisma.TransactionClient, { id, accountId }: RecordKey) {
  const [item] = await tx.$queryRaw<{ external_id: string | null }[]>`
    DELETE FROM trash_items WHERE account_id = ${accountId}::uuid AND record_id = ${id}::uuid AND record_type = 'contact' RETURNING "row"->>'external_id' AS external_id`;
  return { unlinked: {} as Record<string, number>, externalId: item?.external_id ?? null };
}
