import { z } from 'zod';
import type { PrismaClient } from '../generated/prisma/client.js';
import { badInput } from '../errors.js';
import { emit } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { optionalEmail, requiredText, uuid } from '../validation.js';

export const createAccountInput = z.object({ name: requiredText(200) });
export type CreateAccountInput = z.output<typeof createAccountInput>;

export const addTeamMemberInput = z.object({ accountId: uuid, userId: uuid, email: optionalEmail });
export type AddTeamMemberInput = z.output<typeof addTeamMemberInput>;

/** `account(id:)`: the id names the account whose access is checked. */
export const accountArgs = z.object({ id: uuid }).transform((args) => ({ accountId: args.id }));
export type AccountArgs = z.output<typeof accountArgs>;

export function createAccount(db: PrismaClient, ownerId: string, input: CreateAccountInput, actor: Actor) {
  return db.$transaction(async (tx) => {
    const account = await tx.account.create({ data: { name: input.name, ownerId } });
    await emit(tx, { type: 'account.created', accountId: account.id, actor, object: account });
    return account;
  });
}

/**
 * Adds (or re-adds) a member. The identity provider owns users, so an unseen id is recorded, and
 * the given e-mail stays on the membership: users.email is that person's identity in every account.
 */
export async function addTeamMember(db: PrismaClient, input: AddTeamMemberInput, actor: Actor) {
  const account = await db.account.findUniqueOrThrow({ where: { id: input.accountId }, select: { ownerId: true } });
  if (account.ownerId === input.userId) throw badInput({ userId: ['Already the owner of this account'] });
  return db.$transaction(async (tx) => {
    await tx.user.upsert({ where: { id: input.userId }, create: { id: input.userId }, update: {} });
    const where = { accountId_userId: { accountId: input.accountId, userId: input.userId } };
    const before = await tx.teamMember.findUnique({ where });
    const member = await tx.teamMember.upsert({
      where,
      create: { accountId: input.accountId, userId: input.userId, email: input.email },
      update: input.email ? { email: input.email } : {},
    });
    // member.added for a new member; a re-add that changes nothing is no change.
    if (!before) await emit(tx, { type: 'member.added', accountId: member.accountId, actor, object: member });
    return member;
  });
}
