/** Query.leadForms · Mutation.createLeadForm · setLeadFormActive · submitLeadForm · updateLeadForm · deleteLeadForm */
import { z } from 'zod';
import { MESSAGES } from '../errors.js';
import { builder } from '../graphql/builder.js';
import { LEAD_SUBMISSIONS } from '../graphql/limits.js';
import { userActor } from '../events/types.js';
import { NEWEST_FIRST } from '../graphql/page.js';
import { checked, ownRow } from '../graphql/rules.js';
import { ContactField, FormFieldType } from '../generated/prisma/client.js';
import { DeletedRecord } from '../graphql/changes.schema.js';
import { byIdArgs, uuid, type ByIdArgs } from '../validation.js';
import type { Prisma } from '../generated/prisma/client.js';
import {
  createLeadFormInput,
  deleteLeadForm,
  formTarget,
  FORMS_PER_ACCOUNT,
  insertLeadForm,
  MAX_FIELDS,
  setLeadFormActive,
  updateLeadForm,
  updateLeadFormArgs,
  type CreateLeadFormInput,
  type UpdateLeadFormArgs,
} from './form.service.js';
import { findActiveForm, submissionLock, submissionProblems, submissionShape, submitToForm, type FormWithFields, type SubmissionResult } from './submission.service.js';
import type { RecordKey } from '../db/client.js';

const accountArgs = z.object({ accountId: uuid });
const formArgs = z.object({ id: uuid, active: z.boolean() });

export const FormFieldTypeEnum = builder.enumType(FormFieldType, { name: 'FormFieldType' });
export const ContactFieldEnum = builder.enumType(ContactField, { name: 'ContactField' });

builder.prismaObject('LeadFormField', {
  keyScope: 'FORMS_READ',
  fields: (t) => ({
    key: t.exposeString('key', { description: 'The key of this value in a submission\'s `data`' }),
    label: t.exposeString('label'),
    type: t.expose('type', { type: FormFieldTypeEnum }),
    required: t.exposeBoolean('required'),
    mapsTo: t.expose('mapsTo', { type: ContactFieldEnum, nullable: true }),
    customField: t.exposeString('customField', { nullable: true, description: 'The key of the contact custom field this field fills (docs/custom-fields.md)' }),
    options: t.exposeStringList('options'),
    maxLength: t.exposeInt('maxLength'),
  }),
});

export const LeadFormRef = builder.prismaObject('LeadForm', {
  keyScope: 'FORMS_READ',
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
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    fields: t.relation('fields', { maxItems: MAX_FIELDS, query: { orderBy: { position: 'asc' } } }),
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
    maxItems: FORMS_PER_ACCOUNT,
    args: { accountId: t.arg.id({ required: true }) },
    rules: { access: 'member', scope: 'FORMS_READ', input: accountArgs },
    resolve: async (query, _root, _args, ctx, info) => {
      const { input } = checked<z.output<typeof accountArgs>>(info);
      return ctx.reader.leadForm.findMany({ ...query, where: { accountId: input.accountId }, orderBy: NEWEST_FIRST });
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
    customField: t.string({
      description: "The key of an active contact custom field to fill instead of mapsTo (docs/custom-fields.md); `type` one that suits the field's type, a select's options among the field's (none: the field's)",
    }),
    options: t.stringList(),
    maxLength: t.int(),
  }),
});

const CreateLeadFormInputType = builder.inputType('CreateLeadFormInput', {
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
    args: { input: t.arg({ type: CreateLeadFormInputType, required: true }) },
    rules: { access: 'member', scope: 'FORMS_WRITE', input: createLeadFormInput, from: 'input', idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateLeadFormInput>(info);
      return write((tx) => insertLeadForm(tx, input, userActor(viewer), query));
    },
  }),
  setLeadFormActive: t.prismaField({
    type: 'LeadForm',
    args: { id: t.arg.id({ required: true }), active: t.arg.boolean({ required: true }) },
    rules: {
      access: 'member',
      scope: 'FORMS_WRITE',
      input: formArgs,
      target: ({ id }: z.output<typeof formArgs>, ctx) => ctx.db.leadForm.findUnique({ where: { id }, select: { accountId: true } }),
      hidden: 'not-found',
      line: ownRow,
      idempotent: true,
      writes: ['active'],
    },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<z.output<typeof formArgs>>(info);
      return write(async (tx) => {
        await setLeadFormActive(tx, input.id, input.active, userActor(viewer));
        return tx.leadForm.findUniqueOrThrow({ ...query, where: { id: input.id } });
      });
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
    // 429 (per IP) -> 404 (form) -> 400 (its values against the form's fields, with the Idempotency-Key).
    rules: {
      access: 'public',
      limit: LEAD_SUBMISSIONS,
      target: (args: { formId: string }, ctx) => findActiveForm(ctx.db, String(args.formId)),
      missing: MESSAGES.formNotFound,
      idempotent: true,
      line: (args: { data: unknown }, form: FormWithFields) => submissionLock(form, args.data),
      documents: submissionShape,
      targetChecks: (args: { data: unknown; metadata?: unknown }, form: FormWithFields) => submissionProblems(form, args),
    },
    resolve: async (_root, args, ctx, info) => {
      const { target: form, write } = checked<unknown, FormWithFields>(info);
      const submission = { data: args.data, metadata: args.metadata };
      const origin = { clientIp: ctx.clientIp, userAgent: ctx.userAgent };
      // Without an Idempotency-Key the submit opens its own transaction (recordSubmission), which wakes
      // the event workers after its commit rather than notifying inside it (src/events/emit.ts).
      return write((db) => submitToForm(db, form, submission, origin), { scope: `form:${form.id}`, oneStatement: true });
    },
  }),
}));

// --- docs/decisions.md §12 ---------------------------------------------------------------------

const UpdateLeadFormInputType = builder.inputType('UpdateLeadFormInput', {
  description: 'Absent = unchanged; null clears redirectUrl and honeypotField, and is Required for the others. `fields` replaces them all. At least one field.',
  fields: (t) => ({
    name: t.string(),
    fields: t.field({ type: [LeadFormFieldInput] }),
    successMessage: t.string(),
    redirectUrl: t.string(),
    active: t.boolean(),
    honeypotField: t.string(),
  }),
});

const target = (args: ByIdArgs, ctx: { db: Prisma.TransactionClient }) => formTarget(args, ctx.db);

builder.mutationFields((t) => ({
  updateLeadForm: t.prismaField({
    type: 'LeadForm',
    nullable: true,
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateLeadFormInputType, required: true }) },
    rules: { access: 'member', scope: 'FORMS_WRITE', input: updateLeadFormArgs, target, hidden: 'not-found', line: ownRow, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, target: form, write } = checked<UpdateLeadFormArgs, RecordKey>(info);
      return write((tx) => updateLeadForm(tx, form, input, query, userActor(viewer)));
    },
  }),
  deleteLeadForm: t.field({
    type: DeletedRecord,
    nullable: true,
    description: 'CONFLICT while the form has submissions: deactivate it (setLeadFormActive) to keep them.',
    args: { id: t.arg.id({ required: true }) },
    rules: { access: 'member', scope: 'FORMS_WRITE', input: byIdArgs, target, hidden: 'not-found', line: ownRow, idempotent: true },
    resolve: (_root, _args, _ctx, info) => {
      const { viewer, target: form, write } = checked<ByIdArgs, RecordKey>(info);
      return write((tx) => deleteLeadForm(tx, form, userActor(viewer)));
    },
  }),
}));
