import { z } from 'zod';
import { FORM_NEEDS_ONE_OF } from '../contacts/contact.model.js';
import { updateGuarded, updateInputOf, type Query } from '../writes/update.js';
import { badInput, conflict } from '../errors.js';
import { ContactField, FormFieldType, type LeadForm, type Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { emit } from '../events/emit.js';
import { changedFields, emitRow, updatedWithEvent, withColumns } from '../events/record.js';
import type { Actor } from '../events/types.js';
import { optionalText, requiredText, uuid } from '../validation.js';
import { customFieldProblems } from './form-custom-fields.js';
import type { RecordKey } from '../db/client.js';

export const DEFAULT_SUCCESS_MESSAGE = "Thanks! We'll be in touch.";
export const MAX_FIELDS = 50;
/**
 * The most lead forms the cost (docs/graphql.md#cost-and-budget) counts an account as having:
 * nothing enforces a number (createLeadForm adds one more each time), so this is the cost's
 * assumption; every form's fields then still fit the ceiling (1 + 50 × (1 + MAX_FIELDS) objects).
 */
export const FORMS_PER_ACCOUNT = 50;
export const MAX_OPTIONS = 100;
const FIELD_KEY = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;

const fieldInput = z
  .object({
    key: z.string().regex(FIELD_KEY, 'Must start with a letter and hold only letters, digits and _ (at most 100)'),
    label: requiredText(200),
    type: z.enum(FormFieldType),
    required: z.boolean().nullish().transform((value) => value ?? false),
    mapsTo: z.enum(ContactField).nullish().transform((value) => value ?? null),
    // A contact custom field's key (docs/custom-fields.md#where-values-go): judged against the account's fields on save.
    customField: z.string().max(50, 'Must be at most 50 characters').nullish().transform((value) => value ?? null),
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
    // A select filling a custom field may leave its options to the field's (customFieldProblems fills them).
    if (field.type === FormFieldType.select && field.options.length === 0 && !field.customField) {
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
    const filled = new Set<string>();
    list.forEach((field, index) => {
      if (keys.has(field.key)) ctx.addIssue({ code: 'custom', path: [index, 'key'], message: 'Duplicate key' });
      keys.add(field.key);
      if (field.customField && field.mapsTo) ctx.addIssue({ code: 'custom', path: [index, 'customField'], message: 'Give mapsTo or customField, not both' });
      if (field.customField && filled.has(field.customField)) ctx.addIssue({ code: 'custom', path: [index, 'customField'], message: 'Already filled by another field' });
      if (field.customField) filled.add(field.customField);
      if (!field.mapsTo) return;
      if (mapped.has(field.mapsTo)) {
        ctx.addIssue({ code: 'custom', path: [index, 'mapsTo'], message: 'Already mapped by another field' });
      }
      mapped.add(field.mapsTo);
    });
    if (list.length > 0 && !FORM_NEEDS_ONE_OF.some((target) => mapped.has(target))) {
      ctx.addIssue({ code: 'custom', path: [], message: `A field must map to ${FORM_NEEDS_ONE_OF.join(' or ')}` });
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
  // The page picks black or white text for the button, so any colour keeps 4.5:1 (docs/embedding-forms.md).
  accentColor: z
    .string()
    .regex(/^#[0-9a-fA-F]{6}$/, 'Must be a colour written #rrggbb')
    .nullish()
    .transform((value) => value?.toLowerCase() ?? null),
  showTitle: z.boolean().nullish().transform((value) => value ?? true),
}).superRefine((form, ctx) => {
  if (form.honeypotField && form.fields.some((field) => field.key === form.honeypotField)) {
    ctx.addIssue({ code: 'custom', path: ['honeypotField'], message: 'Must not be the key of a field people fill in' });
  }
});

export type CreateLeadFormInput = z.output<typeof createLeadFormInput>;

/** The form and its fields land together or not at all (its own transaction: the CLI's door). */
export function createLeadForm(db: PrismaClient, input: CreateLeadFormInput, actor: Actor) {
  return db.$transaction((tx) => insertLeadForm(tx, input, actor));
}

type FieldInput = CreateLeadFormInput['fields'][number];

/** The fields with the options of the custom fields they fill, or a 400 naming each that cannot fill its field. */
async function withCustomFields(tx: Prisma.TransactionClient, accountId: string, fields: FieldInput[]): Promise<FieldInput[]> {
  const { fields: judged, details } = await customFieldProblems(tx, accountId, fields);
  if (Object.keys(details).length) throw badInput(details);
  return judged;
}

/** `position` keeps the caller's order. */
const insertFields = (tx: Prisma.TransactionClient, form: { id: string; accountId: string }, fields: FieldInput[]) =>
  tx.leadFormField.createMany({ data: fields.map((field, position) => ({ ...field, accountId: form.accountId, formId: form.id, position })) });

/** In the caller's transaction; the fields go in first, then `query` reads the form back in it. */
export async function insertLeadForm(tx: Prisma.TransactionClient, input: CreateLeadFormInput, actor: Actor, query: Query = {}) {
  const { fields: given, ...form } = input;
  const fields = await withCustomFields(tx, input.accountId, given);
  const created = await tx.leadForm.create({ data: form });
  await insertFields(tx, created, fields);
  await emitRow(tx, 'form.created', 'LeadForm', actor, created);
  return tx.leadForm.findUniqueOrThrow({ ...query, where: { id: created.id } });
}

/** With a form.updated event when `active` changes (setting it again is no change). */
export async function setLeadFormActive(tx: Prisma.TransactionClient, id: string, active: boolean, actor: Actor) {
  const [before] = await tx.$queryRaw<{ active: boolean }[]>`SELECT active FROM lead_forms WHERE id = ${id}::uuid FOR UPDATE`;
  const form = await tx.leadForm.update({ where: { id }, data: { active } });
  if (before && before.active !== active) await emit(tx, { type: 'form.updated', accountId: form.accountId, actor, object: form, previous: before });
  return form;
}

// --- Changing and removing forms (docs/decisions.md §12) ----------------------------------------

export const HAS_SUBMISSIONS = 'This form has submissions, so it is kept: deactivate it with setLeadFormActive instead';
const NOT_A_FIELD_KEY = 'Must not be the key of a field people fill in';

/** `fields`, when given, replaces the form's fields (submissions keep the values they were sent with). */
export const updateLeadFormInput = updateInputOf(createLeadFormInput, 'LeadForm', ['fields']);
export const updateLeadFormArgs = z.object({ id: uuid, input: updateLeadFormInput });
export type UpdateLeadFormArgs = z.output<typeof updateLeadFormArgs>;

export const formTarget = ({ id }: { id: string }, db: Prisma.TransactionClient) =>
  db.leadForm.findUnique({ where: { id }, select: { id: true, accountId: true } });

export async function updateLeadForm(tx: Prisma.TransactionClient, form: RecordKey, { input }: UpdateLeadFormArgs, query: Query, actor: Actor) {
  const { fields, ...change } = input;
  // The honeypot rule of create, judged on the form as it will be.
  const current = await tx.leadForm.findUniqueOrThrow({ where: { id: form.id }, select: { honeypotField: true, fields: { select: { key: true } } } });
  const honeypot = change.honeypotField === undefined ? current.honeypotField : change.honeypotField;
  const keys = (fields ?? current.fields).map((field) => field.key);
  if (honeypot && keys.includes(honeypot)) throw badInput({ honeypotField: [NOT_A_FIELD_KEY] });
  if (fields) {
    const judged = await withCustomFields(tx, form.accountId, fields);
    await tx.leadFormField.deleteMany({ where: { formId: form.id } });
    await insertFields(tx, form, judged);
  }
  // `previous` names the changed columns; replaced fields are not a column of the form.
  const spec = { type: 'form.updated', model: 'LeadForm', table: 'lead_forms', actor } as const;
  return updatedWithEvent(tx, spec, form, changedFields(change), () => updateGuarded<LeadForm>(tx.leadForm, form, change, withColumns('LeadForm', query), null));
}

/**
 * A form with submissions is refused (CONFLICT): deleting it would take them along. The row lock
 * makes a concurrent submit (which key-share locks the form) wait, so none slips in and is lost.
 */
export async function deleteLeadForm(tx: Prisma.TransactionClient, form: RecordKey, actor: Actor) {
  await tx.$queryRaw`SELECT id FROM lead_forms WHERE id = ${form.id}::uuid FOR UPDATE`;
  if (await tx.formSubmission.findFirst({ where: { accountId: form.accountId, formId: form.id }, select: { id: true } })) {
    throw conflict(HAS_SUBMISSIONS);
  }
  await emitRow(tx, 'form.deleted', 'LeadForm', actor, await tx.leadForm.delete({ where: { id: form.id } }));
  return { id: form.id, deletedAt: new Date() };
}
