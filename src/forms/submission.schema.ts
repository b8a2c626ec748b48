/** FormSubmission · Query.leadForm · Query.formSubmission · Account.formSubmissions · Contact.submissions · LeadForm.submissions · Account.leadForms */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { builder } from '../graphql/builder.js';
import { defineCollection, eq, orderInputOf, timeRanges, timeRangeSql, type TimeRanges } from '../graphql/connection.js';
import { NEWEST_FIRST } from '../graphql/page.js';
import { readById } from '../graphql/reads.js';
import { Prisma } from '../generated/prisma/client.js';
import { uuid } from '../validation.js';
import { LeadFormRef } from './form.schema.js';

/** What a submission kept; the sender's IP address and user agent stay out of the API. */
export const FormSubmissionRef = builder.prismaObject('FormSubmission', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    form: t.relation('form'),
    contact: t.relation('contact', { nullable: true, description: 'Null for spam and when the contact was removed' }),
    data: t.expose('data', { type: 'JSON', description: 'The values as submitted, keyed by field key' }),
    referrer: t.exposeString('referrer', { nullable: true }),
    page: t.exposeString('page', { nullable: true }),
    isSpam: t.exposeBoolean('isSpam', { description: "Filled the form's honeypot: kept apart, no contact was touched" }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const FormSubmissionFilter = builder.inputType('FormSubmissionFilter', {
  description: 'All given conditions hold (AND). `createdAfter` is inclusive, `createdBefore` exclusive.',
  fields: (t) => ({
    formId: t.id(),
    contactId: t.id(),
    isSpam: t.boolean(),
    createdAfter: t.field({ type: 'DateTime' }),
    createdBefore: t.field({ type: 'DateTime' }),
  }),
});

const submissionFilter = z.object({
  formId: uuid.nullish(),
  contactId: uuid.nullish(),
  isSpam: z.boolean().nullish(),
  createdAfter: timeRanges.createdAfter,
  createdBefore: timeRanges.createdBefore,
});
type SubmissionFilter = z.output<typeof submissionFilter>;

const submissionWhere = (f: SubmissionFilter): Prisma.Sql[] => [
  ...eq('form_id', f.formId, 'uuid'),
  ...eq('contact_id', f.contactId, 'uuid'),
  ...eq('is_spam', f.isSpam, 'boolean'),
  ...timeRangeSql(f as TimeRanges, false),
];

const ORDERS = {
  CREATED_AT: { column: 'created_at', type: 'timestamptz' },
  UPDATED_AT: { column: 'updated_at', type: 'timestamptz' },
} as const;

export const submissionConnection = defineCollection(
  {
    name: 'FormSubmission',
    table: 'form_submissions',
    orders: ORDERS,
    orderInput: orderInputOf('FormSubmission', Object.keys(ORDERS)),
    filter: { input: FormSubmissionFilter, schema: submissionFilter, sql: submissionWhere },
    rows: (db, ids) => db.formSubmission.findMany({ where: { id: { in: ids } } }),
  },
  FormSubmissionRef,
);

const own = (row: { accountId: string; id: string }) => ({ accountId: row.accountId, id: row.id });
builder.prismaObjectField(AccountRef, 'formSubmissions', submissionConnection(null, (a: { id: string }) => ({ accountId: a.id, id: a.id })));
builder.prismaObjectField(ContactRef, 'submissions', submissionConnection('contact_id', own, "The contact's form submissions"));
builder.prismaObjectField(LeadFormRef, 'submissions', submissionConnection('form_id', own, "The form's submissions"));
builder.prismaObjectField(AccountRef, 'leadForms', (t) => t.relation('leadForms', { description: 'Newest first', query: { orderBy: NEWEST_FIRST } }));

readById('leadForm', 'LeadForm', (db) => db.leadForm);
readById('formSubmission', 'FormSubmission', (db) => db.formSubmission);
