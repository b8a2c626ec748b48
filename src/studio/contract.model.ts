// A contract (docs/decisions.md §11), declared once (docs/fields.md#a-records-model): its GraphQL type, create and update
// inputs and rules derive from it (record.schema.ts, record.service.ts).
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { TITLE, CONTACT_ID, STAMPS } from './shared-fields.js';

export const CONTRACT_FIELDS = [TITLE, CONTACT_ID, ...STAMPS] as const satisfies readonly FieldSpec[];

export const CONTRACT_MODEL = { model: 'Contract', table: 'contracts', kind: 'contract', collection: 'contracts', fields: CONTRACT_FIELDS } as const satisfies RecordModel;
