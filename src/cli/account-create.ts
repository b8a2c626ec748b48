import { createAccount, createAccountInput } from '../accounts/account.service.js';
import { SYSTEM } from '../events/types.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { uuid } from '../validation.js';
import { parseOptions, requireOption, validate, type Command } from './command.js';

const input = createAccountInput.extend({ ownerId: uuid });

/** Creates an account owned by `ownerId`; like a first sign-in, an unseen user id is recorded. */
export async function createAccountFor(db: PrismaClient, args: { owner: string; name: string }) {
  const { ownerId, ...account } = validate(input, { ownerId: args.owner, name: args.name }, { ownerId: '--owner', name: '--name' });
  await db.user.upsert({ where: { id: ownerId.toLowerCase() }, create: { id: ownerId.toLowerCase() }, update: {} });
  return createAccount(db, ownerId.toLowerCase(), account, SYSTEM);
}

export const accountCreate: Command = {
  name: 'account:create',
  usage: '--owner <user uuid> --name <name>',
  summary: 'create an account; prints its id',
  async run(args, io) {
    const { values } = parseOptions(this, args, { owner: { type: 'string' }, name: { type: 'string' } });
    const owner = requireOption(this, values, 'owner');
    const name = requireOption(this, values, 'name');
    const account = await io.withDb((db) => createAccountFor(db.prisma, { owner, name }));
    io.out(account.id);
  },
};
