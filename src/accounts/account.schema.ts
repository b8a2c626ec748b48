/** Query.me · Query.account · Mutation.createAccount · Mutation.addTeamMember */
import { builder } from '../graphql/builder.js';
import { guard } from '../graphql/guard.js';
import { MESSAGES } from '../errors.js';
import { MemberRole } from '../generated/prisma/enums.js';
import { parseInput, uuid } from '../validation.js';
import { z } from 'zod';
import { addTeamMember, addTeamMemberInput, createAccount, createAccountInput } from './account.service.js';

builder.enumType(MemberRole, { name: 'MemberRole' });

/** Accounts `userId` owns or belongs to. */
const accountsOf = (userId: string) => ({ OR: [{ ownerId: userId }, { members: { some: { userId } } }] });

builder.prismaObject('User', {
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email', { nullable: true }),
    name: t.exposeString('name', { nullable: true }),
    accounts: t.prismaField({
      type: ['Account'],
      description: 'Accounts this user owns or belongs to that the caller can see too (for `me`: all of them)',
      resolve: async (query, user, _args, ctx) => {
        const viewer = await ctx.viewer();
        return ctx.db.account.findMany({
          ...query,
          // A user reached via Account.owner or TeamMember.user must not reveal accounts the caller cannot see.
          where: { AND: [accountsOf(user.id), accountsOf(viewer.id)] },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        });
      },
    }),
  }),
});

builder.prismaObject('TeamMember', {
  fields: (t) => ({
    accountId: t.exposeID('accountId'),
    userId: t.exposeID('userId'),
    role: t.expose('role', { type: MemberRole }),
    email: t.exposeString('email', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    user: t.relation('user'),
  }),
});

builder.prismaObject('Account', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    owner: t.relation('owner'),
    members: t.relation('members', { query: { orderBy: { createdAt: 'asc' } } }),
  }),
});

builder.queryFields((t) => ({
  me: t.prismaField({
    type: 'User',
    description: 'The caller; `accounts` lists the accounts they own or belong to',
    resolve: async (query, _root, _args, ctx) => {
      const viewer = await ctx.viewer();
      return ctx.db.user.findUniqueOrThrow({ ...query, where: { id: viewer.id } });
    },
  }),
  account: t.prismaField({
    type: 'Account',
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: z.object({ id: uuid }).transform((a) => ({ accountId: a.id })), args });
      return ctx.deps.db.reader.account.findUnique({ ...query, where: { id: input.accountId } });
    },
  }),
}));

const CreateAccountInput = builder.inputType('CreateAccountInput', {
  fields: (t) => ({ name: t.string({ required: true }) }),
});

const AddTeamMemberInput = builder.inputType('AddTeamMemberInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    userId: t.id({ required: true }),
    email: t.string(),
  }),
});

builder.mutationFields((t) => ({
  createAccount: t.prismaField({
    type: 'Account',
    description: 'Creates an account; the caller becomes its owner.',
    args: { input: t.arg({ type: CreateAccountInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const viewer = await ctx.viewer();
      const account = await createAccount(ctx.db, viewer.id, parseInput(createAccountInput, args.input));
      return ctx.db.account.findUniqueOrThrow({ ...query, where: { id: account.id } });
    },
  }),
  addTeamMember: t.prismaField({
    type: 'TeamMember',
    description: 'Owner only.',
    args: { input: t.arg({ type: AddTeamMemberInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, {
        schema: addTeamMemberInput,
        args: args.input,
        role: 'owner',
        forbiddenMessage: MESSAGES.ownerOnly,
      });
      const member = await addTeamMember(ctx.db, input);
      return ctx.db.teamMember.findUniqueOrThrow({
        ...query,
        where: { accountId_userId: { accountId: member.accountId, userId: member.userId } },
      });
    },
  }),
}));
