import { z } from 'zod';
import type { PrismaClient } from '../generated/prisma/client.js';
import { badInput } from '../errors.js';
import { optionalEmail, requiredText, uuid } from '../validation.js';

export const createAccountInput = z.object({ name: requiredText(200) });

export const addTeamMemberInput = z.object({ accountId: uuid, userId: uuid, email: optionalEmail });

export function createAccount(db: PrismaClient, ownerId: string, input: z.output<typeof createAccountInput>) {
  return db.account.create({ data: { name: input.name, ownerId } });
}

/**
 * Adds (or re-adds) a member. The identity provider owns users, so an unseen id is recorded, and
 * the given e-mail stays on the membership: users.email is that person's identity in every account.
 */
export async function addTeamMember(db: PrismaClient, input: z.output<typeof addTeamMemberInput>) {
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
