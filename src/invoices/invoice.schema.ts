/** Query.invoices · Mutation.createInvoice · Mutation.setInvoiceStatus */
import { builder } from '../graphql/builder.js';
import { guard, requireAccountAccess } from '../graphql/guard.js';
import { LIMITS } from '../graphql/limits.js';
import { definePage } from '../graphql/page.js';
import { InvoiceStatus, type Prisma } from '../generated/prisma/client.js';
import { parseInput } from '../validation.js';
import {
  createInvoice,
  createInvoiceInput,
  invoicesWhere,
  listInvoicesArgs,
  setInvoiceStatus,
  setInvoiceStatusArgs,
} from './invoice.service.js';

export const InvoiceStatusEnum = builder.enumType(InvoiceStatus, { name: 'InvoiceStatus' });

builder.prismaObject('Invoice', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    invoiceNumber: t.exposeString('invoiceNumber'),
    amount: t.float({ resolve: (invoice) => invoice.amount.toNumber() }),
    status: t.expose('status', { type: InvoiceStatusEnum }),
    dueDate: t.expose('dueDate', { type: 'Date' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    contact: t.relation('contact', { nullable: true }),
  }),
});

const InvoicePage = definePage<Prisma.InvoiceWhereInput>('Invoice', (ctx) => ctx.deps.db.reader.invoice);

builder.queryField('invoices', (t) =>
  t.field({
    type: InvoicePage,
    args: {
      accountId: t.arg.id({ required: true }),
      page: t.arg.int({ defaultValue: 1 }),
      pageSize: t.arg.int({ defaultValue: 25 }),
      status: t.arg({ type: InvoiceStatusEnum }),
    },
    resolve: async (_root, args, ctx) => {
      const { input } = await guard(ctx, { schema: listInvoicesArgs, args, limit: LIMITS.invoices });
      return { where: invoicesWhere(input), page: input.page, pageSize: input.pageSize };
    },
  }),
);

const CreateInvoiceInput = builder.inputType('CreateInvoiceInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    contactId: t.id(),
    invoiceNumber: t.string({ description: 'Unique in the account; assigned (INV-000001, ...) when absent.' }),
    amount: t.float({ required: true }),
    dueDate: t.field({ type: 'Date', required: true }),
    status: t.field({ type: InvoiceStatusEnum, description: 'Only draft (the default) on create.' }),
  }),
});

builder.mutationFields((t) => ({
  createInvoice: t.prismaField({
    type: 'Invoice',
    args: { input: t.arg({ type: CreateInvoiceInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: createInvoiceInput, args: args.input });
      const invoice = await createInvoice(ctx.db, input);
      return ctx.db.invoice.findUniqueOrThrow({ ...query, where: { id: invoice.id } });
    },
  }),
  setInvoiceStatus: t.prismaField({
    type: 'Invoice',
    description: 'Follows the invoice state machine; cancelled and refunded are final. Else INVALID_TRANSITION.',
    args: { id: t.arg.id({ required: true }), status: t.arg({ type: InvoiceStatusEnum, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      await ctx.viewer();
      const input = parseInput(setInvoiceStatusArgs, args);
      // A missing invoice and another account's invoice give the same FORBIDDEN.
      const invoice = await ctx.db.invoice.findUnique({ where: { id: input.id }, select: { id: true, accountId: true, status: true } });
      await requireAccountAccess(ctx, invoice?.accountId);
      await setInvoiceStatus(ctx.db, invoice!, input.status);
      return ctx.db.invoice.findUniqueOrThrow({ ...query, where: { id: input.id } });
    },
  }),
}));
