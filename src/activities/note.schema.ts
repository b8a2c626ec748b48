/** Mutation.createNote · updateNote · deleteNote (docs/decisions.md §21) */
import { builder } from '../graphql/builder.js';
import { recordObject } from '../graphql/record-object.js';
import { exposedFieldsOf, inputFieldsOf } from '../graphql/spec-fields.js';
import { NOTE_FIELDS, NOTE_MODEL } from './note.model.js';
import { ACTIVITY_WRITES } from '../graphql/limits.js';
import { checked } from '../graphql/rules.js';
import { deleteById, staleConflict, updateById, type ById } from '../writes/by-id.js';
import { CONTACT_EMBEDDED } from '../contacts/contact.model.js';
import { userActor } from '../events/types.js';
import {
  activityLinks,
  createNote,
  createNoteInput,
  deleteNote,
  noteTarget,
  updateNote,
  updateNoteArgs,
  type CreateNoteInput,
} from './note.service.js';
import type { RecordKey } from '../db/client.js';

/** What a note or a task is about: its contact, deal and company (the ids are the model's fields). */
export const targetRelations = (t: any) => ({
  contact: t.relation('contact', { nullable: true, embedded: CONTACT_EMBEDDED }),
  deal: t.relation('deal', { nullable: true }),
  company: t.relation('company', { nullable: true }),
});

export const NoteRef = recordObject('Note', 'ACTIVITIES_READ', (t) => ({
  // Every field of the model, as stored (docs/fields.md#a-records-model).
  ...exposedFieldsOf(NOTE_MODEL)(t as never),
  // A key reads the author's id only: people are never a key's to read (docs/decisions.md §15).
  author: t.relation('author', { nullable: true, embedded: ['id'], description: 'Who wrote it; null when an API key did or the person is gone' }),
  ...targetRelations(t),
}));

const CreateNoteInputType = builder.inputType('CreateNoteInput', {
  description: 'At least one of contactId, dealId, companyId.',
  fields: (t) => ({ accountId: t.id({ required: true }), ...inputFieldsOf(NOTE_FIELDS, 'create')(t) }),
});
const UpdateNoteInputType = builder.inputType('UpdateNoteInput', {
  description: 'Absent = unchanged; null = cleared (Required for body and pinned). At least one field; a target must remain.',
  fields: inputFieldsOf(NOTE_FIELDS, 'update'),
});

const note: ById<RecordKey> = { type: 'Note', scope: 'ACTIVITIES_WRITE', limit: ACTIVITY_WRITES, target: noteTarget };

builder.mutationField('createNote', (t) =>
  t.prismaField({
    type: 'Note',
    args: { input: t.arg({ type: CreateNoteInputType, required: true }) },
    rules: { access: 'member', scope: 'ACTIVITIES_WRITE', input: createNoteInput, from: 'input', linked: activityLinks, limit: ACTIVITY_WRITES, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateNoteInput>(info);
      const authorId = viewer && !viewer.apiKey ? viewer.id : null;
      return write((tx) => createNote(tx, input, authorId, userActor(viewer), query));
    },
  }),
);
updateById(note, { input: UpdateNoteInputType, args: updateNoteArgs, linked: activityLinks, update: updateNote, description: staleConflict('note') });
deleteById(note, { remove: deleteNote });
