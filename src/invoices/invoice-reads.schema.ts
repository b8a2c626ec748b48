/** The invoices collection (docs/fields.md#adding-a-filter) · Query.invoices · Query.invoice · Account.invoices · Contact.invoices */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { contacts } from '../contacts/contact-reads.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { builder } from '../graphql/builder.js';
import { anyOf, EXTERNAL_ID, filtersOf, idIn, from, oneOrMore, timeRanges, TIME_ORDERS, until, type Collection } from '../graphql/collection.js';
import { defineCollection, orderInputOf } from '../graphql/connection.js';
import { CUSTOM_FIELDS } from '../graphql/custom-field-filter.js';
import { INVOICE_MODEL } from './invoice.model.js';
import { pageField } from '../graphql/page.js';
import { readById } from '../graphql/reads.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { InvoiceStatus } from '../generated/prisma/client.js';
import { ownOrContactNameMatches } from '../contacts/contact-search.js';
import { searchText } from '../validation.js';
import { InvoiceRef, InvoiceStatusEnum } from './invoice.schema.js';

const ORDERS = {
  ...TIME_ORDERS,
  DUE_DATE: { column: 'due_date', type: 'date' },
  AMOUNT: { column: 'amount', type: 'numeric' },
  INVOICE_NUMBER: { column: 'invoice_number', type: 'text' },
} as const;

export const invoices = {
  name: 'Invoice',
  model: 'Invoice',
  table: 'invoices',
  json: true,
  orders: ORDERS,
  orderInput: orderInputOf('Invoice', Object.keys(ORDERS), { custom: true }),
  custom: INVOICE_MODEL,
  filter: filtersOf('InvoiceFilter', {
    search: {
      field: (t) => t.string({ description: "Case-insensitive substring of the invoice number or of the contact's \"first last\" name" }),
      schema: searchText,
      sql: (v: string) => ownOrContactNameMatches('invoices', 'invoice_number', v),
      page: 'search',
    },
    statuses: oneOrMore(InvoiceStatusEnum, z.enum(InvoiceStatus), anyOf('status', 'invoice_status'), { page: 'status' }),
    externalId: EXTERNAL_ID,
    contactId: idIn('contact_id', 'contactId'),
    dueAfter: { field: (t) => t.field({ type: 'Date', description: 'Due on or after this day' }), schema: z.date().nullish(), sql: from('due_date', 'date'), page: 'dueAfter' },
    dueBefore: { field: (t) => t.field({ type: 'Date', description: 'Due before this day' }), schema: z.date().nullish(), sql: until('due_date', 'date'), page: 'dueBefore' },
    customFields: CUSTOM_FIELDS,
    ...timeRanges(),
  }),
  relations: { contact: { to: contacts, by: 'contact_id' } },
  counter: 'statuses',
} satisfies Collection;

/** Query.invoices: REST's GET /invoices. */
export const invoicesPage = pageField('invoices', invoices, 'INVOICES_READ');

const invoiceConnection = defineCollection(invoices, InvoiceRef);
builder.prismaObjectField(AccountRef, 'invoices', invoiceConnection(null));
builder.prismaObjectField(ContactRef, 'invoices', invoiceConnection('contact_id', "The contact's invoices"));

/** Query.invoice: REST's GET /invoices/{id}. */
readById('invoice', 'Invoice', (db) => db.invoice, 'INVOICES_READ', READS_BEYOND_CONTRACT);
