import { z } from 'zod';
import { letGo } from '../links/let-go.js';
import { toTrash, TRASH_KINDS } from '../writes/trash.js';
import { isUniqueViolation, TAKEN, updateGuarded, type Query, type UpdateArgs } from '../writes/update.js';
import { DealStatus, Prisma, type Deal } from '../generated/prisma/client.js';
import { batchKindOf, parsedOne, single, writeJudged } from '../writes/batch.service.js';
import { rowOf } from '../writes/set-write.js';
import { badInput, invalidTransition, NOT_IN_ACCOUNT, type ErrorDetails } from '../errors.js';
import { assertTransition, DEAL_MACHINE } from '../state-machines.js';
import { emit } from '../events/emit.js';
import { changedFields, emitRow, updatedWithEvent, withColumns } from '../events/record.js';
import type { Actor } from '../events/types.js';
import { uuid } from '../validation.js';
import { DEAL_MODEL } from './deal.model.js';
import { assertUpdateValues, customValueProblems } from '../writes/custom-values.js';
import { checkOwnership, ownershipProblems } from '../links/company-owner.js';
import type { RecordKey } from '../db/client.js';

export const setDealStatusArgs = z.object({ id: uuid, status: z.enum(DealStatus) });
export type SetDealStatusArgs = z.output<typeof setDealStatusArgs>;
export type DealToMove = { id: string; status: DealStatus };

/**
 * Linked rows must live in the caller's account (checked after access, so an outsider learns
 * nothing about ids): the problems by field, every failing one at once. The rules of the fields
 * that link (`linked`, docs/fields.md) and the services' writes share it.
 */
export async function linkProblems(
  db: Prisma.TransactionClient,
  accountId: string,
  refs: { contactId?: unknown; stageId?: unknown; companyId?: unknown; ownerId?: unknown },
): Promise<ErrorDetails> {
  const id = (value: unknown) => (typeof value === 'string' && value ? value : null);
  const [contactId, stageId] = [id(refs.contactId), id(refs.stageId)];
  const [contact, stage] = await Promise.all([
    contactId ? db.contact.findUnique({ where: { accountId_id: { accountId, id: contactId } }, select: { id: true } }) : true,
    stageId ? db.pipelineStage.findUnique({ where: { accountId_id: { accountId, id: stageId } }, select: { id: true } }) : true,
  ]);
  const details: ErrorDetails = await ownershipProblems(db, accountId, refs);
  if (!contact) details.contactId = [NOT_IN_ACCOUNT];
  if (!stage) details.stageId = [NOT_IN_ACCOUNT];
  return details;
}

/** For a write, in its transaction: a 400 naming every link that is not the account's. */
export async function assertInAccount(
  db: Prisma.TransactionClient,
  accountId: string,
  refs: { contactId?: string | null; stageId?: string | null; companyId?: string | null; ownerId?: string | null },
): Promise<void> {
  const details = await linkProblems(db, accountId, refs);
  if (Object.keys(details).length > 0) throw badInput(details);
}

/** The `linked` rule of the fields that write deals and invoices (src/graphql/rules.ts). */
export const linkedRows = (fields: Record<string, unknown>, db: Prisma.TransactionClient, accountId: string) => linkProblems(db, accountId, fields);

/** The `linked` rule of deal writes: the links, and values the account's fields take (an update's patch when `target` is the deal). */
export const dealLinks = async (fields: Record<string, unknown>, db: Prisma.TransactionClient, accountId: string, _ctx?: unknown, target?: unknown) => ({
  ...(await linkProblems(db, accountId, fields)),
  ...(await customValueProblems(db, accountId, DEAL_MODEL, fields.customFields, target ? 'update' : 'create')),
});

/** Deals on the set-based write path (src/writes/). A new deal is always `open` (the contract's only creation transition). */
export const dealBatch = batchKindOf(DEAL_MODEL, {
  keys: { externalId: { taken: TAKEN } },
  newRow: (input, id, now) =>
    rowOf('Deal', { ...input, id, status: DealStatus.open, closedAt: null, value: new Prisma.Decimal(input.value as number), createdAt: now, updatedAt: now }),
  refs: { contactId: 'contacts', stageId: 'pipeline_stages' },
  links: (tx, accountId, judged) => checkOwnership(tx, accountId, judged),
});

/** Its single create's and update's rules, derived from the model (each field as it writes it). */
export const { create: createDealInput, update: updateDealInput, updateArgs: updateDealArgs } = dealBatch.rules;
export type CreateDealInput = z.output<typeof createDealInput>;
export type UpdateDealInput = z.output<typeof updateDealInput>;
export type UpdateDealArgs = UpdateArgs<UpdateDealInput>;

/** A batch of one: the same-account check (when it links anything), then the deal and its event in one statement. `input`: as the field's rules parsed it (createDealInput), not parsed again. */
export async function createDeal(db: Prisma.TransactionClient, input: CreateDealInput, actor: Actor): Promise<Deal> {
  return single<Deal>(await writeJudged(db, dealBatch, input.accountId, parsedOne(input), { mode: 'create', allOrNothing: false }, actor));
}

const ATTEMPTS = 5;

/**
 * Moves a deal along the §8 machine, in the caller's transaction (with its event). The update only
 * applies while the row still holds the state we checked, so two concurrent moves from one state
 * cannot both win; the loser (blocked on the row, then finding it moved) is re-judged against the
 * state the winner left, which READ COMMITTED lets this same transaction read.
 */
export async function setDealStatus(tx: Prisma.TransactionClient, deal: DealToMove, to: DealStatus, actor: Actor) {
  let from = deal.status;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    assertTransition(DEAL_MACHINE, from, to);
    const closedAt = to === DealStatus.open ? null : new Date();
    const [object] = await tx.deal.updateManyAndReturn({ where: { id: deal.id, status: from }, data: { status: to, closedAt } });
    if (object) return emit(tx, { type: 'deal.status_changed', accountId: object.accountId, actor, object, previous: { status: from } });
    from = (await tx.deal.findUniqueOrThrow({ where: { id: deal.id }, select: { status: true } })).status;
  }
  throw invalidTransition(`Cannot move a deal from ${from} to ${to}: it keeps changing`, { from, to });
}

// --- Changing and removing deals (docs/decisions.md §12) ----------------------------------------

export const dealTarget = ({ id }: { id: string }, db: Prisma.TransactionClient) =>
  db.deal.findUnique({ where: { id }, select: { id: true, accountId: true } });

/** New links must name records of the deal's own account (400 "Not found in this account"). */
export async function updateDeal(tx: Prisma.TransactionClient, deal: RecordKey, args: UpdateDealArgs, query: Query, actor: Actor) {
  await assertUpdateValues(tx, deal.accountId, DEAL_MODEL, args.input, await linkProblems(tx, deal.accountId, args.input));
  const spec = { type: 'deal.updated', model: 'Deal', table: 'deals', actor } as const;
  return updatedWithEvent(tx, spec, deal, changedFields(args.input), () =>
    updateGuarded<Deal>(tx.deal, deal, args.input, withColumns('Deal', query), args.expectedUpdatedAt),
  ).catch((error: unknown) => {
    // external_id is the one unique value a deal's update can collide on; the transaction ends with it.
    throw isUniqueViolation(error) ? badInput({ externalId: [TAKEN] }) : error;
  });
}

/** Removes the deal; the notes about it alone go with it, other notes and its tasks stay, unlinked. */
export async function deleteDeal(tx: Prisma.TransactionClient, deal: RecordKey, actor: Actor) {
  // To the trash first, with every row that points at it (docs/trash.md); then let go as ever.
  await toTrash(tx, TRASH_KINDS.deal, deal.accountId, [deal.id], actor);
  await letGo(tx, 'Deal', deal);
  await emitRow(tx, 'deal.deleted', 'Deal', actor, await tx.deal.delete({ where: { id: deal.id } }));
  return { id: deal.id, deletedAt: new Date() };
}
