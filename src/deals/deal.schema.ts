/** Query.deals · Mutation.createDeal · Mutation.setDealStatus */
import { builder } from '../graphql/builder.js';
import { definePage } from '../graphql/page.js';
import { checked } from '../graphql/rules.js';
import { userActor } from '../events/types.js';
import { DealStatus, type Prisma } from '../generated/prisma/client.js';
import {
  createDeal,
  createDealInput,
  dealsWhere,
  listDealsArgs,
  setDealStatus,
  setDealStatusArgs,
  type CreateDealInput,
  type DealToMove,
  type ListDealsArgs,
  type SetDealStatusArgs,
} from './deal.service.js';

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

const DealPage = definePage<Prisma.DealWhereInput>('Deal', (ctx) => ctx.db.deal);

builder.queryField('deals', (t) =>
  t.field({
    type: DealPage,
    args: {
      accountId: t.arg.id({ required: true }),
      page: t.arg.int({ defaultValue: 1 }),
      pageSize: t.arg.int({ defaultValue: 25 }),
      status: t.arg({ type: DealStatusEnum }),
    },
    rules: { access: 'member', input: listDealsArgs, limit: { max: 60, window: '1m', per: 'user' } },
    resolve: (_root, _args, _ctx, info) => {
      const { input } = checked<ListDealsArgs>(info);
      return { where: dealsWhere(input), page: input.page, pageSize: input.pageSize };
    },
  }),
);

const CreateDealInputType = builder.inputType('CreateDealInput', {
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
    args: { input: t.arg({ type: CreateDealInputType, required: true }) },
    rules: { access: 'member', input: createDealInput, from: 'input', limit: { max: 30, window: '1m', per: 'user' }, idempotent: true },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input, write } = checked<CreateDealInput>(info);
      const { id } = await write(async (tx) => ({ id: (await createDeal(tx, input, userActor(viewer))).id }));
      return ctx.db.deal.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
  setDealStatus: t.prismaField({
    type: 'Deal',
    description: 'open -> won | lost | abandoned; any of those -> open. Anything else is INVALID_TRANSITION.',
    args: { id: t.arg.id({ required: true }), status: t.arg({ type: DealStatusEnum, required: true }) },
    // A missing deal and another account's deal give the same FORBIDDEN.
    rules: {
      access: 'member',
      input: setDealStatusArgs,
      target: ({ id }: SetDealStatusArgs, ctx) => ctx.db.deal.findUnique({ where: { id }, select: { id: true, accountId: true, status: true } }),
    },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input, target } = checked<SetDealStatusArgs, DealToMove>(info);
      await setDealStatus(ctx.db, target, input.status, userActor(viewer));
      return ctx.db.deal.findUniqueOrThrow({ ...query, where: { id: input.id } });
    },
  }),
}));
