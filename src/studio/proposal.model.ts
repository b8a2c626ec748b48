// A proposal (docs/decisions.md §11), declared once (docs/fields.md#a-records-model): its GraphQL type, create and update
// inputs and rules derive from it (record.schema.ts, record.service.ts).
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { TITLE, CONTACT_ID, STAMPS } from './shared-fields.js';
import { money } from '../validation.js';

export const PROPOSAL_FIELDS = [
  TITLE,
  CONTACT_ID,
  { name: 'amount', type: 'Float', rule: money.nullish() },
  ...STAMPS,
] as const satisfies readonly FieldSpec[];

export const PROPOSAL_MODEL = { model: 'Proposal', table: 'proposals', kind: 'proposal', collection: 'proposals', fields: PROPOSAL_FIELDS } as const satisfies RecordModel;
