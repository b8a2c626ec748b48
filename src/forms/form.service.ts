import { z } from 'zod';
import { ContactField, FormFieldType, type PrismaClient } from '../generated/prisma/client.js';
import { emit } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { optionalText, requiredText, uuid } from '../validation.js';

export const DEFAULT_SUCCESS_MESSAGE = "Thanks! We'll be in touch.";
export const MAX_FIELDS = 50;
export const MAX_OPTIONS = 100;
const FIELD_KEY = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;

const fieldInput = z
  .object({
    key: z.string().regex(FIELD_KEY, 'Must start with a letter and hold only letters, digits and _ (at most 100)'),
    label: requiredText(200),
    type: z.enum(FormFieldType),
    required: z.boolean().nullish().transform((value) => value ?? false),
    mapsTo: z.enum(ContactField).nullish().transform((value) => value ?? null),
    options: z
      .array(requiredText(200))
      .max(MAX_OPTIONS, `Must have at most ${MAX_OPTIONS} options`)
      .nullish()
      .transform((value) => value ?? []),
    maxLength: z
      .number()
      .int('Must be an integer')
      .min(1, 'Must be from 1 to 10000')
      .max(10_000, 'Must be from 1 to 10000')
      .nullish()
      .transform((value) => value ?? 1000),
  })
  .superRefine((field, ctx) => {
    if (field.type === FormFieldType.select && field.options.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'A select field needs at least one option' });
    } else if (field.type !== FormFieldType.select && field.options.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'Only select fields have options' });
    }
    if (new Set(field.options).size !== field.options.length) {
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'Options must be unique' });
    }
  });

// Rules across fields: a key names one value of a submission, and a contact column takes one value.
const fields = z
  .array(fieldInput)
  .min(1, 'Must have at least one field')
  .max(MAX_FIELDS, `Must have at most ${MAX_FIELDS} fields`)
  .superRefine((list, ctx) => {
    const keys = new Set<string>();
    const mapped = new Set<ContactField>();
    list.forEach((field, index) => {
      if (keys.has(field.key)) ctx.addIssue({ code: 'custom', path: [index, 'key'], message: 'Duplicate key' });
      keys.add(field.key);
      if (!field.mapsTo) return;
      if (mapped.has(field.mapsTo)) {
        ctx.addIssue({ code: 'custom', path: [index, 'mapsTo'], message: 'Already mapped by another field' });
      }
      mapped.add(field.mapsTo);
    });
    if (list.length > 0 && !mapped.has(ContactField.first_name) && !mapped.has(ContactField.email)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'A field must map to first_name or email' });
    }
  });

const absoluteHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
};

export const createLeadFormInput = z.object({
  accountId: uuid,
  name: requiredText(200),
  fields,
  successMessage: optionalText(1000).transform((value) => value ?? DEFAULT_SUCCESS_MESSAGE),
  redirectUrl: optionalText(2048).refine(
    (value) => value === null || absoluteHttpUrl(value),
    'Must be an absolute http or https URL',
  ),
  active: z.boolean().nullish().transform((value) => value ?? true),
  honeypotField: z
    .string()
    .regex(FIELD_KEY, 'Must start with a letter and hold only letters, digits and _ (at most 100)')
    .nullish()
    .transform((value) => value ?? null),
}).superRefine((form, ctx) => {
  if (form.honeypotField && form.fields.some((field) => field.key === form.honeypotField)) {
    ctx.addIssue({ code: 'custom', path: ['honeypotField'], message: 'Must not be the key of a field people fill in' });
  }
});

export type CreateLeadFormInput = z.output<typeof createLeadFormInput>;

/** The form and its fields land together or not at all; `position` keeps the caller's order. */
export function createLeadForm(db: PrismaClient, input: CreateLeadFormInput, actor: Actor) {
  const { fields, ...form } = input;
  return db.$transaction(async (tx) => {
    const created = await tx.leadForm.create({ data: form });
    await tx.leadFormField.createMany({
      data: fields.map((field, position) => ({ ...field, accountId: form.accountId, formId: created.id, position })),
    });
    await emit(tx, { type: 'form.created', accountId: created.accountId, actor, object: created });
    return created;
  });
}

export function setLeadFormActive(db: PrismaClient, id: string, active: boolean, actor: Actor) {
  return db.$transaction(async (tx) => {
    const before = await tx.leadForm.findUniqueOrThrow({ where: { id }, select: { active: true } });
    const form = await tx.leadForm.update({ where: { id }, data: { active } });
    if (before.active !== active) await emit(tx, { type: 'form.updated', accountId: form.accountId, actor, object: form, previous: before });
    return form;
  });
}
