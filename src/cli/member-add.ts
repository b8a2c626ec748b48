import { addTeamMember, addTeamMemberInput } from '../accounts/account.service.js';
import { SYSTEM } from '../events/types.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { findAccount, fromCoreError, parseOptions, requireOption, validate, type Command } from './command.js';

const FLAGS = { accountId: '--account', userId: '--user', email: '--email' };

/** Adds (or re-adds) a team member with the core's rules (the owner cannot be added). */
export async function addMember(db: PrismaClient, args: { account: string; user: string; email?: string }) {
  const input = validate(addTeamMemberInput, { accountId: args.account, userId: args.user.toLowerCase(), email: args.email }, FLAGS);
  await findAccount(db, input.accountId);
  try {
    return await addTeamMember(db, input, SYSTEM);
  } catch (error) {
    throw fromCoreError(error, FLAGS) ?? error;
  }
}

export const memberAdd: Command = {
  name: 'member:add',
  usage: '--account <uuid> --user <uuid> [--email <e-mail>]',
  summary: 'add a team member to an account',
  async run(args, io) {
    const { values } = parseOptions(this, args, { account: { type: 'string' }, user: { type: 'string' }, email: { type: 'string' } });
    const account = requireOption(this, values, 'account');
    const user = requireOption(this, values, 'user');
    const member = await io.withDb((db) => addMember(db.prisma, { account, user, email: values.email }));
    io.out(`${member.userId} is a ${member.role} of account ${member.accountId}`);
  },
};
