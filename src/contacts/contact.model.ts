// A contact, declared once (docs/fields.md#a-records-model): its fields (contact.fields.ts, in order)
// and where it lives; every door derives from this and the account's own fields (src/model/shapes.ts).
import type { RecordModel } from '../field-spec.js';
import { CONTACT_FIELDS } from './contact.fields.js';

export const CONTACT_MODEL = { model: 'Contact', table: 'contacts', kind: 'contact', collection: 'contacts', fields: CONTACT_FIELDS } as const satisfies RecordModel;
