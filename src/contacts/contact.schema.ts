/** Mutation.createContact · updateContact · deleteContact · restoreContact · eraseContact */
import { WRITES } from '../graphql/limits.js';
import { builder } from '../graphql/builder.js';
import { recordObject } from '../graphql/record-object.js';
import { checked, ownRow } from '../graphql/rules.js';
import { ContactSource, ContactType } from '../generated/prisma/client.js';
import { ErasureReceipt } from '../graphql/changes.schema.js';
import { deleteById, restoreById, staleConflict, updateById, type ById } from '../writes/by-id.js';
import { TRASH_KINDS } from '../writes/trash.js';
import { byIdArgs, type ByIdArgs } from '../validation.js';
import { MESSAGES } from '../errors.js';
import { userActor } from '../events/types.js';
import { exposedFieldsOf, inputFieldsOf } from '../graphql/spec-fields.js';
import { CONTACT_FIELDS, CONTACT_MODEL } from './contact.model.js';
import {
  contactLinks,
  contactTarget,
  createContact,
  createContactInput,
  deleteContact,
  erasableContact,
  eraseContact,
  type ErasedContact,
  updateContact,
  updateContactArgs,
  type CreateContactInput,
} from './contact.service.js';
import type { RecordKey } from '../db/client.js';

export const ContactTypeEnum = builder.enumType(ContactType, { name: 'ContactType' });
export const ContactSourceEnum = builder.enumType(ContactSource, { name: 'ContactSource' });

export const ContactRef = recordObject('Contact', 'CONTACTS_READ', (t) => ({
  // Every field of the model, as stored (`t.expose` is typed by name; the model's names are checked against the datamodel).
  ...exposedFieldsOf(CONTACT_MODEL)(t as never),
  // A key reads the owner's id only (docs/decisions.md §15).
  owner: t.relation('owner', { nullable: true, embedded: ['id'] }),
}));

const CreateContactInputType = builder.inputType('CreateContactInput', {
  fields: (t) => ({ accountId: t.id({ required: true }), ...inputFieldsOf(CONTACT_FIELDS, 'create')(t) }),
});

builder.mutationField('createContact', (t) =>
  t.prismaField({
    type: 'Contact',
    args: { input: t.arg({ type: CreateContactInputType, required: true }) },
    rules: { access: 'member', scope: 'CONTACTS_WRITE', input: createContactInput, from: 'input', linked: contactLinks, limit: WRITES, idempotent: true },
    resolve: (_query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateContactInput>(info);
      // One statement, atomic by itself: without an Idempotency-Key no transaction is opened.
      return write((tx) => createContact(tx, input, userActor(viewer)), { oneStatement: true });
    },
  }),
);

// --- docs/decisions.md §12: update, delete, erase (REST: PATCH/DELETE /api/v1/contacts/{id}; the read is in contact-reads.schema.ts) ---

const UpdateContactInputType = builder.inputType('UpdateContactInput', {
  description: 'Absent = unchanged; null = cleared (Required for firstName, contactType, source). At least one field.',
  fields: inputFieldsOf(CONTACT_FIELDS, 'update'),
});

/** An item of createContacts and upsertContacts (src/batches/batch.schema.ts). */
export const BatchContactInput = builder.inputType('BatchContactInput', {
  description: 'CreateContactInput less accountId. Creating needs firstName; an upsert that matches changes only the fields given.',
  fields: inputFieldsOf(CONTACT_FIELDS, 'batch'),
});

const contact: ById<RecordKey> = { type: 'Contact', scope: 'CONTACTS_WRITE', limit: WRITES, target: contactTarget };

updateById(contact, { input: UpdateContactInputType, args: updateContactArgs, linked: contactLinks, update: updateContact, description: staleConflict('contact') });
deleteById(contact, { remove: deleteContact, description: 'Moves the contact to the trash (docs/trash.md); its deals, invoices, submissions and other records stay, unlinked.' });
restoreById(contact, TRASH_KINDS.contact, 'Brings the contact back from the trash (docs/trash.md) with every link it had; NOT_FOUND when the trash holds no such contact; BAD_USER_INPUT (TAKEN) when a unique value of it was taken since.');

builder.mutationField('eraseContact', (t) =>
  t.field({
    type: ErasureReceipt,
    nullable: true,
    description: 'Owner only (GDPR Art. 17): removes the contact and every stored copy of its data, in the trash too (never through it); deals and invoices stay, unlinked.',
    args: { id: t.arg.id({ required: true }) },
    rules: { access: 'owner', forbidden: MESSAGES.ownerOnly, input: byIdArgs, target: (args: ByIdArgs, ctx) => erasableContact(args, ctx.db), hidden: 'not-found', line: ownRow, idempotent: true },
    resolve: (_root, _args, _ctx, info) => {
      const { target: contact, viewer, write } = checked<ByIdArgs, ErasedContact>(info);
      return write((tx) => eraseContact(tx, contact, viewer!.id, userActor(viewer)));
    },
  }),
);
