import { z } from 'zod';
import { updateGuarded, updateInputOf, type Query } from '../writes/update.js';
import { badInput } from '../errors.js';
import type { PipelineStage, Prisma } from '../generated/prisma/client.js';
import { emitRow, changedFields, updatedWithEvent, withColumns } from '../events/record.js';
import { emit } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { optionalUuid, requiredText, uuid } from '../validation.js';
import type { RecordKey } from '../db/client.js';

/**
 * The most stages the cost (docs/graphql.md#cost-and-budget) counts an account's pipeline as holding:
 * nothing enforces a number (createPipelineStage adds one more each time), so this is the cost's
 * assumption, five times the five-stage pipeline the demo and the bench use. With it a board of
 * every stage's first 100 deals still runs (1 + 25 × 101 objects); a pipeline longer than this is
 * undercharged in proportion (docs/graphql.md#cost-and-budget says so).
 */
export const STAGES_PER_ACCOUNT = 25;

/** Positions stop well short of int4's limit so "after the last" always has room. */
export const MAX_POSITION = 1_000_000;

export const createStageInput = z.object({
  accountId: uuid,
  name: requiredText(100),
  position: z
    .number()
    .int('Must be an integer')
    .min(0, `Must be from 0 to ${MAX_POSITION}`)
    .max(MAX_POSITION, `Must be from 0 to ${MAX_POSITION}`)
    .nullish(),
});

export type CreateStageInput = z.output<typeof createStageInput>;

export const stagesArgs = z.object({ accountId: uuid });
export type StagesArgs = z.output<typeof stagesArgs>;

/** Pipeline order: position, then the older stage first; id makes ties stable. */
export const STAGE_ORDER = [{ position: 'asc' as const }, { createdAt: 'asc' as const }, { id: 'asc' as const }];

/** Without a position the stage goes after the last one; equal positions keep creation order. */
export async function createStage(db: Prisma.TransactionClient, input: CreateStageInput, actor: Actor, query: Query = {}) {
  let position = input.position;
  if (position == null) {
    const last = await db.pipelineStage.aggregate({ where: { accountId: input.accountId }, _max: { position: true } });
    position = last._max.position == null ? 0 : last._max.position + 1;
  }
  const stage = await db.pipelineStage.create({ ...withColumns('PipelineStage', query), data: { accountId: input.accountId, name: input.name, position } });
  await emitRow(db, 'pipeline_stage.created', 'PipelineStage', actor, stage);
  return stage;
}

// --- Changing and removing stages (docs/decisions.md §12) ---------------------------------------

export const updateStageInput = updateInputOf(createStageInput, 'PipelineStage');
export const updateStageArgs = z.object({ id: uuid, input: updateStageInput });
export type UpdateStageArgs = z.output<typeof updateStageArgs>;
export const deleteStageArgs = z.object({ id: uuid, moveDealsTo: optionalUuid });
export type DeleteStageArgs = z.output<typeof deleteStageArgs>;

export const stageTarget = ({ id }: { id: string }, db: Prisma.TransactionClient) =>
  db.pipelineStage.findUnique({ where: { id }, select: { id: true, accountId: true } });

export function updateStage(tx: Prisma.TransactionClient, stage: RecordKey, args: UpdateStageArgs, query: Query, actor: Actor) {
  const spec = { type: 'pipeline_stage.updated', model: 'PipelineStage', table: 'pipeline_stages', actor } as const;
  return updatedWithEvent(tx, spec, stage, changedFields(args.input), () =>
    updateGuarded<PipelineStage>(tx.pipelineStage, stage, args.input, withColumns('PipelineStage', query), null),
  );
}

/** Its deals move to `moveDealsTo` (another stage of the same account) or, without it, lose their stage. */
export async function deleteStage(tx: Prisma.TransactionClient, stage: RecordKey, moveDealsTo: string | null, actor: Actor) {
  if (moveDealsTo !== null) {
    const destination = await tx.pipelineStage.findFirst({ where: { id: moveDealsTo, accountId: stage.accountId, NOT: { id: stage.id } }, select: { id: true } });
    if (!destination) throw badInput({ moveDealsTo: ['Not found in this account'] });
  }
  // Each moved deal changed too: a deal.updated event for it.
  const moved = await tx.deal.updateManyAndReturn({ where: { accountId: stage.accountId, stageId: stage.id }, data: { stageId: moveDealsTo } });
  for (const deal of moved) await emit(tx, { type: 'deal.updated', accountId: deal.accountId, actor, object: deal, previous: { stageId: stage.id } });
  await emitRow(tx, 'pipeline_stage.deleted', 'PipelineStage', actor, await tx.pipelineStage.delete({ where: { id: stage.id } }));
  return { id: stage.id, deletedAt: new Date() };
}
