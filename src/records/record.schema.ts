/** Mutation.createProposal · Mutation.createContract · Mutation.createGallery · Mutation.createBooking · Mutation.createWorkflow */
import { builder } from '../graphql/builder.js';
import { guard } from '../graphql/guard.js';
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

// Any member may create these records; guard checks 401 -> 400 -> 403 before the write.
builder.mutationFields((t) => ({
  createProposal: t.prismaField({
    type: 'Proposal',
    args: { input: t.arg({ type: CreateProposalInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: createProposalInput, args: args.input });
      return createProposal(ctx.db, input, query);
    },
  }),
  createContract: t.prismaField({
    type: 'Contract',
    args: { input: t.arg({ type: CreateContractInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: createContractInput, args: args.input });
      return createContract(ctx.db, input, query);
    },
  }),
  createGallery: t.prismaField({
    type: 'Gallery',
    args: { input: t.arg({ type: CreateGalleryInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: createGalleryInput, args: args.input });
      return createGallery(ctx.db, input, query);
    },
  }),
  createBooking: t.prismaField({
    type: 'Booking',
    args: { input: t.arg({ type: CreateBookingInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: createBookingInput, args: args.input });
      return createBooking(ctx.db, input, query);
    },
  }),
  createWorkflow: t.prismaField({
    type: 'Workflow',
    args: { input: t.arg({ type: CreateWorkflowInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: createWorkflowInput, args: args.input });
      return createWorkflow(ctx.db, input, query);
    },
  }),
}));
