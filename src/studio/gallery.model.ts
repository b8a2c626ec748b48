// A gallery (docs/decisions.md §11), declared once (docs/fields.md#a-records-model): its GraphQL type, create and update
// inputs and rules derive from it (record.schema.ts, record.service.ts).
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { TITLE, CONTACT_ID, STAMPS } from './shared-fields.js';

export const GALLERY_FIELDS = [TITLE, CONTACT_ID, ...STAMPS] as const satisfies readonly FieldSpec[];

export const GALLERY_MODEL = { model: 'Gallery', table: 'galleries', kind: 'gallery', collection: 'galleries', fields: GALLERY_FIELDS } as const satisfies RecordModel;
