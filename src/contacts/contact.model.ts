// A contact, declared once (docs/fields.md#a-records-model): its fields, each once, and where it
// lives. The create, update and batch inputs and rules, the import columns, the CSV export's
// columns, what a lead form may fill and the REST names (snake_case) derive from them and the
// account's own fields (src/model/shapes.ts); events and the account export carry every column of
// the table (src/db/datamodel.ts). Order matters: it is the inputs' and the CSV's.
import { ContactField, ContactSource, ContactType } from '../generated/prisma/client.js';
import { formTargetsOf, type FieldSpec, type RecordModel } from '../model/field-spec.js';
import { CUSTOM_VALUES } from '../model/shapes.js';
import { externalId, oneOf, optionalEmail, optionalText, requiredText, uuid } from '../validation.js';

const EXTERNAL_ID = 'At most 255 characters; unique in the account.';
const OWNER = "The account's owner or one of its members; none: unowned.";

export const CONTACT_FIELDS = [
  { name: 'firstName', type: 'String', rule: requiredText(100), required: true, max: 100, csv: 'First Name', import: { aliases: ['Given Name', 'Person - First name'] }, form: 'given-name', createAnswer: true },
  { name: 'lastName', type: 'String', rule: optionalText(100), max: 100, csv: 'Last Name', import: { aliases: ['Family Name', 'Person - Last name'] }, form: 'family-name', createAnswer: true },
  { name: 'email', type: 'String', rule: optionalEmail, max: 254, csv: 'Email', import: { aliases: ['E-mail Address', 'E-mail 1 - Value', 'Person - Email', 'Person - Email - Work'] }, form: 'email', createAnswer: true },
  { name: 'phone', type: 'String', rule: optionalText(50), max: 50, csv: 'Phone', import: { aliases: ['Phone Number', 'Business Phone', 'Phone 1 - Value', 'Person - Phone', 'Person - Phone - Work'] }, form: 'tel' },
  { name: 'company', type: 'String', rule: optionalText(200), max: 200, csv: 'Company', import: { aliases: ['Company Name', 'Account Name', 'Organization Name', 'Organization 1 - Name', 'Person - Organization'] }, form: 'organization' },
  { name: 'contactType', type: 'ContactType', rule: oneOf(ContactType).nullish().transform((value) => value ?? ContactType.lead), csv: 'Contact Type', import: { aliases: ['Lifecycle Stage', 'Person - Label'] }, createAnswer: true },
  { name: 'source', type: 'ContactSource', rule: oneOf(ContactSource).nullish().transform((value) => value ?? ContactSource.other), csv: 'Source', import: { aliases: ['Lead Source', 'Original Source'] }, createAnswer: true },
  // Read-only; in the CSV before External Id, which came last (docs/decisions.md §24) so the first eight columns kept their places.
  { name: 'createdAt', type: 'DateTime', csv: 'Created At', createAnswer: true, import: { aliases: ['Create Date', 'Created Date', 'Created', 'Person - Person created'] } },
  {
    name: 'externalId', type: 'String', rule: externalId, csv: 'External Id', import: { aliases: ['Record ID', 'Contact ID', 'Person - ID'] }, createAnswer: true,
    description: { create: EXTERNAL_ID, update: EXTERNAL_ID, read: 'Its id in the integrating system; unique in the account where present.' },
  },
  {
    name: 'companyId', type: 'ID', rule: uuid.nullish(),
    description: {
      create: "A company of the account; none given: the company whose domain is the e-mail's, if any (never a free-mail domain)",
      update: 'A company of the account; null unlinks.',
      read: 'Its company record (linkedCompany)',
    },
  },
  { name: 'ownerId', type: 'ID', rule: uuid.nullish(), description: { create: OWNER, update: OWNER } },
  // The account's own fields (docs/custom-fields.md): one JSON object of values, judged by the account's definitions.
  CUSTOM_VALUES,
  { name: 'updatedAt', type: 'DateTime' },
] as const satisfies readonly FieldSpec[];

export const CONTACT_MODEL = { model: 'Contact', table: 'contacts', kind: 'contact', collection: 'contacts', fields: CONTACT_FIELDS } as const satisfies RecordModel;

/** What a lead form field may fill (`mapsTo`, REST name): the longest value each column holds and its autocomplete token. */
export const CONTACT_FORM_TARGETS = formTargetsOf(CONTACT_FIELDS) as Record<ContactField, { max: number; autocomplete: string }>;
// The mappable fields are also the database enum contact_field: a spec and an enum that disagree fail at start-up, not on a submit.
if (Object.keys(CONTACT_FORM_TARGETS).sort().join() !== Object.values(ContactField).sort().join()) {
  throw new Error(`contact.model.ts: the fields with \`form\` (${Object.keys(CONTACT_FORM_TARGETS).join(', ')}) must be the enum ContactField's`);
}

/** A form makes a contact from these: at least one field maps to one of them (a first name, or the e-mail's local part for one). */
export const FORM_NEEDS_ONE_OF = [ContactField.first_name, ContactField.email] as const;

/** What a deal's, invoice's, note's or task's contact shows without `contacts:read` (docs/decisions.md §24). */
export const CONTACT_EMBEDDED = ['id', 'firstName', 'lastName'] as const;

/** A contact's name as documents show it ("first last"): the columns to read and how they join. */
export const CONTACT_NAME = { firstName: true, lastName: true } as const;
export const fullName = (contact: { firstName: string; lastName: string | null }): string => [contact.firstName, contact.lastName].filter(Boolean).join(' ');

/** A record's contact as its REST item embeds it, `contacts`: its id and name (fragment ContactName, src/rest/operations/contacts.graphql). */
export const CONTACT_EMBED = { contacts: 'contact {\n    id\n    ...ContactName\n  }' } as const;
