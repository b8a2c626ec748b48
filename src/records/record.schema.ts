/** Mutation.createProposal · Mutation.createContract · Mutation.createGallery · Mutation.createBooking · Mutation.createWorkflow */
import type { InputObjectRef } from '@pothos/core';
import type { z } from 'zod';
import type { Context } from '../context.js';
import { builder } from '../graphql/builder.js';
import { checked } from '../graphql/rules.js';
import { userActor } from '../events/types.js';
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
} from './record.service.js';

builder.prismaObject('Proposal', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    title: t.exposeString('title'),
    amount: t.float({ nullable: true, resolve: (row) => row.amount?.toNumber() ?? null }),
    contact: t.relation('contact', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('Contract', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    title: t.exposeString('title'),
    contact: t.relation('contact', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('Gallery', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    title: t.exposeString('title'),
    contact: t.relation('contact', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('Booking', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    title: t.exposeString('title'),
    startsAt: t.expose('startsAt', { type: 'DateTime' }),
    endsAt: t.expose('endsAt', { type: 'DateTime' }),
    contact: t.relation('contact', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('Workflow', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    name: t.exposeString('name'),
    active: t.exposeBoolean('active'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

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
type Create = (db: Context['db'], input: never, actor: ReturnType<typeof userActor>) => Promise<{ id: string }>;

/** `create<Model>(input:)`: any member of the input's account (401 -> 400 -> 403 before the write). */
function createRecordField(name: string, model: RecordModel, inputType: InputRef, input: z.ZodType, create: Create) {
  builder.mutationField(name, (t) =>
    t.prismaField({
      type: model as 'Proposal',
      args: { input: t.arg({ type: inputType, required: true }) },
      rules: { access: 'member', input, from: 'input' },
      resolve: async (query, _root, _args, ctx, info) => {
        const { viewer, input } = checked(info);
        const { id } = await create(ctx.db, input as never, userActor(viewer));
        const delegate = ctx.db[(model.charAt(0).toLowerCase() + model.slice(1)) as 'proposal'];
        return delegate.findUniqueOrThrow({ ...query, where: { id } }) as never;
      },
    }),
  );
}

createRecordField('createProposal', 'Proposal', CreateProposalInput, createProposalInput, createProposal);
createRecordField('createContract', 'Contract', CreateContractInput, createContractInput, createContract);
createRecordField('createGallery', 'Gallery', CreateGalleryInput, createGalleryInput, createGallery);
createRecordField('createBooking', 'Booking', CreateBookingInput, createBookingInput, createBooking);
createRecordField('createWorkflow', 'Workflow', CreateWorkflowInput, createWorkflowInput, createWorkflow);
