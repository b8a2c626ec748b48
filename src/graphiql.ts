/** GraphiQL at GET /graphql (Accept: text/html), outside production: self-contained, no CDN. */
import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { getOperationAST, parse } from 'graphql';
import type { GraphiQLOptions } from 'graphql-yoga';
import type { Config } from './config.js';

const tab = (query: string, variables: Record<string, unknown> = {}) => ({
  query,
  variables: JSON.stringify(variables, null, 2),
});

const ACCOUNT = '<account id from Me>';

/** Example operations for internal tools; their names are the GraphQL metrics' known names too. */
export const EXAMPLES = [
  tab(`# Who am I, and which accounts can I use?
query Me {
  me {
    id
    email
    name
    accounts { id name }
  }
}
`),
  tab(
    `query Contacts($accountId: ID!, $search: String) {
  contacts(accountId: $accountId, search: $search, pageSize: 10) {
    total
    nodes { id firstName lastName email contactType source createdAt }
  }
}
`,
    { accountId: ACCOUNT, search: null },
  ),
  tab(
    `# Page through an account's contacts by cursor (docs/graphql.md): pass pageInfo.endCursor as $after.
query ContactsByCursor($accountId: ID!, $after: String) {
  account(id: $accountId) {
    contacts(first: 50, after: $after, orderBy: { field: CREATED_AT, direction: DESC }) {
      totalCount
      pageInfo { hasNextPage endCursor }
      nodes { id firstName lastName email contactType updatedAt }
    }
  }
}
`,
    { accountId: ACCOUNT, after: null },
  ),
  tab(
    `# One contact with its deals, invoices and form submissions.
query ContactWithRelations($id: ID!) {
  contact(id: $id) {
    id firstName lastName email company updatedAt
    deals(first: 10) { totalCount nodes { id title status value stage { id name } } }
    invoices(first: 10) { totalCount nodes { id invoiceNumber amount status dueDate } }
    submissions(first: 10) { totalCount nodes { id createdAt data form { id name } } }
  }
}
`,
    { id: '<contact id>' },
  ),
  tab(
    `mutation CreateContact($input: CreateContactInput!) {
  createContact(input: $input) { id firstName lastName email contactType source createdAt }
}
`,
    { input: { accountId: ACCOUNT, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', contactType: 'client' } },
  ),
  tab(
    `mutation SetDealStatus($id: ID!, $status: DealStatus!) {
  setDealStatus(id: $id, status: $status) { id title status closedAt }
}
`,
    { id: '<deal id>', status: 'won' },
  ),
];

export const EXAMPLE_OPERATION_NAMES = EXAMPLES.map((t) => getOperationAST(parse(t.query))!.name!.value);

const OPTIONS: GraphiQLOptions = {
  title: 'CRM & billing API · GraphiQL',
  defaultTabs: EXAMPLES,
  defaultQuery: EXAMPLES[0]!.query,
  // The session token goes here; a cookie works too when this origin is in ALLOWED_ORIGINS.
  headers: JSON.stringify({ Authorization: 'Bearer <session token>' }, null, 2),
  shouldPersistHeaders: false,
};

// The page inlines GraphiQL (about 9 MB): render it once per set of options, not per request.
let cached: { key: string; page: string } | undefined;
const render = (options: GraphiQLOptions): string => {
  const key = JSON.stringify(options);
  if (cached?.key !== key) cached = { key, page: renderGraphiQL(options) };
  return cached.page;
};

/** Yoga's `graphiql` + `renderGraphiQL` options: on where introspection is (by default, outside production). */
export function graphiql(config: Config): { graphiql: GraphiQLOptions | false; renderGraphiQL: typeof render } {
  return { graphiql: config.introspection ? OPTIONS : false, renderGraphiQL: render };
}
