import { z } from 'zod';
import type { Prisma, PrismaClient } from '../generated/prisma/client.js';
import { badInput, conflict, forbidden, MESSAGES, NOT_A_MEMBER, notFound } from '../errors.js';
import { emit } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { releaseOwnership } from './ownership.js';
import { currencyCode, optionalEmail, requiredText, uuid } from '../validation.js';
import { argsRuleOf, idField, type FieldSpec } from '../model/field-spec.js';

// The fields' inputs and arguments, each declared once: their GraphQL fields (inputFieldsOf and
// argsOf, src/graphql/spec-fields.ts) and their rules (argsRuleOf).
export const ACCOUNT_ARGS = {
  create: [{ name: 'name', type: 'String', rule: requiredText(200), required: true }],
  addMember: [idField('accountId'), idField('userId'), { name: 'email', type: 'String', rule: optionalEmail }],
  account: [idField('id')],
  update: [
    { name: 'name', type: 'String', rule: requiredText(200).optional(), description: '1 to 200 characters' },
    { name: 'defaultCurrency', type: 'String', rule: currencyCode.optional(), description: 'ISO 4217 (lower case is upper-cased): the currency of invoices created without one' },
  ],
  teamMember: [idField('accountId'), idField('userId')],
  leave: [idField('accountId')],
} as const satisfies Record<string, readonly FieldSpec[]>;

export const createAccountInput = argsRuleOf(ACCOUNT_ARGS.create);
export type CreateAccountInput = z.output<typeof createAccountInput>;

export const addTeamMemberInput = argsRuleOf(ACCOUNT_ARGS.addMember);
export type AddTeamMemberInput = z.output<typeof addTeamMemberInput>;

/** `account(id:)`: the id names the account whose access is checked. */
export const accountArgs = argsRuleOf(ACCOUNT_ARGS.account).transform((args) => ({ accountId: args.id }));
export type AccountArgs = z.output<typeof accountArgs>;

/**
 * updateAccount (owner only): the account's name and its default currency (docs/decisions.md §26),
 * the currency of an invoice created without one. Absent = unchanged; at least one.
 */
export const updateAccountArgs = z
  .object({ id: uuid, input: argsRuleOf(ACCOUNT_ARGS.update) })
  .refine((args) => args.input.name !== undefined || args.input.defaultCurrency !== undefined, { message: 'Give name or defaultCurrency', path: ['input'] })
  .transform(({ id, input }) => ({ accountId: id, ...input }));
export type UpdateAccountArgs = z.output<typeof updateAccountArgs>;

/** Writes the name and default currency given, under the account's lock (the owner is judged again under it). */
export async function updateAccount(tx: Prisma.TransactionClient, callerId: string, { accountId, ...change }: UpdateAccountArgs, query: { select?: object; include?: object } = {}) {
  await asOwner(tx, accountId, callerId);
  return tx.account.update({ ...query, where: { id: accountId }, data: change });
}

/** The currency of an invoice created without one, and of the receivables report when none is asked. */
export async function defaultCurrencyOf(db: Prisma.TransactionClient, accountId: string): Promise<string> {
  const account = await db.account.findUnique({ where: { id: accountId }, select: { defaultCurrency: true } });
  return account?.defaultCurrency ?? 'USD';
}

/** The new account read with `query` in its own transaction: a committed write is never answered as an error (§14). */
export function createAccount(db: PrismaClient, ownerId: string, input: CreateAccountInput, actor: Actor, query: { select?: object; include?: object } = {}) {
  return db.$transaction(async (tx) => {
    const account = await tx.account.create({ data: { name: input.name, ownerId } });
    await emit(tx, { type: 'account.created', accountId: account.id, actor, object: account });
    return tx.account.findUniqueOrThrow({ ...query, where: { id: account.id } });
  });
}

/**
 * Adds (or re-adds) a member. The identity provider owns users, so an unseen id is recorded, and
 * the given e-mail stays on the membership: users.email is that person's identity in every account.
 */
export function addTeamMember(db: PrismaClient, input: AddTeamMemberInput, actor: Actor) {
  return db.$transaction((tx) => addMember(tx, input, actor));
}

/** In the caller's transaction, under the account row's lock (an ownership transfer cannot interleave). */
export async function addMember(tx: Prisma.TransactionClient, input: AddTeamMemberInput, actor: Actor, query: { select?: object; include?: object } = {}) {
  if ((await lockAccount(tx, input.accountId)) === input.userId) throw badInput({ userId: ['Already the owner of this account'] });
  await tx.user.upsert({ where: { id: input.userId }, create: { id: input.userId }, update: {}, select: { id: true } });
  const where = { accountId_userId: { accountId: input.accountId, userId: input.userId } };
  const before = await tx.teamMember.findUnique({ where, select: { userId: true } });
  const member = await tx.teamMember.upsert({
    where,
    create: { accountId: input.accountId, userId: input.userId, email: input.email },
    update: input.email ? { email: input.email } : {},
  });
  // member.added for a new member; a re-add is no change of membership.
  if (!before) await emit(tx, { type: 'member.added', accountId: input.accountId, actor, object: member });
  return Object.keys(query).length ? tx.teamMember.findUniqueOrThrow({ ...query, where }) : member;
}

// --- Team changes (docs/decisions.md §12) -------------------------------------------------------

export const teamMemberArgs = argsRuleOf(ACCOUNT_ARGS.teamMember);
export type TeamMemberArgs = z.output<typeof teamMemberArgs>;
export const leaveArgs = argsRuleOf(ACCOUNT_ARGS.leave);
export type LeaveArgs = z.output<typeof leaveArgs>;

export const OWNER_STAYS = 'The owner cannot be removed; transfer ownership first';
export const OWNER_CANNOT_LEAVE = 'The owner cannot leave the account; transfer ownership first';

/**
 * Every team change locks the account row first and judges the caller again under the lock: the
 * owner checked before the transaction may have handed the account on meanwhile. So concurrent
 * transfers and removals run one after another, and the account always has exactly one owner.
 */
async function lockAccount(tx: Prisma.TransactionClient, accountId: string): Promise<string> {
  const [row] = await tx.$queryRaw<{ owner_id: string }[]>`SELECT owner_id FROM accounts WHERE id = ${accountId}::uuid FOR UPDATE`;
  if (!row) throw forbidden(MESSAGES.noAccess);
  return row.owner_id;
}

async function asOwner(tx: Prisma.TransactionClient, accountId: string, callerId: string) {
  if ((await lockAccount(tx, accountId)) !== callerId) throw forbidden(MESSAGES.ownerOnly);
}

/** Owner only; the owner is not a member row and cannot be removed. */
export async function removeTeamMember(tx: Prisma.TransactionClient, callerId: string, { accountId, userId }: TeamMemberArgs, actor: Actor) {
  await asOwner(tx, accountId, callerId);
  if (userId === callerId) throw badInput({ userId: [OWNER_STAYS] });
  await removeMember(tx, accountId, userId, actor, notFound(MESSAGES.notFound));
  return { id: accountId };
}

/**
 * Under the account's lock: the row goes, with its member.removed event (which ends the person's live
 * subscriptions), and what they owned becomes unowned (docs/decisions.md §21).
 */
async function removeMember(tx: Prisma.TransactionClient, accountId: string, userId: string, actor: Actor, missing: Error) {
  const where = { accountId_userId: { accountId, userId } };
  if (!(await tx.teamMember.findUnique({ where, select: { userId: true } }))) throw missing;
  const member = await tx.teamMember.delete({ where });
  await emit(tx, { type: 'member.removed', accountId, actor, object: member });
  await releaseOwnership(tx, accountId, userId, actor);
}

/** A member leaves; the owner cannot (CONFLICT) until they transfer ownership. */
export async function leaveAccount(tx: Prisma.TransactionClient, callerId: string, { accountId }: LeaveArgs, actor: Actor) {
  if ((await lockAccount(tx, accountId)) === callerId) throw conflict(OWNER_CANNOT_LEAVE);
  await removeMember(tx, accountId, callerId, actor, forbidden(MESSAGES.noAccess)); // left meanwhile, or removed
  return true;
}

/** Owner only, to a member; the old owner stays on as a member. */
export async function transferOwnership(tx: Prisma.TransactionClient, callerId: string, { accountId, userId }: TeamMemberArgs, actor: Actor) {
  await asOwner(tx, accountId, callerId);
  if (userId === callerId) throw badInput({ userId: ['Already the owner of this account'] });
  const { count } = await tx.teamMember.deleteMany({ where: { accountId, userId } });
  if (count === 0) throw badInput({ userId: [NOT_A_MEMBER] });
  const account = await tx.account.update({ where: { id: accountId }, data: { ownerId: userId } });
  await tx.teamMember.create({ data: { accountId, userId: callerId } });
  await emit(tx, { type: 'ownership.transferred', accountId, actor, object: account, previous: { ownerId: callerId } });
  return { id: accountId };
}
