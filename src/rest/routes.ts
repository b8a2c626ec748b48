import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { Context } from '../context.js';
import { accountExportStream } from '../exports/account-json.js';
import { contactsCsvStream } from '../exports/contacts-csv.js';
import { MESSAGES } from '../errors.js';
import { download, type Exchange } from './download.js';
import { json } from './errors.js';
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

export type Route<Data = any> = {
  method: 'GET' | 'POST';
  path: string;
  operation: TypedDocumentNode<Data, any>;
  auth: 'user' | 'public';
  input: InputFrom;
  /**
   * The resource the path addresses, looked up (path parameters only) after the rate limit and
   * before the body is judged, so it answers 404 first (decisions.md §2); null is 404 `missing`.
   */
  target?: { operation: TypedDocumentNode<any, any>; missing: string };
  /** Form submissions report problems by the form's own field keys: keep them as they are. */
  keepDetailKeys?: boolean;
  respond: (result: Data[keyof Data], ctx: Context, exchange: Exchange) => Response | Promise<Response>;
};

const route = <Data>(r: Route<Data>): Route<Data> => r;

const list = ({ data, total, page, page_size }: { data: unknown[]; total: number; page: number; page_size: number }) =>
  json(200, { data, total, page, page_size });
const created = (data: unknown) => json(201, { data });

/** THE REST contract: endpoint -> GraphQL operation (src/rest/operations/*.graphql) -> answer. */
export const routes: Route[] = [
  route({ method: 'GET', path: '/api/v1/contacts', operation: ListContactsDocument, auth: 'user', input: 'query', respond: list }),
  route({ method: 'POST', path: '/api/v1/contacts', operation: CreateContactDocument, auth: 'user', input: 'body-as-input', respond: created }),
  route({
    method: 'GET', path: '/api/v1/contacts/export', operation: ExportContactsDocument, auth: 'user', input: 'query',
    respond: (ticket, ctx, exchange) =>
      download(contactsCsvStream(ctx.deps.db.reader, ticket.accountId), 'text/csv; charset=utf-8', ticket.fileName, exchange),
  }),
  route({ method: 'GET', path: '/api/v1/deals', operation: ListDealsDocument, auth: 'user', input: 'query', respond: list }),
  route({ method: 'POST', path: '/api/v1/deals', operation: CreateDealDocument, auth: 'user', input: 'body-as-input', respond: created }),
  route({ method: 'GET', path: '/api/v1/invoices', operation: ListInvoicesDocument, auth: 'user', input: 'query', respond: list }),
  route({
    method: 'POST', path: '/api/v1/forms/:form_id/submit', operation: SubmitLeadFormDocument, auth: 'public',
    target: { operation: LeadFormToSubmitDocument, missing: MESSAGES.formNotFound },
    input: 'body-as-variables', keepDetailKeys: true, respond: (result) => json(200, result),
  }),
  route({
    method: 'GET', path: '/api/v1/account/export', operation: ExportAccountDocument, auth: 'user', input: 'query',
    // The document lists this export's own audit row: a replica that has replayed it, else the primary.
    respond: async (ticket, ctx, exchange) =>
      download(
        accountExportStream(await ctx.deps.db.reader.$caughtUp(), ticket.accountId, new Date(ticket.createdAt)),
        'application/json; charset=utf-8',
        ticket.fileName,
        exchange,
      ),
  }),
];
