import { z } from 'zod';
import { isUniqueViolation, TAKEN, updateArgs, updateGuarded, updateInputOf, type Query, type UpdateArgs } from '../writes/update.js';
import { InvoiceStatus, Prisma, type Invoice, type PrismaClient } from '../generated/prisma/client.js';
import { badInput, conflict, invalidTransition, isAppError, MESSAGES, notFound } from '../errors.js';
import { assertInAccount, linkedRows, linkProblems } from '../deals/deal.service.js';
import { defaultCurrencyOf } from '../accounts/account.service.js';
import type { ErrorDetails } from '../errors.js';
import type { LineInput } from './money.js';
import { assertTransition, INVOICE_MACHINE } from '../state-machines.js';
import { emit, emitMany } from '../events/emit.js';
import { changedFields, columnsIn, emitRow, updatedWithEvent, withColumns } from '../events/record.js';
import type { Actor } from '../events/types.js';
import { recordBalancingPayment, refundEveryPayment } from './payment.service.js';
import { issued } from './send.service.js';
import { uuid } from '../validation.js';
import { createRuleOf } from '../model/field-spec.js';
import { INVOICE_FIELDS, INVOICE_MODEL } from './invoice.model.js';
import { assertUpdateValues, createWithValues, customValueProblems } from '../writes/custom-values.js';
import { detailsOf, lines, moneyProblems, priceInvoice, type MoneyInput } from './invoice-money.js';
import { moneyAfter, readsLines, withoutLines, writeLines } from './invoice-lines.service.js';
import { skipNumbersTaken } from './invoice-numbers.js';
import { draftRow, insertInvoice } from './invoice-create.js';
import { camelCase } from '../names.js';
import { sqlStateOf } from '../db/sql-state.js';

export const NUMBER_TAKEN = TAKEN;

/** The create's form, from the model (invoice.model.ts), and the lines, their own input (docs/decisions.md §20). */
const createInvoiceFields = createRuleOf(INVOICE_FIELDS).extend({ lines: lines.nullish() });

/**
 * Adds the money's problems (moneyProblems) to the form's, so one 400 names every field. Without a
 * currency they are judged in the account's default one by the `linked` rule (createProblems).
 */
const withMoneyChecks = <T extends Omit<MoneyInput, 'currency'> & { currency?: string | null }>(input: T, ctx: z.RefinementCtx) => {
  const issues = input.currency ? moneyProblems({ ...input, currency: input.currency }) : moneyProblems({ ...input, currency: 'USD' }, 'shape');
  for (const issue of issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
};

/**
 * createInvoice's `linked` rule: the contact's link and, for an invoice given no currency, its money
 * judged in the account's default currency. Reads the fields as sent (they may have failed their form).
 */
export async function createProblems(fields: Record<string, unknown>, db: Prisma.TransactionClient, accountId: string): Promise<ErrorDetails> {
  const details = { ...(await linkedRows(fields, db, accountId)), ...(await customValueProblems(db, accountId, INVOICE_MODEL, fields.customFields, 'create')) };
  if (typeof fields.currency === 'string' && fields.currency.trim() !== '') return details;
  const money = { currency: await defaultCurrencyOf(db, accountId), amount: fields.amount as number | null | undefined, lines: fields.lines as LineInput[] | null | undefined };
  return { ...detailsOf(moneyProblems(money, 'currency')), ...details };
}

export const createInvoiceInput = createInvoiceFields.superRefine(withMoneyChecks);

export type CreateInvoiceInput = z.output<typeof createInvoiceInput>;

export const setInvoiceStatusArgs = z.object({ id: uuid, status: z.enum(InvoiceStatus) });
export type SetInvoiceStatusArgs = z.output<typeof setInvoiceStatusArgs>;
export type InvoiceToMove = { id: string; status: InvoiceStatus };


const ATTEMPTS = 5;

/**
 * Creates a draft invoice in one statement (invoice-create.ts); without a number it gets the
 * account's next free `INV-000001`-style one, taken in that statement, so the account's row is
 * locked for it and the COMMIT alone. The answer is the rows written (with their lines), never read
 * back. The account's next number taken by hand meanwhile is stepped over and the next free one is
 * tried; a number given by hand that is taken, or a taken external id, is a 400 on that field.
 */
export async function createInvoice(db: Prisma.TransactionClient, given: CreateInvoiceInput, actor: Actor): Promise<Invoice> {
  // The contact and the account's fields are checked before the statement, so a refused write uses no number (§4).
  const input = await createWithValues(db, given.accountId, INVOICE_MODEL, given, given.contactId ? await linkProblems(db, given.accountId, given) : {});
  const { invoiceNumber, lines, amount, status: _draft, ...data } = input;
  // No currency given: the account's default, and the money judged again in it (docs/decisions.md §26).
  const currency = input.currency ?? (await defaultCurrencyOf(db, data.accountId));
  if (!input.currency) {
    const problems = detailsOf(moneyProblems({ currency, amount, lines }));
    if (Object.keys(problems).length > 0) throw badInput(problems);
  }
  const { lines: priced, total: _total, ...money } = priceInvoice({ currency, amount, lines });
  const row = draftRow({ ...data, currency, invoiceNumber, amount: new Prisma.Decimal(money.amount), subtotal: new Prisma.Decimal(money.subtotal), discountTotal: new Prisma.Decimal(money.discountTotal), taxTotal: new Prisma.Decimal(money.taxTotal) });
  for (let attempt = 1; ; attempt++) {
    const created = await insertInvoice(db, row, priced, actor).catch((error: unknown) => {
      // Only the (account, number) key is skipped in the statement: another unique key is the external id's.
      if (isUniqueViolation(error) || isRawUniqueViolation(error)) throw badInput({ externalId: [TAKEN] });
      throw error;
    });
    // No contact: the answer's contact is known, so it is not read after the write.
    if (created) return (created.contactId ? created : { ...created, contact: null }) as unknown as Invoice;
    if (invoiceNumber) throw badInput({ invoiceNumber: [NUMBER_TAKEN] });
    if (attempt >= ATTEMPTS) throw new Error(`createInvoice: no free number after ${ATTEMPTS} attempts`);
    await skipNumbersTaken(db, data.accountId);
  }
}

/** A unique violation of a raw statement (Prisma reports it as P2010 with the adapter's error inside). */
const isRawUniqueViolation = (error: unknown): boolean => sqlStateOf(error) === '23505';

/** Whether another invoice of the account holds `externalId` (which unique index refused a row). */
const externalIdTaken = async (tx: Prisma.TransactionClient, accountId: string, externalId: string, except?: string) =>
  Boolean(await tx.invoice.findFirst({ where: { accountId, externalId, ...(except ? { id: { not: except } } : {}) }, select: { id: true } }));

/** Moves an invoice along the §8 machine in the caller's transaction, as setDealStatus moves a deal. */
export async function setInvoiceStatus(tx: Prisma.TransactionClient, invoice: InvoiceToMove, to: InvoiceStatus, actor: Actor) {
  let from = invoice.status;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    assertTransition(INVOICE_MACHINE, from, to);
    // A draft moved to sent by hand is issued as sendInvoice issues it (issuedAt, its page), without mail.
    const data = from === InvoiceStatus.draft && to === InvoiceStatus.sent ? { status: to, ...issued() } : { status: to };
    const [object] = await tx.invoice.updateManyAndReturn({ where: { id: invoice.id, status: from }, data });
    if (object && to === InvoiceStatus.paid) {
      // docs/decisions.md §20: every paid invoice owes nothing; what was due is recorded as paid.
      await recordBalancingPayment(tx, invoice.id, actor);
      const settled = await tx.invoice.findUniqueOrThrow({ where: { id: invoice.id } });
      return emit(tx, { type: 'invoice.status_changed', accountId: object.accountId, actor, object: settled, previous: { status: from } });
    }
    if (object && to === InvoiceStatus.refunded) {
      // docs/decisions.md §26: a refunded invoice keeps nothing paid; what each payment has left is given back.
      await refundEveryPayment(tx, invoice.id, actor);
      const settled = await tx.invoice.findUniqueOrThrow({ where: { id: invoice.id } });
      return emit(tx, { type: 'invoice.status_changed', accountId: object.accountId, actor, object: settled, previous: { status: from } });
    }
    if (object) return emit(tx, { type: 'invoice.status_changed', accountId: object.accountId, actor, object, previous: { status: from } });
    from = (await tx.invoice.findUniqueOrThrow({ where: { id: invoice.id }, select: { status: true } })).status;
  }
  throw invalidTransition(`Cannot move an invoice from ${from} to ${to}: it keeps changing`, { from, to });
}

/**
 * Moves invoices the caller has locked (FOR UPDATE, so their status is still what the caller read)
 * to `to`, each checked against the §8 machine as setInvoiceStatus checks one, in one UPDATE and one
 * events statement: a job's batch (docs/decisions.md §19 "Billing time"). Returns how many moved.
 */
export async function setInvoicesStatus(tx: Prisma.TransactionClient, invoices: InvoiceToMove[], to: InvoiceStatus, actor: Actor): Promise<number> {
  for (const invoice of invoices) assertTransition(INVOICE_MACHINE, invoice.status, to);
  if (invoices.length === 0) return 0;
  const fromOf = new Map(invoices.map((invoice) => [invoice.id, invoice.status]));
  // Raw SQL: Prisma's updateManyAndReturn spent a third of a 500-row batch mapping its rows.
  const moved = await tx.$queryRaw<Record<string, unknown>[]>`
    UPDATE invoices SET status = ${to}::invoice_status, updated_at = now() WHERE id = ANY (${[...fromOf.keys()]}::uuid[]) RETURNING *`;
  await emitMany(tx, moved.map((row) => columnsIn('Invoice', asFields(row))).map((object) => ({ type: 'invoice.status_changed', accountId: object.accountId as string, actor, object, previous: { status: fromOf.get(object.id as string) } })));
  return moved.length;
}

/** A raw row under the model's field names. */
const asFields = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).map(([column, value]) => [camelCase(column), value]));

// --- Changing and removing invoices: drafts only (docs/decisions.md §12) ---------------------------

export const NOT_DRAFT = 'Only a draft invoice can change or be deleted; cancel or refund it through setInvoiceStatus';

// The status moves only through setInvoiceStatus (the model's one create-only field): the update
// input has every other create field. `lines: null` is Required (an invoice keeps its lines or
// `amount`); the money is judged against the stored invoice (invoice-lines.service.ts), in the same
// 400 as the form's problems.
export const updateInvoiceInput = updateInputOf(createInvoiceFields.omit({ status: true }), 'Invoice', ['lines']);
export type UpdateInvoiceInput = z.output<typeof updateInvoiceInput>;
export const updateInvoiceArgs = updateArgs(updateInvoiceInput);
export type UpdateInvoiceArgs = UpdateArgs<UpdateInvoiceInput>;
export type InvoiceKey = { id: string; accountId: string; status: InvoiceStatus };

export const invoiceTarget = ({ id }: { id: string }, db: Prisma.TransactionClient) =>
  db.invoice.findUnique({ where: { id }, select: { id: true, accountId: true, status: true } });

/**
 * An update's unique violation names the value that collided: the index the driver reports (its
 * columns are in the error's meta), else the one unique value the update changes.
 */
function refusedAsTaken(error: unknown, change: { externalId?: string | null; invoiceNumber?: string | null }): never {
  const meta = JSON.stringify((error as { meta?: unknown }).meta ?? {});
  const onExternalId = meta.includes('external_id') || meta.includes('externalId') || (change.externalId != null && change.invoiceNumber == null);
  throw badInput(onExternalId ? { externalId: [TAKEN] } : { invoiceNumber: [NUMBER_TAKEN] });
}

/** A billing record past draft is refused as it is now, whatever the caller last saw. */
async function refusedUnlessDraft(tx: Prisma.TransactionClient, error: unknown, id: string): Promise<never> {
  if (isAppError(error) && (error.code === 'CONFLICT' || error.code === 'NOT_FOUND')) {
    const now = await tx.invoice.findUnique({ where: { id }, select: { status: true } });
    if (now && now.status !== InvoiceStatus.draft) throw conflict(NOT_DRAFT);
  }
  throw error;
}

export async function updateInvoice(tx: Prisma.TransactionClient, invoice: InvoiceKey, args: UpdateInvoiceArgs, query: Query, actor: Actor) {
  if (invoice.status !== InvoiceStatus.draft) throw conflict(NOT_DRAFT);
  const { invoiceNumber, lines, ...input } = args.input;
  // The form passed: the links and the money the draft would be left with fail in one 400.
  const next = await moneyAfter(tx, invoice.id, { ...input, currency: input.currency ?? undefined, lines });
  const problems = { ...(next ? detailsOf(moneyProblems(next)) : {}), ...(await linkProblems(tx, invoice.accountId, input)) };
  await assertUpdateValues(tx, invoice.accountId, INVOICE_MODEL, input, problems);
  const money = next && priceInvoice(next);
  const data = { ...input, ...(money ? { currency: money.currency, amount: money.amount, subtotal: money.subtotal, discountTotal: money.discountTotal, taxTotal: money.taxTotal } : {}) };
  const change = invoiceNumber === undefined ? data : { ...data, invoiceNumber };
  // The draft condition is part of the UPDATE: a concurrent setInvoiceStatus cannot slip between.
  const spec = { type: 'invoice.updated', model: 'Invoice', table: 'invoices', actor } as const;
  return updatedWithEvent(tx, spec, invoice, changedFields(change), () =>
    updateGuarded<Invoice>(tx.invoice, invoice, change, withColumns('Invoice', money ? withoutLines(query) : query), args.expectedUpdatedAt, { status: InvoiceStatus.draft }).then(async (row) => {
      if (!money) return row;
      await writeLines(tx, invoice.accountId, invoice.id, money.lines, true);
      return readsLines(query) ? { ...row, ...(await tx.invoice.findUniqueOrThrow({ ...query, where: { id: invoice.id } })) } : row;
    }),
  ).catch((error) => {
    // The transaction ends with a unique violation: nothing more is read in it.
    if (isUniqueViolation(error)) return refusedAsTaken(error, change);
    return refusedUnlessDraft(tx, error, invoice.id);
  });
}

export async function deleteInvoice(tx: Prisma.TransactionClient, invoice: InvoiceKey, actor: Actor) {
  // The draft condition is part of the DELETE; what it returns is the invoice.deleted event's object.
  const row = await tx.invoice.delete({ where: { id: invoice.id, accountId: invoice.accountId, status: InvoiceStatus.draft } }).catch((error: unknown) => {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') return null;
    throw error;
  });
  if (row) await emitRow(tx, 'invoice.deleted', 'Invoice', actor, row);
  if (!row) throw (await tx.invoice.findUnique({ where: { id: invoice.id }, select: { id: true } })) ? conflict(NOT_DRAFT) : notFound(MESSAGES.notFound);
  return { id: invoice.id, deletedAt: new Date() };
}
