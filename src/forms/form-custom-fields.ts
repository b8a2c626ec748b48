// Lead-form fields that fill a contact's custom field (`customField`, docs/custom-fields.md#where-values-go):
// which input types suit each field type, what a form's save is refused for, and how the visitor's
// text becomes the field's value, judged by the account's definitions as a create judges it.
import { FormFieldType, type Prisma } from '../generated/prisma/client.js';
import { CUSTOM_VALUES, recordShapes, valueOfText, type CustomFieldType, type TextReaders } from '../model/shapes.js';
import { CONTACT_MODEL } from '../contacts/contact.model.js';
import { parseCalendarDate } from '../dates.js';
import type { ErrorDetails } from '../errors.js';

const { text, textarea, select, hidden, number, date, checkbox, email, phone, url } = FormFieldType;

/**
 * The input types that suit each field type: the page renders a field by its `type` alone
 * (src/forms/form-page.ts), so a form's author picks one of these, as for any other field.
 */
export const INPUTS_FOR: Record<CustomFieldType, readonly FormFieldType[]> = {
  TEXT: [text, textarea, select, hidden],
  NUMBER: [number, hidden],
  DATE: [date, hidden],
  BOOLEAN: [checkbox],
  SELECT: [select, hidden],
  // One option picked, stored as a list of one; a hidden field may name several (`a;b`).
  MULTI_SELECT: [select, hidden],
  URL: [url, text, hidden],
  EMAIL: [email, hidden],
  PHONE: [phone, text, hidden],
};

export const UNKNOWN_CUSTOM_FIELD = 'No active contact custom field has this key';

type Field = { customField: string | null; type: FormFieldType; options: string[] };

/**
 * A form's fields judged against the account's contact custom fields on save: an unknown or
 * archived key, an input type that does not suit the field's type, an option the field lacks, each
 * named `fields.<i>.<field>`. A select that gave no options takes the field's.
 */
export async function customFieldProblems<F extends Field>(db: Prisma.TransactionClient, accountId: string, fields: F[]): Promise<{ fields: F[]; details: ErrorDetails }> {
  if (!fields.some((field) => field.customField)) return { fields, details: {} };
  const custom = new Map((await recordShapes.of(db, accountId, CONTACT_MODEL)).custom.map((field) => [field.name, field.custom]));
  const details: ErrorDetails = {};
  const judged = fields.map((field, i) => {
    if (!field.customField) return field;
    const definition = custom.get(field.customField);
    if (!definition) {
      details[`fields.${i}.customField`] = [UNKNOWN_CUSTOM_FIELD];
      return field;
    }
    const suits = INPUTS_FOR[definition.type];
    if (!suits.includes(field.type)) details[`fields.${i}.type`] = [`Must be one of: ${suits.join(', ')} (the field is ${definition.type})`];
    if (field.type !== select) return field;
    const options = definition.options ?? [];
    if (field.options.length === 0) {
      if (options.length) return { ...field, options: [...options] };
      details[`fields.${i}.options`] = ['A select field needs at least one option'];
    } else if (options.length && field.options.some((option) => !options.includes(option))) {
      details[`fields.${i}.options`] = [`Must be among the field's options: ${options.join(', ')}`];
    }
    return field;
  });
  return { fields: judged, details };
}

/** A form's inputs send numbers and days as the browser writes them: `12.5`, `2027-03-31`. */
const FORM_READERS: TextReaders = {
  number: (value) => (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : null),
  day: (value) => (parseCalendarDate(value) ? value : null),
};

/**
 * The custom values of a submission (custom field key -> the visitor's text) as the contact's
 * values, judged by the account's definitions: `create` for a new contact (a required field the
 * form lacks is Required), `update` for a known one (a patch). Problems are named by the form's
 * field key where a field of the form filled the value, else `custom_fields.<key>`.
 */
export async function judgeCustomValues(
  db: Prisma.TransactionClient,
  accountId: string,
  given: Readonly<Record<string, { formKey: string; text: string }>>,
  mode: 'create' | 'update',
): Promise<{ values: Record<string, unknown>; details: ErrorDetails }> {
  const shapes = await recordShapes.of(db, accountId, CONTACT_MODEL);
  if (!shapes.custom.length) return { values: {}, details: {} };
  const definitions = new Map(shapes.custom.map((field) => [field.name, field.custom]));
  // A field archived since the form was saved takes nothing (a visitor cannot mend the form); the
  // submission's data keeps what was sent.
  const typed = Object.fromEntries(
    Object.entries(given).flatMap(([key, { text }]) => {
      const definition = definitions.get(key);
      return definition ? [[key, valueOfText(definition, text, FORM_READERS)]] : [];
    }),
  );
  const verdict = shapes.judge(typed, mode);
  const details: ErrorDetails = {};
  const prefix = `${CUSTOM_VALUES.name}.`;
  for (const [path, messages] of Object.entries(verdict.details)) {
    const key = path.slice(prefix.length);
    details[given[key]?.formKey ?? `custom_fields.${key}`] = messages;
  }
  return { values: verdict.values, details };
}
