/** GraphiQL at GET /graphql (Accept: text/html), outside production: self-contained, no CDN. */
import { getOperationAST, parse } from 'graphql/index.js';
import type { GraphiQLOptions } from 'graphql-yoga';
import type { Config } from './config.js';
import { DEMO } from './demo.js';

const tab = (query: string, variables: Record<string, unknown> = {}) => ({
  query,
  variables: JSON.stringify(variables, null, 2),
});

/** Example operations for internal tools, on the demo account's fixed ids (src/demo.ts); their names are the GraphQL metrics' known names too. */
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
    { accountId: DEMO.accountId, search: null },
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
    { accountId: DEMO.accountId, after: null },
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
    { id: DEMO.contactId },
  ),
  tab(
    `mutation CreateContact($input: CreateContactInput!) {
  createContact(input: $input) { id firstName lastName email contactType source createdAt }
}
`,
    { input: { accountId: DEMO.accountId, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', contactType: 'client' } },
  ),
  tab(
    `mutation SetDealStatus($id: ID!, $status: DealStatus!) {
  setDealStatus(id: $id, status: $status) { id title status closedAt }
}
`,
    { id: DEMO.dealId, status: 'won' },
  ),
];

export const EXAMPLE_OPERATION_NAMES = EXAMPLES.map((t) => getOperationAST(parse(t.query))!.name!.value);

const OPTIONS: GraphiQLOptions = {
  title: 'CRM & billing API · GraphiQL',
  defaultTabs: EXAMPLES,
  defaultQuery: EXAMPLES[0]!.query,
  // Each tab's own header editor starts empty: the headers every tab shares live in the bar above GraphiQL.
  headers: '{}',
  defaultHeaders: '{}',
  shouldPersistHeaders: true,
};

/** Headers the page offers until the visitor edits them: the demo owner's token once the demo is seeded (src/main.ts). */
let offered: Record<string, string> = { Authorization: 'Bearer <session token>' };
export function offerDemoToken(token: string | null): void {
  offered = { Authorization: token ? `Bearer ${token}` : 'Bearer <session token>' };
}

// GraphiQL keeps headers per tab. This bar holds the headers every tab sends (a tab's own editor adds to
// or overrides them), kept in localStorage across reloads. GraphiQL's fetcher calls globalThis.fetch at
// request time, so wrapping fetch covers every tab, the schema's introspection included.
const sharedHeaders = (offer: Record<string, string>) => `
<style>body{display:flex;flex-direction:column;height:100vh;margin:0}#root{flex:1;min-height:0}
#crm-headers{display:flex;gap:.5rem;align-items:center;padding:.4rem .75rem;font:14px system-ui,sans-serif;background:#f3f3f3;color:#1f1f1f;border-bottom:1px solid #c4c4c4}
#crm-headers input{flex:1;font:13px ui-monospace,monospace;padding:.3rem;border:1px solid #767676;border-radius:4px}#crm-headers-problem{color:#b00020}</style>
<form id="crm-headers" onsubmit="return false">
<label for="crm-headers-input">Headers for every tab (kept in this browser):</label>
<input id="crm-headers-input" spellcheck="false" autocomplete="off"><span id="crm-headers-problem" role="status"></span>
</form>
<script>
(() => {
  const KEY = 'crm-graphiql:headers';
  const offer = ${JSON.stringify(JSON.stringify(offer)).replaceAll('<', '\\u003c')};
  const input = document.getElementById('crm-headers-input');
  const problem = document.getElementById('crm-headers-problem');
  let stored = null;
  try { stored = JSON.parse(localStorage.getItem(KEY)); } catch {}
  // What the server offers (the demo token) replaces what it offered before, never what the visitor typed.
  const text = stored && typeof stored.text === 'string' && !stored.offered ? stored.text : offer;
  const parse = (value) => { try { const v = JSON.parse(value); return v && typeof v === 'object' && !Array.isArray(v) ? v : null; } catch { return null; } };
  let shared = parse(text) || {};
  input.value = text;
  localStorage.setItem(KEY, JSON.stringify({ text, offered: text === offer }));
  input.addEventListener('input', () => {
    const next = parse(input.value);
    problem.textContent = next ? '' : 'Not a JSON object: the last valid headers still apply';
    if (!next) return;
    shared = next;
    localStorage.setItem(KEY, JSON.stringify({ text: input.value, offered: false }));
  });
  const endpoint = new URL(location.pathname, location.origin).href;
  const fetch = window.fetch.bind(window);
  window.fetch = (resource, init = {}) => {
    const url = new URL(resource instanceof Request ? resource.url : String(resource), location.href);
    if (url.origin + url.pathname !== endpoint) return fetch(resource, init);
    const headers = new Headers(resource instanceof Request ? resource.headers : undefined);
    for (const [name, value] of Object.entries(shared)) headers.set(name, String(value));
    new Headers(init.headers).forEach((value, name) => headers.set(name, value));
    return fetch(resource, { ...init, headers });
  };
})();
</script>
`;

// The page inlines GraphiQL (about 9 MB): render it once per set of options and offered headers, not per request.
// Its module is imported on the first page only: its sources, held as strings, were ~32 MB of every
// instance's heap, in production too, where GraphiQL is off (BENCHMARKS.md "Imports").
let cached: { key: string; page: string } | undefined;
const render = async (options: GraphiQLOptions): Promise<string> => {
  const key = JSON.stringify([options, offered]);
  if (cached?.key !== key) {
    const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
    const page = renderGraphiQL(options);
    const root = '<div id="root"></div>';
    if (!page.includes(root)) throw new Error('@graphql-yoga/render-graphiql changed its page: src/graphiql.ts needs updating');
    cached = { key, page: page.replace(root, `${sharedHeaders(offered)}${root}`) };
  }
  return cached.page;
};

/** Yoga's `graphiql` + `renderGraphiQL` options: on where introspection is (by default, outside production). */
export function graphiql(config: Config): { graphiql: GraphiQLOptions | false; renderGraphiQL: typeof render } {
  return { graphiql: config.introspection ? OPTIONS : false, renderGraphiQL: render };
}
