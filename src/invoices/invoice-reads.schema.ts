/** Query.invoice · Account.invoices · Contact.invoices */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { builder } from '../graphql/builder.js';
import { anyOf, defineCollection, eq, orderInputOf, rangeSql, timeRanges, timeRangeSql, type TimeRanges } from '../graphql/connection.js';
import { readById } from '../graphql/reads.js';
import { InvoiceStatus, type Prisma } from '../generated/prisma/client.js';
import { externalIdFilter, uuid } from '../validation.js';
import { InvoiceRef, InvoiceStatusEnum } from './invoice.schema.js';

const InvoiceFilter = builder.inputType('InvoiceFilter', {
  description: 'All given conditions hold (AND); a list matches any of its values. `...After` is inclusive, `...Before` exclusive.',
  fields: (t) => ({
    statuses: t.field({ type: [InvoiceStatusEnum] }),
    contactId: t.id(),
    externalId: t.string({ description: 'The exact external id' }),
    dueAfter: t.field({ type: 'Date' }),
    dueBefore: t.field({ type: 'Date' }),
    createdAfter: t.field({ type: 'DateTime' }),
    createdBefore: t.field({ type: 'DateTime' }),
    updatedAfter: t.field({ type: 'DateTime' }),
    updatedBefore: t.field({ type: 'DateTime' }),
  }),
});

const invoiceFilter = z.object({
  statuses: z.array(z.enum(InvoiceStatus)).nullish(),
  contactId: uuid.nullish(),
  externalId: externalIdFilter,
  dueAfter: z.date().nullish(),
  dueBefore: z.date().nullish(),
  ...timeRanges,
});
type InvoiceFilter = z.output<typeof invoiceFilter>;

const invoiceWhere = (f: InvoiceFilter): Prisma.Sql[] => [
  ...anyOf('status', f.statuses, 'invoice_status'),
  ...eq('contact_id', f.contactId, 'uuid'),
  ...eq('external_id', f.externalId, 'text'),
  ...rangeSql('due_date', f.dueAfter, f.dueBefore, 'date'),
  ...timeRangeSql(f as TimeRanges),
];

const ORDERS = {
  CREATED_AT: { column: 'created_at', type: 'timestamptz' },
  UPDATED_AT: { column: 'updated_at', type: 'timestamptz' },
  DUE_DATE: { column: 'due_date', type: 'date' },
  AMOUNT: { column: 'amount', type: 'numeric' },
  INVOICE_NUMBER: { column: 'invoice_number', type: 'text' },
} as const;

export const invoiceConnection = defineCollection(
  {
    name: 'Invoice',
    table: 'invoices',
    orders: ORDERS,
    orderInput: orderInputOf('Invoice', Object.keys(ORDERS)),
    filter: { input: InvoiceFilter, schema: invoiceFilter, sql: invoiceWhere },
    counter: 'statuses',
    rows: (db, ids) => db.invoice.findMany({ where: { id: { in: ids } } }),
  },
  InvoiceRef,
);

builder.prismaObjectField(AccountRef, 'invoices', invoiceConnection(null, (a: { id: string }) => ({ accountId: a.id, id: a.id })));
builder.prismaObjectField(ContactRef, 'invoices', invoiceConnection('contact_id', (c: { accountId: string; id: string }) => ({ accountId: c.accountId, id: c.id }), "The contact's invoices"));

