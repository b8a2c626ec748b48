/** Query.me · Query.account · Mutation.createAccount · Mutation.addTeamMember */
import { builder } from '../graphql/builder.js';
import { checked } from '../graphql/rules.js';
import { userActor } from '../events/types.js';
import { MESSAGES } from '../errors.js';
import { MemberRole } from '../generated/prisma/enums.js';
import {
  accountArgs,
  addTeamMember,
  addTeamMemberInput,
  createAccount,
  createAccountInput,
  type AccountArgs,
  type AddTeamMemberInput,
  type CreateAccountInput,
} from './account.service.js';

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
    rules: { access: 'user' },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer } = checked(info);
      return ctx.db.user.findUniqueOrThrow({ ...query, where: { id: viewer!.id } });
    },
  }),
  account: t.prismaField({
    type: 'Account',
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    rules: { access: 'member', input: accountArgs },
    resolve: async (query, _root, _args, ctx, info) => {
      const { input } = checked<AccountArgs>(info);
      return ctx.db.account.findUnique({ ...query, where: { id: input.accountId } });
    },
  }),
}));

const CreateAccountInputType = builder.inputType('CreateAccountInput', {
  fields: (t) => ({ name: t.string({ required: true }) }),
});

const AddTeamMemberInputType = builder.inputType('AddTeamMemberInput', {
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
    args: { input: t.arg({ type: CreateAccountInputType, required: true }) },
    rules: { access: 'user', input: createAccountInput, from: 'input' },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input } = checked<CreateAccountInput>(info);
      const account = await createAccount(ctx.db, viewer!.id, input, userActor(viewer));
      return ctx.db.account.findUniqueOrThrow({ ...query, where: { id: account.id } });
    },
  }),
  addTeamMember: t.prismaField({
    type: 'TeamMember',
    description: 'Owner only.',
    args: { input: t.arg({ type: AddTeamMemberInputType, required: true }) },
    rules: { access: 'owner', forbidden: MESSAGES.ownerOnly, input: addTeamMemberInput, from: 'input' },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input } = checked<AddTeamMemberInput>(info);
      const member = await addTeamMember(ctx.db, input, userActor(viewer));
      return ctx.db.teamMember.findUniqueOrThrow({
        ...query,
        where: { accountId_userId: { accountId: member.accountId, userId: member.userId } },
      });
    },
  }),
}));
