/** Query.pipelineStages · Mutation.createPipelineStage · updatePipelineStage · deletePipelineStage */
import { builder } from '../graphql/builder.js';
import { recordObject } from '../graphql/record-object.js';
import { userActor } from '../events/types.js';
import { checked } from '../graphql/rules.js';
import { deleteById, updateById, type ById } from '../writes/by-id.js';
import {
  createStage,
  createStageInput,
  deleteStage,
  deleteStageArgs,
  STAGE_ORDER,
  STAGES_PER_ACCOUNT,
  stagesArgs,
  stageTarget,
  updateStage,
  updateStageArgs,
  type CreateStageInput,
  type DeleteStageArgs,
  type StagesArgs,
} from './stage.service.js';
import type { RecordKey } from '../db/client.js';

export const PipelineStageRef = recordObject('PipelineStage', 'DEALS_READ', (t) => ({
  name: t.exposeString('name'),
  position: t.exposeInt('position'),
}));

builder.queryField('pipelineStages', (t) =>
  t.prismaField({
    type: ['PipelineStage'],
    description: 'The stages of an account, in pipeline order (position, then oldest first).',
    maxItems: STAGES_PER_ACCOUNT,
    args: { accountId: t.arg.id({ required: true }) },
    rules: { access: 'member', scope: 'DEALS_READ', input: stagesArgs },
    resolve: async (query, _root, _args, ctx, info) => {
      const { input } = checked<StagesArgs>(info);
      return ctx.reader.pipelineStage.findMany({ ...query, where: { accountId: input.accountId }, orderBy: STAGE_ORDER });
    },
  }),
);

const CreatePipelineStageInputType = builder.inputType('CreatePipelineStageInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    name: t.string({ required: true }),
    position: t.int({ description: 'From 0; default: after the last stage.' }),
  }),
});

builder.mutationField('createPipelineStage', (t) =>
  t.prismaField({
    type: 'PipelineStage',
    args: { input: t.arg({ type: CreatePipelineStageInputType, required: true }) },
    rules: { access: 'member', scope: 'DEALS_WRITE', input: createStageInput, from: 'input', idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateStageInput>(info);
      return write((tx) => createStage(tx, input, userActor(viewer), query));
    },
  }),
);

// --- docs/decisions.md §12 ---------------------------------------------------------------------

const UpdatePipelineStageInputType = builder.inputType('UpdatePipelineStageInput', {
  description: 'Absent = unchanged; null is Required for both. At least one field.',
  fields: (t) => ({ name: t.string(), position: t.int({ description: 'From 0.' }) }),
});

const stage: ById<RecordKey> = { type: 'PipelineStage', scope: 'DEALS_WRITE', target: stageTarget };

updateById(stage, { input: UpdatePipelineStageInputType, args: updateStageArgs, update: updateStage, guarded: false });
deleteById<RecordKey, DeleteStageArgs>(stage, {
  remove: (tx, key, actor, args) => deleteStage(tx, key, args.moveDealsTo, actor),
  args: (t) => ({ moveDealsTo: t.arg.id() }),
  input: deleteStageArgs,
  description: 'Its deals move to moveDealsTo (another stage of the account) or, without it, are left without a stage.',
});
