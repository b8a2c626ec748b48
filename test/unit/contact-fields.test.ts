// A field added to the contacts' spec reaches every list derived from it (docs/fields.md#adding-a-field-to-a-record).
// The spec is data: each derivation here is handed the contacts' fields plus a throwaway one, as a
// list an account defines at run time would be (the custom fields to come), and nothing shared is changed.
import { readFileSync } from 'node:fs';
import SchemaBuilder from '@pothos/core';
// graphql/index.js, as src/schema.ts: the CommonJS build Pothos makes its types with.
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql/index.js';
import { describe, expect, it } from 'vitest';
import { CONTACT_FIELDS } from '../../src/contacts/contact.model.js';
import { createContactInput, updateContactInput } from '../../src/contacts/contact.service.js';
import { updateInputOf } from '../../src/writes/update.js';
import { fieldsOf } from '../../src/db/datamodel.js';
import { recordJsonSql, serializeRecord } from '../../src/events/serialize.js';
import { CSV_COLUMNS } from '../../src/exports/contacts-csv.js';
import { createRuleOf, csvColumnsOf, importColumnsOf, restName, type FieldSpec } from '../../src/model/field-spec.js';
import { ContactSource, ContactType } from '../../src/generated/prisma/client.js';
import { inputFieldsOf } from '../../src/graphql/spec-fields.js';
import { FIELDS, inputOf, planColumns } from '../../src/imports/columns.js';
import { restFieldName } from '../../src/rest/field-names.js';
import { optionalText, toDetails } from '../../src/validation.js';

const ACCOUNT = '0190a0a0-0000-7000-8000-000000000001';
const NICKNAME = { name: 'preferredName', type: 'String', rule: optionalText(50), max: 50, csv: 'Preferred Name', import: true } as const satisfies FieldSpec;
const WITH_NICKNAME = [...CONTACT_FIELDS, NICKNAME] as const;

/** The contact inputs as src/contacts/contact.schema.ts builds them, on a builder of their own. */
function contactInputs(fields: readonly FieldSpec[]): GraphQLSchema {
  const builder = new SchemaBuilder<{ Scalars: { DateTime: { Input: Date; Output: Date }; JSON: { Input: unknown; Output: unknown } } }>({} as never);
  builder.scalarType('JSON', { serialize: (value) => value });
  builder.enumType(ContactType, { name: 'ContactType' });
  builder.enumType(ContactSource, { name: 'ContactSource' });
  const of = (kind: 'create' | 'update' | 'batch') => inputFieldsOf(fields, kind) as never;
  const create = builder.inputType('CreateContactInput', { fields: (t) => ({ accountId: t.id({ required: true }), ...(of('create') as (u: typeof t) => object)(t) }) });
  const update = builder.inputType('UpdateContactInput', { fields: of('update') });
  const batch = builder.inputType('BatchContactInput', { fields: of('batch') });
  builder.queryType({
    fields: (t) => ({ inputs: t.boolean({ args: { create: t.arg({ type: create }), update: t.arg({ type: update }), batch: t.arg({ type: [batch] }) }, resolve: () => true }) }),
  });
  return lexicographicSortSchema(builder.toSchema());
}

/** An input type's fields in printed SDL (`name: Type`), descriptions left out. */
const inputBlock = (sdl: string, name: string) =>
  sdl
    .match(new RegExp(`input ${name} \\{([^}]*)\\}`))![1]!
    .replace(/"""[\s\S]*?"""|"[^"\n]*"/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

describe('a throwaway field added to the contacts spec', () => {
  it('is a field of CreateContactInput, UpdateContactInput and BatchContactInput, beside the same fields schema.graphql has', () => {
    const published = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    const built = printSchema(contactInputs(CONTACT_FIELDS));
    const added = printSchema(contactInputs(WITH_NICKNAME));
    for (const name of ['CreateContactInput', 'UpdateContactInput', 'BatchContactInput']) {
      expect(inputBlock(built, name)).toEqual(inputBlock(published, name));
      expect(inputBlock(added, name)).toEqual([...inputBlock(published, name), 'preferredName: String'].sort((a, b) => sortKey(a).localeCompare(sortKey(b))));
    }
  });

  it('is judged by its rule on create and update, and a problem with it is named preferred_name by REST', () => {
    const create = createRuleOf(WITH_NICKNAME);
    expect(create.parse({ accountId: ACCOUNT, firstName: 'Ada', preferredName: '  Countess  ' })).toMatchObject({ preferredName: 'Countess', contactType: 'lead' });
    const refused = create.safeParse({ accountId: ACCOUNT, firstName: 'Ada', preferredName: 'x'.repeat(51) });
    const details = toDetails(refused.error!);
    expect(Object.keys(details).map((path) => restFieldName({ input: 'body-as-input' }, `input.${path}`))).toEqual(['preferred_name']);
    expect(updateInputOf(create, 'Contact').parse({ preferredName: null })).toEqual({ preferredName: null });
    // The contacts' own rules are the derivation without it: the same keys.
    expect(Object.keys(create.shape)).toEqual([...Object.keys(createContactInput.shape), 'preferredName']);
    expect(updateContactInput.safeParse({ preferredName: 'x' }).success).toBe(false);
  });

  it('is a column of the CSV export, under its label, after the contacts columns', () => {
    const columns = csvColumnsOf(WITH_NICKNAME);
    expect(columns.map(({ label }) => label)).toEqual([...CSV_COLUMNS, 'Preferred Name']);
    expect(columns.at(-1)).toEqual({ label: 'Preferred Name', sql: '"preferred_name"', time: false });
  });

  it('is an import column: by its REST name or its CSV label, and read into the batch input', () => {
    const columns = importColumnsOf(WITH_NICKNAME);
    expect(columns.fields).toEqual({ ...FIELDS.contacts.fields, preferred_name: 'preferredName' });
    for (const header of ['preferred_name', 'Preferred Name']) {
      const plan = planColumns(columns, ['First Name', header], {}, null);
      expect(plan).toMatchObject({ columns: ['firstName', 'preferredName'], unknown: [] });
      expect(inputOf((plan as { columns: string[] }).columns, ['Ada', 'Countess'])).toEqual({ firstName: 'Ada', preferredName: 'Countess' });
    }
    // The contacts' own import is the derivation without it.
    expect(planColumns('contacts', ['First Name', 'Preferred Name'], {}, null)).toMatchObject({ unknown: ['Preferred Name'] });
  });

  it('is carried by events under its REST name, as every column of the table is (the datamodel, not a list)', () => {
    expect(serializeRecord('contact', { id: 'c', firstName: 'Ada', preferredName: 'Countess' })).toEqual({ id: 'c', first_name: 'Ada', preferred_name: 'Countess' });
    const sql = recordJsonSql('contact', 'Contact', 'r').strings.join('');
    const columns = fieldsOf('Contact').filter((f) => (f.kind === 'scalar' || f.kind === 'enum') && f.name !== 'accountId');
    for (const field of columns) expect(sql).toContain(`'${restName(field)}', `);
  });
});

// GraphQL's printer sorts fields by name (lexicographicSortSchema): a line's sort key is its name.
const sortKey = (line: string) => line.split(':')[0]!;
