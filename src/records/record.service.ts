import { z } from 'zod';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { badInput } from '../errors.js';
import { emit, inTransaction } from '../events/emit.js';
import type { Actor, EventType } from '../events/types.js';
import { money, requiredText, uuid } from '../validation.js';

const titled = { accountId: uuid, title: requiredText(200), contactId: uuid.nullish() };

export const createProposalInput = z.object({ ...titled, amount: money.nullish() });
export const createContractInput = z.object(titled);
export const createGalleryInput = z.object(titled);
export const createBookingInput = z
  .object({ ...titled, startsAt: z.date(), endsAt: z.date() })
  .refine((input) => input.endsAt.getTime() > input.startsAt.getTime(), {
    path: ['endsAt'],
    message: 'Must be after startsAt',
  });
export const createWorkflowInput = z.object({
  accountId: uuid,
  name: requiredText(200),
  active: z
    .boolean()
    .nullish()
    .transform((value) => value ?? true),
});

type AccountRecord = { accountId: string; contactId?: string | null };

/**
 * Runs `create` once the optional contact is known to belong to the same account (checked after
 * access, so a foreign contact id reads as a bad field, never as a hint about another account).
 */
export async function withAccountContact<T>(db: PrismaClient, input: AccountRecord, create: () => Promise<T>): Promise<T> {
  if (input.contactId) {
    const contact = await db.contact.findFirst({
      where: { accountId: input.accountId, id: input.contactId },
      select: { id: true },
    });
    if (!contact) throw badInput({ contactId: ['Not found in this account'] });
  }
  return create();
}

/** The new row and its `<kind>.created` event, in one transaction. */
function created<T extends { accountId: string }>(db: PrismaClient, type: EventType, actor: Actor, create: (tx: Prisma.TransactionClient) => Promise<T>) {
  return inTransaction(db, async (tx) => {
    const row = await create(tx);
    await emit(tx, { type, accountId: row.accountId, actor, object: row });
    return row;
  });
}

export const createProposal = (db: PrismaClient, input: z.output<typeof createProposalInput>, actor: Actor) =>
  withAccountContact(db, input, () => created(db, 'proposal.created', actor, (tx) => tx.proposal.create({ data: input })));

export const createContract = (db: PrismaClient, input: z.output<typeof createContractInput>, actor: Actor) =>
  withAccountContact(db, input, () => created(db, 'contract.created', actor, (tx) => tx.contract.create({ data: input })));

export const createGallery = (db: PrismaClient, input: z.output<typeof createGalleryInput>, actor: Actor) =>
  withAccountContact(db, input, () => created(db, 'gallery.created', actor, (tx) => tx.gallery.create({ data: input })));

export const createBooking = (db: PrismaClient, input: z.output<typeof createBookingInput>, actor: Actor) =>
  withAccountContact(db, input, () => created(db, 'booking.created', actor, (tx) => tx.booking.create({ data: input })));

export const createWorkflow = (db: PrismaClient, input: z.output<typeof createWorkflowInput>, actor: Actor) =>
  created(db, 'workflow.created', actor, (tx) => tx.workflow.create({ data: input }));
