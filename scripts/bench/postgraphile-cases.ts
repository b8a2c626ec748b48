// PostGraphile's twin of each benched request that it has an equivalent for: the same account, the
// same page (25 rows newest first, 50 × 10 for the connection), the same fields and the total. Names
// are its inflection of our snake_case tables (amber preset: the `id` column is `rowId`, `id` being
// its global Node ID; relations over the composite (account_id, contact_id) keys are
// `contactByAccountIdAndContactId` ...). Its root field is aliased `result` and its nodes' fields
// to ours, so one reader (summarize) counts both servers' answers.
import { uuidv7 } from '../../src/cli/seed-bench-data.js';

export type Twin = {
  /** The JSON body of POST /graphql. */
  body: () => string;
  /** The case whose PostGraphile numbers this row shows (the GraphQL contacts row: the REST list's). */
  from?: string;
};

const ORDER = 'orderBy: [CREATED_AT_DESC, ROW_ID_DESC]';
const CONTACT = 'id: rowId firstName lastName email phone company contactType source createdAt';
const PERSON = 'contact: contactByAccountIdAndContactId { id: rowId firstName lastName }';

const page = (root: string, fields: string, byType = false) =>
  `query Bench($accountId: UUID!${byType ? ', $type: ContactType!' : ''}) {
    result: ${root}(first: 25, condition: { accountId: $accountId${byType ? ', contactType: $type' : ''} }, ${ORDER}) { totalCount nodes { ${fields} } }
  }`;

const CONNECTION = `query Bench($accountId: UUID!) {
  result: allContacts(first: 50, condition: { accountId: $accountId }, ${ORDER}) {
    totalCount
    pageInfo { hasNextPage }
    nodes { id: rowId firstName lastName email createdAt deals: dealsByAccountIdAndContactId(first: 10, ${ORDER}) { nodes { id: rowId title value status } } }
  }
}`;

const CREATE = `mutation Bench($contact: ContactInput!) {
  result: createContact(input: { contact: $contact }) { contact { id: rowId firstName lastName email contactType source createdAt } }
}`;

const CREATE_DEAL = `mutation Bench($deal: DealInput!) {
  result: createDeal(input: { deal: $deal }) { deal { id: rowId title value probability status createdAt } }
}`;

const json = (query: string, variables: object) => () => JSON.stringify({ query, variables });

/** Twins by case name (run.ts CASE_NAMES); cases without one (deep page, search, form submit) are absent. */
export function postgraphileTwins(accountId: string, type: string): Record<string, Twin> {
  const account = { accountId };
  const contacts = json(page('allContacts', CONTACT), account);
  return {
    'contacts-first': { body: contacts },
    'contacts-type': { body: json(page('allContacts', CONTACT, true), { accountId, type }) },
    deals: {
      body: json(page('allDeals', `id: rowId title value probability status expectedCloseDate ${PERSON} stage: pipelineStageByAccountIdAndStageId { id: rowId name }`), account),
    },
    invoices: { body: json(page('allInvoices', `id: rowId invoiceNumber amount status dueDate ${PERSON} createdAt`), account) },
    companies: { body: json(page('allCompanies', 'id: rowId name domain phone industry website externalId ownerId createdAt updatedAt'), account) },
    'graphql-contacts': { body: contacts, from: 'contacts-first' },
    'graphql-connection': { body: json(CONNECTION, account) },
    'create-contact': {
      // contacts.id has no database default (Prisma makes uuid(7) ids in the client): the request brings
      // one, time-ordered like the service's and the floor's so the index is written the same way.
      body: () => JSON.stringify({
        query: CREATE,
        variables: { contact: { rowId: uuidv7(Date.now()), accountId, firstName: 'Bench', lastName: 'Writer', email: 'bench.writer@example.com', company: 'Bench Ltd', contactType: 'lead', source: 'referral' } },
      }),
    },
    'create-deal': {
      body: () => JSON.stringify({ query: CREATE_DEAL, variables: { deal: { rowId: uuidv7(Date.now()), accountId, title: 'Bench deal', value: '4800.50', probability: 60, status: 'open' } } }),
    },
  };
}

type Listing = { nodes?: { deals?: { nodes: unknown[] } }[]; data?: unknown[]; total?: number; totalCount?: number };

/**
 * What an answer holds, as a comparable line: rows, nested deals and the total. Reads the service's
 * REST list (`{data, total}`), its GraphQL answers and PostGraphile's `result`; null when it holds no rows.
 */
export function summarize(body: unknown): string | null {
  const b = body as { data?: unknown; total?: number } | null;
  if (!b || typeof b !== 'object') return null;
  if (Array.isArray(b.data)) return line({ data: b.data, total: b.total });
  const d = b.data as Record<string, unknown> | null | undefined;
  if (!d) return null;
  const root = (d.result ?? d.contacts ?? (d.account as { contacts?: unknown } | null)?.contacts ?? d) as Record<string, unknown> | null;
  if (!root) return null;
  if (!('nodes' in root) && !('data' in root)) {
    // A created contact or deal: PostGraphile's payload `{ contact }` / `{ deal }`, the service's REST `{ data: ... }`.
    const created = (root.contact ?? root.deal ?? root) as { id?: unknown } | null;
    return created?.id ? '1 row' : null;
  }
  return line(root as Listing);
}

function line(listing: Listing): string {
  const rows = (listing.nodes ?? listing.data ?? []) as { deals?: { nodes: unknown[] } }[];
  const deals = rows.reduce((sum, r) => sum + (r.deals?.nodes.length ?? 0), 0);
  return `${rows.length} rows${deals ? ` (${deals} deals)` : ''} of ${listing.totalCount ?? listing.total}`;
}
