import { z } from 'zod';
import type { PrismaClient } from '../generated/prisma/client.js';
import { badInput } from '../errors.js';
import { optionalEmail, requiredText, uuid } from '../validation.js';

export const createAccountInput = z.object({ name: requiredText(200) });
export type CreateAccountInput = z.output<typeof createAccountInput>;

export const addTeamMemberInput = z.object({ accountId: uuid, userId: uuid, email: optionalEmail });
export type AddTeamMemberInput = z.output<typeof addTeamMemberInput>;

/** `account(id:)`: the id names the account whose access is checked. */
export const accountArgs = z.object({ id: uuid }).transform((args) => ({ accountId: args.id }));
export type AccountArgs = z.output<typeof accountArgs>;

export function createAccount(db: PrismaClient, ownerId: string, input: CreateAccountInput) {
  return db.account.create({ data: { name: input.name, ownerId } });
}

/**
 * Adds (or re-adds) a member. The identity provider owns users, so an unseen id is recorded, and
 * the given e-mail stays on the membership: users.email is that person's identity in every account.
 */
export async function addTeamMember(db: PrismaClient, input: AddTeamMemberInput) {
  const account = await db.account.findUniqueOrThrow({ where: { id: input.accountId }, select: { ownerId: true } });
  if (account.ownerId === input.userId) throw badInput({ userId: ['Already the owner of this account'] });
  return db.$transaction(async (tx) => {
    await tx.user.upsert({ where: { id: input.userId }, create: { id: input.userId }, update: {} });
    return tx.teamMember.upsert({
      where: { accountId_userId: { accountId: input.accountId, userId: input.userId } },
      create: { accountId: input.accountId, userId: input.userId, email: input.email },
      update: input.email ? { email: input.email } : {},
    });
  });
}
