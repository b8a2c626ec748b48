// The REST answers' fragments of a record, written from its field spec (docs/fields.md#a-records-field-spec)
// by `npm run generate` into operations/contact.fields.graphql, so a field added to the spec reaches REST with no hand edit.
import { CONTACT_FIELDS } from '../contacts/contact.fields.js';
import { restName, type FieldSpec } from '../field-spec.js';

/** Where the fragments are written, beside the operations that spread them. */
export const FRAGMENTS_FILE = 'src/rest/operations/contact.fields.graphql';

/** A field as an answer selects it: aliased to its REST name where that differs. */
const selection = (field: FieldSpec) => (restName(field) === field.name ? field.name : `${restName(field)}: ${field.name}`);

/** The fields a client writes, then those only the service sets: REST lists the timestamps last. */
const answerOrder = (fields: readonly FieldSpec[]) => [...fields.filter((field) => field.rule), ...fields.filter((field) => !field.rule)];

function fragment(comment: string, name: string, type: string, selections: readonly string[]): string {
  return [`# ${comment}`, `fragment ${name} on ${type} {`, ...selections.map((line) => `  ${line}`), '}', ''].join('\n');
}

/** The file's text: what GET /api/v1/contacts lists of a contact, and what POST /api/v1/contacts answers. */
export function recordFragments(): string {
  return [
    '# Written by `npm run generate` from src/contacts/contact.fields.ts (src/rest/record-fragments.ts): edit the spec, not this file.',
    '',
    fragment('A contact as GET /api/v1/contacts lists it; updated_at is where a sync resumes (docs/rest.md#following-changes)', 'ContactItem', 'Contact', [
      'id',
      ...answerOrder(CONTACT_FIELDS).map(selection),
    ]),
    // CreateContact selects the id beside it: an answer that is one fragment is a named schema of the
    // OpenAPI document (src/rest/json-schema.ts), and the contract's create answer is a part of the record.
    fragment('What POST /api/v1/contacts answers of a contact besides its id', 'ContactCreated', 'Contact', answerOrder(CONTACT_FIELDS.filter((field) => 'createAnswer' in field)).map(selection)),
  ].join('\n');
}
