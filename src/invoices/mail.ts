// The invoice mail itself (docs/decisions.md §20 "Sending"): what it says and the SMTP transport
// that sends it (nodemailer). The outbox (mail-outbox.ts) decides when, and records the outcome.
import { createTransport } from 'nodemailer';
import type { MailConfig } from '../config.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { escapeHtml } from '../forms/form-page.js';
import { displayDay, displayMoney, loadInvoiceDocument } from './invoice-document.js';
import type { PdfPool } from '../deps.js';
import type { Logger } from '../logger.js';
import { invoicePdfFor } from './invoice-pdf-cache.js';
import { hostedUrlOf } from './send.service.js';

/** One mail of the outbox: the invoice and where it goes; a workflow's mail has no invoice, its subject and bodies instead. */
export type OutboxMail = { account_id: string; id: string; invoice_id: string | null; to: string; subject?: string | null; text_body?: string | null; html_body?: string | null };

/** A send that fails for good (the server refused the recipient or the message: 5xx); others are retried. */
export class PermanentMailError extends Error {}

// Each well under the claim's lease (MAIL_LEASE_MS), so a send ends before it passes; and short, as a
// webhook's 10 s: the worker's step (and with it the live events' relay) waits for the sends under way.
const TIMEOUTS = { connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000 };

export type Mailer = { send(mail: OutboxMail): Promise<void>; close(): void };

/**
 * Sends invoice mail through SMTP_URL from MAIL_FROM: one connection per mail (STARTTLS when the
 * server offers it), the link to the client's page on `publicUrl` in the text.
 */
export function createMailer(db: PrismaClient, config: MailConfig, publicUrl: string, pdf: PdfOptions = {}): Mailer {
  const transport = createTransport({ url: config.smtpUrl, ...TIMEOUTS });
  return {
    async send(mail) {
      const message = mail.invoice_id === null ? { subject: mail.subject ?? '', text: mail.text_body ?? '', html: mail.html_body ?? undefined } : await composeMail(db, mail, publicUrl, pdf);
      if (!message) throw new PermanentMailError('The invoice has no page (not sent)');
      try {
        await transport.sendMail({ from: config.from, to: mail.to, ...message, messageId: `<invoice-mail-${mail.id}@${domainOf(config.from)}>` });
      } catch (err) {
        const { code, responseCode } = err as { code?: string; responseCode?: number };
        // A refused recipient or message is refused again; a connection, a 4xx or a login may recover.
        if ((code === 'EENVELOPE' || code === 'EMESSAGE') && responseCode !== undefined && responseCode >= 500) throw new PermanentMailError(reasonOf(err));
        throw err;
      }
    },
    close: () => transport.close(),
  };
}

const domainOf = (from: string) => /@([^\s<>@]+)>?$/.exec(from)?.[1] ?? 'localhost';

/** What a failed attempt records: the server's answer or the error's message, never the mail. */
export const reasonOf = (err: unknown): string => {
  const { response, message } = err as { response?: string; message?: string };
  return String(response ?? message ?? err).slice(0, 500);
};

/** The PDF pool the attachment is drawn in (docs/decisions.md §26; a full queue fails the attempt, retried later), and where a PDF not kept is said. */
export type PdfOptions = { pdfs?: PdfPool; log?: Pick<Logger, 'warn'> };

/**
 * The mail from the invoice as it is now: its subject, its text with the page's link, and the PDF
 * (drawn from the document the page shows, kept per version: invoice-pdf-cache.ts) to attach; null
 * when it has no page.
 */
export async function composeMail(db: PrismaClient, mail: OutboxMail, publicUrl: string, pdf: PdfOptions = {}) {
  const [page, document] = await Promise.all([
    db.invoice.findUnique({ where: { accountId_id: { accountId: mail.account_id, id: mail.invoice_id! } }, select: { pageToken: true } }),
    loadInvoiceDocument(db, { id: mail.invoice_id! }),
  ]);
  if (!page?.pageToken || !document) return null;
  // The same facts in both parts: the HTML part's values all pass through escapeHtml (an account or
  // contact name is whatever its owner typed), and it links nothing but the invoice's page.
  const greeting = document.contactName ? `Hello ${document.contactName},` : 'Hello,';
  const summary = (say: (text: string) => string) =>
    `${say(document.accountName)} sent you invoice ${say(document.invoiceNumber)}: ${say(displayMoney(document.amountDue, document.currency))} due by ${say(displayDay(document.dueOn))}.`;
  const url = hostedUrlOf(publicUrl, page.pageToken);
  const attached = (say: (text: string) => string) => `The invoice is attached as a PDF (${say(document.fileName)}).`;
  const plainText = (text: string) => text;
  const text = [greeting, '', summary(plainText), '', 'View it online:', url, '', attached(plainText), ''].join('\n');
  const subject = `Invoice ${document.invoiceNumber} from ${document.accountName}`;
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;padding:16px;font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1a1a1a;overflow-wrap:anywhere">
<p>${escapeHtml(greeting)}</p>
<p>${summary(escapeHtml)}</p>
<p><a href="${escapeHtml(url)}" style="display:inline-block;padding:8px 16px;border-radius:6px;background:#1f5fbf;color:#ffffff;font-weight:600;text-decoration:none">View invoice ${escapeHtml(document.invoiceNumber)} online</a></p>
<p style="color:#5a5a5a">Or open this address: ${escapeHtml(url)}</p>
<p>${attached(escapeHtml)}</p>
</body>
</html>
`;
  return {
    subject,
    text,
    html,
    attachments: [{
      filename: document.fileName,
      contentType: 'application/pdf',
      content: await invoicePdfFor(db, { accountId: mail.account_id, id: mail.invoice_id! }, document, pdf.pdfs, pdf.log ?? { warn: () => {} }),
    }],
  };
}
