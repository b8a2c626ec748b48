import { z } from 'zod';
import type { PrismaClient } from '../generated/prisma/client.js';
import { badInput } from '../errors.js';
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

// `query` is the Prisma select/include the caller wants back, so the answer is one round trip.
type Query = { select?: object; include?: object };

export const createProposal = (db: PrismaClient, input: z.output<typeof createProposalInput>, query: Query = {}) =>
  withAccountContact(db, input, () => db.proposal.create({ ...(query as object), data: input }));

export const createContract = (db: PrismaClient, input: z.output<typeof createContractInput>, query: Query = {}) =>
  withAccountContact(db, input, () => db.contract.create({ ...(query as object), data: input }));

export const createGallery = (db: PrismaClient, input: z.output<typeof createGalleryInput>, query: Query = {}) =>
  withAccountContact(db, input, () => db.gallery.create({ ...(query as object), data: input }));

export const createBooking = (db: PrismaClient, input: z.output<typeof createBookingInput>, query: Query = {}) =>
  withAccountContact(db, input, () => db.booking.create({ ...(query as object), data: input }));

export const createWorkflow = (db: PrismaClient, input: z.output<typeof createWorkflowInput>, query: Query = {}) =>
  db.workflow.create({ ...(query as object), data: input });
