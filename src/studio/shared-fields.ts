// The fields the §11 records share (docs/decisions.md §11), declared once for their models.
import type { FieldSpec } from '../model/field-spec.js';
import { requiredText, uuid } from '../validation.js';

export const TITLE = { name: 'title', type: 'String', rule: requiredText(200), required: true, max: 200 } as const satisfies FieldSpec;
/** The type answers `contact` (a key never reads §11 records). */
export const CONTACT_ID = { name: 'contactId', type: 'ID', rule: uuid.nullish(), read: false } as const satisfies FieldSpec;
/** Set by the service, last in every answer. */
export const STAMPS = [{ name: 'createdAt', type: 'DateTime' }, { name: 'updatedAt', type: 'DateTime' }] as const satisfies readonly FieldSpec[];
