/** Query.pipelineStages · Mutation.createPipelineStage · updatePipelineStage · deletePipelineStage */
import { DeletedRecord } from '../graphql/changes.schema.js';
import { builder } from '../graphql/builder.js';
import { userActor } from '../events/types.js';
import { checked, ownRow } from '../graphql/rules.js';
import type { Prisma } from '../generated/prisma/client.js';
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
  type StageRef,
  type StagesArgs,
  type UpdateStageArgs,
} from './stage.service.js';

export const PipelineStageRef = builder.prismaObject('PipelineStage', {
  keyScope: 'DEALS_READ',
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    name: t.exposeString('name'),
    position: t.exposeInt('position'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

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

const target = (args: { id: string }, ctx: { db: Prisma.TransactionClient }) => stageTarget(args, ctx.db);

builder.mutationFields((t) => ({
  updatePipelineStage: t.prismaField({
    type: 'PipelineStage',
    nullable: true,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdatePipelineStageInputType, required: true }) },
    rules: { access: 'member', scope: 'DEALS_WRITE', input: updateStageArgs, target, hidden: 'not-found', line: ownRow, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, target: stage, write } = checked<UpdateStageArgs, StageRef>(info);
      return write((tx) => updateStage(tx, stage, input, query, userActor(viewer)));
    },
  }),
  deletePipelineStage: t.field({
    type: DeletedRecord,
    nullable: true,
    description: 'Its deals move to moveDealsTo (another stage of the account) or, without it, are left without a stage.',
    args: { id: t.arg.id({ required: true }), moveDealsTo: t.arg.id() },
    rules: { access: 'member', scope: 'DEALS_WRITE', input: deleteStageArgs, target, hidden: 'not-found', line: ownRow, idempotent: true },
    resolve: (_root, _args, _ctx, info) => {
      const { viewer, input, target: stage, write } = checked<DeleteStageArgs, StageRef>(info);
      return write((tx) => deleteStage(tx, stage, input.moveDealsTo, userActor(viewer)));
    },
  }),
}));
