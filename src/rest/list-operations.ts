// REST's GET lists, one operation per page field of the core (src/graphql/page.ts), written by
// `npm run generate` into operations/lists.graphql: a list's query parameters are its page field's
// arguments, so a filter declared on a collection is a parameter of its list with no hand edit. A
// record's page (an invoice's payments) takes its record's id from the path, as `$id`.
import { PAGE_FIELDS, type PageFieldShape } from '../graphql/page.js';
import { schema } from '../schema.js';

/** The fragment a list's rows are answered with: `<Model>Item` unless the node's REST shape has another name. */
const ITEM_FRAGMENT: Record<string, string> = { Workflow: 'WorkflowRecord', WorkflowRun: 'WorkflowRunRecord', Payment: 'PaymentRecord', Event: 'EventEnvelope' };

const capitalized = (name: string) => `${name[0]!.toUpperCase()}${name.slice(1)}`;

/** A feed (`follow`) is read by cursor only (docs/decisions.md §24): no page number, no total. */
function listOperation({ name, model, args, follow, by }: PageFieldShape): string {
  const declared = schema.getQueryType()!.getFields()[name]!.args;
  const variables = args.filter((arg) => !(follow && arg === 'page')).map((arg) => {
    const type = declared.find((a) => a.name === arg)?.type;
    if (!type) throw new Error(`Query.${name} has no argument ${arg}`);
    return { arg, variable: arg === by ? 'id' : arg, type: String(type) };
  });
  return [
    by ? `# GET a record's ${name} (its id in the path)` : `# GET /api/v1/${name}`,
    `query ${by ? `${capitalized(name)}ById` : `List${capitalized(name)}`}(${variables.map((v) => `$${v.variable}: ${v.type}`).join(', ')}) {`,
    `  ${name}(${variables.map((v) => `${v.arg}: $${v.variable}`).join(', ')}) {`,
    '    data: nodes {',
    `      ...${ITEM_FRAGMENT[model] ?? `${model}Item`}`,
    '    }',
    ...(follow ? [] : ['    total', '    page']),
    '    page_size: pageSize',
    '    next_cursor: nextCursor',
    '  }',
    '}',
    '',
  ].join('\n');
}

/** operations/lists.graphql's text. */
export const listOperations = (): string =>
  [
    '# Written by `npm run generate` from the page fields of the GraphQL core (src/rest/list-operations.ts): declare a filter there, not here.',
    '',
    ...[...PAGE_FIELDS].sort((a, b) => a.name.localeCompare(b.name)).map(listOperation),
  ].join('\n');
