/** The deals collection (docs/fields.md#adding-a-filter) · Query.deals · Query.deal · Query.pipelineStage · Account.deals · Contact.deals · PipelineStage.deals · Account.pipelineStages */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { contacts } from '../contacts/contact-reads.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { builder } from '../graphql/builder.js';
import { anyOf, col as c, EXTERNAL_ID, filtersOf, idIn, from, oneOrMore, ownerMe, OWNER_ID, timeRanges, TIME_ORDERS, until, type Collection } from '../graphql/collection.js';
import { defineCollection, orderInputOf } from '../graphql/connection.js';
import { CUSTOM_FIELDS } from '../graphql/custom-field-filter.js';
import { DEAL_MODEL } from './deal.model.js';
import { pageField } from '../graphql/page.js';
import { readById } from '../graphql/reads.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { DealStatus, Prisma } from '../generated/prisma/client.js';
import { ownOrContactNameMatches } from '../contacts/contact-search.js';
import { searchText, uuid } from '../validation.js';
import { DealRef, DealStatusEnum } from './deal.schema.js';
import { PipelineStageRef } from './stage.schema.js';
import { STAGE_ORDER, STAGES_PER_ACCOUNT } from './stage.service.js';

/** Read only as a deal's relation. */
const stages = { name: 'PipelineStage', model: 'PipelineStage', table: 'pipeline_stages', json: true, orders: {} } satisfies Collection;

const ORDERS = {
  ...TIME_ORDERS,
  VALUE: { column: 'value', type: 'numeric' },
  EXPECTED_CLOSE_DATE: { column: 'expected_close_date', type: 'date', nullable: true },
  TITLE: { column: 'title', type: 'text' },
} as const;

const date = (t: any) => t.field({ type: 'Date' });
const money = (column: string, op: '>=' | '<=') => ({
  field: (t: any) => t.float({ description: 'Inclusive' }),
  schema: z.number().finite().nullish(),
  sql: (v: number) => Prisma.sql`${c(column)} ${Prisma.raw(op)} CAST(${String(v)} AS numeric)`,
});

export const deals = {
  name: 'Deal',
  model: 'Deal',
  table: 'deals',
  json: true,
  orders: ORDERS,
  orderInput: orderInputOf('Deal', Object.keys(ORDERS), { custom: true }),
  custom: DEAL_MODEL,
  filter: filtersOf('DealFilter', {
    search: {
      field: (t) => t.string({ description: "Case-insensitive substring of the title or of the contact's \"first last\" name" }),
      schema: searchText,
      sql: (v: string) => ownOrContactNameMatches('deals', 'title', v),
      page: 'search',
    },
    statuses: oneOrMore(DealStatusEnum, z.enum(DealStatus), anyOf('status', 'deal_status'), { page: 'status' }),
    externalId: EXTERNAL_ID,
    contactId: idIn('contact_id', 'contactId'),
    stageIds: oneOrMore('ID', uuid, anyOf('stage_id', 'uuid'), { page: 'stageId', max: [100, 'At most 100 ids'] }),
    ownerId: OWNER_ID,
    companyId: idIn('company_id', 'companyId'),
    minValue: money('value', '>='),
    maxValue: money('value', '<='),
    expectedCloseAfter: { field: date, schema: z.date().nullish(), sql: from('expected_close_date', 'date') },
    expectedCloseBefore: { field: date, schema: z.date().nullish(), sql: until('expected_close_date', 'date') },
    customFields: CUSTOM_FIELDS,
    ...timeRanges(),
  }),
  relations: { contact: { to: contacts, by: 'contact_id' }, stage: { to: stages, by: 'stage_id' } },
  counter: 'statuses',
  narrow: (filter, ctx) => ownerMe(filter, ctx),
} satisfies Collection;

/** Query.deals: REST's GET /deals. */
export const dealsPage = pageField('deals', deals, 'DEALS_READ');

export const dealConnection = defineCollection(deals, DealRef);
builder.prismaObjectField(AccountRef, 'deals', dealConnection(null));
builder.prismaObjectField(ContactRef, 'deals', dealConnection('contact_id', "The contact's deals"));
builder.prismaObjectField(PipelineStageRef, 'deals', dealConnection('stage_id', 'The deals in this stage'));
builder.prismaObjectField(AccountRef, 'pipelineStages', (t) =>
  t.relation('pipelineStages', { description: 'In pipeline order (position, then oldest first)', maxItems: STAGES_PER_ACCOUNT, query: { orderBy: STAGE_ORDER } }),
);

/** Query.deal: REST's GET /deals/{id}. */
readById('deal', 'Deal', (db) => db.deal, 'DEALS_READ', READS_BEYOND_CONTRACT);
readById('pipelineStage', 'PipelineStage', (db) => db.pipelineStage, 'DEALS_READ');
