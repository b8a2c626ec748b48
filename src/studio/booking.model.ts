// A booking (docs/decisions.md §11); that it ends after it starts is the record's rule across two fields (record.service.ts), declared once (docs/fields.md#a-records-model): its GraphQL type, create and update
// inputs and rules derive from it (record.schema.ts, record.service.ts).
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { z } from 'zod';
import { requiredText, uuid } from '../validation.js';

export const BOOKING_FIELDS = [
  { name: 'title', type: 'String', rule: requiredText(200), required: true, max: 200 },
  { name: 'startsAt', type: 'DateTime', rule: z.date(), required: true },
  { name: 'endsAt', type: 'DateTime', rule: z.date(), required: true },
  { name: 'contactId', type: 'ID', rule: uuid.nullish(), read: false },
  { name: 'createdAt', type: 'DateTime' },
  { name: 'updatedAt', type: 'DateTime' },
] as const satisfies readonly FieldSpec[];

export const BOOKING_MODEL = { model: 'Booking', table: 'bookings', kind: 'booking', collection: 'bookings', fields: BOOKING_FIELDS } as const satisfies RecordModel;
