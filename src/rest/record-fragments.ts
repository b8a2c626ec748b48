// The REST answers' fragments of each record, written from its model (docs/fields.md#a-records-model)
// by `npm run generate` into operations/<record>.fields.graphql, so a field added to a model reaches
// REST with no hand edit.
import { CONTACT_FIELDS } from '../contacts/contact.model.js';
import { DEAL_MODEL } from '../deals/deal.model.js';
import { COMPANY_MODEL } from '../companies/company.model.js';
import { NOTE_MODEL } from '../activities/note.model.js';
import { TASK_MODEL } from '../activities/task.model.js';
import { INVOICE_MODEL } from '../invoices/invoice.model.js';
import { restName, type FieldSpec, type RecordModel } from '../model/field-spec.js';
import { getNamedType, isObjectType, type GraphQLObjectType } from 'graphql/index.js';
import { fieldsOf } from '../db/datamodel.js';
import { schema } from '../schema.js';
import { listOperations } from './list-operations.js';

/** A field as an answer selects it: aliased to its REST name where that differs. */
const selection = (field: Pick<FieldSpec, 'name'>) => (restName(field) === field.name ? field.name : `${restName(field)}: ${field.name}`);

/** The fields a client writes, then those only the service sets: REST lists the timestamps last. */
const answerOrder = (fields: readonly FieldSpec[]) => [...fields.filter((field) => field.rule), ...fields.filter((field) => !field.rule)];

function fragment(comment: string, name: string, type: string, selections: readonly string[]): string {
  return [`# ${comment}`, `fragment ${name} on ${type} {`, ...selections.map((line) => `  ${line}`), '}', ''].join('\n');
}

const header = (source: string) => `# Written by \`npm run generate\` from ${source} (src/rest/record-fragments.ts): edit the model, not this file.\n`;

/**
 * The REST item (lists, by id, batches): the id, then the fields the item carries in model order,
 * the relations it embeds placed before the service's closing stamps (the fields no client writes
 * at the end of the model: `updated_at`, where a sync resumes, stays last).
 */
const itemSelections = ({ fields, embeds = {} }: Pick<RecordModel, 'fields' | 'embeds'>) => {
  const shown = fields.filter((field) => field.item !== false);
  let stamps = shown.length;
  while (stamps > 0 && !shown[stamps - 1]!.rule) stamps--;
  return ['id', ...shown.slice(0, stamps).map(selection), ...Object.entries(embeds).map(([key, relation]) => `${key}: ${relation}`), ...shown.slice(stamps).map(selection)];
};

/** What POST /api/v1/<collection> answers of the record besides its id, in model order. */
const createdSelections = (fields: readonly FieldSpec[]) => fields.filter((field) => 'createAnswer' in field).map(selection);

/**
 * The by-id answer's selections beyond the item (`byId`): each field of `type` by its REST name, one
 * of an object type with every scalar field of that type (an invoice's lines), in its table's column
 * order (the built schema sorts fields by name).
 */
const byIdSelections = (type: string, names: readonly string[]) =>
  names.map((name) => {
    const field = (schema.getType(type) as GraphQLObjectType).getFields()[name];
    if (!field) throw new Error(`${type} has no field ${name}`);
    const of = getNamedType(field.type);
    if (!isObjectType(of)) return selection({ name });
    const leaves = Object.values(of.getFields()).filter((sub) => !isObjectType(getNamedType(sub.type))).map((sub) => sub.name);
    const columns = fieldsOf(of.name).map((column) => column.name).filter((column) => leaves.includes(column));
    const ordered = [...columns, ...leaves.filter((leaf) => !columns.includes(leaf))];
    return [`${selection({ name })} {`, ...ordered.map((sub) => `    ${selection({ name: sub })}`), '  }'].join('\n');
  });

/** Each file's text, by its path: the records' fragments, and the lists' operations. */
export const FRAGMENT_FILES: Record<string, () => string> = {
  'src/rest/operations/lists.graphql': listOperations,
  'src/rest/operations/contact.fields.graphql': () =>
    [
      '# Written by `npm run generate` from src/contacts/contact.model.ts (src/rest/record-fragments.ts): edit the spec, not this file.',
      '',
      fragment('A contact as GET /api/v1/contacts lists it; updated_at is where a sync resumes (docs/rest.md#following-changes)', 'ContactItem', 'Contact', [
        'id',
        ...answerOrder(CONTACT_FIELDS).map(selection),
      ]),
      // CreateContact selects the id beside it: an answer that is one fragment is a named schema of the
      // OpenAPI document (src/rest/json-schema.ts), and the contract's create answer is a part of the record.
      fragment('What POST /api/v1/contacts answers of a contact besides its id', 'ContactCreated', 'Contact', answerOrder(CONTACT_FIELDS.filter((field) => 'createAnswer' in field)).map(selection)),
    ].join('\n'),
  'src/rest/operations/deal.fields.graphql': () =>
    [
      header('src/deals/deal.model.ts'),
      fragment('A deal as GET /api/v1/deals lists it; updated_at is where a sync resumes (docs/rest.md#following-changes)', 'DealItem', 'Deal', itemSelections(DEAL_MODEL)),
      fragment('What POST /api/v1/deals answers of a deal besides its id', 'DealCreated', 'Deal', createdSelections(DEAL_MODEL.fields)),
    ].join('\n'),
  'src/rest/operations/company.fields.graphql': () =>
    [header('src/companies/company.model.ts'), fragment('A company as GET /api/v1/companies lists it (docs/decisions.md §21)', 'CompanyItem', 'Company', itemSelections(COMPANY_MODEL))].join('\n'),
  'src/rest/operations/note.fields.graphql': () =>
    [header('src/activities/note.model.ts'), fragment('A note as GET /api/v1/notes lists it, and as every answer about one shows it', 'NoteItem', 'Note', itemSelections(NOTE_MODEL))].join('\n'),
  'src/rest/operations/task.fields.graphql': () =>
    [header('src/activities/task.model.ts'), fragment('A task as GET /api/v1/tasks lists it, and as every answer about one shows it', 'TaskItem', 'Task', itemSelections(TASK_MODEL))].join('\n'),
  'src/rest/operations/invoice.fields.graphql': () =>
    [
      header('src/invoices/invoice.model.ts'),
      fragment('An invoice as GET /api/v1/invoices lists it; updated_at is where a sync resumes (docs/rest.md#following-changes)', 'InvoiceItem', 'Invoice', itemSelections(INVOICE_MODEL)),
      fragment('An invoice by id and as its writes answer: the item, then the money of docs/decisions.md §20', 'InvoiceRecord', 'Invoice', ['...InvoiceItem', ...byIdSelections('Invoice', INVOICE_MODEL.byId)]),
    ].join('\n'),
};
