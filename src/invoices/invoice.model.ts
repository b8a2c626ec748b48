// An invoice, declared once (docs/fields.md#a-records-model): the fields a client writes and the
// REST item lists, and what each door takes and shows of them. The GraphQL type's fields of these
// columns, the create and update inputs, the create rule (and the update rule derived from it) and
// the REST item follow from here. Its lines stay their own input (InvoiceLineInput, invoice-money.ts),
// and the money the service keeps (subtotal, totals, amountPaid) is declared beside its computation
// (invoice-lines.schema.ts); `byId` names what the by-id answer (the InvoiceRecord fragment) adds to the item.
import { z } from 'zod';
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { CUSTOM_VALUES } from '../model/shapes.js';
import { CONTACT_EMBED } from '../contacts/contact.model.js';
import { InvoiceStatus } from '../generated/prisma/client.js';
import { externalId, optionalText, optionalUuid } from '../validation.js';
import { amount, currency } from './invoice-money.js';

const EXTERNAL_ID = 'At most 255 characters; unique in the account.';
const MEMO = 'At most 2000 characters';
const MONEY = 'invoice-lines.schema.ts';

export const INVOICE_FIELDS = [
  // The type answers `contact` (the REST item embeds it): the id is an input only.
  { name: 'contactId', type: 'ID', rule: optionalUuid, read: false, item: false },
  {
    name: 'invoiceNumber', type: 'String', rule: optionalText(50), max: 50,
    description: { create: 'Unique in the account; assigned (INV-000001, ...) when absent.', update: 'Unique in the account.' },
  },
  // docs/decisions.md §20: `amount` or `lines`, in the currency's minor units (invoice-money.ts).
  { name: 'amount', type: 'Float', rule: amount.nullish(), description: { create: 'The total of an invoice without lines; give amount or lines', update: 'Replaces the lines' } },
  {
    // Absent: the account's defaultCurrency (docs/decisions.md §26), read with the write.
    name: 'currency', type: 'String', rule: currency.nullish(), typeFieldIn: MONEY,
    description: { create: "ISO 4217 (lower case is upper-cased); the account's defaultCurrency when absent", update: 'ISO 4217 (lower case is upper-cased); USD when absent' },
  },
  { name: 'amountDue', type: 'Float', typeFieldIn: MONEY },
  { name: 'memo', type: 'String', rule: optionalText(2000), max: 2000, typeFieldIn: MONEY, item: false, description: { create: MEMO, update: MEMO } },
  {
    // Every invoice starts as a draft; later states are reached only through setInvoiceStatus.
    name: 'status', type: 'InvoiceStatus', createOnly: true, description: { create: 'Only draft (the default) on create.' },
    rule: z
      .enum(InvoiceStatus)
      .nullish()
      .refine((value) => value == null || value === InvoiceStatus.draft, 'A new invoice must be draft; use setInvoiceStatus to move it on')
      .transform(() => InvoiceStatus.draft),
  },
  { name: 'dueDate', type: 'Date', rule: z.date(), required: true },
  {
    name: 'externalId', type: 'String', rule: externalId,
    description: { create: EXTERNAL_ID, update: EXTERNAL_ID, read: 'Its id in the integrating system; unique in the account where present.' },
  },
  // The account's own fields (docs/custom-fields.md): one JSON object of values, judged by the account's definitions.
  CUSTOM_VALUES,
  { name: 'createdAt', type: 'DateTime' },
  { name: 'updatedAt', type: 'DateTime' },
] as const satisfies readonly FieldSpec[];

export const INVOICE_MODEL = {
  model: 'Invoice', table: 'invoices', kind: 'invoice', collection: 'invoices', fields: INVOICE_FIELDS,
  embeds: CONTACT_EMBED,
  // The money of docs/decisions.md §20 (invoice-lines.schema.ts), the memo and the sending's marks (send.schema.ts).
  byId: ['lines', 'subtotal', 'discountTotal', 'taxTotal', 'total', 'amountPaid', 'memo', 'issuedAt', 'paidAt', 'hostedUrl'],
} as const satisfies RecordModel;
