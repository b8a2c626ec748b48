// What the client's page and the PDF show of an invoice (docs/decisions.md §20): one definition,
// read once, so the two never disagree. Money is exact decimal text in the currency's minor units
// (money.ts), never a binary float; display formatting works on that text alone.
import { CONTACT_NAME, fullName } from '../contacts/contact.model.js';
import type { InvoiceStatus, Prisma } from '../generated/prisma/client.js';
import { formatDate } from '../dates.js';
import { exponentOf, formatMinor, minorOf, dueMinor, priceLines } from './money.js';

export type InvoiceDocumentLine = {
  description: string;
  /** Decimal text as stored: "2", "1.5" */
  quantity: string;
  unitPrice: string;
  discountPercent: string;
  taxRate: string;
  /** The gross less the discount, before tax */
  amount: string;
  tax: string;
};

export type InvoiceDocument = {
  accountName: string;
  invoiceNumber: string;
  status: InvoiceStatus;
  currency: string;
  /** YYYY-MM-DD (UTC) of when it was sent; null for one moved on by hand without sendInvoice */
  issuedOn: string | null;
  dueOn: string;
  paidOn: string | null;
  /** The contact's "first last"; null without one (or once erased: erasure unlinks the invoice) */
  contactName: string | null;
  lines: InvoiceDocumentLine[];
  subtotal: string;
  discountTotal: string;
  taxTotal: string;
  total: string;
  amountPaid: string;
  amountDue: string;
  memo: string | null;
  /** `invoice-<number>.pdf`, safe in a Content-Disposition header */
  fileName: string;
};

const SELECT = {
  invoiceNumber: true,
  status: true,
  currency: true,
  amount: true,
  discountTotal: true,
  taxTotal: true,
  amountPaid: true,
  memo: true,
  issuedAt: true,
  dueDate: true,
  paidAt: true,
  account: { select: { name: true } },
  contact: { select: CONTACT_NAME },
  lines: {
    orderBy: { position: 'asc' },
    select: { description: true, quantity: true, unitPrice: true, discountPercent: true, taxRate: true, amount: true, tax: true },
  },
} satisfies Prisma.InvoiceSelect;

type Row = Prisma.InvoiceGetPayload<{ select: typeof SELECT }>;

/** The invoice's document by its id or its page token; null when there is none. Reads only. */
export async function loadInvoiceDocument(db: Prisma.TransactionClient, where: { id: string } | { pageToken: string }): Promise<InvoiceDocument | null> {
  const row = await db.invoice.findUnique({ where: where as Prisma.InvoiceWhereUniqueInput, select: SELECT });
  return row ? invoiceDocumentOf(row) : null;
}

/** Decimal text without trailing zeros after the point ("1.500" -> "1.5", "2.000" -> "2"). */
const plain = (value: { toString(): string }): string => {
  const text = value.toString();
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
};

export function invoiceDocumentOf(row: Row): InvoiceDocument {
  const exponent = exponentOf(row.currency);
  const minor = (value: { toString(): string }) => minorOf(value, exponent);
  const money = (units: bigint) => formatMinor(units, exponent);
  const total = minor(row.amount);
  const paid = minor(row.amountPaid);
  const contactName = row.contact ? fullName(row.contact) : null;
  return {
    accountName: row.account.name,
    invoiceNumber: row.invoiceNumber,
    status: row.status,
    currency: row.currency,
    issuedOn: row.issuedAt ? formatDate(row.issuedAt) : null,
    dueOn: formatDate(row.dueDate),
    paidOn: row.paidAt ? formatDate(row.paidAt) : null,
    contactName: contactName || null,
    lines: row.lines.map((line) => ({
      description: line.description,
      quantity: plain(line.quantity),
      unitPrice: money(minor(line.unitPrice)),
      discountPercent: plain(line.discountPercent),
      taxRate: plain(line.taxRate),
      amount: money(minor(line.amount)),
      tax: money(minor(line.tax)),
    })),
    // As Invoice.subtotal: from total = subtotal − discountTotal + taxTotal, so an invoice made from `amount` alone shows subtotal = total.
    subtotal: money(total + minor(row.discountTotal) - minor(row.taxTotal)),
    discountTotal: money(minor(row.discountTotal)),
    taxTotal: money(minor(row.taxTotal)),
    total: money(total),
    amountPaid: money(paid),
    amountDue: money(dueMinor(row.status, total, paid)),
    memo: row.memo,
    fileName: pdfFileName(row.invoiceNumber),
  };
}

/**
 * A line's columns as the page and the PDF show them (docs/decisions.md §26): its gross
 * (`quantity × unitPrice`, the "Amount" that the lines add up to the subtotal with) and its discount
 * as money (they add up to the discount total), by the same rule that priced it (money.ts).
 */
export function lineColumns(line: InvoiceDocumentLine, currency: string): { gross: string; discount: string } {
  const { totals } = priceLines(
    [{ description: '', quantity: Number(line.quantity), unitPrice: Number(line.unitPrice), discountPercent: Number(line.discountPercent), taxRate: 0 }],
    currency,
  );
  return { gross: totals.subtotal, discount: totals.discountTotal };
}

/** A discount as the client reads it: "-12.50", or "0.00" for none. */
export const negated = (amount: string): string => (/^-?0(\.0+)?$/.test(amount) ? amount : `-${amount}`);

/** The totals under the lines, as the page and the PDF show them: label, amount, and whether it stands out. */
export const totalsOf = (doc: InvoiceDocument): [label: string, amount: string, strong: boolean][] => [
  ['Subtotal', doc.subtotal, false],
  ['Discount', negated(doc.discountTotal), false],
  ['Tax', doc.taxTotal, false],
  ['Total', doc.total, true],
  ['Paid', doc.amountPaid, false],
  ['Amount due', doc.amountDue, true],
];

/** `invoice-<number>.pdf`; characters a header's quoted file name cannot carry become `_`. */
export const pdfFileName = (invoiceNumber: string): string => `invoice-${invoiceNumber.replace(/[^A-Za-z0-9._-]/g, '_')}.pdf`;

/** "1234567.5" -> "1,234,567.50 USD"-style display: digits grouped by three, the code after. Text only, no float. */
export function displayMoney(amount: string, currency: string): string {
  const negative = amount.startsWith('-');
  const [whole = '0', fraction] = (negative ? amount.slice(1) : amount).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '-' : ''}${grouped}${fraction ? `.${fraction}` : ''} ${currency}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "2026-11-26" -> "26 Nov 2026": unambiguous in any reader's locale. */
export function displayDay(day: string): string {
  const [year, month, date] = day.split('-');
  return `${Number(date)} ${MONTHS[Number(month) - 1]} ${year}`;
}

/** The status as the client reads it. */
export const STATUS_LABELS: Record<InvoiceStatus, string> = {
  draft: 'Draft',
  sent: 'Open',
  viewed: 'Open',
  partial: 'Partially paid',
  paid: 'Paid',
  overdue: 'Overdue',
  cancelled: 'Cancelled',
  refunded: 'Refunded',
};
