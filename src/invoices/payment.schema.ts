/** Mutation.recordPayment · refundPayment · Invoice.payments · Query.invoicePayments · Payment (docs/decisions.md §20) */
import { READS_BEYOND_CONTRACT, WRITES } from '../graphql/limits.js';
import { recordPageField } from '../graphql/page.js';
import { builder } from '../graphql/builder.js';
import type { Collection } from '../graphql/collection.js';
import { defineCollection, orderInputOf } from '../graphql/connection.js';
import { moneyOf } from '../graphql/scalars.js';
import { userActor } from '../events/types.js';
import { checked } from '../graphql/rules.js';
import { PaymentMethod, type Prisma } from '../generated/prisma/client.js';
import { InvoiceRef } from './invoice.schema.js';
import { recordPayment, recordPaymentArgs, refundPayment, refundPaymentArgs, type RecordPaymentArgs, type RefundPaymentArgs } from './payment.service.js';

/** Payments are invoice writes: 30 a minute per caller (docs/decisions.md §18). */

export const PaymentMethodEnum = builder.enumType(PaymentMethod, { name: 'PaymentMethod' });

export const PaymentRef = builder.prismaObject('Payment', {
  keyScope: 'INVOICES_READ',
  fields: (t) => ({
    id: t.exposeID('id'),
    invoiceId: t.exposeID('invoiceId'),
    invoice: t.relation('invoice'),
    amount: t.float({ resolve: (payment) => moneyOf(payment.amount) }),
    currency: t.exposeString('currency'),
    method: t.expose('method', { type: PaymentMethodEnum }),
    reference: t.exposeString('reference', { nullable: true }),
    paidAt: t.expose('paidAt', { type: 'DateTime' }),
    refundedAmount: t.float({ resolve: (payment) => moneyOf(payment.refundedAmount) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

/** An invoice's payments (docs/connections.md): newest first like every list, CREATED_AT ASC for a statement's order; (invoice_id, created_at, id) serves it. */
const payments = {
  name: 'Payment',
  model: 'Payment',
  table: 'payments',
  json: true,
  orders: { CREATED_AT: { column: 'created_at', type: 'timestamptz' } },
  orderInput: orderInputOf('Payment', ['CREATED_AT']),
} satisfies Collection;

builder.prismaObjectField(InvoiceRef, 'payments', defineCollection(payments, PaymentRef)('invoice_id', "The invoice's payments, newest first unless orderBy says otherwise"));

/**
 * Query.invoicePayments: REST's GET /api/v1/invoices/{id}/payments, the invoice's payments as every
 * list's page (docs/decisions.md §26); an unknown invoice or another account's is NOT_FOUND.
 */
recordPageField('invoicePayments', payments, {
  by: 'invoice_id',
  idArg: 'invoiceId',
  scope: 'INVOICES_READ',
  limit: READS_BEYOND_CONTRACT,
  description: "The invoice's payments as a page (REST's list envelope); NOT_FOUND for an invoice unknown or not the caller's",
  target: (id, ctx) => ctx.db.invoice.findUnique({ where: { id }, select: { id: true, accountId: true } }),
});

const RecordPaymentInput = builder.inputType('RecordPaymentInput', {
  fields: (t) => ({
    amount: t.float({ required: true, description: 'Greater than 0, at most amountDue, in the minor units of the invoice currency' }),
    method: t.field({ type: PaymentMethodEnum, required: true }),
    reference: t.string({ description: 'At most 255 characters' }),
    paidAt: t.field({ type: 'DateTime', description: 'Now when absent' }),
  }),
});

const invoiceOf = ({ invoiceId }: RecordPaymentArgs, ctx: { db: Prisma.TransactionClient }) =>
  ctx.db.invoice.findUnique({ where: { id: invoiceId }, select: { id: true, accountId: true } });
const paymentOf = ({ paymentId }: RefundPaymentArgs, ctx: { db: Prisma.TransactionClient }) =>
  ctx.db.payment.findUnique({ where: { id: paymentId }, select: { id: true, accountId: true, invoiceId: true } });

builder.mutationFields((t) => ({
  recordPayment: t.prismaField({
    type: 'Payment',
    description: 'On a sent, viewed, partial or overdue invoice (else CONFLICT); the invoice becomes paid when nothing is due, else partial.',
    args: { invoiceId: t.arg.id({ required: true }), input: t.arg({ type: RecordPaymentInput, required: true }) },
    rules: { access: 'member', scope: 'INVOICES_WRITE', input: recordPaymentArgs, target: invoiceOf, hidden: 'not-found', line: (a: RecordPaymentArgs) => `row:${a.invoiceId}`, limit: WRITES, idempotent: true },
    // One statement, without BEGIN and COMMIT (payment.service.ts); the answer is the row it wrote,
    // and relations the answer asks for are read after it (REST's asks for none).
    resolve: (_query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<RecordPaymentArgs>(info);
      return write((db) => recordPayment(db, input.invoiceId, input.input, userActor(viewer)), { oneStatement: true });
    },
  }),
  refundPayment: t.prismaField({
    type: 'Payment',
    description: 'Gives back at most what is left of the payment (all of it when amount is absent); the invoice becomes refunded when nothing stays paid, else partial.',
    args: { paymentId: t.arg.id({ required: true }), amount: t.arg.float() },
    rules: { access: 'member', scope: 'INVOICES_WRITE', input: refundPaymentArgs, target: paymentOf, hidden: 'not-found', line: (a: RefundPaymentArgs) => `row:${a.paymentId}`, limit: WRITES, idempotent: true },
    resolve: async (query, _root, _args, _ctx, info) => {
      const { viewer, input, target, write } = checked<RefundPaymentArgs, { id: string; invoiceId: string }>(info);
      return write(async (tx) => {
        const refunded = await refundPayment(tx, target, input.amount, userActor(viewer));
        return Object.keys(query).length ? tx.payment.findUniqueOrThrow({ ...query, where: { id: input.paymentId } }) : refunded;
      });
    },
  }),
}));
