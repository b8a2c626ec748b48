/** Query.leadForms · Mutation.createLeadForm · Mutation.setLeadFormActive · Mutation.submitLeadForm */
import { z } from 'zod';
import { builder } from '../graphql/builder.js';
import { guard, requireAccountAccess } from '../graphql/guard.js';
import { LIMITS } from '../graphql/limits.js';
import { NEWEST_FIRST } from '../graphql/page.js';
import { ContactField, FormFieldType } from '../generated/prisma/client.js';
import { parseInput, uuid } from '../validation.js';
import { createLeadForm, createLeadFormInput, setLeadFormActive } from './form.service.js';
import { idempotent } from '../graphql/idempotent.js';
import { findActiveForm, submitToForm, type SubmissionResult } from './submission.service.js';

export const FormFieldTypeEnum = builder.enumType(FormFieldType, { name: 'FormFieldType' });
export const ContactFieldEnum = builder.enumType(ContactField, { name: 'ContactField' });

builder.prismaObject('LeadFormField', {
  fields: (t) => ({
    key: t.exposeString('key', { description: 'The key of this value in a submission\'s `data`' }),
    label: t.exposeString('label'),
    type: t.expose('type', { type: FormFieldTypeEnum }),
    required: t.exposeBoolean('required'),
    mapsTo: t.expose('mapsTo', { type: ContactFieldEnum, nullable: true }),
    options: t.exposeStringList('options'),
    maxLength: t.exposeInt('maxLength'),
  }),
});

builder.prismaObject('LeadForm', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    name: t.exposeString('name'),
    active: t.exposeBoolean('active'),
    successMessage: t.exposeString('successMessage'),
    redirectUrl: t.exposeString('redirectUrl', { nullable: true }),
    honeypotField: t.exposeString('honeypotField', {
      nullable: true,
      description: 'A key people never fill in (render it as a hidden input); submissions that fill it are kept as spam',
    }),
    accentColor: t.exposeString('accentColor', { nullable: true, description: 'The public page\'s accent colour, #rrggbb; null = the default' }),
    showTitle: t.exposeBoolean('showTitle', { description: 'Whether the public page shows `name` as its heading' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    fields: t.relation('fields', { query: { orderBy: { position: 'asc' } } }),
  }),
});

const FormSubmissionResult = builder.objectRef<SubmissionResult>('FormSubmissionResult').implement({
  fields: (t) => ({
    success: t.exposeBoolean('success'),
    contactId: t.exposeID('contactId'),
    successMessage: t.exposeString('successMessage'),
    redirectUrl: t.exposeString('redirectUrl', { nullable: true }),
  }),
});

builder.queryField('leadForms', (t) =>
  t.prismaField({
    type: ['LeadForm'],
    args: { accountId: t.arg.id({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: z.object({ accountId: uuid }), args });
      return ctx.db.leadForm.findMany({ ...query, where: { accountId: input.accountId }, orderBy: NEWEST_FIRST });
    },
  }),
);

const LeadFormFieldInput = builder.inputType('LeadFormFieldInput', {
  fields: (t) => ({
    key: t.string({ required: true }),
    label: t.string({ required: true }),
    type: t.field({ type: FormFieldTypeEnum, required: true }),
    required: t.boolean(),
    mapsTo: t.field({ type: ContactFieldEnum }),
    options: t.stringList(),
    maxLength: t.int(),
  }),
});

const CreateLeadFormInput = builder.inputType('CreateLeadFormInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    name: t.string({ required: true }),
    fields: t.field({ type: [LeadFormFieldInput], required: true }),
    successMessage: t.string(),
    redirectUrl: t.string(),
    active: t.boolean(),
    honeypotField: t.string(),
    accentColor: t.string({ description: '#rrggbb for the public page\'s button and focus rings (default: a blue)' }),
    showTitle: t.boolean({ description: 'Show `name` as the public page\'s heading (default true)' }),
  }),
});

const FormMetadataInput = builder.inputType('FormMetadataInput', {
  fields: (t) => ({ referrer: t.string(), page: t.string() }),
});

builder.mutationFields((t) => ({
  createLeadForm: t.prismaField({
    type: 'LeadForm',
    args: { input: t.arg({ type: CreateLeadFormInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input } = await guard(ctx, { schema: createLeadFormInput, args: args.input });
      const form = await createLeadForm(ctx.db, input);
      return ctx.db.leadForm.findUniqueOrThrow({ ...query, where: { id: form.id } });
    },
  }),
  setLeadFormActive: t.prismaField({
    type: 'LeadForm',
    args: { id: t.arg.id({ required: true }), active: t.arg.boolean({ required: true }) },
    resolve: async (query, _root, args, ctx) => {
      await ctx.viewer();
      const { id } = parseInput(z.object({ id: uuid }), args);
      const form = await ctx.db.leadForm.findUnique({ where: { id }, select: { accountId: true } });
      await requireAccountAccess(ctx, form?.accountId);
      await setLeadFormActive(ctx.db, id, args.active);
      return ctx.db.leadForm.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
  submitLeadForm: t.field({
    type: FormSubmissionResult,
    description: 'Public: no token needed (any token is ignored). Limited per client IP.',
    args: {
      formId: t.arg.id({ required: true }),
      data: t.arg({ type: 'JSON', required: true }),
      metadata: t.arg({ type: FormMetadataInput }),
    },
    resolve: async (_root, args, ctx) => {
      await ctx.charge(LIMITS.submitLeadForm, ctx.clientIp);
      const form = await findActiveForm(ctx.db, String(args.formId));
      const submission = { data: args.data, metadata: args.metadata };
      return idempotent(
        ctx,
        { operation: 'submitLeadForm', accountId: form.accountId, scope: `ip:${ctx.clientIp}:form:${form.id}`, request: submission },
        (tx) => submitToForm(tx, form, submission, { clientIp: ctx.clientIp, userAgent: ctx.userAgent }),
      );
    },
  }),
}));
