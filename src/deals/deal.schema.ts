/** Query.deals · Mutation.createDeal · Mutation.setDealStatus */
import { builder } from '../graphql/builder.js';
import { idempotent } from '../graphql/idempotent.js';
import { guard, requireAccountAccess } from '../graphql/guard.js';
import { LIMITS } from '../graphql/limits.js';
import { definePage } from '../graphql/page.js';
import { DealStatus, type Prisma } from '../generated/prisma/client.js';
import { parseInput } from '../validation.js';
import { createDeal, createDealInput, dealsWhere, listDealsArgs, setDealStatus, setDealStatusArgs } from './deal.service.js';

export const DealStatusEnum = builder.enumType(DealStatus, { name: 'DealStatus' });

builder.prismaObject('Deal', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    title: t.exposeString('title'),
    value: t.float({ resolve: (deal) => deal.value.toNumber() }),
    probability: t.exposeFloat('probability'),
    status: t.expose('status', { type: DealStatusEnum }),
    expectedCloseDate: t.expose('expectedCloseDate', { type: 'Date', nullable: true }),
    closedAt: t.expose('closedAt', { type: 'DateTime', nullable: true, description: 'When the deal left open; null while open.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    contact: t.relation('contact', { nullable: true }),
    stage: t.relation('stage', { nullable: true }),
  }),
});

const DealPage = definePage<Prisma.DealWhereInput>('Deal', (ctx) => ctx.deps.db.reader.deal);

builder.queryField('deals', (t) =>
  t.field({
    type: DealPage,
    args: {
      accountId: t.arg.id({ required: true }),
      page: t.arg.int({ defaultValue: 1 }),
      pageSize: t.arg.int({ defaultValue: 25 }),
      status: t.arg({ type: DealStatusEnum }),
    },
    resolve: async (_root, args, ctx) => {
      const { input } = await guard(ctx, { schema: listDealsArgs, args, limit: LIMITS.deals });
      return { where: dealsWhere(input), page: input.page, pageSize: input.pageSize };
    },
  }),
);

const CreateDealInput = builder.inputType('CreateDealInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    title: t.string({ required: true }),
    contactId: t.id(),
    stageId: t.id(),
    value: t.float({ description: 'Default 0; 0 to 9999999999.99, at most two decimals.' }),
    probability: t.float({ description: 'Default 50; 0 to 100.' }),
    expectedCloseDate: t.field({ type: 'Date' }),
  }),
});

builder.mutationFields((t) => ({
  createDeal: t.prismaField({
    type: 'Deal',
    args: { input: t.arg({ type: CreateDealInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input, viewer } = await guard(ctx, { schema: createDealInput, args: args.input, limit: LIMITS.createDeal });
      const { id } = await idempotent(
        ctx,
        { operation: 'createDeal', accountId: input.accountId, scope: `user:${viewer.id}`, request: args.input },
        async (tx) => ({ id: (await createDeal(tx, input)).id }),
      );
      return ctx.db.deal.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
  setDealStatus: t.prismaField({
    type: 'Deal',
    description: 'open -> won | lost | abandoned; any of those -> open. Anything else is INVALID_TRANSITION.',
    args: { id: t.arg.id({ required: true }), status: t.arg({ type: DealStatusEnum, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      await ctx.viewer();
      const input = parseInput(setDealStatusArgs, args);
      // A missing deal and another account's deal give the same FORBIDDEN.
      const deal = await ctx.db.deal.findUnique({ where: { id: input.id }, select: { id: true, accountId: true, status: true } });
      await requireAccountAccess(ctx, deal?.accountId);
      await setDealStatus(ctx.db, deal!, input.status);
      return ctx.db.deal.findUniqueOrThrow({ ...query, where: { id: input.id } });
    },
  }),
}));
