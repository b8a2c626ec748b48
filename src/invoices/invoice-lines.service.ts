// An invoice's lines and the money they make (docs/decisions.md §20): writing a priced invoice's
// lines, and a draft's money after an update, judged against what it stores, so an update's money
// problems come in the same 400 as its other fields' (the `linked` rule of updateInvoice).
import type { Query } from '../writes/update.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { ErrorDetails } from '../errors.js';
import { linkedRows } from '../deals/deal.service.js';
import { customValueProblems } from '../writes/custom-values.js';
import { INVOICE_MODEL } from './invoice.model.js';
import { detailsOf, moneyProblems, type MoneyInput } from './invoice-money.js';
import { isCurrency, type LineInput, type PricedLine } from './money.js';

/** Whether a resolver's query reads the lines (written after the invoice row, so read after them). */
export const readsLines = (query: Query): boolean => Boolean((query.include as { lines?: unknown } | undefined)?.lines ?? (query.select as { lines?: unknown } | undefined)?.lines);

/** The query without its lines: the invoice row is written (and read back) before them. */
export const withoutLines = (query: Query): Query => {
  if (!readsLines(query)) return query;
  const strip = (part: object | undefined) => part && Object.fromEntries(Object.entries(part).filter(([key]) => key !== 'lines'));
  return { ...(query.include ? { include: strip(query.include) } : {}), ...(query.select ? { select: strip(query.select) } : {}) };
};

/** Stores an invoice's priced lines (after removing any it had: an update replaces every line). */
export async function writeLines(tx: Prisma.TransactionClient, accountId: string, invoiceId: string, priced: PricedLine[], replace = false) {
  if (replace) await tx.invoiceLine.deleteMany({ where: { accountId, invoiceId } });
  if (priced.length === 0) return;
  // String(number) is the number's shortest decimal text: NUMERIC stores exactly what the client sent.
  const data = priced.map((l) => ({ accountId, invoiceId, position: l.position, description: l.description, quantity: String(l.quantity), unitPrice: String(l.unitPrice), discountPercent: String(l.discountPercent), taxRate: String(l.taxRate), amount: l.amount, tax: l.tax }));
  await tx.invoiceLine.createMany({ data });
}

export type MoneyChange = { currency?: string; amount?: number | null; lines?: LineInput[] | null };

/**
 * A draft's money after an update touching currency, amount or lines (else null): new lines replace
 * every line, an `amount` replaces the lines, a new currency re-prices what is kept.
 */
export async function moneyAfter(db: Prisma.TransactionClient, id: string, change: MoneyChange): Promise<MoneyInput | null> {
  if (change.currency === undefined && change.amount === undefined && change.lines === undefined) return null;
  const now = await db.invoice.findUnique({ where: { id }, select: { currency: true, amount: true, lines: { orderBy: { position: 'asc' } } } });
  if (!now) return null; // gone meanwhile: the write answers NOT_FOUND
  const kept = now.lines.map((l) => ({ description: l.description, quantity: Number(l.quantity), unitPrice: Number(l.unitPrice), discountPercent: Number(l.discountPercent), taxRate: Number(l.taxRate) }));
  const touched = change.amount != null || change.lines != null;
  return {
    currency: change.currency ?? now.currency,
    amount: touched ? (change.amount ?? null) : kept.length ? null : Number(now.amount),
    lines: touched ? (change.lines ?? null) : kept.length ? kept : null,
  };
}

/**
 * updateInvoice's `linked` rule: the contact's link, and the money the update would leave the draft
 * with, judged in its (new or stored) currency. Reads the fields as sent (they passed their form,
 * not yet transformed): a currency that failed its form is judged by the stored one.
 */
export async function updateProblems(fields: Record<string, unknown>, db: Prisma.TransactionClient, accountId: string, _ctx: unknown, target: { id?: string } | null): Promise<ErrorDetails> {
  const details = { ...(await linkedRows(fields, db, accountId)), ...(await customValueProblems(db, accountId, INVOICE_MODEL, fields.customFields, 'update')) };
  if (!target?.id) return details;
  const code = typeof fields.currency === 'string' ? fields.currency.trim().toUpperCase() : undefined;
  const change = { currency: code && isCurrency(code) ? code : undefined, amount: fields.amount as number | null | undefined, lines: fields.lines as LineInput[] | null | undefined };
  const money = await moneyAfter(db, target.id, change);
  return money ? { ...detailsOf(moneyProblems(money)), ...details } : details;
}
