/** Mutation.createProposal · Mutation.createContract · Mutation.createGallery · Mutation.createBooking · Mutation.createWorkflow */
import type { InputObjectRef } from '@pothos/core';
import { z } from 'zod';
import { byIdArgs } from '../validation.js';
import { deleteById, updateById, type ById } from '../writes/by-id.js';
import type { Prisma } from '../generated/prisma/client.js';
import { builder } from '../graphql/builder.js';
import type { FieldLimit } from '../graphql/field-rules.js';
import { WRITES } from '../graphql/limits.js';
import { recordObject } from '../graphql/record-object.js';
import { exposedFieldsOf, inputFieldsOf } from '../graphql/spec-fields.js';
import type { FieldSpec, RecordModel as FieldModel } from '../model/field-spec.js';
import { PROPOSAL_FIELDS, PROPOSAL_MODEL } from './proposal.model.js';
import { CONTRACT_FIELDS, CONTRACT_MODEL } from './contract.model.js';
import { GALLERY_FIELDS, GALLERY_MODEL } from './gallery.model.js';
import { BOOKING_FIELDS, BOOKING_MODEL } from './booking.model.js';
import { WORKFLOW_FIELDS, WORKFLOW_MODEL } from './workflow.model.js';
import { ACTION_TYPES, CONDITION_OPS } from './workflow-rules.js';
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

/** A §11 record's type: its model's fields as stored, and its contact where it names one (a key never reads these records). */
const studioObject = <Name extends 'Proposal' | 'Contract' | 'Gallery' | 'Booking'>(name: Name, model: FieldModel) =>
  recordObject(name, false, (t) => ({ ...exposedFieldsOf(model)(t as never), contact: t.relation('contact', { nullable: true }) }));

export const ProposalRef = studioObject('Proposal', PROPOSAL_MODEL);
export const ContractRef = studioObject('Contract', CONTRACT_MODEL);
export const GalleryRef = studioObject('Gallery', GALLERY_MODEL);
export const BookingRef = studioObject('Booking', BOOKING_MODEL);
export const WorkflowRef = recordObject('Workflow', 'WORKFLOWS_READ', (t) => exposedFieldsOf(WORKFLOW_MODEL)(t as never));

// A workflow's trigger and actions as its inputs take them (docs/workflows.md); params are JSON with snake_case keys.
export const WorkflowConditionOpEnum = builder.enumType('WorkflowConditionOp', { values: CONDITION_OPS });
export const WorkflowActionTypeEnum = builder.enumType('WorkflowActionType', { values: ACTION_TYPES });
const WorkflowConditionInput = builder.inputType('WorkflowConditionInput', {
  fields: (t) => ({
    path: t.string({ required: true, description: '`object.<field>`, `previous.<field>` or `object.custom_fields.<key>`' }),
    op: t.field({ type: WorkflowConditionOpEnum, required: true }),
    value: t.field({ type: 'JSON', description: 'Of the field\'s type; a list for `in`; true or false for `is_set`; none for `changed`' }),
  }),
});
const WorkflowTriggerInput = builder.inputType('WorkflowTriggerInput', {
  fields: (t) => ({
    event: t.string({ required: true, description: 'An event type of the catalogue (docs/events.md)' }),
    conditions: t.field({ type: [WorkflowConditionInput], description: 'ANDed; none: every event of the type' }),
  }),
});
const WorkflowActionInput = builder.inputType('WorkflowActionInput', {
  fields: (t) => ({ type: t.field({ type: WorkflowActionTypeEnum, required: true }), params: t.field({ type: 'JSON', description: 'As docs/workflows.md#steps spells them' }) }),
});
/** The trigger and actions beside a workflow's own fields: null trigger never runs; actions given replace the list. */
const workflowFields = (t: PothosSchemaTypes.InputFieldBuilder<any, 'InputObject'>) => ({
  trigger: t.field({ type: WorkflowTriggerInput, description: 'When it runs; null: never' }),
  actions: t.field({ type: [WorkflowActionInput], description: 'What it does, in order (at most 20); given, replaces the list' }),
});

/** The create input of a model: its account, then each field the model lets a client write. */
const createInputOf = (name: string, fields: readonly FieldSpec[]) =>
  builder.inputType(name, { fields: (t) => ({ accountId: t.id({ required: true }), ...inputFieldsOf(fields, 'create')(t) }) });

const CreateProposalInput = createInputOf('CreateProposalInput', PROPOSAL_FIELDS);
const CreateContractInput = createInputOf('CreateContractInput', CONTRACT_FIELDS);
const CreateGalleryInput = createInputOf('CreateGalleryInput', GALLERY_FIELDS);
const CreateBookingInput = createInputOf('CreateBookingInput', BOOKING_FIELDS);
const CreateWorkflowInput = builder.inputType('CreateWorkflowInput', {
  fields: (t) => ({ accountId: t.id({ required: true }), ...inputFieldsOf(WORKFLOW_FIELDS, 'create')(t), ...workflowFields(t) }),
});

type RecordModel = 'Proposal' | 'Contract' | 'Gallery' | 'Booking' | 'Workflow';
// Loose on purpose: the five input objects share this role, not one TypeScript type.
type InputRef = InputObjectRef<any, object>;
type Create = (db: Prisma.TransactionClient, input: never, actor: Actor, query: { select?: object; include?: object }) => Promise<unknown>;

/** `create<Model>(input:)`: any member of the input's account (401 -> 400 -> 403 before the write). */
function createRecordField(name: string, model: RecordModel, inputType: InputRef, input: z.ZodType, create: Create, limit?: FieldLimit) {
  builder.mutationField(name, (t) =>
    t.prismaField({
      type: model as 'Proposal',
      args: { input: t.arg({ type: inputType, required: true }) },
      rules: { access: 'member', input, from: 'input', linked: linkedRows, idempotent: true, limit },
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
// Workflows have REST routes (docs/workflows.md), and a REST route spends no cost budget: their writes are limited.
createRecordField('createWorkflow', 'Workflow', CreateWorkflowInput, createWorkflowInput, createWorkflow, WRITES);

// --- docs/decisions.md §12: update<Model>(id:, input:) and delete<Model>(id:) ----------------------

const updateInputOf = (name: string, fields: readonly FieldSpec[], description: string) => builder.inputType(name, { description, fields: inputFieldsOf(fields, 'update') });
const UpdateProposalInput = updateInputOf('UpdateProposalInput', PROPOSAL_FIELDS, 'Absent = unchanged; null clears contactId and amount, and is Required for title. At least one field.');
const titledUpdate = (name: string, fields: readonly FieldSpec[]) =>
  updateInputOf(name, fields, 'Absent = unchanged; null clears contactId, and is Required for title. At least one field.');
const UpdateBookingInput = updateInputOf(
  'UpdateBookingInput',
  BOOKING_FIELDS,
  'Absent = unchanged; null clears contactId, and is Required for the others. endsAt stays after startsAt. At least one field.',
);
const UpdateWorkflowInput = builder.inputType('UpdateWorkflowInput', {
  description: 'Absent = unchanged; null is Required for name, active and actions, and clears trigger (never runs). At least one field.',
  fields: (t) => ({ ...inputFieldsOf(WORKFLOW_FIELDS, 'update')(t), ...workflowFields(t) }),
});

function changeRecordFields(type: RecordModel, inputType: InputRef, input: z.ZodType, limit?: FieldLimit) {
  const model = type.toLowerCase() as Model;
  const record: ById<RecordKey> = { type, target: recordTarget(model), limit };
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
changeRecordFields('Contract', titledUpdate('UpdateContractInput', CONTRACT_FIELDS), updateContractInput);
changeRecordFields('Gallery', titledUpdate('UpdateGalleryInput', GALLERY_FIELDS), updateGalleryInput);
changeRecordFields('Booking', UpdateBookingInput, updateBookingInput);
changeRecordFields('Workflow', UpdateWorkflowInput, updateWorkflowInput, WRITES);
