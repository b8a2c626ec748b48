import { z } from 'zod';
import { InvoiceStatus, PaymentMethod, Prisma, type Payment } from '../generated/prisma/client.js';
import { badInput, conflict, MESSAGES, notFound } from '../errors.js';
import { emit, wakeSource } from '../events/emit.js';
import { outbox } from '../events/outbox.js';
import { eventId } from '../events/ids.js';
import { recordJsonSql } from '../events/serialize.js';
import { fromColumns, newId } from '../writes/set-write.js';
import type { Actor } from '../events/types.js';
import { optionalText, uuid } from '../validation.js';
import { together } from '../db/together.js';
import { isDataError } from '../db/sql-state.js';
import { amount } from './invoice-money.js';
import { decimalsOf, exponentOf, EXPONENTS_JSON, formatMinor, minorOf, scaled } from './money.js';

// docs/decisions.md §20 "Payments move the invoice": every move locks the invoice (FOR UPDATE) before
// it judges the money, so concurrent payments queue on its row and never take more than is due.

const PAYABLE: InvoiceStatus[] = [InvoiceStatus.sent, InvoiceStatus.viewed, InvoiceStatus.partial, InvoiceStatus.overdue];
const REFUNDABLE: InvoiceStatus[] = [InvoiceStatus.paid, InvoiceStatus.partial, InvoiceStatus.overdue];

/** The earliest `paidAt` taken: money received before 2000 is a typo, not a payment (docs/decisions.md §26). */
export const PAID_AT_MIN = new Date('2000-01-01T00:00:00.000Z');
/** How far ahead of now `paidAt` may be: a day, for clocks and time zones, never a payment not yet received. */
export const PAID_AT_AHEAD_MS = 24 * 60 * 60 * 1000;
export const PAID_AT_MESSAGE = 'Must be between 2000-01-01T00:00:00Z and one day after now';
const paidAt = z.date().refine((date) => date >= PAID_AT_MIN && date.getTime() <= Date.now() + PAID_AT_AHEAD_MS, PAID_AT_MESSAGE);

export const recordPaymentArgs = z.object({
  invoiceId: uuid,
  input: z.object({
    amount: amount.refine((value) => value > 0, 'Must be greater than 0'),
    method: z.enum(PaymentMethod),
    reference: optionalText(255),
    paidAt: paidAt.nullish(),
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

/**
 * Records money received: the invoice becomes paid (with paidAt) when nothing is due, else partial.
 * ONE statement (BENCHMARKS.md, "Invoices and payments"): it locks the invoice (FOR UPDATE: a
 * concurrent payment's statement waits for this one's commit and then reads what it left), judges
 * the payment against what is locked (a payable status, no more decimals than the currency has, at
 * most what is due), and only then writes the payment, the invoice's new amountPaid and status,
 * payment.created, invoice.status_changed when the status moves, and their webhook messages. A
 * refused payment writes nothing, and the locked row says which problem refused it.
 * Outside a transaction, payments that arrive while one is written share the next statement
 * (src/db/together.ts; docs/scaling.md "Statements shared by concurrent requests").
 */
export async function recordPayment(db: Prisma.TransactionClient, invoiceId: string, input: RecordPaymentArgs['input'], actor: Actor, method = input.method): Promise<Payment> {
  // Two ids of one millisecond, sorted: payment.created comes before the status move in the feed, as it happened.
  const [paymentEvent, statusEvent] = [eventId(), eventId()].sort() as [string, string];
  const ask: Ask = {
    // String(number) is the number's shortest decimal text: NUMERIC reads exactly what the client sent.
    invoice_id: invoiceId, paying: String(input.amount), method, reference: input.reference ?? null, paid_at: (input.paidAt ?? new Date()).toISOString(),
    payment_id: newId(), payment_event: paymentEvent, status_event: statusEvent,
  };
  // One payment's own error (a constraint its row breaks) fails a shared statement: each is then written again alone, to find whose.
  const answer = '$connect' in db
    ? await together(db, `payment:${actor.type}:${actor.id}`, ask, (asks) => writePayments(db, asks, actor), { ownError: isDataError })
    : (await writePayments(db, [ask], actor))[0]!;
  if (answer.payment) return fromColumns('Payment', JSON.parse(answer.payment) as Record<string, unknown>) as unknown as Payment;
  // Refused: the same checks, in their order, of the invoice as the statement found it locked.
  if (!answer.invoice) throw notFound(MESSAGES.notFound);
  const invoice = JSON.parse(answer.invoice) as Pick<Locked, 'status' | 'amount' | 'amount_paid' | 'currency'>;
  if (!PAYABLE.includes(invoice.status)) throw conflict(`A ${invoice.status} invoice takes no payment`);
  const exponent = exponentOf(invoice.currency);
  const due = minorOf(invoice.amount, exponent) - minorOf(invoice.amount_paid, exponent);
  if (minorIn(invoice.currency, input.amount, 'amount') > due) throw badInput({ amount: [`Exceeds the amount due (${formatMinor(due, exponent)})`] });
  throw new Error(`recordPayment: the payment on ${invoiceId} was refused for no reason its invoice shows`);
}

/** A payment as its statement takes it (jsonb_to_recordset), with the ids it will write. */
type Ask = {
  invoice_id: string; paying: string; method: PaymentMethod; reference: string | null; paid_at: string;
  payment_id: string; payment_event: string; status_event: string;
};
/** The payment written (null when refused), and the invoice as the statement found it locked (null when unknown). */
type Written = { invoice: string | null; payment: string | null };

/**
 * Each ask's answer, in order. Asks on different invoices go in one statement; a second ask on the
 * same invoice goes in the next, so that it judges what the first left.
 */
async function writePayments(db: Prisma.TransactionClient, asks: Ask[], actor: Actor): Promise<Written[]> {
  const answers: Written[] = [];
  let left = asks.map((ask, i) => ({ ask, i }));
  while (left.length > 0) {
    const invoices = new Set<string>();
    const round = left.filter(({ ask }) => !invoices.has(ask.invoice_id) && invoices.add(ask.invoice_id));
    const written = await paymentsStatement(db, round.map(({ ask }) => ask), actor);
    round.forEach(({ i }, j) => (answers[i] = written[j]!));
    left = left.filter((x) => !round.includes(x));
  }
  return answers;
}

/** The statement of recordPayment for asks on distinct invoices, which it locks in the order of their ids. */
async function paymentsStatement(db: Prisma.TransactionClient, asks: Ask[], actor: Actor): Promise<Written[]> {
  const now = new Date();
  const wake = wakeSource(db);
  const answers = await db.$queryRaw<Written[]>`
    WITH ask AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(asks.map((ask, n) => ({ ...ask, n })))}::jsonb) AS a (
        n int, invoice_id uuid, paying numeric, method payment_method, reference text, paid_at timestamptz, payment_id uuid, payment_event uuid, status_event uuid)),
    inv AS (
      SELECT id, account_id, status, amount, amount_paid, currency FROM invoices WHERE id IN (SELECT invoice_id FROM ask) ORDER BY id FOR UPDATE),
    ok AS (
      SELECT ask.*, inv.account_id, inv.status, inv.currency, inv.amount - inv.amount_paid AS due FROM ask JOIN inv ON inv.id = ask.invoice_id
      WHERE inv.status::text = ANY (${PAYABLE}::text[])
        AND round(ask.paying, coalesce((${EXPONENTS_JSON}::jsonb ->> inv.currency)::int, 2)) = ask.paying
        AND ask.paying <= inv.amount - inv.amount_paid),
    pay AS (
      INSERT INTO payments (id, account_id, invoice_id, amount, currency, method, reference, paid_at)
      SELECT ok.payment_id, ok.account_id, ok.invoice_id, ok.paying, ok.currency, ok.method, ok.reference, ok.paid_at FROM ok
      RETURNING *),
    upd AS (
      UPDATE invoices i SET amount_paid = i.amount_paid + ok.paying,
        status = (CASE WHEN ok.paying = ok.due THEN 'paid' ELSE 'partial' END)::invoice_status,
        paid_at = CASE WHEN ok.paying = ok.due THEN ok.paid_at END, updated_at = ${now}::timestamptz
      FROM ok WHERE i.id = ok.invoice_id
      RETURNING i.*, ok.status AS previous_status, ok.status_event),
    ${outbox(Prisma.sql`
      SELECT ok.payment_event, pay.account_id, 'payment.created', ${now}::timestamptz, ${actor.type}, ${actor.id}, pay.id, NULL::uuid,
             jsonb_build_object('object', ${recordJsonSql('payment', 'Payment', 'pay')})
      FROM pay JOIN ok ON ok.payment_id = pay.id
      UNION ALL
      SELECT upd.status_event, upd.account_id, 'invoice.status_changed', ${now}::timestamptz, ${actor.type}, ${actor.id}, upd.id, upd.contact_id,
             jsonb_build_object('object', ${recordJsonSql('invoice', 'Invoice', 'upd')}, 'previous', jsonb_build_object('status', upd.previous_status))
      FROM upd WHERE upd.status <> upd.previous_status`)}
    SELECT (SELECT json_build_object('status', status, 'amount', amount::text, 'amount_paid', amount_paid::text, 'currency', currency)::text FROM inv WHERE inv.id = ask.invoice_id) AS invoice,
           (SELECT to_json(pay)::text FROM pay WHERE pay.id = ask.payment_id) AS payment ${wake.column}
    FROM ask ORDER BY ask.n`;
  wake.then();
  return answers;
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
 * A manual move to refunded (setInvoiceStatus) gives back what is left of every payment, each with
 * its payment.refunded, so amountPaid is 0 and revenue no longer counts it (docs/decisions.md §26).
 */
export async function refundEveryPayment(tx: Prisma.TransactionClient, invoiceId: string, actor: Actor): Promise<void> {
  const invoice = await locked(tx, invoiceId);
  const payments = await tx.payment.findMany({ where: { invoiceId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
  const refundedAt = new Date();
  for (const payment of payments) {
    if (payment.refundedAmount.gte(payment.amount)) continue;
    const refunded = await tx.payment.update({ where: { id: payment.id }, data: { refundedAmount: payment.amount, refundedAt } });
    await emit(tx, { type: 'payment.refunded', accountId: invoice.account_id, actor, object: refunded, previous: { refundedAmount: payment.refundedAmount } });
  }
  await tx.invoice.update({ where: { id: invoiceId }, data: { amountPaid: 0, paidAt: null } });
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
