/** Query.proposal/contract/gallery/booking/workflow · Account.<records> · Contact.<records> · Account.exports */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { builder } from '../graphql/builder.js';
import { defineCollection, orderInputOf, timeRanges, timeRangeSql, type TimeRanges } from '../graphql/connection.js';
import { readById } from '../graphql/reads.js';
import { exportFileName } from '../exports/export.service.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { ContractRef, BookingRef, GalleryRef, ProposalRef, WorkflowRef } from './record.schema.js';

const RecordFilter = builder.inputType('RecordFilter', {
  description: 'All given conditions hold (AND); `...After` is inclusive, `...Before` exclusive.',
  fields: (t) => ({
    createdAfter: t.field({ type: 'DateTime' }),
    createdBefore: t.field({ type: 'DateTime' }),
    updatedAfter: t.field({ type: 'DateTime' }),
    updatedBefore: t.field({ type: 'DateTime' }),
  }),
});
const recordFilter = z.object(timeRanges);

const ORDERS = {
  CREATED_AT: { column: 'created_at', type: 'timestamptz' },
  UPDATED_AT: { column: 'updated_at', type: 'timestamptz' },
} as const;
const RecordOrder = orderInputOf('Record', Object.keys(ORDERS));

const accountOf = (a: { id: string }) => ({ accountId: a.id, id: a.id });
const own = (row: { accountId: string; id: string }) => ({ accountId: row.accountId, id: row.id });

type Loader = (db: PrismaClient, ids: string[]) => Promise<{ id: string }[]>;

/** Account.<plural>, Contact.<plural> (when the record names a contact) and Query.<singular>(id). */
function records(name: string, table: string, plural: string, singular: string, ref: unknown, rows: Loader, delegate: (db: PrismaClient) => any, byContact: boolean) {
  const connection = defineCollection(
    {
      name,
      table,
      orders: ORDERS,
      orderInput: RecordOrder,
      filter: { input: RecordFilter, schema: recordFilter, sql: (f: TimeRanges) => timeRangeSql(f) },
      rows,
    },
    ref,
  );
  builder.prismaObjectField(AccountRef, plural, connection(null, accountOf));
  if (byContact) builder.prismaObjectField(ContactRef, plural, connection('contact_id', own, `The contact's ${plural}`));
  readById(singular, name, delegate);
}

records('Proposal', 'proposals', 'proposals', 'proposal', ProposalRef, (db, ids) => db.proposal.findMany({ where: { id: { in: ids } } }), (db) => db.proposal, true);
records('Contract', 'contracts', 'contracts', 'contract', ContractRef, (db, ids) => db.contract.findMany({ where: { id: { in: ids } } }), (db) => db.contract, true);
records('Gallery', 'galleries', 'galleries', 'gallery', GalleryRef, (db, ids) => db.gallery.findMany({ where: { id: { in: ids } } }), (db) => db.gallery, true);
records('Booking', 'bookings', 'bookings', 'booking', BookingRef, (db, ids) => db.booking.findMany({ where: { id: { in: ids } } }), (db) => db.booking, true);
records('Workflow', 'workflows', 'workflows', 'workflow', WorkflowRef, (db, ids) => db.workflow.findMany({ where: { id: { in: ids } } }), (db) => db.workflow, false);

/** An export as the audit log keeps it: who asked for which file, when. */
const ExportRecordRef = builder.prismaObject('ExportLog', {
  variant: 'ExportRecord',
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    kind: t.field({ type: 'ExportKind' as never, resolve: (log) => log.kind as never }),
    userId: t.exposeID('userId', { description: 'Who exported' }),
    fileName: t.string({ resolve: (log) => exportFileName(log) }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const exportConnection = defineCollection(
  {
    name: 'ExportRecord',
    table: 'export_logs',
    orders: { CREATED_AT: ORDERS.CREATED_AT },
    rows: (db, ids) => db.exportLog.findMany({ where: { id: { in: ids } } }),
  },
  ExportRecordRef,
);
builder.prismaObjectField(AccountRef, 'exports', exportConnection(null, accountOf, 'The export audit log, newest first'));
