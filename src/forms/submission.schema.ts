/** FormSubmission · Query.leadForm · Query.formSubmission · Account.formSubmissions · Contact.submissions · LeadForm.submissions · Account.leadForms */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { builder } from '../graphql/builder.js';
import { eq, filtersOf, idIn, timeRanges, TIME_ORDERS, type Collection } from '../graphql/collection.js';
import { defineCollection, orderInputOf } from '../graphql/connection.js';
import { NEWEST_FIRST } from '../graphql/page.js';
import { readById } from '../graphql/reads.js';
import { LeadFormRef } from './form.schema.js';
import { FORMS_PER_ACCOUNT } from './form.service.js';

/** What a submission kept; the sender's IP address and user agent stay out of the API. */
export const FormSubmissionRef = builder.prismaObject('FormSubmission', {
  keyScope: 'FORMS_READ',
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


/** The form submissions collection (docs/fields.md#adding-a-filter). */
export const submissions = {
  name: 'FormSubmission',
  model: 'FormSubmission',
  table: 'form_submissions',
  orders: TIME_ORDERS,
  orderInput: orderInputOf('FormSubmission', Object.keys(TIME_ORDERS)),
  filter: filtersOf('FormSubmissionFilter', {
    formId: idIn('form_id'),
    contactId: idIn('contact_id'),
    isSpam: { field: (t) => t.boolean(), schema: z.boolean().nullish(), sql: eq('is_spam', 'boolean') },
    ...timeRanges(false),
  }, 'All given conditions hold (AND). `createdAfter` is inclusive, `createdBefore` exclusive.'),
} satisfies Collection;

export const submissionConnection = defineCollection(submissions, FormSubmissionRef);

builder.prismaObjectField(AccountRef, 'formSubmissions', submissionConnection(null));
builder.prismaObjectField(ContactRef, 'submissions', submissionConnection('contact_id', "The contact's form submissions"));
builder.prismaObjectField(LeadFormRef, 'submissions', submissionConnection('form_id', "The form's submissions"));
builder.prismaObjectField(AccountRef, 'leadForms', (t) => t.relation('leadForms', { description: 'Newest first', maxItems: FORMS_PER_ACCOUNT, query: { orderBy: NEWEST_FIRST } }));

readById('leadForm', 'LeadForm', (db) => db.leadForm, 'FORMS_READ');
readById('formSubmission', 'FormSubmission', (db) => db.formSubmission, 'FORMS_READ');
