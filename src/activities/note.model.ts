// A note, declared once (docs/fields.md#a-records-model): its fields in order, and what each door
// takes and shows of it (docs/decisions.md §21). The GraphQL type and inputs, the create rule (and
// the update rule derived from it) and the REST fragment follow from here.
import { z } from 'zod';
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { optionalUuid, text } from '../validation.js';

export const NOTE_MAX = 10_000;

/** Markdown, kept exactly as given (never trimmed, never rendered); counted in characters as PostgreSQL's varchar counts them. */
const body = text()
  .refine((value) => value.trim() !== '', 'Required')
  .refine((value) => [...value].length <= NOTE_MAX, `Must be at most ${NOTE_MAX} characters`);

const of = (description: string) => ({ create: description, update: description });

/**
 * What a note or a task is about: its contact, deal and company, each a record of the same account
 * (a note needs one at least: `targetless`, src/links/targets.ts). The types answer each id and its relation.
 */
export const ACTIVITY_TARGETS = [
  { name: 'contactId', type: 'ID', rule: optionalUuid, description: of('A contact of the account') },
  { name: 'dealId', type: 'ID', rule: optionalUuid, description: of('A deal of the account') },
  { name: 'companyId', type: 'ID', rule: optionalUuid, description: of('A company of the account') },
] as const satisfies readonly FieldSpec[];

export const NOTE_FIELDS = [
  {
    name: 'body', type: 'String', rule: body, required: true, max: NOTE_MAX,
    description: { create: 'Markdown, at most 10,000 characters, stored as given', read: 'Markdown, exactly as written (never trimmed); the service renders no HTML of it.' },
  },
  { name: 'pinned', type: 'Boolean', rule: z.boolean().nullish().transform((value) => value ?? false), description: { read: "Pinned notes come first in a record's notes." } },
  // Who wrote it, set by the create from its caller (null for an API key).
  { name: 'authorId', type: 'ID' },
  ...ACTIVITY_TARGETS,
  { name: 'createdAt', type: 'DateTime' },
  { name: 'updatedAt', type: 'DateTime' },
] as const satisfies readonly FieldSpec[];

export const NOTE_MODEL = { model: 'Note', table: 'notes', kind: 'note', collection: 'notes', fields: NOTE_FIELDS } as const satisfies RecordModel;
