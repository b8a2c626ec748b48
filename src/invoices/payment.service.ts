import { z } from 'zod';
import { InvoiceStatus, PaymentMethod, Prisma, type Payment } from '../generated/prisma/client.js';
import { badInput, conflict } from '../errors.js';
import { emit } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { optionalText, uuid } from '../validation.js';
import { amount } from './invoice-money.js';
import { decimalsOf, exponentOf, formatMinor, minorOf, scaled } from './money.js';

// docs/decisions.md §20 "Payments move the invoice": every move reads the invoice FOR UPDATE first,
// so concurrent payments queue on its row and never take more than is due.

const PAYABLE: InvoiceStatus[] = [InvoiceStatus.sent, InvoiceStatus.viewed, InvoiceStatus.partial, InvoiceStatus.overdue];
const REFUNDABLE: InvoiceStatus[] = [InvoiceStatus.paid, InvoiceStatus.partial, InvoiceStatus.overdue];

export const recordPaymentArgs = z.object({
  invoiceId: uuid,
  input: z.object({
    amount: amount.refine((value) => value > 0, 'Must be greater than 0'),
    method: z.enum(PaymentMethod),
    reference: optionalText(255),
    paidAt: z.date().nullish(),
  }),
});
export type RecordPaymentArgs = z.output<typeof recordPaymentArgs>;

export const refundPaymentArgs = z.object({ paymentId: uuid, amount: amount.refine((value) => value > 0, 'Must be greater than 0').nullish() });
export type RefundPaymentArgs = z.output<typeof refundPaymentArgs>;

type Locked = { id: string; account_id: string; status: InvoiceStatus; amount: string; amount_paid: string; currency: string };

/** The invoice's row, locked until the transaction ends (money as exact text). */
async function locked(tx: Prisma.TransactionClient, id: string): Promise<Locked> {
  const [row] = await tx.$queryRaw<Locked[]>`
    SELECT id, account_id, status::text AS status, amount::text AS amount, amount_paid::text AS amount_paid, currency FROM invoices WHERE id = ${id}::uuid FOR UPDATE`;
  return row!;
}

/** An amount in the invoice's currency as minor units, or a 400 on `field` when it has too many decimals. */
function minorIn(currency: string, value: number, field: string): bigint {
  const exponent = exponentOf(currency);
  if (decimalsOf(value) > exponent) throw badInput({ [field]: [`Must have at most ${exponent} decimals in ${currency}`] });
  return scaled(value, exponent);
}

/** Writes the invoice's new amountPaid (and status, paidAt), with invoice.status_changed when the status moves. */
async function settle(tx: Prisma.TransactionClient, invoice: Locked, paidMinor: bigint, status: InvoiceStatus, actor: Actor, paidAt: Date | null) {
  const exponent = exponentOf(invoice.currency);
  const object = await tx.invoice.update({ where: { id: invoice.id }, data: { amountPaid: formatMinor(paidMinor, exponent), status, paidAt } });
  if (status !== invoice.status) await emit(tx, { type: 'invoice.status_changed', accountId: invoice.account_id, actor, object, previous: { status: invoice.status } });
}

/** Records money received: the invoice becomes paid (with paidAt) when nothing is due, else partial. */
export async function recordPayment(tx: Prisma.TransactionClient, invoiceId: string, input: RecordPaymentArgs['input'], actor: Actor, method = input.method): Promise<Payment> {
  const invoice = await locked(tx, invoiceId);
  if (!PAYABLE.includes(invoice.status)) throw conflict(`A ${invoice.status} invoice takes no payment`);
  const exponent = exponentOf(invoice.currency);
  const paying = minorIn(invoice.currency, input.amount, 'amount');
  const due = minorOf(invoice.amount, exponent) - minorOf(invoice.amount_paid, exponent);
  if (paying > due) throw badInput({ amount: [`Exceeds the amount due (${formatMinor(due, exponent)})`] });
  const paidAt = input.paidAt ?? new Date();
  const payment = await tx.payment.create({
    data: { accountId: invoice.account_id, invoiceId, amount: formatMinor(paying, exponent), currency: invoice.currency, method, reference: input.reference ?? null, paidAt },
  });
  await emit(tx, { type: 'payment.created', accountId: invoice.account_id, actor, object: payment });
  const nothingDue = paying === due;
  await settle(tx, invoice, minorOf(invoice.amount_paid, exponent) + paying, nothingDue ? InvoiceStatus.paid : InvoiceStatus.partial, actor, nothingDue ? paidAt : null);
  return payment;
}

/** A manual move to paid (setInvoiceStatus) records what was still due as a payment (method other). */
export async function recordBalancingPayment(tx: Prisma.TransactionClient, invoiceId: string, actor: Actor): Promise<void> {
  const invoice = await locked(tx, invoiceId);
  const exponent = exponentOf(invoice.currency);
  const due = minorOf(invoice.amount, exponent) - minorOf(invoice.amount_paid, exponent);
  if (due <= 0n) return;
  const paidAt = new Date();
  const payment = await tx.payment.create({ data: { accountId: invoice.account_id, invoiceId, amount: formatMinor(due, exponent), currency: invoice.currency, method: PaymentMethod.other, paidAt } });
  await emit(tx, { type: 'payment.created', accountId: invoice.account_id, actor, object: payment });
  await tx.invoice.update({ where: { id: invoiceId }, data: { amountPaid: invoice.amount, paidAt } });
}

/**
 * Gives back at most what is left of a payment (all of it when `amount` is absent); the invoice
 * becomes refunded when nothing stays paid, else partial (a paid invoice moves to partial only so).
 */
export async function refundPayment(tx: Prisma.TransactionClient, payment: Pick<Payment, 'id' | 'invoiceId'>, amountAsked: number | null | undefined, actor: Actor): Promise<Payment> {
  const invoice = await locked(tx, payment.invoiceId);
  const current = await tx.payment.findUniqueOrThrow({ where: { id: payment.id } });
  if (!REFUNDABLE.includes(invoice.status)) throw conflict(`A ${invoice.status} invoice has nothing to refund`);
  const exponent = exponentOf(invoice.currency);
  const left = minorOf(current.amount, exponent) - minorOf(current.refundedAmount, exponent);
  if (left <= 0n) throw conflict('This payment is already refunded');
  const refunding = amountAsked == null ? left : minorIn(invoice.currency, amountAsked, 'amount');
  if (refunding > left) throw badInput({ amount: [`Exceeds what is left of the payment (${formatMinor(left, exponent)})`] });
  const refunded = await tx.payment.update({
    where: { id: payment.id },
    data: { refundedAmount: formatMinor(minorOf(current.refundedAmount, exponent) + refunding, exponent), refundedAt: new Date() },
  });
  await emit(tx, { type: 'payment.refunded', accountId: invoice.account_id, actor, object: refunded, previous: { refundedAmount: current.refundedAmount } });
  const stillPaid = minorOf(invoice.amount_paid, exponent) - refunding;
  await settle(tx, invoice, stillPaid, stillPaid === 0n ? InvoiceStatus.refunded : InvoiceStatus.partial, actor, null);
  return refunded;
}
