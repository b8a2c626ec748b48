/** Mutation.createProposal · Mutation.createContract · Mutation.createGallery · Mutation.createBooking · Mutation.createWorkflow */
import type { InputObjectRef } from '@pothos/core';
import { z } from 'zod';
import { byIdArgs } from '../validation.js';
import { deleteById, updateById, type ById } from '../writes/by-id.js';
import type { Prisma } from '../generated/prisma/client.js';
import { builder } from '../graphql/builder.js';
import { recordObject } from '../graphql/record-object.js';
import { userActor, type Actor } from '../events/types.js';
import { checked } from '../graphql/rules.js';
import { linkedRows } from '../deals/deal.service.js';
import {
  createBooking,
  createBookingInput,
  createContract,
  createContractInput,
  createGallery,
  createGalleryInput,
  createProposal,
  createProposalInput,
  createWorkflow,
  createWorkflowInput,
  deleteRecord,
  recordTarget,
  updateBookingInput,
  updateContractInput,
  updateGalleryInput,
  updateProposalInput,
  updateRecord,
  updateWorkflowInput,
  type RecordModel as Model,
} from './record.service.js';
import type { RecordKey } from '../db/client.js';

export const ProposalRef = recordObject('Proposal', false, (t) => ({
  title: t.exposeString('title'),
  amount: t.float({ nullable: true, resolve: (row) => row.amount?.toNumber() ?? null }),
  contact: t.relation('contact', { nullable: true }),
}));

export const ContractRef = recordObject('Contract', false, (t) => ({
  title: t.exposeString('title'),
  contact: t.relation('contact', { nullable: true }),
}));

export const GalleryRef = recordObject('Gallery', false, (t) => ({
  title: t.exposeString('title'),
  contact: t.relation('contact', { nullable: true }),
}));

export const BookingRef = recordObject('Booking', false, (t) => ({
  title: t.exposeString('title'),
  startsAt: t.expose('startsAt', { type: 'DateTime' }),
  endsAt: t.expose('endsAt', { type: 'DateTime' }),
  contact: t.relation('contact', { nullable: true }),
}));

export const WorkflowRef = recordObject('Workflow', false, (t) => ({
  name: t.exposeString('name'),
  active: t.exposeBoolean('active'),
}));

const CreateProposalInput = builder.inputType('CreateProposalInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    title: t.string({ required: true }),
    contactId: t.id(),
    amount: t.float(),
  }),
});

const CreateContractInput = builder.inputType('CreateContractInput', {
  fields: (t) => ({ accountId: t.id({ required: true }), title: t.string({ required: true }), contactId: t.id() }),
});

const CreateGalleryInput = builder.inputType('CreateGalleryInput', {
  fields: (t) => ({ accountId: t.id({ required: true }), title: t.string({ required: true }), contactId: t.id() }),
});

const CreateBookingInput = builder.inputType('CreateBookingInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    title: t.string({ required: true }),
    startsAt: t.field({ type: 'DateTime', required: true }),
    endsAt: t.field({ type: 'DateTime', required: true }),
    contactId: t.id(),
  }),
});

const CreateWorkflowInput = builder.inputType('CreateWorkflowInput', {
  fields: (t) => ({ accountId: t.id({ required: true }), name: t.string({ required: true }), active: t.boolean() }),
});

type RecordModel = 'Proposal' | 'Contract' | 'Gallery' | 'Booking' | 'Workflow';
// Loose on purpose: the five input objects share this role, not one TypeScript type.
type InputRef = InputObjectRef<any, object>;
type Create = (db: Prisma.TransactionClient, input: never, actor: Actor, query: { select?: object; include?: object }) => Promise<unknown>;

/** `create<Model>(input:)`: any member of the input's account (401 -> 400 -> 403 before the write). */
function createRecordField(name: string, model: RecordModel, inputType: InputRef, input: z.ZodType, create: Create) {
  builder.mutationField(name, (t) =>
    t.prismaField({
      type: model as 'Proposal',
      args: { input: t.arg({ type: inputType, required: true }) },
      rules: { access: 'member', input, from: 'input', linked: linkedRows, idempotent: true },
      resolve: (query, _root, _args, _ctx, info) => {
        const { viewer, input: parsed, write } = checked(info);
        return write((tx) => create(tx, parsed as never, userActor(viewer), query)) as never;
      },
    }),
  );
}

createRecordField('createProposal', 'Proposal', CreateProposalInput, createProposalInput, createProposal);
createRecordField('createContract', 'Contract', CreateContractInput, createContractInput, createContract);
createRecordField('createGallery', 'Gallery', CreateGalleryInput, createGalleryInput, createGallery);
createRecordField('createBooking', 'Booking', CreateBookingInput, createBookingInput, createBooking);
createRecordField('createWorkflow', 'Workflow', CreateWorkflowInput, createWorkflowInput, createWorkflow);

// --- docs/decisions.md §12: update<Model>(id:, input:) and delete<Model>(id:) ----------------------

const UpdateProposalInput = builder.inputType('UpdateProposalInput', {
  description: 'Absent = unchanged; null clears contactId and amount, and is Required for title. At least one field.',
  fields: (t) => ({ title: t.string(), contactId: t.id(), amount: t.float() }),
});
const titledUpdate = (name: string) =>
  builder.inputType(name, {
    description: 'Absent = unchanged; null clears contactId, and is Required for title. At least one field.',
    fields: (t) => ({ title: t.string(), contactId: t.id() }),
  });
const UpdateBookingInput = builder.inputType('UpdateBookingInput', {
  description: 'Absent = unchanged; null clears contactId, and is Required for the others. endsAt stays after startsAt. At least one field.',
  fields: (t) => ({ title: t.string(), startsAt: t.field({ type: 'DateTime' }), endsAt: t.field({ type: 'DateTime' }), contactId: t.id() }),
});
const UpdateWorkflowInput = builder.inputType('UpdateWorkflowInput', {
  description: 'Absent = unchanged; null is Required for both. At least one field.',
  fields: (t) => ({ name: t.string(), active: t.boolean() }),
});

function changeRecordFields(type: RecordModel, inputType: InputRef, input: z.ZodType) {
  const model = type.toLowerCase() as Model;
  const record: ById<RecordKey> = { type, target: recordTarget(model) };
  updateById<RecordKey, { input: Record<string, unknown> }>(record, {
    input: inputType,
    args: z.object({ id: byIdArgs.shape.id, input }),
    linked: linkedRows,
    update: (tx, key, args, query, actor) => updateRecord(tx, model, key, args.input, query, actor),
    guarded: false,
  });
  deleteById(record, { remove: (tx, key, actor) => deleteRecord(tx, model, key, actor) });
}

changeRecordFields('Proposal', UpdateProposalInput, updateProposalInput);
changeRecordFields('Contract', titledUpdate('UpdateContractInput'), updateContractInput);
changeRecordFields('Gallery', titledUpdate('UpdateGalleryInput'), updateGalleryInput);
changeRecordFields('Booking', UpdateBookingInput, updateBookingInput);
changeRecordFields('Workflow', UpdateWorkflowInput, updateWorkflowInput);
