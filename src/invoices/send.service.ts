import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { InvoiceStatus, type Invoice, type Prisma } from '../generated/prisma/client.js';
import { badInput, conflict } from '../errors.js';
import { emit } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { optionalEmail, uuid } from '../validation.js';

// docs/decisions.md §20 "Sending": sendInvoice issues a draft (sent, issuedAt, its page token) and
// e-mails its link through the mail outbox (invoice_mails, delivered by mail-outbox.ts after the commit).

// A blank `to` is no address, as every optional text (docs/decisions.md §4): the contact's is used.
export const sendInvoiceArgs = z.object({ id: uuid, to: optionalEmail });
export type SendInvoiceArgs = z.output<typeof sendInvoiceArgs>;

/** Already sent: a send mails again and changes nothing else. */
export const SENT: InvoiceStatus[] = [InvoiceStatus.sent, InvoiceStatus.viewed, InvoiceStatus.partial, InvoiceStatus.overdue];

export const NO_ADDRESS = "Required: the invoice's contact has no e-mail address";

/** 128 random bits, base64url (22 characters): the client's page token, unrelated to the id. */
export const newPageToken = (): string => randomBytes(16).toString('base64url');

/** The client's page of a token (served by the page's own route, /i/{token}). */
export const hostedUrlOf = (publicUrl: string, token: string): string => `${publicUrl}/i/${token}`;

/** What a draft gains when it is issued (sendInvoice, or a manual move to sent). */
export const issued = () => ({ issuedAt: new Date(), pageToken: newPageToken() });

type Locked = { id: string; account_id: string; status: InvoiceStatus; page_token: string | null; contact_email: string | null };

/**
 * Sends the invoice in the caller's transaction. A draft becomes `sent` (issuedAt, page token) with
 * its invoice.status_changed; a sent one (SENT) keeps its state and is mailed again; any other is
 * CONFLICT. With mail (`mailing`), the mail goes to `to`, else the contact's e-mail (neither: a 400
 * on `to`), as an outbox row committed with the send; `invoice.sent` says where (`emailed_to`, null
 * without mail). Without mail a second send changes nothing and emits nothing.
 */
export async function sendInvoice(tx: Prisma.TransactionClient, id: string, to: string | null | undefined, actor: Actor, mailing: boolean): Promise<void> {
  // Locked first: two sends of one draft issue it once (the second is a resend).
  const [invoice] = await tx.$queryRaw<Locked[]>`
    SELECT i.id::text AS id, i.account_id::text AS account_id, i.status::text AS status, i.page_token, c.email AS contact_email
    FROM invoices i LEFT JOIN contacts c ON c.account_id = i.account_id AND c.id = i.contact_id
    WHERE i.id = ${id}::uuid FOR UPDATE OF i`;
  if (!invoice) throw new Error(`sendInvoice: invoice ${id} vanished under its lock`);
  const draft = invoice.status === InvoiceStatus.draft;
  if (!draft && !SENT.includes(invoice.status)) throw conflict(`A ${invoice.status} invoice is not sent; only drafts and invoices already sent (sent, viewed, partial, overdue) are`);
  const address = to ?? invoice.contact_email;
  if (mailing && !address) throw badInput({ to: [NO_ADDRESS] });
  if (!draft && !mailing && invoice.page_token) return;
  const accountId = invoice.account_id;
  let object: Invoice;
  if (draft) {
    object = await tx.invoice.update({ where: { id }, data: { status: InvoiceStatus.sent, ...issued() } });
    await emit(tx, { type: 'invoice.status_changed', accountId, actor, object, previous: { status: InvoiceStatus.draft } });
  } else if (!invoice.page_token) {
    // Sent before invoices had pages (or moved on by hand before sendInvoice existed): it gets its page now.
    object = await tx.invoice.update({ where: { id }, data: { pageToken: newPageToken() } });
  } else {
    object = await tx.invoice.findUniqueOrThrow({ where: { id } });
  }
  const emailedTo = mailing ? address : null;
  if (emailedTo) await tx.invoiceMail.create({ data: { accountId, invoiceId: id, to: emailedTo } });
  await emit(tx, { type: 'invoice.sent', accountId, actor, object, extra: { emailed_to: emailedTo } });
}
