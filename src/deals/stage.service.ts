import { z } from 'zod';
import type { PrismaClient } from '../generated/prisma/client.js';
import { emit, inTransaction } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { requiredText, uuid } from '../validation.js';

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
export async function createStage(db: PrismaClient, input: CreateStageInput, actor: Actor) {
  let position = input.position;
  if (position == null) {
    const last = await db.pipelineStage.aggregate({ where: { accountId: input.accountId }, _max: { position: true } });
    position = last._max.position == null ? 0 : last._max.position + 1;
  }
  const data = { accountId: input.accountId, name: input.name, position };
  return inTransaction(db, async (tx) => {
    const stage = await tx.pipelineStage.create({ data });
    await emit(tx, { type: 'pipeline_stage.created', accountId: stage.accountId, actor, object: stage });
    return stage;
  });
}
