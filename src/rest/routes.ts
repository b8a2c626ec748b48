import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { ACCOUNT_JSON, CONTACTS_CSV, type Download } from './downloads.js';
import {
  CreateContactDocument,
  CreateDealDocument,
  ExportAccountDocument,
  ExportContactsDocument,
  LeadFormToSubmitDocument,
  ListContactsDocument,
  ListDealsDocument,
  ListInvoicesDocument,
  SubmitLeadFormDocument,
} from './operations/generated.js';

/**
 * Where a route's operation variables come from: the query string, the JSON body as the `input`
 * variable, or the JSON body's keys as variables. Path parameters always become variables.
 */
export type InputFrom = 'query' | 'body-as-input' | 'body-as-variables';

/**
 * How the operation's result becomes the answer: 200 with the (aliased) selection itself, 201
 * with `{data: <selection>}`, or a file streamed from the export ticket the operation answers.
 */
export type Answer = { kind: 'as-is' } | { kind: 'created' } | { kind: 'download'; file: Download };

export type Route = {
  method: 'GET' | 'POST';
  path: string;
  /** A named operation (src/rest/operations/*.graphql) with one root field: its rules are the route's. */
  operation: TypedDocumentNode<any, any>;
  input: InputFrom;
  answer: Answer;
  /**
   * The resource the path addresses, looked up (path parameters only) after the rate limit and
   * before the body is judged, so it answers 404 first (docs/decisions.md §2); null is the field's 404.
   */
  target?: TypedDocumentNode<any, any>;
  /** Form submissions report problems by the form's own field keys: keep them as they are. */
  keepDetailKeys?: boolean;
};

const AS_IS = { kind: 'as-is' } as const;
const CREATED = { kind: 'created' } as const;

/** THE REST contract: endpoint -> GraphQL operation -> answer. Access, limits and input rules are the field's. */
export const routes: Route[] = [
  { method: 'GET', path: '/api/v1/contacts', operation: ListContactsDocument, input: 'query', answer: AS_IS },
  { method: 'POST', path: '/api/v1/contacts', operation: CreateContactDocument, input: 'body-as-input', answer: CREATED },
  { method: 'GET', path: '/api/v1/contacts/export', operation: ExportContactsDocument, input: 'query', answer: { kind: 'download', file: CONTACTS_CSV } },
  { method: 'GET', path: '/api/v1/deals', operation: ListDealsDocument, input: 'query', answer: AS_IS },
  { method: 'POST', path: '/api/v1/deals', operation: CreateDealDocument, input: 'body-as-input', answer: CREATED },
  { method: 'GET', path: '/api/v1/invoices', operation: ListInvoicesDocument, input: 'query', answer: AS_IS },
  {
    method: 'POST', path: '/api/v1/forms/:form_id/submit', operation: SubmitLeadFormDocument, input: 'body-as-variables',
    answer: AS_IS, target: LeadFormToSubmitDocument, keepDetailKeys: true,
  },
  { method: 'GET', path: '/api/v1/account/export', operation: ExportAccountDocument, input: 'query', answer: { kind: 'download', file: ACCOUNT_JSON } },
];
