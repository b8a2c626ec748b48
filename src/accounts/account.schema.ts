/** Query.me · Query.account · Mutation.createAccount · addTeamMember · removeTeamMember · leaveAccount · transferOwnership */
import { builder } from '../graphql/builder.js';
import { accountsOf } from '../auth/access.js';
import { userActor } from '../events/types.js';
import { checked } from '../graphql/rules.js';
import { MESSAGES } from '../errors.js';
import { MemberRole } from '../generated/prisma/enums.js';
import { argsOf, inputFieldsOf } from '../graphql/spec-fields.js';
import {
  ACCOUNT_ARGS,
  leaveAccount,
  leaveArgs,
  removeTeamMember,
  teamMemberArgs,
  transferOwnership,
  type LeaveArgs,
  type TeamMemberArgs,
  accountArgs,
  addMember,
  addTeamMemberInput,
  createAccount,
  createAccountInput,
  type AccountArgs,
  type AddTeamMemberInput,
  type CreateAccountInput,
  updateAccount,
  updateAccountArgs,
  type UpdateAccountArgs,
} from './account.service.js';

builder.enumType(MemberRole, { name: 'MemberRole' });

/**
 * What the cost (docs/graphql.md#cost-and-budget) counts User.accounts and Account.members as
 * holding. Nothing enforces either (createAccount adds an account, an operator's `member:add` a
 * member), so these are the cost's assumptions: a person works in a few companies, an agency in a
 * couple of dozen; a small business's team, fifty people at most. Together they keep a user's
 * accounts with every member and their user under the ceiling (1 + 25 + 25 × 50 × 2 = 2,526).
 */
const ACCOUNTS_PER_USER = 25;
const MEMBERS_PER_ACCOUNT = 50;

/**
 * docs/decisions.md §26: 5 accounts created an hour per user (429 `RATE_LIMITED` beyond). Each
 * account brings its own budgets (imports, exports), so unlimited accounts would multiply them.
 */
export const ACCOUNT_CREATES = { max: 5, window: '1h', per: 'user' } as const;

builder.prismaObject('User', {
  keyScope: false,
  fields: (t) => ({
    id: t.exposeID('id'),
    // A person's identity (from their token) is theirs: others see the label an owner gave the
    // membership (TeamMember.email), so knowing a user's id reveals nothing (docs/decisions.md §12).
    email: t.string({
      nullable: true,
      description: "Shown to the user themself only; null for anyone else (see TeamMember.email)",
      resolve: async (user, _args, ctx) => ((await ctx.viewer()).id === user.id ? user.email : null),
    }),
    name: t.string({
      nullable: true,
      description: 'Shown to the user themself only; null for anyone else',
      resolve: async (user, _args, ctx) => ((await ctx.viewer()).id === user.id ? user.name : null),
    }),
    accounts: t.prismaField({
      type: ['Account'],
      maxItems: ACCOUNTS_PER_USER,
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
  keyScope: false,
  fields: (t) => ({
    accountId: t.exposeID('accountId'),
    userId: t.exposeID('userId'),
    role: t.expose('role', { type: MemberRole }),
    email: t.exposeString('email', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    user: t.relation('user'),
  }),
});

export const AccountRef = builder.prismaObject('Account', {
  keyScope: false,
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    defaultCurrency: t.exposeString('defaultCurrency', { description: 'ISO 4217: the currency of an invoice created without one, and of `receivables` when none is asked; USD until the owner sets it (updateAccount)' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    owner: t.relation('owner'),
    members: t.relation('members', { maxItems: MEMBERS_PER_ACCOUNT, query: { orderBy: { createdAt: 'asc' } } }),
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
    args: argsOf(ACCOUNT_ARGS.account, t.arg),
    rules: { access: 'member', input: accountArgs },
    resolve: async (query, _root, _args, ctx, info) => {
      const { input } = checked<AccountArgs>(info);
      return ctx.reader.account.findUnique({ ...query, where: { id: input.accountId } });
    },
  }),
}));

const CreateAccountInputType = builder.inputType('CreateAccountInput', { fields: inputFieldsOf(ACCOUNT_ARGS.create, 'create') });

const AddTeamMemberInputType = builder.inputType('AddTeamMemberInput', { fields: inputFieldsOf(ACCOUNT_ARGS.addMember, 'create') });

builder.mutationFields((t) => ({
  createAccount: t.prismaField({
    type: 'Account',
    description: 'Creates an account; the caller becomes its owner.',
    args: { input: t.arg({ type: CreateAccountInputType, required: true }) },
    rules: {
      access: 'user',
      input: createAccountInput,
      from: 'input',
      limit: ACCOUNT_CREATES,
      notIdempotent: 'keys are kept under the account a write belongs to, and this account does not exist yet',
    },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input } = checked<CreateAccountInput>(info);
      return createAccount(ctx.db, viewer!.id, input, userActor(viewer), query);
    },
  }),
  addTeamMember: t.prismaField({
    type: 'TeamMember',
    description: 'Owner only.',
    args: { input: t.arg({ type: AddTeamMemberInputType, required: true }) },
    rules: { access: 'owner', forbidden: MESSAGES.ownerOnly, input: addTeamMemberInput, from: 'input', idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<AddTeamMemberInput>(info);
      return write((tx) => addMember(tx, input, userActor(viewer), query));
    },
  }),
}));

// --- docs/decisions.md §26: the account's name and default currency, set by its owner ----------------

const UpdateAccountInputType = builder.inputType('UpdateAccountInput', {
  description: 'Absent = unchanged; at least one field.',
  fields: inputFieldsOf(ACCOUNT_ARGS.update, 'update'),
});

builder.mutationField('updateAccount', (t) =>
  t.prismaField({
    type: 'Account',
    nullable: true,
    description: 'Owner only (members get FORBIDDEN; API keys never): the name and the default currency.',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateAccountInputType, required: true }) },
    rules: { access: 'owner', forbidden: MESSAGES.ownerOnly, input: updateAccountArgs, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<UpdateAccountArgs>(info);
      return write((tx) => updateAccount(tx, viewer!.id, input, query));
    },
  }),
);

// --- docs/decisions.md §12: team changes ----------------------------------------------------------

builder.mutationFields((t) => ({
  removeTeamMember: t.prismaField({
    type: 'Account',
    nullable: true,
    description: 'Owner only; the owner cannot be removed. A user who is not a member is NOT_FOUND.',
    args: argsOf(ACCOUNT_ARGS.teamMember, t.arg),
    rules: { access: 'owner', forbidden: MESSAGES.ownerOnly, input: teamMemberArgs, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<TeamMemberArgs>(info);
      return write(async (tx) => tx.account.findUniqueOrThrow({ ...query, where: await removeTeamMember(tx, viewer!.id, input, userActor(viewer)) }));
    },
  }),
  leaveAccount: t.boolean({
    nullable: true,
    description: 'The caller leaves the account; the owner cannot (CONFLICT) until they transfer ownership.',
    args: argsOf(ACCOUNT_ARGS.leave, t.arg),
    rules: { access: 'member', input: leaveArgs, idempotent: true },
    resolve: (_root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<LeaveArgs>(info);
      return write((tx) => leaveAccount(tx, viewer!.id, input, userActor(viewer)));
    },
  }),
  transferOwnership: t.prismaField({
    type: 'Account',
    nullable: true,
    description: 'Owner only, to a member of the account; the old owner stays on as a member.',
    args: argsOf(ACCOUNT_ARGS.teamMember, t.arg),
    rules: { access: 'owner', forbidden: MESSAGES.ownerOnly, input: teamMemberArgs, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<TeamMemberArgs>(info);
      return write(async (tx) => tx.account.findUniqueOrThrow({ ...query, where: await transferOwnership(tx, viewer!.id, input, userActor(viewer)) }));
    },
  }),
}));
