import { z } from 'zod';
import { InvoiceStatus, Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { badInput, invalidTransition } from '../errors.js';
import { assertInAccount } from '../deals/deal.service.js';
import { assertTransition, INVOICE_MACHINE } from '../state-machines.js';
import { emit, inTransaction } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { WRITE_TRANSACTION } from '../db/client.js';
import { listArgs, money, optionalText, uuid } from '../validation.js';

export const NUMBER_TAKEN = 'Already used in this account';

export const createInvoiceInput = z.object({
  accountId: uuid,
  contactId: uuid.nullish().transform((value) => value ?? null),
  invoiceNumber: optionalText(50),
  amount: money,
  dueDate: z.date(),
  // Every invoice starts as a draft; later states are reached only through setInvoiceStatus.
  status: z
    .enum(InvoiceStatus)
    .nullish()
    .refine((value) => value == null || value === InvoiceStatus.draft, 'A new invoice must be draft; use setInvoiceStatus to move it on')
    .transform(() => InvoiceStatus.draft),
});

export type CreateInvoiceInput = z.output<typeof createInvoiceInput>;

export const listInvoicesArgs = listArgs.extend({ status: z.enum(InvoiceStatus).nullish() });
export type ListInvoicesArgs = z.output<typeof listInvoicesArgs>;

export const setInvoiceStatusArgs = z.object({ id: uuid, status: z.enum(InvoiceStatus) });
export type SetInvoiceStatusArgs = z.output<typeof setInvoiceStatusArgs>;
export type InvoiceToMove = { id: string; status: InvoiceStatus };

export function invoicesWhere(args: ListInvoicesArgs): Prisma.InvoiceWhereInput {
  return args.status ? { accountId: args.accountId, status: args.status } : { accountId: args.accountId };
}

export const formatInvoiceNumber = (n: number): string => `INV-${String(n).padStart(6, '0')}`;

const isUniqueViolation = (error: unknown): boolean =>
  error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';

const ATTEMPTS = 5;

/** Creates a draft invoice; without a number it gets the account's next free `INV-000001`-style one. */
export async function createInvoice(db: PrismaClient, input: CreateInvoiceInput, actor: Actor) {
  const { invoiceNumber, ...data } = input;
  await assertInAccount(db, data.accountId, data);
  const created = async (tx: Prisma.TransactionClient, invoice: Awaited<ReturnType<typeof tx.invoice.create>>) => {
    await emit(tx, { type: 'invoice.created', accountId: invoice.accountId, actor, object: invoice });
    return invoice;
  };
  if (invoiceNumber) {
    try {
      return await inTransaction(db, async (tx) => created(tx, await tx.invoice.create({ data: { ...data, invoiceNumber } })));
    } catch (error) {
      if (isUniqueViolation(error)) throw badInput({ invoiceNumber: [NUMBER_TAKEN] });
      throw error;
    }
  }
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.$transaction(async (tx) => {
        const assigned = await takeNextNumber(tx, data.accountId);
        return created(tx, await tx.invoice.create({ data: { ...data, invoiceNumber: assigned } }));
      }, WRITE_TRANSACTION);
    } catch (error) {
      // Only a manual create racing for the very number we picked gets here; the retry skips it.
      if (!isUniqueViolation(error) || attempt >= ATTEMPTS) throw error;
    }
  }
}

const BATCH = 100;

/**
 * Takes the account's next number, skipping numbers already used by hand. The first update locks
 * the account row until the transaction ends, so concurrent creates in one account queue here.
 */
async function takeNextNumber(tx: Prisma.TransactionClient, accountId: string): Promise<string> {
  const { nextInvoiceNumber } = await tx.account.update({
    where: { id: accountId },
    data: { nextInvoiceNumber: { increment: 1 } },
    select: { nextInvoiceNumber: true },
  });
  let candidate = nextInvoiceNumber - 1;
  for (;;) {
    const batch = Array.from({ length: BATCH }, (_, i) => formatInvoiceNumber(candidate + i));
    const used = await tx.invoice.findMany({ where: { accountId, invoiceNumber: { in: batch } }, select: { invoiceNumber: true } });
    const taken = new Set(used.map((row) => row.invoiceNumber));
    const free = batch.findIndex((number) => !taken.has(number));
    if (free >= 0) {
      candidate += free;
      break;
    }
    candidate += BATCH;
  }
  if (candidate !== nextInvoiceNumber - 1) {
    await tx.account.update({ where: { id: accountId }, data: { nextInvoiceNumber: candidate + 1 } });
  }
  return formatInvoiceNumber(candidate);
}

/**
 * Moves an invoice along the §8 machine; `cancelled` and `refunded` are final. The update applies
 * only while the row still holds the state we checked, so concurrent moves cannot both win.
 */
export async function setInvoiceStatus(db: PrismaClient, invoice: InvoiceToMove, to: InvoiceStatus, actor: Actor) {
  let from = invoice.status;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    assertTransition(INVOICE_MACHINE, from, to);
    const was = from;
    const moved = await db.$transaction(async (tx) => {
      const { count } = await tx.invoice.updateMany({ where: { id: invoice.id, status: was }, data: { status: to } });
      if (count !== 1) return false;
      const object = await tx.invoice.findUniqueOrThrow({ where: { id: invoice.id } });
      await emit(tx, { type: 'invoice.status_changed', accountId: object.accountId, actor, object, previous: { status: was } });
      return true;
    }, WRITE_TRANSACTION);
    if (moved) return;
    from = (await db.invoice.findUniqueOrThrow({ where: { id: invoice.id }, select: { status: true } })).status;
  }
  throw invalidTransition(`Cannot move an invoice from ${from} to ${to}: it keeps changing`, { from, to });
}
