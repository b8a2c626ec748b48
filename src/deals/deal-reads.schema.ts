/** Query.deal · Query.pipelineStage · Account.deals · Contact.deals · PipelineStage.deals · Account.pipelineStages */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { builder } from '../graphql/builder.js';
import { columnSql as c, anyOf, defineCollection, eq, likeEscape, orderInputOf, rangeSql, timeRanges, timeRangeSql, type TimeRanges } from '../graphql/connection.js';
import { readById } from '../graphql/reads.js';
import { DealStatus, Prisma } from '../generated/prisma/client.js';
import { externalIdFilter, text, uuid } from '../validation.js';
import { DealRef, DealStatusEnum } from './deal.schema.js';
import { PipelineStageRef } from './stage.schema.js';
import { STAGE_ORDER } from './stage.service.js';

const DealFilter = builder.inputType('DealFilter', {
  description: 'All given conditions hold (AND); a list matches any of its values. `...After` is inclusive, `...Before` exclusive.',
  fields: (t) => ({
    search: t.string({ description: 'Case-insensitive substring of the title' }),
    statuses: t.field({ type: [DealStatusEnum] }),
    stageIds: t.idList(),
    contactId: t.id(),
    externalId: t.string({ description: 'The exact external id' }),
    minValue: t.float({ description: 'Inclusive' }),
    maxValue: t.float({ description: 'Inclusive' }),
    expectedCloseAfter: t.field({ type: 'Date' }),
    expectedCloseBefore: t.field({ type: 'Date' }),
    createdAfter: t.field({ type: 'DateTime' }),
    createdBefore: t.field({ type: 'DateTime' }),
    updatedAfter: t.field({ type: 'DateTime' }),
    updatedBefore: t.field({ type: 'DateTime' }),
  }),
});

const dealFilter = z.object({
  search: text()
    .trim()
    .max(200, 'Must be at most 200 characters')
    .nullish()
    .transform((v) => v || null),
  statuses: z.array(z.enum(DealStatus)).nullish(),
  stageIds: z.array(uuid).max(100, 'At most 100 ids').nullish(),
  contactId: uuid.nullish(),
  externalId: externalIdFilter,
  minValue: z.number().finite().nullish(),
  maxValue: z.number().finite().nullish(),
  expectedCloseAfter: z.date().nullish(),
  expectedCloseBefore: z.date().nullish(),
  ...timeRanges,
});
type DealFilter = z.output<typeof dealFilter>;

const dealWhere = (f: DealFilter): Prisma.Sql[] => [
  ...(f.search ? [Prisma.sql`${c('title')} ILIKE ${`%${likeEscape(f.search)}%`}`] : []),
  ...anyOf('status', f.statuses, 'deal_status'),
  ...anyOf('stage_id', f.stageIds, 'uuid'),
  ...eq('contact_id', f.contactId, 'uuid'),
  ...eq('external_id', f.externalId, 'text'),
  ...(f.minValue != null ? [Prisma.sql`${c('value')} >= CAST(${String(f.minValue)} AS numeric)`] : []),
  ...(f.maxValue != null ? [Prisma.sql`${c('value')} <= CAST(${String(f.maxValue)} AS numeric)`] : []),
  ...rangeSql('expected_close_date', f.expectedCloseAfter, f.expectedCloseBefore, 'date'),
  ...timeRangeSql(f as TimeRanges),
];

const ORDERS = {
  CREATED_AT: { column: 'created_at', type: 'timestamptz' },
  UPDATED_AT: { column: 'updated_at', type: 'timestamptz' },
  VALUE: { column: 'value', type: 'numeric' },
  EXPECTED_CLOSE_DATE: { column: 'expected_close_date', type: 'date', nullable: true },
  TITLE: { column: 'title', type: 'text' },
} as const;

export const dealConnection = defineCollection(
  {
    name: 'Deal',
    table: 'deals',
    orders: ORDERS,
    orderInput: orderInputOf('Deal', Object.keys(ORDERS)),
    filter: { input: DealFilter, schema: dealFilter, sql: dealWhere },
    counter: 'statuses',
    rows: (db, ids) => db.deal.findMany({ where: { id: { in: ids } } }),
  },
  DealRef,
);

const own = (row: { accountId: string; id: string }) => ({ accountId: row.accountId, id: row.id });
builder.prismaObjectField(AccountRef, 'deals', dealConnection(null, (a: { id: string }) => ({ accountId: a.id, id: a.id })));
builder.prismaObjectField(ContactRef, 'deals', dealConnection('contact_id', own, "The contact's deals"));
builder.prismaObjectField(PipelineStageRef, 'deals', dealConnection('stage_id', own, 'The deals in this stage'));
builder.prismaObjectField(AccountRef, 'pipelineStages', (t) =>
  t.relation('pipelineStages', { description: 'In pipeline order (position, then oldest first)', query: { orderBy: STAGE_ORDER } }),
);

readById('pipelineStage', 'PipelineStage', (db) => db.pipelineStage);
