// A booking (docs/decisions.md §11); that it ends after it starts is the record's rule across two fields (record.service.ts), declared once (docs/fields.md#a-records-model): its GraphQL type, create and update
// inputs and rules derive from it (record.schema.ts, record.service.ts).
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { TITLE, CONTACT_ID, STAMPS } from './shared-fields.js';
import { z } from 'zod';

export const BOOKING_FIELDS = [
  TITLE,
  { name: 'startsAt', type: 'DateTime', rule: z.date(), required: true },
  { name: 'endsAt', type: 'DateTime', rule: z.date(), required: true },
  CONTACT_ID,
  ...STAMPS,
] as const satisfies readonly FieldSpec[];

export const BOOKING_MODEL = { model: 'Booking', table: 'bookings', kind: 'booking', collection: 'bookings', fields: BOOKING_FIELDS } as const satisfies RecordModel;
