// The invoice mail itself (docs/decisions.md §20 "Sending"): what it says and the SMTP transport
// that sends it (nodemailer). The outbox (mail-outbox.ts) decides when, and records the outcome.
import { createTransport } from 'nodemailer';
import type { MailConfig } from '../config.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { formatDate } from '../dates.js';
import { exponentOf, formatMinor, minorOf } from './money.js';
import { hostedUrlOf } from './send.service.js';

/** One mail of the outbox: the invoice and where it goes. */
export type OutboxMail = { account_id: string; id: string; invoice_id: string; to: string };

/** A send that fails for good (the server refused the recipient or the message: 5xx); others are retried. */
export class PermanentMailError extends Error {}

// Each bound well under the claim's lease (MAIL_LEASE_MS): a send ends, one way or the other, before it passes.
const TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export type Mailer = { send(mail: OutboxMail): Promise<void>; close(): void };

/**
 * Sends invoice mail through SMTP_URL from MAIL_FROM: one connection per mail (STARTTLS when the
 * server offers it), the link to the client's page on `publicUrl` in the text.
 */
export function createMailer(db: PrismaClient, config: MailConfig, publicUrl: string): Mailer {
  const transport = createTransport({ url: config.smtpUrl, ...TIMEOUTS });
  return {
    async send(mail) {
      const message = await composeMail(db, mail, publicUrl);
      if (!message) throw new PermanentMailError('The invoice has no page (not sent)');
      try {
        await transport.sendMail({ from: config.from, to: mail.to, subject: message.subject, text: message.text, messageId: `<invoice-mail-${mail.id}@${domainOf(config.from)}>` });
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

/** The mail's subject and text, from the invoice as it is now; null when it has no page. */
export async function composeMail(db: PrismaClient, mail: OutboxMail, publicUrl: string) {
  const invoice = await db.invoice.findUnique({
    where: { accountId_id: { accountId: mail.account_id, id: mail.invoice_id } },
    select: {
      invoiceNumber: true, amount: true, amountPaid: true, currency: true, dueDate: true, pageToken: true,
      account: { select: { name: true } }, contact: { select: { firstName: true } },
    },
  });
  if (!invoice?.pageToken) return null;
  const exponent = exponentOf(invoice.currency);
  const due = formatMinor(minorOf(invoice.amount, exponent) - minorOf(invoice.amountPaid, exponent), exponent);
  const link = hostedUrlOf(publicUrl, invoice.pageToken);
  const text = [
    invoice.contact?.firstName ? `Hello ${invoice.contact.firstName},` : 'Hello,',
    '',
    `${invoice.account.name} sent you invoice ${invoice.invoiceNumber}: ${due} ${invoice.currency} due by ${formatDate(invoice.dueDate)}.`,
    '',
    `View it, and download it as a PDF, here:`,
    link,
    '',
  ].join('\n');
  return { subject: `Invoice ${invoice.invoiceNumber} from ${invoice.account.name}`, text, number: invoice.invoiceNumber };
}
