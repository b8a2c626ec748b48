// A proposal (docs/decisions.md §11), declared once (docs/fields.md#a-records-model): its GraphQL type, create and update
// inputs and rules derive from it (record.schema.ts, record.service.ts).
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { money, requiredText, uuid } from '../validation.js';

export const PROPOSAL_FIELDS = [
  { name: 'title', type: 'String', rule: requiredText(200), required: true, max: 200 },
  // The type answers `contact` (a key never reads §11 records).
  { name: 'contactId', type: 'ID', rule: uuid.nullish(), read: false },
  { name: 'amount', type: 'Float', rule: money.nullish() },
  { name: 'createdAt', type: 'DateTime' },
  { name: 'updatedAt', type: 'DateTime' },
] as const satisfies readonly FieldSpec[];

export const PROPOSAL_MODEL = { model: 'Proposal', table: 'proposals', kind: 'proposal', collection: 'proposals', fields: PROPOSAL_FIELDS } as const satisfies RecordModel;
