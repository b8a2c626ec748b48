import { lexicographicSortSchema, printSchema } from 'graphql/index.js';
import { builder } from './graphql/builder.js';
import './graphql/scalars.js';
import './accounts/account.schema.js';
import './contacts/contact.schema.js';
import './contacts/contact-reads.schema.js';
import './deals/stage.schema.js';
import './deals/deal.schema.js';
import './deals/deal-reads.schema.js';
import './companies/company.schema.js';
import './companies/company-reads.schema.js';
import './batches/company-batch.schema.js';
import './activities/note.schema.js';
import './activities/task.schema.js';
import './activities/activity-reads.schema.js';
import './invoices/invoice.schema.js';
import './invoices/invoice-reads.schema.js';
import './invoices/invoice-lines.schema.js';
import './invoices/payment.schema.js';
import './invoices/invoice-page.schema.js';
import './invoices/send.schema.js';
import './forms/form.schema.js';
import './forms/form-page.schema.js';
import './forms/submission.schema.js';
import './studio/record.schema.js';
import './exports/export.schema.js';
import './studio/record-reads.schema.js';
import './events/event.schema.js';
import './webhooks/webhook.schema.js';
import './apikeys/apikey.schema.js';
import './batches/batch.schema.js';
import './imports/import.schema.js';
import './search/search.schema.js';
import './reports/report.schema.js';

export const schema = builder.toSchema();

/** The SDL committed as schema.graphql (sorted so diffs show real changes only). */
export const printedSchema = (): string => `${printSchema(lexicographicSortSchema(schema))}\n`;
