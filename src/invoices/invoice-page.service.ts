// The client's page (docs/decisions.md §20): which invoices a page token shows, and what a view does.
import { InvoiceStatus, type Prisma } from '../generated/prisma/client.js';
import { emit } from '../events/emit.js';
import { VISITOR } from '../events/types.js';
import { assertTransition, INVOICE_MACHINE } from '../state-machines.js';
import { loadInvoiceDocument, type InvoiceDocument } from './invoice-document.js';

/** A draft has no page yet; a cancelled invoice's page is gone (the same 404 as an unknown token). */
export const showableByToken = (status: InvoiceStatus): boolean => status !== InvoiceStatus.draft && status !== InvoiceStatus.cancelled;

type Write = <T>(work: (tx: Prisma.TransactionClient) => Promise<T>) => Promise<T>;

/**
 * The page's document for `token` (null: none to show). Only the first view of a `sent` invoice
 * writes: every later view, and every view of any other status, is a read.
 */
export async function showInvoicePage(db: Prisma.TransactionClient, token: string, write: Write): Promise<InvoiceDocument | null> {
  const document = await loadInvoiceDocument(db, { pageToken: token });
  if (!document || !showableByToken(document.status)) return null;
  if (document.status !== InvoiceStatus.sent) return document;
  await write((tx) => markViewed(tx, token));
  // Whoever moved it (this view or a concurrent one), the page shows the invoice as it is now.
  return loadInvoiceDocument(db, { pageToken: token });
}

/**
 * sent -> viewed, with `invoice.viewed` and `invoice.status_changed` (actor visitor). The status is
 * the UPDATE's condition, so of concurrent first views (any number of instances) exactly one moves
 * it and emits; the others find nothing to move. Answers whether this one did.
 */
export async function markViewed(tx: Prisma.TransactionClient, token: string): Promise<boolean> {
  assertTransition(INVOICE_MACHINE, InvoiceStatus.sent, InvoiceStatus.viewed);
  const [moved] = await tx.invoice.updateManyAndReturn({ where: { pageToken: token, status: InvoiceStatus.sent }, data: { status: InvoiceStatus.viewed } });
  if (!moved) return false;
  await emit(tx, { type: 'invoice.viewed', accountId: moved.accountId, actor: VISITOR, object: moved });
  await emit(tx, { type: 'invoice.status_changed', accountId: moved.accountId, actor: VISITOR, object: moved, previous: { status: InvoiceStatus.sent } });
  return true;
}
