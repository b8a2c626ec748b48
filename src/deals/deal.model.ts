// A deal, declared once (docs/fields.md#a-records-model): its fields in order, and what each door
// takes and shows of it. The GraphQL type and inputs, the create rule (and the update and batch
// rules derived from it), the REST fragments, the import columns and the events follow from here.
import { z } from 'zod';
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { CUSTOM_VALUES } from '../model/shapes.js';
import { CONTACT_EMBED } from '../contacts/contact.model.js';
import { day, externalId, money, optionalUuid, requiredText, TYPE_MESSAGES } from '../validation.js';

const EXTERNAL_ID = 'At most 255 characters; unique in the account.';
const OWNER = "The account's owner or one of its members; none: unowned.";

export const DEAL_FIELDS = [
  { name: 'title', type: 'String', rule: requiredText(200), required: true, max: 200, import: { aliases: ['Deal Name', 'Deal - Title', 'Opportunity Name'] }, createAnswer: true },
  // The type answers `contact` and `stage` (the REST item embeds them): the ids are inputs only.
  { name: 'contactId', type: 'ID', rule: optionalUuid, read: false, item: false, import: { aliases: [/* e-mails, read as contact_email (src/imports/columns.ts) */ 'Contact Email', 'Person - Email', 'Person - Email - Work'] } },
  { name: 'stageId', type: 'ID', rule: optionalUuid, read: false, item: false, import: { aliases: [/* names, read as stage_name (src/imports/columns.ts) */ 'Deal Stage', 'Deal - Stage', 'Stage'] } },
  {
    name: 'value', type: 'Float', rule: money.nullish().transform((value) => value ?? 0), import: { aliases: ['Amount', 'Deal - Value'] }, createAnswer: true,
    description: { create: 'Default 0; 0 to 9999999999.99, at most two decimals.', update: '0 to 9999999999.99, at most two decimals.' },
  },
  {
    name: 'probability', type: 'Float', import: { aliases: ['Probability (%)', 'Deal - Probability'] }, createAnswer: true,
    rule: z.number({ error: TYPE_MESSAGES.number }).min(0, 'Must be from 0 to 100').max(100, 'Must be from 0 to 100').nullish().transform((value) => value ?? 50),
    description: { create: 'Default 50; 0 to 100.', update: '0 to 100.' },
  },
  // Set by setDealStatus alone (docs/decisions.md §8).
  { name: 'status', type: 'DealStatus', createAnswer: true },
  { name: 'expectedCloseDate', type: 'Date', rule: day.nullish().transform((value) => value ?? null), import: { aliases: ['Close Date', 'Deal - Expected close date'] } },
  {
    name: 'externalId', type: 'String', rule: externalId, import: { aliases: ['Record ID', 'Deal - ID', 'Opportunity ID'] }, createAnswer: true,
    description: { create: EXTERNAL_ID, update: EXTERNAL_ID, batch: EXTERNAL_ID, read: 'Its id in the integrating system; unique in the account where present.' },
  },
  { name: 'closedAt', type: 'DateTime', item: false, description: { read: 'When the deal left open; null while open.' } },
  { name: 'companyId', type: 'ID', rule: optionalUuid, description: { create: 'A company of the account', update: 'A company of the account' } },
  { name: 'ownerId', type: 'ID', rule: optionalUuid, description: { create: OWNER, update: OWNER } },
  { name: 'createdAt', type: 'DateTime', item: false, createAnswer: true, import: { aliases: ['Create Date', 'Created Date', 'Created', 'Deal - Deal created'] } },
  // The account's own fields (docs/custom-fields.md): one JSON object of values, judged by the account's definitions.
  CUSTOM_VALUES,
  { name: 'updatedAt', type: 'DateTime' },
] as const satisfies readonly FieldSpec[];

export const DEAL_MODEL = {
  model: 'Deal', table: 'deals', kind: 'deal', collection: 'deals', fields: DEAL_FIELDS,
  embeds: { ...CONTACT_EMBED, pipeline_stages: 'stage {\n    id\n    name\n  }' },
} as const satisfies RecordModel;
