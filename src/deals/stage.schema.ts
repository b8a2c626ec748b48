/** Query.pipelineStages · Mutation.createPipelineStage */
import { builder } from '../graphql/builder.js';
import { guard } from '../graphql/guard.js';
import { createStage, createStageInput, STAGE_ORDER, stagesArgs } from './stage.service.js';

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
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: stagesArgs, args });
      return ctx.deps.db.reader.pipelineStage.findMany({ ...query, where: { accountId: input.accountId }, orderBy: STAGE_ORDER });
    },
  }),
);

const CreatePipelineStageInput = builder.inputType('CreatePipelineStageInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    name: t.string({ required: true }),
    position: t.int({ description: 'From 0; default: after the last stage.' }),
  }),
});

builder.mutationField('createPipelineStage', (t) =>
  t.prismaField({
    type: 'PipelineStage',
    args: { input: t.arg({ type: CreatePipelineStageInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: createStageInput, args: args.input });
      const stage = await createStage(ctx.db, input);
      return ctx.db.pipelineStage.findUniqueOrThrow({ ...query, where: { id: stage.id } });
    },
  }),
);
