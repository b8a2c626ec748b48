import { z } from 'zod';
import { ContactSource, ContactType, type Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { emit, inTransaction } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { listArgs, optionalEmail, optionalText, requiredText, text, uuid } from '../validation.js';

export const createContactInput = z.object({
  accountId: uuid,
  firstName: requiredText(100),
  lastName: optionalText(100),
  email: optionalEmail,
  phone: optionalText(50),
  company: optionalText(200),
  contactType: z.enum(ContactType).nullish().transform((value) => value ?? ContactType.lead),
  source: z.enum(ContactSource).nullish().transform((value) => value ?? ContactSource.other),
});

export type CreateContactInput = z.output<typeof createContactInput>;

export const listContactsArgs = listArgs.extend({
  search: text()
    .trim()
    .max(200, 'Must be at most 200 characters')
    .nullish()
    .transform((value) => value || null),
  type: z.enum(ContactType).nullish(),
});

export type ListContactsArgs = z.output<typeof listContactsArgs>;

/** `db` may be a transaction (an idempotent create stores its answer in the same one). */
export function createContact(db: PrismaClient | Prisma.TransactionClient, input: CreateContactInput, actor: Actor) {
  return inTransaction(db, async (tx) => {
    const contact = await tx.contact.create({ data: input });
    await emit(tx, { type: 'contact.created', accountId: contact.accountId, actor, object: contact });
    return contact;
  });
}

/**
 * Case-insensitive substring match on first name, last name, e-mail and "first last".
 * A match across the space is split at each space of the search: the part before must end the
 * first name and the part after must begin the last name. `%` and `_` match literally.
 */
export function contactsWhere(args: ListContactsArgs): Prisma.ContactWhereInput {
  const where: Prisma.ContactWhereInput = { accountId: args.accountId };
  if (args.type) where.contactType = args.type;
  // Prisma hands the text to (I)LIKE as is: escape its wildcards so they match themselves.
  const search = args.search?.replace(/[\\%_]/g, '\\$&');
  if (search) {
    const contains = { contains: search, mode: 'insensitive' as const };
    const acrossTheSpace = [...search.matchAll(/ /g)].map(({ index }) => ({
      firstName: { endsWith: search.slice(0, index), mode: 'insensitive' as const },
      lastName: { startsWith: search.slice(index + 1), mode: 'insensitive' as const },
    }));
    where.OR = [{ firstName: contains }, { lastName: contains }, { email: contains }, ...acrossTheSpace];
  }
  return where;
}
