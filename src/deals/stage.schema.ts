/** Query.pipelineStages · Mutation.createPipelineStage */
import { builder } from '../graphql/builder.js';
import { checked } from '../graphql/rules.js';
import { userActor } from '../events/types.js';
import { createStage, createStageInput, STAGE_ORDER, stagesArgs, type CreateStageInput, type StagesArgs } from './stage.service.js';

builder.prismaObject('PipelineStage', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    name: t.exposeString('name'),
    position: t.exposeInt('position'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryField('pipelineStages', (t) =>
  t.prismaField({
    type: ['PipelineStage'],
    description: 'The stages of an account, in pipeline order (position, then oldest first).',
    args: { accountId: t.arg.id({ required: true }) },
    rules: { access: 'member', input: stagesArgs },
    resolve: async (query, _root, _args, ctx, info) => {
      const { input } = checked<StagesArgs>(info);
      return ctx.db.pipelineStage.findMany({ ...query, where: { accountId: input.accountId }, orderBy: STAGE_ORDER });
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
    rules: { access: 'member', input: createStageInput, from: 'input' },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input } = checked<CreateStageInput>(info);
      const stage = await createStage(ctx.db, input, userActor(viewer));
      return ctx.db.pipelineStage.findUniqueOrThrow({ ...query, where: { id: stage.id } });
    },
  }),
);
