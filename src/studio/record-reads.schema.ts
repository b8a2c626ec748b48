/** Query.proposal/contract/gallery/booking/workflow · Account.<records> · Contact.<records> · Account.exports */
import { AccountRef } from '../accounts/account.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { builder } from '../graphql/builder.js';
import type { FieldLimit } from '../graphql/field-rules.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { filtersOf, timeRanges, TIME_ORDERS } from '../graphql/collection.js';
import { defineCollection, orderInputOf } from '../graphql/connection.js';
import { readById } from '../graphql/reads.js';
import { exportFileName } from '../exports/export.service.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { ApiScope } from '../scopes.js';
import { ContractRef, BookingRef, GalleryRef, ProposalRef, WorkflowRef } from './record.schema.js';

const recordFilter = filtersOf('RecordFilter', timeRanges(), 'All given conditions hold (AND); `...After` is inclusive, `...Before` exclusive.');

const RecordOrder = orderInputOf('Record', Object.keys(TIME_ORDERS));

/** Account.<plural>, Contact.<plural> (when the record names a contact) and Query.<singular>(id). */
function records(name: string, table: string, plural: string, singular: string, ref: unknown, delegate: (db: PrismaClient) => any, byContact: boolean, scope?: ApiScope, limit?: FieldLimit) {
  const connection = defineCollection({ name, model: name, table, orders: TIME_ORDERS, orderInput: RecordOrder, filter: recordFilter }, ref);
  builder.prismaObjectField(AccountRef, plural, connection(null));
  if (byContact) builder.prismaObjectField(ContactRef, plural, connection('contact_id', `The contact's ${plural}`));
  readById(singular, name, delegate, scope, limit);
}

records('Proposal', 'proposals', 'proposals', 'proposal', ProposalRef, (db) => db.proposal, true);
records('Contract', 'contracts', 'contracts', 'contract', ContractRef, (db) => db.contract, true);
records('Gallery', 'galleries', 'galleries', 'gallery', GalleryRef, (db) => db.gallery, true);
records('Booking', 'bookings', 'bookings', 'booking', BookingRef, (db) => db.booking, true);
// API keys read workflows with WORKFLOWS_READ and never change them (docs/workflows.md#who); REST's GET /api/v1/workflows/{id} reads it, limited.
records('Workflow', 'workflows', 'workflows', 'workflow', WorkflowRef, (db) => db.workflow, false, 'WORKFLOWS_READ', READS_BEYOND_CONTRACT);

/** An export as the audit log keeps it: who asked for which file, when. */
const ExportRecordRef = builder.prismaObject('ExportLog', {
  variant: 'ExportRecord',
  keyScope: false,
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    kind: t.field({ type: 'ExportKind' as never, resolve: (log) => log.kind as never }),
    userId: t.exposeID('userId', { nullable: true, description: 'Who exported: a user, or null when an API key did (apiKeyId)' }),
    apiKeyId: t.exposeID('apiKeyId', { nullable: true, description: 'The API key that exported (docs/decisions.md §15), else null' }),
    fileName: t.string({ resolve: (log) => exportFileName(log) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const exportConnection = defineCollection({ name: 'ExportRecord', model: 'ExportLog', table: 'export_logs', orders: { CREATED_AT: TIME_ORDERS.CREATED_AT } }, ExportRecordRef);
builder.prismaObjectField(AccountRef, 'exports', exportConnection(null, 'The export audit log, newest first'));
