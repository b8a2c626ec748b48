/** Mutation.createInvoice · setInvoiceStatus · updateInvoice · deleteInvoice */
import { WRITES } from '../graphql/limits.js';
import { builder } from '../graphql/builder.js';
import { CONTACT_EMBEDDED } from '../contacts/contact.model.js';
import { recordObject } from '../graphql/record-object.js';
import { exposedFieldsOf, inputFieldsOf } from '../graphql/spec-fields.js';
import { INVOICE_FIELDS, INVOICE_MODEL } from './invoice.model.js';
import { userActor } from '../events/types.js';
import { checked } from '../graphql/rules.js';
import { deleteById, setStatusById, updateById, type ById } from '../writes/by-id.js';
import { updateProblems } from './invoice-lines.service.js';
import { numberingKey } from './invoice-numbers.js';
import { InvoiceStatus } from '../generated/prisma/client.js';
import {
  deleteInvoice,
  invoiceTarget,
  updateInvoice,
  updateInvoiceArgs,
  type InvoiceKey,
  createInvoice,
  createInvoiceInput,
  createProblems,
  setInvoiceStatus,
  setInvoiceStatusArgs,
  type CreateInvoiceInput,
} from './invoice.service.js';

/** Every write of an invoice: 30 a minute per caller, as the other records' writes (docs/decisions.md §18). */

export const InvoiceStatusEnum = builder.enumType(InvoiceStatus, { name: 'InvoiceStatus' });

export const InvoiceRef = recordObject('Invoice', 'INVOICES_READ', (t) => ({
  // Every field of the model the type reads from it, as stored (docs/fields.md#a-records-model).
  ...exposedFieldsOf(INVOICE_MODEL)(t as never),
  // As REST embeds it: a key without contacts:read reads no more of the contact (docs/decisions.md §24).
  contact: t.relation('contact', { nullable: true, embedded: CONTACT_EMBEDDED }),
}));

// docs/decisions.md §20: an invoice's lines; their bounds and rounding are in invoice-money.ts and money.ts.
const InvoiceLineInput = builder.inputType('InvoiceLineInput', {
  fields: (t) => ({
    description: t.string({ required: true, description: '1 to 500 characters' }),
    quantity: t.float({ description: 'Greater than 0, at most 1000000, at most 4 decimals; 1 when absent' }),
    unitPrice: t.float({ required: true, description: '0 to 9999999999.99, in the minor units of the currency' }),
    discountPercent: t.float({ description: '0 to 100, at most 3 decimals; 0 when absent' }),
    taxRate: t.float({ description: '0 to 100, at most 3 decimals; 0 when absent' }),
  }),
});

const LINES = '1 to 100 lines; the total is computed from them. Not with amount';

const CreateInvoiceInputType = builder.inputType('CreateInvoiceInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    ...inputFieldsOf(INVOICE_FIELDS, 'create')(t),
    lines: t.field({ type: [InvoiceLineInput], description: LINES }),
  }),
});

builder.mutationField('createInvoice', (t) =>
  t.prismaField({
    type: 'Invoice',
    args: { input: t.arg({ type: CreateInvoiceInputType, required: true }) },
    rules: { access: 'member', scope: 'INVOICES_WRITE', input: createInvoiceInput, from: 'input', linked: createProblems, limit: WRITES, idempotent: true, line: numberingKey },
    // One statement, without BEGIN and COMMIT (invoice-create.ts); a number taken by hand meanwhile
    // costs a step over it and another statement, each complete by itself.
    resolve: (_query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateInvoiceInput>(info);
      return write((db) => createInvoice(db, input, userActor(viewer)), { oneStatement: true });
    },
  }),
);

// --- docs/decisions.md §12: status, update and delete (the last two drafts only; the read, GET /api/v1/invoices/{id}, is in invoice-reads.schema.ts) ---

const UpdateInvoiceInputType = builder.inputType('UpdateInvoiceInput', {
  description: 'Drafts only. Absent = unchanged; null = cleared (Required for invoiceNumber, amount, dueDate). At least one field.',
  fields: (t) => ({ ...inputFieldsOf(INVOICE_FIELDS, 'update')(t), lines: t.field({ type: [InvoiceLineInput], description: LINES }) }),
});

const invoice: ById<InvoiceKey> = { type: 'Invoice', scope: 'INVOICES_WRITE', limit: WRITES, target: invoiceTarget };

setStatusById(invoice, {
  status: InvoiceStatusEnum,
  args: setInvoiceStatusArgs,
  move: setInvoiceStatus,
  delegate: (db) => db.invoice,
  description: 'Follows the invoice state machine; cancelled and refunded are final. Else INVALID_TRANSITION.',
});
updateById(invoice, {
  input: UpdateInvoiceInputType,
  args: updateInvoiceArgs,
  linked: updateProblems,
  update: updateInvoice,
  description: 'Drafts only: any other status is a billing record (CONFLICT). CONFLICT with currentUpdatedAt when expectedUpdatedAt is stale.',
});
deleteById(invoice, { remove: deleteInvoice, description: 'Drafts only (CONFLICT otherwise: cancel or refund it through setInvoiceStatus).' });
