import type { z } from 'zod';
import type { Prisma } from '../generated/prisma/client.js';
import { updateGuarded, updateInputOf, type Query as RecordQuery } from '../writes/update.js';
import { badInput } from '../errors.js';
import { changedFields, emitRow, updatedWithEvent, withColumns } from '../events/record.js';
import type { Actor } from '../events/types.js';
import { createRuleOf } from '../model/field-spec.js';
import { PROPOSAL_FIELDS, PROPOSAL_MODEL } from './proposal.model.js';
import { CONTRACT_FIELDS, CONTRACT_MODEL } from './contract.model.js';
import { GALLERY_FIELDS, GALLERY_MODEL } from './gallery.model.js';
import { BOOKING_FIELDS, BOOKING_MODEL } from './booking.model.js';
import { WORKFLOW_FIELDS, WORKFLOW_MODEL } from './workflow.model.js';
import type { RecordKey } from '../db/client.js';
import { actionsRule, triggerRule } from './workflow-rules.js';
import { assertRoom, workflowColumns } from './workflow.service.js';

/** The five records' models, by the kind their events name (docs/decisions.md §11). */
export const STUDIO_MODELS = { proposal: PROPOSAL_MODEL, contract: CONTRACT_MODEL, gallery: GALLERY_MODEL, booking: BOOKING_MODEL, workflow: WORKFLOW_MODEL } as const;

export const createProposalInput = createRuleOf(PROPOSAL_FIELDS);
export const createContractInput = createRuleOf(CONTRACT_FIELDS);
export const createGalleryInput = createRuleOf(GALLERY_FIELDS);
const bookingFields = createRuleOf(BOOKING_FIELDS);
const ENDS_AFTER_START = 'Must be after startsAt';
export const createBookingInput = bookingFields.refine((input) => input.endsAt.getTime() > input.startsAt.getTime(), {
  path: ['endsAt'],
  message: ENDS_AFTER_START,
});
export const createWorkflowInput = createRuleOf(WORKFLOW_FIELDS).extend({ trigger: triggerRule, actions: actionsRule });

type AccountRecord = { accountId: string; contactId?: string | null };

/**
 * Runs `create` once the optional contact is known to belong to the same account (checked after
 * access, so a foreign contact id reads as a bad field, never as a hint about another account).
 */
export async function withAccountContact<T>(db: Prisma.TransactionClient, input: AccountRecord, create: () => Promise<T>): Promise<T> {
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
type Query = RecordQuery;


/** The new row and its `<model>.created` event, in the write's transaction. */
async function created(db: Prisma.TransactionClient, model: RecordModel, actor: Actor, query: Query, data: object) {
  const row = (await delegateOf(db, model).create({ ...withColumns(STUDIO_MODELS[model].model, query), data })) as { accountId: string };
  await emitRow(db, `${model}.created`, STUDIO_MODELS[model].model, actor, row);
  return row;
}

export const createProposal = (db: Prisma.TransactionClient, input: z.output<typeof createProposalInput>, actor: Actor, query: Query = {}) =>
  withAccountContact(db, input, () => created(db, 'proposal', actor, query, input));

export const createContract = (db: Prisma.TransactionClient, input: z.output<typeof createContractInput>, actor: Actor, query: Query = {}) =>
  withAccountContact(db, input, () => created(db, 'contract', actor, query, input));

export const createGallery = (db: Prisma.TransactionClient, input: z.output<typeof createGalleryInput>, actor: Actor, query: Query = {}) =>
  withAccountContact(db, input, () => created(db, 'gallery', actor, query, input));

export const createBooking = (db: Prisma.TransactionClient, input: z.output<typeof createBookingInput>, actor: Actor, query: Query = {}) =>
  withAccountContact(db, input, () => created(db, 'booking', actor, query, input));

/** A workflow with its trigger and actions judged (docs/workflows.md); the account's 51st is refused. */
export async function createWorkflow(db: Prisma.TransactionClient, input: z.output<typeof createWorkflowInput>, actor: Actor, query: Query = {}) {
  const { trigger, actions, ...own } = input;
  const columns = await workflowColumns(db, input.accountId, { trigger: trigger ?? null, actions });
  await assertRoom(db, input.accountId);
  return created(db, 'workflow', actor, query, { ...own, ...columns });
}

// --- Changing and removing records (docs/decisions.md §12) --------------------------------------

export const updateProposalInput = updateInputOf(createProposalInput, 'Proposal');
export const updateContractInput = updateInputOf(createContractInput, 'Contract');
export const updateGalleryInput = updateInputOf(createGalleryInput, 'Gallery');
export const updateBookingInput = updateInputOf(bookingFields, 'Booking');
export const updateWorkflowInput = updateInputOf(createWorkflowInput, 'Workflow');

export type RecordModel = 'proposal' | 'contract' | 'gallery' | 'booking' | 'workflow';
type Delegate = {
  create(args: object): Promise<unknown>;
  findUnique(args: object): Promise<unknown>;
  update(args: object): Promise<unknown>;
  delete(args: object): Promise<unknown>;
};
const delegateOf = (db: Prisma.TransactionClient, model: RecordModel) => db[model] as unknown as Delegate;

export const recordTarget = (model: RecordModel) => ({ id }: { id: string }, db: Prisma.TransactionClient) =>
  delegateOf(db, model).findUnique({ where: { id }, select: { id: true, accountId: true } }) as Promise<RecordKey | null>;

/** The create rules on the new values: a contact of the same account; a booking still ends after it starts. */
export async function updateRecord(
  tx: Prisma.TransactionClient,
  model: RecordModel,
  record: RecordKey,
  input: Record<string, unknown>,
  query: RecordQuery,
  actor: Actor,
) {
  if (model === 'booking' && (input.startsAt !== undefined || input.endsAt !== undefined)) {
    // Locked: a concurrent change of the other end cannot make the pair invalid.
    const [now] = await tx.$queryRaw<{ starts_at: Date; ends_at: Date }[]>`
      SELECT starts_at, ends_at FROM bookings WHERE id = ${record.id}::uuid FOR UPDATE`;
    const startsAt = (input.startsAt as Date | undefined) ?? now!.starts_at;
    const endsAt = (input.endsAt as Date | undefined) ?? now!.ends_at;
    if (endsAt.getTime() <= startsAt.getTime()) throw badInput({ endsAt: [ENDS_AFTER_START] });
  }
  if (model === 'workflow' && (input.trigger !== undefined || input.actions !== undefined)) {
    const current = await tx.workflow.findUnique({ where: { id: record.id }, select: { trigger: true, actions: true } });
    const { trigger, actions, ...own } = input;
    input = { ...own, ...(await workflowColumns(tx, record.accountId, { trigger, actions } as never, current ?? undefined)) };
  }
  return withAccountContact(tx, { accountId: record.accountId, contactId: input.contactId as string | null | undefined }, () =>
    updatedWithEvent(tx, { type: `${model}.updated`, model: STUDIO_MODELS[model].model, table: STUDIO_MODELS[model].table, actor }, record, changedFields(input), () =>
      updateGuarded<object>(delegateOf(tx, model), record, input, withColumns(STUDIO_MODELS[model].model, query), null),
    ),
  );
}

export async function deleteRecord(tx: Prisma.TransactionClient, model: RecordModel, record: RecordKey, actor: Actor) {
  const row = (await delegateOf(tx, model).delete({ where: { id: record.id } })) as { accountId: string };
  await emitRow(tx, `${model}.deleted`, STUDIO_MODELS[model].model, actor, row);
  return { id: record.id, deletedAt: new Date() };
}
