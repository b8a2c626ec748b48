/** Mutation.createNote · updateNote · deleteNote (docs/decisions.md §21) */
import { builder } from '../graphql/builder.js';
import { CONTACT_EMBEDDED } from '../contacts/contact.fields.js';
import { checked, ownRow } from '../graphql/rules.js';
import type { Prisma } from '../generated/prisma/client.js';
import { DeletedRecord } from '../graphql/changes.schema.js';
import { byIdArgs, type ByIdArgs } from '../validation.js';
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
  type NoteKey,
  type UpdateNoteArgs,
} from './note.service.js';

export const NoteRef = builder.prismaObject('Note', {
  keyScope: 'ACTIVITIES_READ',
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    body: t.exposeString('body', { description: 'Markdown, exactly as written (never trimmed); the service renders no HTML of it.' }),
    pinned: t.exposeBoolean('pinned', { description: "Pinned notes come first in a record's notes." }),
    authorId: t.exposeID('authorId', { nullable: true }),
    // A key reads the author's id only: people are never a key's to read (docs/decisions.md §15).
    author: t.relation('author', { nullable: true, embedded: ['id'], description: 'Who wrote it; null when an API key did or the person is gone' }),
    contactId: t.exposeID('contactId', { nullable: true }),
    contact: t.relation('contact', { nullable: true, embedded: CONTACT_EMBEDDED }),
    dealId: t.exposeID('dealId', { nullable: true }),
    deal: t.relation('deal', { nullable: true }),
    companyId: t.exposeID('companyId', { nullable: true }),
    company: t.relation('company', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

/** The targets of a note or a task: at least one, each a record of the same account. */
export const targetFields = (t: any) => ({
  contactId: t.id({ description: 'A contact of the account' }),
  dealId: t.id({ description: 'A deal of the account' }),
  companyId: t.id({ description: 'A company of the account' }),
});

const fields = (t: any, create: boolean) => ({
  ...(create ? { accountId: t.id({ required: true }), body: t.string({ required: true, description: 'Markdown, at most 10,000 characters, stored as given' }) } : { body: t.string() }),
  pinned: t.boolean(),
  ...targetFields(t),
});

const CreateNoteInputType = builder.inputType('CreateNoteInput', { description: 'At least one of contactId, dealId, companyId.', fields: (t) => fields(t, true) });
const UpdateNoteInputType = builder.inputType('UpdateNoteInput', {
  description: 'Absent = unchanged; null = cleared (Required for body and pinned). At least one field; a target must remain.',
  fields: (t) => fields(t, false),
});

const target = (args: ByIdArgs, ctx: { db: Prisma.TransactionClient }) => noteTarget(args, ctx.db);
export const ACTIVITY_WRITES = { max: 60, window: '1m', per: 'user' } as const;

builder.mutationFields((t) => ({
  createNote: t.prismaField({
    type: 'Note',
    args: { input: t.arg({ type: CreateNoteInputType, required: true }) },
    rules: { access: 'member', scope: 'ACTIVITIES_WRITE', input: createNoteInput, from: 'input', linked: activityLinks, limit: ACTIVITY_WRITES, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateNoteInput>(info);
      const authorId = viewer && !viewer.apiKey ? viewer.id : null;
      return write((tx) => createNote(tx, input, authorId, userActor(viewer), query));
    },
  }),
  updateNote: t.prismaField({
    type: 'Note',
    nullable: true,
    description: 'CONFLICT (with currentUpdatedAt) when expectedUpdatedAt is given and the note changed since; nothing is written.',
    args: {
      id: t.arg.id({ required: true }),
      input: t.arg({ type: UpdateNoteInputType, required: true }),
      expectedUpdatedAt: t.arg({ type: 'DateTime' }),
    },
    rules: { access: 'member', scope: 'ACTIVITIES_WRITE', input: updateNoteArgs, linked: activityLinks, target, hidden: 'not-found', line: ownRow, limit: ACTIVITY_WRITES, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, target: note, write } = checked<UpdateNoteArgs, NoteKey>(info);
      return write((tx) => updateNote(tx, note, input, query, userActor(viewer)));
    },
  }),
  deleteNote: t.field({
    type: DeletedRecord,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    rules: { access: 'member', scope: 'ACTIVITIES_WRITE', input: byIdArgs, target, hidden: 'not-found', line: ownRow, limit: ACTIVITY_WRITES, idempotent: true },
    resolve: (_root, _args, _ctx, info) => {
      const { viewer, target: note, write } = checked<ByIdArgs, NoteKey>(info);
      return write((tx) => deleteNote(tx, note, userActor(viewer)));
    },
  }),
}));
