/** Mutation.sendInvoice · Invoice.issuedAt · Invoice.hostedUrl (docs/decisions.md §20 "Sending") */
import { WRITES } from '../graphql/limits.js';
import { builder } from '../graphql/builder.js';
import { userActor } from '../events/types.js';
import { checked, ownRow } from '../graphql/rules.js';
import { InvoiceStatus, type Prisma } from '../generated/prisma/client.js';
import type { ByIdArgs } from '../validation.js';
import { InvoiceRef } from './invoice.schema.js';
import { invoiceTarget, type InvoiceKey } from './invoice.service.js';
import { hostedUrlOf, sendInvoice, sendInvoiceArgs, type SendInvoiceArgs } from './send.service.js';

/** A send is an invoice write: 30 a minute per caller, as the others (docs/decisions.md §18). */

builder.prismaObjectFields(InvoiceRef, (t) => ({
  issuedAt: t.expose('issuedAt', { type: 'DateTime', nullable: true, description: 'When it was sent first; null while draft' }),
  hostedUrl: t.string({
    nullable: true,
    description: "The client's page (absolute, on PUBLIC_URL); null while draft",
    select: { status: true, pageToken: true },
    resolve: (invoice, _args, ctx) => (invoice.status === InvoiceStatus.draft || !invoice.pageToken ? null : hostedUrlOf(ctx.publicUrl, invoice.pageToken)),
  }),
}));

const target = (args: ByIdArgs, ctx: { db: Prisma.TransactionClient }) => invoiceTarget(args, ctx.db);

builder.mutationFields((t) => ({
  sendInvoice: t.prismaField({
    type: 'Invoice',
    nullable: true,
    description:
      'draft → sent (issuedAt, hostedUrl); e-mails the page\'s link to `to`, else the contact, when mail is configured. ' +
      'On an invoice already sent (sent, viewed, partial, overdue) it mails again and changes nothing else; paid, cancelled and refunded are CONFLICT.',
    args: { id: t.arg.id({ required: true }), to: t.arg.string({ description: 'An e-mail address; the contact\'s when absent' }) },
    rules: { access: 'member', scope: 'INVOICES_WRITE', input: sendInvoiceArgs, target, hidden: 'not-found', line: ownRow, limit: WRITES, idempotent: true },
    resolve: (query, _root, _args, ctx, info) => {
      const { viewer, input, target: invoice, write } = checked<SendInvoiceArgs, InvoiceKey>(info);
      return write(async (tx) => {
        await sendInvoice(tx, invoice.id, input.to, userActor(viewer), ctx.mailing);
        return tx.invoice.findUniqueOrThrow({ ...query, where: { id: invoice.id } });
      });
    },
  }),
}));
