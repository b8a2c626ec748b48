// A workflow (docs/decisions.md §11), declared once (docs/fields.md#a-records-model): its GraphQL type, create and update
// inputs and rules derive from it (record.schema.ts, record.service.ts).
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { STAMPS } from './shared-fields.js';
import { z } from 'zod';
import { requiredText } from '../validation.js';

export const WORKFLOW_FIELDS = [
  { name: 'name', type: 'String', rule: requiredText(200), required: true, max: 200 },
  { name: 'active', type: 'Boolean', rule: z.boolean().nullish().transform((value) => value ?? true), description: { create: 'Default true.' } },
  ...STAMPS,
] as const satisfies readonly FieldSpec[];

export const WORKFLOW_MODEL = { model: 'Workflow', table: 'workflows', kind: 'workflow', collection: 'workflows', fields: WORKFLOW_FIELDS } as const satisfies RecordModel;
