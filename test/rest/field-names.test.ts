import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes, type Route } from '../../src/rest/routes.js';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §2: a 400's `details` names each failing field by its REST name (snake_case, as
// sent), never by a GraphQL variable (`input.first_name`, `pageSize`). Walks EVERY route of
// src/rest/routes.ts: a route added without a case here fails the first test.

let t: TestApp;
let acc: TestAccount;
let contactId: string;
let dealId: string;
let invoiceId: string;
let formId: string;
let foreignContactId: string;
beforeAll(async () => {
  t = await createTestApp();
  const other = await createAccount(t);
  acc = await createAccount(t);
  [contactId, foreignContactId] = [(await createContact(t, acc)).id, (await createContact(t, other)).id];
  dealId = (await t.db.deal.create({ data: { accountId: acc.id, title: 'Named fields' } })).id;
  invoiceId = (await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: unique('N'), amount: 5, dueDate: new Date('2030-01-01') } })).id;
  const form = await t.gql(
    'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id } }',
    { input: { accountId: acc.id, name: unique('Form'), fields: [{ key: 'workEmail', label: 'E-mail', type: 'email', mapsTo: 'email' }] } },
    { as: acc.owner },
  );
  formId = form.data.createLeadForm.id;
});
afterAll(() => t?.close());

const ONE_OF = (values: string) => [`Must be one of: ${values}`];
const CONTACT_TYPES = ONE_OF('client, lead, other, past_client, vendor');

/** A request whose input fails: types the REST layer refuses and rules the core refuses, side by side. */
type Case = {
  path: () => string;
  query?: () => Record<string, string>;
  body?: () => Record<string, unknown>;
  headers?: Record<string, string>;
  details: () => Record<string, string[]> | null;
};

const CASES: Record<string, Case[]> = {
  'GET /api/v1/contacts': [{
    path: () => '/api/v1/contacts',
    query: () => ({ account_id: acc.id, page: '0', page_size: 'abc', type: 'nope' }),
    details: () => ({ page: ['Must be at least 1'], page_size: ['Must be an integer'], type: CONTACT_TYPES }),
  }],
  'POST /api/v1/contacts': [
    {
      path: () => '/api/v1/contacts',
      body: () => ({ account_id: acc.id, first_name: '', email: 'bad', contact_type: 'nope' }),
      details: () => ({ first_name: ['Required'], email: ['Must be a valid e-mail address'], contact_type: CONTACT_TYPES }),
    },
    { path: () => '/api/v1/contacts', body: () => ({ account_id: acc.id, first_name: 'x'.repeat(101) }), details: () => ({ first_name: ['Must be at most 100 characters'] }) },
  ],
  'GET /api/v1/contacts/export': [{ path: () => '/api/v1/contacts/export', query: () => ({ account_id: 'nope' }), details: () => ({ account_id: ['Must be a UUID'] }) }],
  'GET /api/v1/deals': [{
    path: () => '/api/v1/deals',
    query: () => ({ account_id: acc.id, page_size: '101', status: 'nope' }),
    details: () => ({ page_size: ['Must be from 1 to 100'], status: ONE_OF('abandoned, lost, open, won') }),
  }],
  'POST /api/v1/deals': [
    {
      path: () => '/api/v1/deals',
      body: () => ({ account_id: acc.id, title: '', probability: 'high', expected_close_date: '2025-02-30' }),
      details: () => ({ title: ['Required'], probability: ['Expected a number'], expected_close_date: ['Must be a real date in the form YYYY-MM-DD'] }),
    },
    {
      path: () => '/api/v1/deals',
      body: () => ({ account_id: acc.id, title: 'x', contact_id: foreignContactId, value: -5 }),
      details: () => ({ contact_id: ['Not found in this account'], value: ['Must be from 0 to 9999999999.99'] }),
    },
  ],
  'GET /api/v1/invoices': [{
    path: () => '/api/v1/invoices',
    query: () => ({ account_id: acc.id, page: '0', status: 'nope' }),
    details: () => ({ page: ['Must be at least 1'], status: ONE_OF('cancelled, draft, overdue, paid, partial, refunded, sent, viewed') }),
  }],
  // The form's problems keep the form's own keys; the metadata's are named by their path in the body.
  'POST /api/v1/forms/:form_id/submit': [
    { path: () => `/api/v1/forms/${formId}/submit`, body: () => ({ data: { workEmail: 'bad' }, metadata: { referrer: 5 } }), details: () => ({ 'metadata.referrer': ['Expected a string'], workEmail: ['Must be a valid e-mail address'] }) },
    { path: () => `/api/v1/forms/${formId}/submit`, body: () => ({ data: { workEmail: 'bad' } }), details: () => ({ workEmail: ['Must be a valid e-mail address'] }) },
  ],
  'GET /api/v1/account/export': [{ path: () => '/api/v1/account/export', query: () => ({ account_id: 'nope' }), details: () => ({ account_id: ['Must be a UUID'] }) }],
  // By id: the only parameter is the path's, and an id that is not a UUID addresses nothing (404).
  'GET /api/v1/contacts/:id': [{ path: () => '/api/v1/contacts/nope', details: () => null }],
  'PATCH /api/v1/contacts/:id': [
    {
      path: () => `/api/v1/contacts/${contactId}`,
      body: () => ({ first_name: '', email: 'bad', contact_type: 'nope' }),
      details: () => ({ first_name: ['Required'], email: ['Must be a valid e-mail address'], contact_type: CONTACT_TYPES }),
    },
    { path: () => `/api/v1/contacts/${contactId}`, body: () => ({ first_name: null, phone: 'x'.repeat(51) }), details: () => ({ first_name: ['Required'], phone: ['Must be at most 50 characters'] }) },
    // The input as a whole is the body; a body whose only field is ill-typed did name a field.
    { path: () => `/api/v1/contacts/${contactId}`, body: () => ({}), details: () => ({ body: ['Must change at least one field'] }) },
    { path: () => `/api/v1/contacts/${contactId}`, body: () => ({ contact_type: 'nope' }), details: () => ({ contact_type: CONTACT_TYPES }) },
  ],
  'DELETE /api/v1/contacts/:id': [{ path: () => '/api/v1/contacts/nope', details: () => null }],
  'GET /api/v1/deals/:id': [{ path: () => '/api/v1/deals/nope', details: () => null }],
  'PATCH /api/v1/deals/:id': [
    {
      path: () => `/api/v1/deals/${dealId}`,
      body: () => ({ title: '', probability: 'high', contact_id: foreignContactId }),
      details: () => ({ title: ['Required'], probability: ['Expected a number'], contact_id: ['Not found in this account'] }),
    },
    {
      path: () => `/api/v1/deals/${dealId}`,
      body: () => ({ contact_id: foreignContactId, probability: 101, value: -5 }),
      details: () => ({ contact_id: ['Not found in this account'], probability: ['Must be from 0 to 100'], value: ['Must be from 0 to 9999999999.99'] }),
    },
  ],
  'DELETE /api/v1/deals/:id': [{ path: () => '/api/v1/deals/nope', details: () => null }],
  // Companies (docs/decisions.md §21).
  'GET /api/v1/companies': [{
    path: () => '/api/v1/companies',
    query: () => ({ account_id: acc.id, page_size: '0', domain: 'not a host', owner_id: 'nope' }),
    details: () => ({ page_size: ['Must be from 1 to 100'], domain: ['Must be a host name such as acme.com'], owner_id: ['Must be a UUID'] }),
  }],
  'POST /api/v1/companies': [
    {
      path: () => '/api/v1/companies',
      body: () => ({ account_id: acc.id, name: '', domain: 'not a host', external_id: 'x'.repeat(256) }),
      details: () => ({ name: ['Required'], domain: ['Must be a host name such as acme.com'], external_id: ['Must be at most 255 characters'] }),
    },
    { path: () => '/api/v1/companies', body: () => ({ account_id: acc.id, name: 'x', owner_id: acc.outsider.id }), details: () => ({ owner_id: ['Not a member of this account'] }) },
  ],
  'GET /api/v1/companies/:id': [{ path: () => '/api/v1/companies/nope', details: () => null }],
  'PATCH /api/v1/companies/:id': [{ path: () => '/api/v1/companies/nope', body: () => ({ name: 'x' }), details: () => null }],
  'DELETE /api/v1/companies/:id': [{ path: () => '/api/v1/companies/nope', details: () => null }],
  // Notes and tasks (docs/decisions.md §21).
  'GET /api/v1/notes': [{
    path: () => '/api/v1/notes',
    query: () => ({ account_id: acc.id, page_size: '0', contact_id: 'nope', company_id: 'nope' }),
    details: () => ({ page_size: ['Must be from 1 to 100'], contact_id: ['Must be a UUID'], company_id: ['Must be a UUID'] }),
  }],
  'POST /api/v1/notes': [{
    path: () => '/api/v1/notes',
    body: () => ({ account_id: acc.id, body: 'x'.repeat(10_001), contact_id: foreignContactId }),
    details: () => ({ body: ['Must be at most 10000 characters'], contact_id: ['Not found in this account'] }),
  }],
  'GET /api/v1/notes/:id': [{ path: () => '/api/v1/notes/nope', details: () => null }],
  'PATCH /api/v1/notes/:id': [{ path: () => '/api/v1/notes/nope', body: () => ({ pinned: true }), details: () => null }],
  'DELETE /api/v1/notes/:id': [{ path: () => '/api/v1/notes/nope', details: () => null }],
  'GET /api/v1/tasks': [{
    path: () => '/api/v1/tasks',
    query: () => ({ account_id: acc.id, assignee_id: 'nope', deal_id: 'nope' }),
    details: () => ({ assignee_id: ['Must be a UUID'], deal_id: ['Must be a UUID'] }),
  }],
  'POST /api/v1/tasks': [{
    path: () => '/api/v1/tasks',
    body: () => ({ account_id: acc.id, title: '', contact_id: contactId, assignee_id: acc.outsider.id }),
    details: () => ({ title: ['Required'], assignee_id: ['Not a member of this account'] }),
  }],
  'GET /api/v1/tasks/:id': [{ path: () => '/api/v1/tasks/nope', details: () => null }],
  'PATCH /api/v1/tasks/:id': [{ path: () => '/api/v1/tasks/nope', body: () => ({ title: 'x' }), details: () => null }],
  'POST /api/v1/tasks/:id/complete': [{ path: () => '/api/v1/tasks/nope/complete', body: () => ({}), details: () => null }],
  // The trash (docs/trash.md): the id is the path's; a taken value's details are in test/graphql/trash.test.ts.
  'POST /api/v1/contacts/:id/restore': [{ path: () => '/api/v1/contacts/nope/restore', body: () => ({}), details: () => null }],
  'POST /api/v1/deals/:id/restore': [{ path: () => '/api/v1/deals/nope/restore', body: () => ({}), details: () => null }],
  'POST /api/v1/companies/:id/restore': [{ path: () => '/api/v1/companies/nope/restore', body: () => ({}), details: () => null }],
  'POST /api/v1/tasks/:id/reopen': [{ path: () => '/api/v1/tasks/nope/reopen', body: () => ({}), details: () => null }],
  'DELETE /api/v1/tasks/:id': [{ path: () => '/api/v1/tasks/nope', details: () => null }],
  'GET /api/v1/invoices/:id': [{ path: () => '/api/v1/invoices/nope', details: () => null }],
  // Invoices written and records moved (docs/decisions.md §18).
  'POST /api/v1/invoices': [{
    path: () => '/api/v1/invoices',
    body: () => ({ account_id: acc.id, amount: 'ten', due_date: '2025-02-30', contact_id: foreignContactId, invoice_number: 'x'.repeat(51) }),
    details: () => ({ amount: ['Expected a number'], due_date: ['Must be a real date in the form YYYY-MM-DD'], contact_id: ['Not found in this account'], invoice_number: ['Must be at most 50 characters'] }),
  }],
  'PATCH /api/v1/invoices/:id': [{
    path: () => `/api/v1/invoices/${invoiceId}`,
    body: () => ({ amount: -1, contact_id: foreignContactId, due_date: 5 }),
    details: () => ({ amount: ['Must be from 0 to 9999999999.99'], contact_id: ['Not found in this account'], due_date: ['Must be a real date in the form YYYY-MM-DD'] }),
  }],
  'DELETE /api/v1/invoices/:id': [{ path: () => '/api/v1/invoices/nope', details: () => null }],
  // Payments (docs/decisions.md §20): paid_at, and a line's fields, by their REST names.
  'GET /api/v1/invoices/:id/payments': [{ path: () => '/api/v1/invoices/nope/payments', details: () => null }],
  'POST /api/v1/invoices/:id/payments': [{
    path: () => `/api/v1/invoices/${invoiceId}/payments`,
    body: () => ({ amount: 'ten', method: 'cheque', paid_at: 'yesterday' }),
    details: () => ({ amount: ['Expected a number'], method: ONE_OF('bank_transfer, card, cash, check, other'), paid_at: [expect.any(String)] }),
  }],
  'GET /api/v1/invoices/:id/pdf': [{ path: () => '/api/v1/invoices/nope/pdf', details: () => null }],
  'POST /api/v1/invoices/:id/send': [{ path: () => `/api/v1/invoices/${invoiceId}/send`, body: () => ({ to: 'not an address' }), details: () => ({ to: [expect.any(String)] }) }],
  'POST /api/v1/payments/:id/refund': [{ path: () => `/api/v1/payments/${invoiceId}/refund`, body: () => ({ amount: 'ten' }), details: () => ({ amount: ['Expected a number'] }) }],
  'POST /api/v1/invoices/:id/status': [{
    path: () => `/api/v1/invoices/${invoiceId}/status`,
    body: () => ({ status: 'settled' }),
    details: () => ({ status: ONE_OF('cancelled, draft, overdue, paid, partial, refunded, sent, viewed') }),
  }],
  'POST /api/v1/deals/:id/status': [{ path: () => `/api/v1/deals/${dealId}/status`, body: () => ({ status: 'closed' }), details: () => ({ status: ONE_OF('abandoned, lost, open, won') }) }],
  'GET /api/v1/custom_fields': [{ path: () => '/api/v1/custom_fields', query: () => ({ account_id: 'nope', object: 'person' }), details: () => ({ account_id: ['Must be a UUID'], object: ONE_OF('company, contact, deal, invoice') }) }],
  'POST /api/v1/custom_fields': [{
    path: () => '/api/v1/custom_fields',
    body: () => ({ account_id: acc.id, object: 'contact', key: 'Bad Key', label: '', type: 'select', options: [], colour: 'red' }),
    details: () => ({ key: ['Must start with a lower-case letter and hold only a-z, 0-9 and _ (at most 50)'], label: ['Required'], options: ['A SELECT or MULTI_SELECT field needs at least one option'], colour: ['Unknown field'] }),
  }],
  'PATCH /api/v1/custom_fields/:id': [{ path: () => '/api/v1/custom_fields/nope', body: () => ({ label: 'x' }), details: () => null }],
  // Workflows (docs/workflows.md): a trigger's and a step's parts by their REST names.
  'GET /api/v1/workflows': [{ path: () => '/api/v1/workflows', query: () => ({ account_id: 'nope' }), details: () => ({ account_id: ['Must be a UUID'] }) }],
  'POST /api/v1/workflows': [{
    path: () => '/api/v1/workflows',
    body: () => ({ account_id: acc.id, name: '', trigger: { event: 'contact.created', colour: 'red' }, actions: [] }),
    details: () => ({ name: ['Required'], 'trigger.colour': ['Unknown field'] }),
  }],
  'GET /api/v1/workflows/:id/runs': [{ path: () => '/api/v1/workflows/nope/runs', details: () => null }],
  'POST /api/v1/workflows/:id/test': [{ path: () => '/api/v1/workflows/00000000-0000-7000-8000-000000000000/test', body: () => ({ event_id: 'nope' }), details: () => ({ event_id: ['Must be a UUID'] }) }],
  'GET /api/v1/workflows/:id': [{ path: () => '/api/v1/workflows/nope', details: () => null }],
  'PATCH /api/v1/workflows/:id': [{ path: () => '/api/v1/workflows/nope', body: () => ({ name: 'x' }), details: () => null }],
  'DELETE /api/v1/workflows/:id': [{ path: () => '/api/v1/workflows/nope', details: () => null }],
  'GET /api/v1/webhook_endpoints': [{ path: () => '/api/v1/webhook_endpoints', query: () => ({ account_id: 'nope' }), details: () => ({ account_id: ['Must be a UUID'] }) }],
  'POST /api/v1/webhook_endpoints': [{
    path: () => '/api/v1/webhook_endpoints',
    body: () => ({ account_id: acc.id, url: 5, event_types: 'all' }),
    details: () => ({ url: ['Expected a string'], event_types: ['Expected an array'] }),
  }],
  'GET /api/v1/webhook_endpoints/:id': [{ path: () => '/api/v1/webhook_endpoints/nope', details: () => null }],
  'PATCH /api/v1/webhook_endpoints/:id': [{ path: () => '/api/v1/webhook_endpoints/nope', body: () => ({ enabled: true }), details: () => null }],
  'DELETE /api/v1/webhook_endpoints/:id': [{ path: () => '/api/v1/webhook_endpoints/nope', details: () => null }],
  // The events feed (docs/decisions.md §18).
  'GET /api/v1/events': [{
    path: () => '/api/v1/events',
    query: () => ({ account_id: 'nope', page_size: '0', since: 'soon' }),
    details: () => ({ account_id: ['Must be a UUID'], page_size: ['Must be from 1 to 100'], since: expect.any(Array) }),
  }],
  'GET /api/v1/events/:id': [{ path: () => '/api/v1/events/nope', query: () => ({ account_id: acc.id }), details: () => null }],
  // The dashboard reports (docs/decisions.md §19): details by the query's snake_case names.
  'GET /api/v1/reports/pipeline': [{ path: () => '/api/v1/reports/pipeline', query: () => ({ account_id: 'nope' }), details: () => ({ account_id: ['Must be a UUID'] }) }],
  'GET /api/v1/reports/deals': [
    { path: () => '/api/v1/reports/deals', query: () => ({ account_id: 'nope', to: 'soon' }), details: () => ({ account_id: ['Must be a UUID'], to: expect.any(Array) }) },
    { path: () => '/api/v1/reports/deals', query: () => ({ account_id: acc.id, from: '2026-02-02', to: '2026-02-01' }), details: () => ({ from: ['Must not be after `to`'] }) },
  ],
  'GET /api/v1/reports/receivables': [{
    path: () => '/api/v1/reports/receivables',
    query: () => ({ account_id: acc.id, as_of: '2026-02-30' }),
    details: () => ({ as_of: expect.any(Array) }),
  }],
  'GET /api/v1/reports/revenue': [{
    path: () => '/api/v1/reports/revenue',
    query: () => ({ account_id: acc.id, from: 'soon', currency: 'dollars' }),
    details: () => ({ from: expect.any(Array), currency: expect.any(Array) }),
  }],
  // Duplicates found and merged (docs/decisions.md §22).
  'GET /api/v1/contacts/duplicates': [{ path: () => '/api/v1/contacts/duplicates', query: () => ({ account_id: 'nope', first: '0' }), details: () => ({ account_id: ['Must be a UUID'], first: ['Must be at least 1'] }) }],
  'GET /api/v1/companies/duplicates': [{ path: () => '/api/v1/companies/duplicates', query: () => ({ account_id: acc.id, first: '101' }), details: () => ({ first: ['Must be at most 100'] }) }],
  'POST /api/v1/contacts/:id/merge': [
    { path: () => `/api/v1/contacts/${contactId}/merge`, body: () => ({ duplicate_ids: [] }), details: () => ({ duplicate_ids: ['Give at least one duplicate'] }) },
    { path: () => `/api/v1/contacts/${contactId}/merge`, body: () => ({ duplicate_ids: ['nope', contactId] }), details: () => ({ 'duplicate_ids.0': ['Must be a UUID'], duplicate_ids: ['Must not hold the primary'] }) },
  ],
  'POST /api/v1/companies/:id/merge': [{ path: () => `/api/v1/companies/${contactId}/merge`, body: () => ({ duplicate_ids: [] }), details: () => ({ duplicate_ids: ['Give at least one duplicate'] }) }],
  'GET /api/v1/reports/contacts': [{ path: () => '/api/v1/reports/contacts', query: () => ({ account_id: 'nope' }), details: () => ({ account_id: ['Must be a UUID'] }) }],
  // Imports (docs/imports.md): the query names the import, the file is the body.
  'POST /api/v1/imports': [{
    path: () => '/api/v1/imports',
    query: () => ({ account_id: acc.id, object: 'notes', match_on: 'phone' }),
    headers: { 'content-type': 'text/csv' },
    details: () => ({ object: ONE_OF('companies, contacts, deals'), match_on: ONE_OF('domain, email, external_id, none') }),
  }],
  'GET /api/v1/imports': [{ path: () => '/api/v1/imports', query: () => ({ account_id: 'nope' }), details: () => ({ account_id: ['Must be a UUID'] }) }],
  'GET /api/v1/imports/:id': [{ path: () => '/api/v1/imports/nope', details: () => null }],
  'DELETE /api/v1/imports/:id': [{ path: () => '/api/v1/imports/nope', details: () => null }],
  'GET /api/v1/imports/:id/errors': [{ path: () => '/api/v1/imports/nope/errors', details: () => null }],
  // A batch's envelope is the request's; its records' own problems are each item's (test/rest/batches.test.ts).
  'POST /api/v1/contacts/batch': [
    { path: () => '/api/v1/contacts/batch', body: () => ({ account_id: acc.id, records: [] }), details: () => ({ records: ['Must have 1 to 100 records'] }) },
    { path: () => '/api/v1/contacts/batch', body: () => ({ account_id: acc.id, mode: 'upsert', match_on: 'phone', records: [{ first_name: 'A' }] }), details: () => ({ match_on: ONE_OF('email, external_id') }) },
  ],
  'POST /api/v1/companies/batch': [
    { path: () => '/api/v1/companies/batch', body: () => ({ account_id: acc.id, mode: 'create', match_on: 'domain', records: [{ name: 'A' }] }), details: () => ({ mode: ONE_OF('upsert') }) },
    { path: () => '/api/v1/companies/batch', body: () => ({ account_id: acc.id, match_on: 'email', all_or_nothing: 'yes', records: [{ name: 'A' }] }), details: () => ({ match_on: ONE_OF('domain, external_id'), all_or_nothing: ['Expected true or false'] }) },
  ],
  'POST /api/v1/deals/batch': [
    { path: () => '/api/v1/deals/batch', body: () => ({ account_id: acc.id, records: [{ title: 'A' }, 'B'] }), details: () => ({ 'records.1': ['Expected an object'] }) },
  ],
};

const nameOf = (route: Route) => `${route.method} ${route.path}`;

/** The names a client used: the body's keys (and the keys of its objects), the query's, or the body itself. */
function namesSent(body: Record<string, unknown> | undefined, query: Record<string, string> | undefined): Set<string> {
  const names = new Set<string>(['body', ...Object.keys(query ?? {})]);
  for (const [key, value] of Object.entries(body ?? {})) {
    names.add(key);
    if (value && typeof value === 'object') for (const inner of Object.keys(value)) names.add(key === 'data' ? inner : `${key}.${inner}`);
  }
  return names;
}

describe('every REST route names failing fields by their REST names', () => {
  it('every route of src/rest/routes.ts has a case here', () => {
    expect(routes.map(nameOf).filter((name) => !CASES[name])).toEqual([]);
  });

  it.each(routes.map((route) => [nameOf(route), route] as const))('%s: details keyed as the client sent them', async (name, route) => {
    for (const c of CASES[name]!) {
      const query = c.query?.();
      const body = c.body?.();
      const path = query ? `${c.path()}?${new URLSearchParams(query)}` : c.path();
      const r = await t.rest(route.method, path, { as: acc.owner, ...(body ? { body } : {}), ...(c.headers ? { headers: c.headers } : {}) });
      const details = c.details();
      if (details === null) {
        expect(r.status, r.text).toBe(404);
        continue;
      }
      expect(r.status, r.text).toBe(400);
      expect(r.body.error).toBe(route.input === 'query' || route.input === 'query-with-file' ? 'Invalid query' : 'Invalid payload');
      expect(r.body.details).toEqual(details);
      const sent = namesSent(body, query);
      for (const key of Object.keys(r.body.details)) expect(sent, `${name}: "${key}" is not a name the client sent`).toContain(key);
    }
  });
});
