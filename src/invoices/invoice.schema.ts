/** Query.invoices · Mutation.createInvoice · Mutation.setInvoiceStatus */
import { builder } from '../graphql/builder.js';
import { definePage } from '../graphql/page.js';
import { checked } from '../graphql/rules.js';
import { userActor } from '../events/types.js';
import { InvoiceStatus, type Prisma } from '../generated/prisma/client.js';
import {
  createInvoice,
  createInvoiceInput,
  invoicesWhere,
  listInvoicesArgs,
  setInvoiceStatus,
  setInvoiceStatusArgs,
  type CreateInvoiceInput,
  type InvoiceToMove,
  type ListInvoicesArgs,
  type SetInvoiceStatusArgs,
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

const InvoicePage = definePage<Prisma.InvoiceWhereInput>('Invoice', (ctx) => ctx.db.invoice);

builder.queryField('invoices', (t) =>
  t.field({
    type: InvoicePage,
    args: {
      accountId: t.arg.id({ required: true }),
      page: t.arg.int({ defaultValue: 1 }),
      pageSize: t.arg.int({ defaultValue: 25 }),
      status: t.arg({ type: InvoiceStatusEnum }),
    },
    rules: { access: 'member', input: listInvoicesArgs, limit: { max: 60, window: '1m', per: 'user' } },
    resolve: (_root, _args, _ctx, info) => {
      const { input } = checked<ListInvoicesArgs>(info);
      return { where: invoicesWhere(input), page: input.page, pageSize: input.pageSize };
    },
  }),
);

const CreateInvoiceInputType = builder.inputType('CreateInvoiceInput', {
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
    args: { input: t.arg({ type: CreateInvoiceInputType, required: true }) },
    rules: { access: 'member', input: createInvoiceInput, from: 'input' },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input } = checked<CreateInvoiceInput>(info);
      const invoice = await createInvoice(ctx.db, input, userActor(viewer));
      return ctx.db.invoice.findUniqueOrThrow({ ...query, where: { id: invoice.id } });
    },
  }),
  setInvoiceStatus: t.prismaField({
    type: 'Invoice',
    description: 'Follows the invoice state machine; cancelled and refunded are final. Else INVALID_TRANSITION.',
    args: { id: t.arg.id({ required: true }), status: t.arg({ type: InvoiceStatusEnum, required: true }) },
    // A missing invoice and another account's invoice give the same FORBIDDEN.
    rules: {
      access: 'member',
      input: setInvoiceStatusArgs,
      target: ({ id }: SetInvoiceStatusArgs, ctx) =>
        ctx.db.invoice.findUnique({ where: { id }, select: { id: true, accountId: true, status: true } }),
    },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input, target } = checked<SetInvoiceStatusArgs, InvoiceToMove>(info);
      await setInvoiceStatus(ctx.db, target, input.status, userActor(viewer));
      return ctx.db.invoice.findUniqueOrThrow({ ...query, where: { id: input.id } });
    },
  }),
}));
