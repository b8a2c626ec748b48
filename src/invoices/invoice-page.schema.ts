/** InvoiceDocument · Invoice.document · Query.publicInvoice · Mutation.viewInvoicePage (docs/decisions.md §20, the client's page and PDF) */
import { z } from 'zod';
import { builder } from '../graphql/builder.js';
import { INVOICE_PAGE_VIEWS } from '../graphql/limits.js';
import { checked } from '../graphql/rules.js';
import { InvoiceRef, InvoiceStatusEnum } from './invoice.schema.js';
import { LINES_PER_INVOICE } from './invoice-lines.schema.js';
import { loadInvoiceDocument, type InvoiceDocument, type InvoiceDocumentLine } from './invoice-document.js';
import { showInvoicePage, showableByToken } from './invoice-page.service.js';

const money = 'Exact decimal text in the currency\'s minor units ("0.30", "1500")';

const InvoiceDocumentLineRef = builder.objectRef<InvoiceDocumentLine>('InvoiceDocumentLine').implement({
  description: 'A line as the client reads it',
  fields: (t) => ({
    description: t.exposeString('description'),
    quantity: t.exposeString('quantity', { description: 'Decimal text as given ("1.5")' }),
    unitPrice: t.exposeString('unitPrice', { description: money }),
    discountPercent: t.exposeString('discountPercent'),
    taxRate: t.exposeString('taxRate'),
    amount: t.exposeString('amount', { description: `Before tax; ${money}` }),
    tax: t.exposeString('tax', { description: money }),
  }),
});

export const InvoiceDocumentRef = builder.objectRef<InvoiceDocument>('InvoiceDocument').implement({
  description: 'What the client\'s page and the PDF show of an invoice: nothing beyond it about the account',
  keyScope: 'public',
  fields: (t) => ({
    accountName: t.exposeString('accountName'),
    invoiceNumber: t.exposeString('invoiceNumber'),
    status: t.field({ type: InvoiceStatusEnum, resolve: (d) => d.status }),
    currency: t.exposeString('currency'),
    issuedOn: t.field({ type: 'Date', nullable: true, description: 'The day it was sent', resolve: (d) => (d.issuedOn ? new Date(d.issuedOn) : null) }),
    dueOn: t.field({ type: 'Date', resolve: (d) => new Date(d.dueOn) }),
    paidOn: t.field({ type: 'Date', nullable: true, resolve: (d) => (d.paidOn ? new Date(d.paidOn) : null) }),
    contactName: t.exposeString('contactName', { nullable: true, description: 'Null without a contact, or once the contact was erased' }),
    lines: t.field({ type: [InvoiceDocumentLineRef], maxItems: LINES_PER_INVOICE, resolve: (d) => d.lines }),
    subtotal: t.exposeString('subtotal', { description: money }),
    discountTotal: t.exposeString('discountTotal'),
    taxTotal: t.exposeString('taxTotal'),
    total: t.exposeString('total'),
    amountPaid: t.exposeString('amountPaid'),
    amountDue: t.exposeString('amountDue'),
    memo: t.exposeString('memo', { nullable: true }),
    fileName: t.exposeString('fileName', { description: 'The PDF\'s file name: invoice-<number>.pdf' }),
  }),
});

builder.prismaObjectField(InvoiceRef, 'document', (t) =>
  t.field({
    type: InvoiceDocumentRef,
    description: 'What its page and PDF show (REST: GET /api/v1/invoices/{id}/pdf)',
    select: { id: true },
    resolve: async (invoice, _args, ctx) => (await loadInvoiceDocument(ctx.db, { id: invoice.id }))!,
  }),
);

const tokenArgs = z.object({ token: z.string().max(64) });

builder.queryField('publicInvoice', (t) =>
  t.field({
    type: InvoiceDocumentRef,
    nullable: true,
    description: 'Public: the invoice behind a page token, as its PDF shows it. Null when the token is unknown, or the invoice a draft or cancelled. Changes nothing.',
    args: { token: t.arg.string({ required: true }) },
    rules: { access: 'public', input: tokenArgs, limit: INVOICE_PAGE_VIEWS },
    resolve: async (_root, _args, ctx, info) => {
      const { input } = checked<z.output<typeof tokenArgs>>(info);
      const document = await loadInvoiceDocument(ctx.db, { pageToken: input.token });
      return document && showableByToken(document.status) ? document : null;
    },
  }),
);

builder.mutationField('viewInvoicePage', (t) =>
  t.field({
    type: InvoiceDocumentRef,
    nullable: true,
    description:
      'Public: the client opens the invoice\'s page (GET /i/{token}). The first view of a sent invoice moves it to viewed (invoice.viewed, actor visitor); any other view changes nothing. Null as publicInvoice.',
    args: { token: t.arg.string({ required: true }) },
    rules: { access: 'public', input: tokenArgs, limit: INVOICE_PAGE_VIEWS, notIdempotent: 'a view changes the invoice at most once by itself; a repeat changes nothing' },
    // A HEAD or a link preview's request (LINK_PREVIEW_AGENTS, docs/invoices.md) reads the page and never marks it viewed.
    resolve: async (_root, _args, ctx, info) => {
      const { input, write } = checked<z.output<typeof tokenArgs>>(info);
      return showInvoicePage(ctx.db, input.token, (work) => write(work), { method: ctx.request.method, userAgent: ctx.userAgent });
    },
  }),
);
