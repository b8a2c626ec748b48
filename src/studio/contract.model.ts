// A contract (docs/decisions.md §11), declared once (docs/fields.md#a-records-model): its GraphQL type, create and update
// inputs and rules derive from it (record.schema.ts, record.service.ts).
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { requiredText, uuid } from '../validation.js';

export const CONTRACT_FIELDS = [
  { name: 'title', type: 'String', rule: requiredText(200), required: true, max: 200 },
  { name: 'contactId', type: 'ID', rule: uuid.nullish(), read: false },
  { name: 'createdAt', type: 'DateTime' },
  { name: 'updatedAt', type: 'DateTime' },
] as const satisfies readonly FieldSpec[];

export const CONTRACT_MODEL = { model: 'Contract', table: 'contracts', kind: 'contract', collection: 'contracts', fields: CONTRACT_FIELDS } as const satisfies RecordModel;
