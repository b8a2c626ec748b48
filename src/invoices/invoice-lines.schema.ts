/** Invoice's money (docs/decisions.md §20): currency, lines, totals, amountPaid, amountDue, memo · InvoiceLine */
import { builder } from '../graphql/builder.js';
import { moneyOf } from '../graphql/scalars.js';
import { InvoiceRef } from './invoice.schema.js';
import { dueMinor, exponentOf, formatMinor, minorOf } from './money.js';

/** At most 100 lines per invoice (src/invoices/invoice-money.ts). */
export const LINES_PER_INVOICE = 100;

export const InvoiceLineRef = builder.prismaObject('InvoiceLine', {
  keyScope: 'INVOICES_READ',
  fields: (t) => ({
    id: t.exposeID('id'),
    position: t.exposeInt('position', { description: '0-based, in the order the lines were given' }),
    description: t.exposeString('description'),
    quantity: t.float({ resolve: (line) => moneyOf(line.quantity) }),
    unitPrice: t.float({ resolve: (line) => moneyOf(line.unitPrice) }),
    discountPercent: t.float({ resolve: (line) => moneyOf(line.discountPercent) }),
    taxRate: t.float({ resolve: (line) => moneyOf(line.taxRate) }),
    amount: t.float({ description: 'quantity × unitPrice less the discount, before tax', resolve: (line) => moneyOf(line.amount) }),
    tax: t.float({ resolve: (line) => moneyOf(line.tax) }),
  }),
});

builder.prismaObjectFields(InvoiceRef, (t) => ({
  currency: t.exposeString('currency', { description: 'ISO 4217, upper case' }),
  lines: t.relation('lines', { description: 'In position order; empty for an invoice made from amount alone', maxItems: LINES_PER_INVOICE, query: { orderBy: { position: 'asc' } } }),
  subtotal: t.float({
    description: 'The sum of the lines\' gross amounts; the amount of an invoice without lines',
    select: { amount: true, discountTotal: true, taxTotal: true, currency: true },
    // From total = subtotal − discountTotal + taxTotal, so a row written without lines (the demo, a
    // seed, the contract's amount-only create) shows subtotal = amount as §20 says.
    resolve: (invoice) => {
      const exponent = exponentOf(invoice.currency);
      const minor = (value: { toString(): string }) => minorOf(value, exponent);
      return Number(formatMinor(minor(invoice.amount) + minor(invoice.discountTotal) - minor(invoice.taxTotal), exponent));
    },
  }),
  discountTotal: t.float({ select: { discountTotal: true }, resolve: (invoice) => moneyOf(invoice.discountTotal) }),
  taxTotal: t.float({ select: { taxTotal: true }, resolve: (invoice) => moneyOf(invoice.taxTotal) }),
  total: t.float({ description: 'subtotal − discountTotal + taxTotal; the same as amount', select: { amount: true }, resolve: (invoice) => moneyOf(invoice.amount) }),
  amountPaid: t.float({ description: 'Payments less refunds', select: { amountPaid: true }, resolve: (invoice) => moneyOf(invoice.amountPaid) }),
  amountDue: t.float({
    description: 'total − amountPaid; 0 for a refunded or cancelled invoice, which is owed nothing',
    select: { amount: true, amountPaid: true, currency: true, status: true },
    // In minor units: 0.3 − 0.1 is 0.2 here, not 0.19999999999999998.
    resolve: (invoice) => {
      const exponent = exponentOf(invoice.currency);
      return Number(formatMinor(dueMinor(invoice.status, minorOf(invoice.amount, exponent), minorOf(invoice.amountPaid, exponent)), exponent));
    },
  }),
  memo: t.exposeString('memo', { nullable: true }),
  paidAt: t.expose('paidAt', { type: 'DateTime', nullable: true, description: 'When nothing was left due' }),
}));
