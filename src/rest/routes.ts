import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { ACCOUNT_JSON, CONTACTS_CSV, IMPORT_ERRORS_CSV, INVOICE_PDF, type Download } from './downloads.js';
import {
  CompanyByIdDocument,
  CompanyDuplicatesDocument,
  ContactDuplicatesDocument,
  MergeCompaniesByIdDocument,
  MergeContactsByIdDocument,
  RestoreCompanyByIdDocument,
  RestoreContactByIdDocument,
  RestoreDealByIdDocument,
  CompleteTaskByIdDocument,
  CreateNoteDocument,
  CreateTaskDocument,
  DeleteNoteByIdDocument,
  DeleteTaskByIdDocument,
  ListNotesDocument,
  ListTasksDocument,
  NoteByIdDocument,
  ReopenTaskByIdDocument,
  TaskByIdDocument,
  UpdateNoteByIdDocument,
  UpdateTaskByIdDocument,
  ContactByIdDocument,
  CreateCompanyDocument,
  DeleteCompanyByIdDocument,
  ListCompaniesDocument,
  UpdateCompanyByIdDocument,
  DealByIdDocument,
  DeleteContactByIdDocument,
  DeleteDealByIdDocument,
  InvoiceByIdDocument,
  InvoicePdfByIdDocument,
  CreateInvoiceDocument,
  UpdateInvoiceByIdDocument,
  DeleteInvoiceByIdDocument,
  SetInvoiceStatusByIdDocument,
  SendInvoiceByIdDocument,
  InvoicePaymentsByIdDocument,
  RecordPaymentByInvoiceIdDocument,
  RefundPaymentByIdDocument,
  SetDealStatusByIdDocument,
  ListWebhookEndpointsDocument,
  ListCustomFieldsDocument,
  CreateCustomFieldDocument,
  UpdateCustomFieldByIdDocument,
  ListEventsDocument,
  EventByIdDocument,
  CreateWebhookEndpointDocument,
  WebhookEndpointByIdDocument,
  UpdateWebhookEndpointByIdDocument,
  DeleteWebhookEndpointByIdDocument,
  UpdateContactByIdDocument,
  UpdateDealByIdDocument,
  CreateContactDocument,
  CreateContactsBatchDocument,
  CreateDealsBatchDocument,
  UpsertContactsBatchDocument,
  UpsertDealsBatchDocument,
  CreateDealDocument,
  CancelImportByIdDocument,
  ImportByIdDocument,
  ImportErrorsDocument,
  ListImportsDocument,
  QueueImportDocument,
  StartImportDocument,
  AdmitImportDocument,
  ExportAccountDocument,
  ExportContactsDocument,
  LeadFormToSubmitDocument,
  ListContactsDocument,
  UpsertCompaniesBatchDocument,
  ListDealsDocument,
  ListInvoicesDocument,
  SubmitLeadFormDocument,
  PipelineReportDocument,
  DealReportDocument,
  ReceivablesReportDocument,
  ContactReportDocument,
  RevenueReportDocument,
  ListWorkflowsDocument,
  CreateWorkflowDocument,
  WorkflowByIdDocument,
  UpdateWorkflowByIdDocument,
  DeleteWorkflowByIdDocument,
  WorkflowRunsByIdDocument,
  TestWorkflowByIdDocument,
} from './operations/generated.js';

/**
 * Where a route's operation variables come from: the query string, the JSON body as the `input`
 * variable, or the JSON body's keys as variables; or the query string with a CSV file as the body
 * (FILE_VARIABLES come from the file). Path parameters always become variables.
 */
export type InputFrom = 'query' | 'body-as-input' | 'body-as-variables' | 'query-with-file';

/** The variables a `query-with-file` route fills from the file itself (its header row) and the X-File-Name header. */
export const FILE_VARIABLES = ['columns', 'fileName'];

/**
 * How the operation's result becomes the answer: 200 with the (aliased) selection itself, 201
 * with `{data: <selection>}`, or a file streamed from the export ticket the operation answers.
 */
export type Answer =
  | { kind: 'as-is' }
  /** A list page as the contract's envelope (docs/decisions.md §3, §18): `page` is left out of a page read by `cursor`. */
  | { kind: 'page' }
  | { kind: 'created' }
  /** 200 with `{data: <selection>}` and an ETag of its `updated_at`; null (unknown or not visible) is 404. */
  | { kind: 'record'; unversioned?: true }
  /** 204 with no body. */
  | { kind: 'no-content' }
  /**
   * 200 with a batch's outcome (docs/decisions.md §16): `{data: [{index, status, data | details}], created, ...}`.
   * A record whose JSON types or fields the reader refuses fails as an item (named in its details), not the request.
   */
  | { kind: 'batch'; records: string; argument: string }
  | { kind: 'download'; file: Download }
  /** 200 with `{data: <the list>}`: a list that is the whole answer (no paging), or a report. */
  | { kind: 'list' }
  /**
   * 202 with `{data: <queue's selection>}` and a Location: `admit` (a mutation of the query's
   * variables) judges the upload from its headers before its body is read; the operation begins the work once the
   * file's header is in (src/rest/answers/upload.ts), the file is stored, and `queue` (a mutation of the
   * begun work's id and the file's SHA-256, honouring Idempotency-Key) hands it on and answers it.
   */
  | { kind: 'upload'; admit: TypedDocumentNode<any, any>; queue: TypedDocumentNode<any, any>; location: string };

export type Route = {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
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
  /**
   * The variable an `If-Match` header fills (the ETag of a `record` answer is its `updated_at`):
   * the core judges it (expectedUpdatedAt -> CONFLICT), and the route answers that as 412.
   */
  ifMatch?: string;
  /** Beyond the customer's contract (docs/decisions.md §12): so marked in the OpenAPI document. */
  extension?: true;
  /**
   * A body key choosing the operation among these (the route's `operation` is the first, and the one
   * the OpenAPI document describes); every variant's root field has the same response key and rules.
   */
  variants?: { key: string; operations: Record<string, TypedDocumentNode<any, any>> };
};

const AS_IS = { kind: 'as-is' } as const;
const PAGE = { kind: 'page' } as const;
const CREATED = { kind: 'created' } as const;
const LIST = { kind: 'list' } as const;
const RECORD = { kind: 'record' } as const;
const NO_CONTENT = { kind: 'no-content' } as const;
/** A record with no version to send back (an import's progress changes by itself; an event never does): no ETag. */
const UNVERSIONED = { kind: 'record', unversioned: true } as const;
const BY_ID = { extension: true } as const;
const BATCH = { kind: 'batch', records: 'records', argument: 'inputs' } as const;

/**
 * A record by id, beyond the contract (docs/decisions.md §12): read (200 with an ETag), update
 * (If-Match fills expectedUpdatedAt: 412 when stale) and delete (204) of `<path>/:id`.
 */
function byIdRoutes(path: string, { read, update, remove }: Record<'read' | 'update' | 'remove', TypedDocumentNode<any, any>>): Route[] {
  return [
    { method: 'GET', path: `${path}/:id`, operation: read, input: 'query', answer: RECORD, ...BY_ID },
    { method: 'PATCH', path: `${path}/:id`, operation: update, input: 'body-as-input', answer: RECORD, ifMatch: 'expectedUpdatedAt', ...BY_ID },
    { method: 'DELETE', path: `${path}/:id`, operation: remove, input: 'query', answer: NO_CONTENT, ...BY_ID },
  ];
}

/** THE REST contract: endpoint -> GraphQL operation -> answer. Access, limits and input rules are the field's. */
export const routes: Route[] = [
  { method: 'GET', path: '/api/v1/contacts', operation: ListContactsDocument, input: 'query', answer: PAGE },
  { method: 'POST', path: '/api/v1/contacts', operation: CreateContactDocument, input: 'body-as-input', answer: CREATED },
  { method: 'GET', path: '/api/v1/contacts/export', operation: ExportContactsDocument, input: 'query', answer: { kind: 'download', file: CONTACTS_CSV } },
  { method: 'GET', path: '/api/v1/deals', operation: ListDealsDocument, input: 'query', answer: PAGE },
  { method: 'POST', path: '/api/v1/deals', operation: CreateDealDocument, input: 'body-as-input', answer: CREATED },
  { method: 'GET', path: '/api/v1/invoices', operation: ListInvoicesDocument, input: 'query', answer: PAGE },
  {
    method: 'POST', path: '/api/v1/forms/:form_id/submit', operation: SubmitLeadFormDocument, input: 'body-as-variables',
    answer: AS_IS, target: LeadFormToSubmitDocument, keepDetailKeys: true,
  },
  { method: 'GET', path: '/api/v1/account/export', operation: ExportAccountDocument, input: 'query', answer: { kind: 'download', file: ACCOUNT_JSON } },
  // Batches and upserts, beyond the contract (docs/decisions.md §16).
  {
    method: 'POST', path: '/api/v1/contacts/batch', operation: CreateContactsBatchDocument, input: 'body-as-variables', answer: BATCH, extension: true,
    variants: { key: 'mode', operations: { create: CreateContactsBatchDocument, upsert: UpsertContactsBatchDocument } },
  },
  {
    method: 'POST', path: '/api/v1/deals/batch', operation: CreateDealsBatchDocument, input: 'body-as-variables', answer: BATCH, extension: true,
    variants: { key: 'mode', operations: { create: CreateDealsBatchDocument, upsert: UpsertDealsBatchDocument } },
  },
  // Companies upsert only (docs/decisions.md §21): `mode` is "upsert" or absent.
  {
    method: 'POST', path: '/api/v1/companies/batch', operation: UpsertCompaniesBatchDocument, input: 'body-as-variables', answer: BATCH, extension: true,
    variants: { key: 'mode', operations: { upsert: UpsertCompaniesBatchDocument } },
  },
  // Imports, beyond the contract (docs/decisions.md §17, docs/imports.md): the file is the body.
  {
    method: 'POST', path: '/api/v1/imports', operation: StartImportDocument, input: 'query-with-file',
    answer: { kind: 'upload', admit: AdmitImportDocument, queue: QueueImportDocument, location: '/api/v1/imports/:id' }, extension: true,
  },
  { method: 'GET', path: '/api/v1/imports', operation: ListImportsDocument, input: 'query', answer: LIST, extension: true },
  { method: 'GET', path: '/api/v1/imports/:id', operation: ImportByIdDocument, input: 'query', answer: UNVERSIONED, ...BY_ID },
  { method: 'DELETE', path: '/api/v1/imports/:id', operation: CancelImportByIdDocument, input: 'query', answer: UNVERSIONED, ...BY_ID },
  { method: 'GET', path: '/api/v1/imports/:id/errors', operation: ImportErrorsDocument, input: 'query', answer: { kind: 'download', file: IMPORT_ERRORS_CSV }, ...BY_ID },
  // Duplicates found and merged, beyond the contract (docs/decisions.md §22); before the paths by id.
  { method: 'GET', path: '/api/v1/contacts/duplicates', operation: ContactDuplicatesDocument, input: 'query', answer: LIST, extension: true },
  { method: 'POST', path: '/api/v1/contacts/:id/merge', operation: MergeContactsByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  { method: 'GET', path: '/api/v1/companies/duplicates', operation: CompanyDuplicatesDocument, input: 'query', answer: LIST, extension: true },
  { method: 'POST', path: '/api/v1/companies/:id/merge', operation: MergeCompaniesByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  // Records back from the trash (docs/decisions.md §22, docs/trash.md).
  { method: 'POST', path: '/api/v1/contacts/:id/restore', operation: RestoreContactByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  { method: 'POST', path: '/api/v1/deals/:id/restore', operation: RestoreDealByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  { method: 'POST', path: '/api/v1/companies/:id/restore', operation: RestoreCompanyByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  // Records by id, beyond the contract (docs/decisions.md §12); after the fixed paths above.
  ...byIdRoutes('/api/v1/contacts', { read: ContactByIdDocument, update: UpdateContactByIdDocument, remove: DeleteContactByIdDocument }),
  ...byIdRoutes('/api/v1/deals', { read: DealByIdDocument, update: UpdateDealByIdDocument, remove: DeleteDealByIdDocument }),
  // Companies, beyond the contract (docs/decisions.md §21).
  { method: 'GET', path: '/api/v1/companies', operation: ListCompaniesDocument, input: 'query', answer: PAGE, extension: true },
  { method: 'POST', path: '/api/v1/companies', operation: CreateCompanyDocument, input: 'body-as-input', answer: CREATED, extension: true },
  ...byIdRoutes('/api/v1/companies', { read: CompanyByIdDocument, update: UpdateCompanyByIdDocument, remove: DeleteCompanyByIdDocument }),
  // Notes and tasks, beyond the contract (docs/decisions.md §21).
  { method: 'GET', path: '/api/v1/notes', operation: ListNotesDocument, input: 'query', answer: PAGE, extension: true },
  { method: 'POST', path: '/api/v1/notes', operation: CreateNoteDocument, input: 'body-as-input', answer: CREATED, extension: true },
  ...byIdRoutes('/api/v1/notes', { read: NoteByIdDocument, update: UpdateNoteByIdDocument, remove: DeleteNoteByIdDocument }),
  { method: 'GET', path: '/api/v1/tasks', operation: ListTasksDocument, input: 'query', answer: PAGE, extension: true },
  { method: 'POST', path: '/api/v1/tasks', operation: CreateTaskDocument, input: 'body-as-input', answer: CREATED, extension: true },
  ...byIdRoutes('/api/v1/tasks', { read: TaskByIdDocument, update: UpdateTaskByIdDocument, remove: DeleteTaskByIdDocument }),
  { method: 'POST', path: '/api/v1/tasks/:id/complete', operation: CompleteTaskByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  { method: 'POST', path: '/api/v1/tasks/:id/reopen', operation: ReopenTaskByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  // Invoices written and records moved on REST, for systems that sync (docs/decisions.md §18).
  ...byIdRoutes('/api/v1/invoices', { read: InvoiceByIdDocument, update: UpdateInvoiceByIdDocument, remove: DeleteInvoiceByIdDocument }),
  // The invoice's PDF, as its client's page shows it (docs/decisions.md §20).
  { method: 'GET', path: '/api/v1/invoices/:id/pdf', operation: InvoicePdfByIdDocument, input: 'query', answer: { kind: 'download', file: INVOICE_PDF }, ...BY_ID },
  { method: 'POST', path: '/api/v1/invoices', operation: CreateInvoiceDocument, input: 'body-as-input', answer: CREATED, extension: true },
  { method: 'POST', path: '/api/v1/invoices/:id/status', operation: SetInvoiceStatusByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  // Sending: the client's page and mail (docs/decisions.md §20); the body {"to"} is optional.
  { method: 'POST', path: '/api/v1/invoices/:id/send', operation: SendInvoiceByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  // Payments move the invoice (docs/decisions.md §20).
  { method: 'GET', path: '/api/v1/invoices/:id/payments', operation: InvoicePaymentsByIdDocument, input: 'query', answer: PAGE, ...BY_ID },
  { method: 'POST', path: '/api/v1/invoices/:id/payments', operation: RecordPaymentByInvoiceIdDocument, input: 'body-as-input', answer: CREATED, extension: true },
  { method: 'POST', path: '/api/v1/payments/:id/refund', operation: RefundPaymentByIdDocument, input: 'body-as-variables', answer: UNVERSIONED, ...BY_ID },
  { method: 'POST', path: '/api/v1/deals/:id/status', operation: SetDealStatusByIdDocument, input: 'body-as-variables', answer: RECORD, ...BY_ID },
  // The events feed, for systems that cannot receive webhooks (docs/decisions.md §18).
  { method: 'GET', path: '/api/v1/events', operation: ListEventsDocument, input: 'query', answer: PAGE, extension: true },
  { method: 'GET', path: '/api/v1/events/:id', operation: EventByIdDocument, input: 'query', answer: UNVERSIONED, ...BY_ID },
  // Dashboard reports (docs/decisions.md §19): `{data: <report>}`, exact.
  { method: 'GET', path: '/api/v1/reports/pipeline', operation: PipelineReportDocument, input: 'query', answer: LIST, extension: true },
  { method: 'GET', path: '/api/v1/reports/deals', operation: DealReportDocument, input: 'query', answer: LIST, extension: true },
  { method: 'GET', path: '/api/v1/reports/receivables', operation: ReceivablesReportDocument, input: 'query', answer: LIST, extension: true },
  { method: 'GET', path: '/api/v1/reports/contacts', operation: ContactReportDocument, input: 'query', answer: LIST, extension: true },
  { method: 'GET', path: '/api/v1/reports/revenue', operation: RevenueReportDocument, input: 'query', answer: LIST, extension: true },
  // The owner's webhook endpoints (docs/decisions.md §18); the secret is in the POST answer only.
  { method: 'GET', path: '/api/v1/webhook_endpoints', operation: ListWebhookEndpointsDocument, input: 'query', answer: LIST, extension: true },
  { method: 'POST', path: '/api/v1/webhook_endpoints', operation: CreateWebhookEndpointDocument, input: 'body-as-input', answer: CREATED, extension: true },
  ...byIdRoutes('/api/v1/webhook_endpoints', { read: WebhookEndpointByIdDocument, update: UpdateWebhookEndpointByIdDocument, remove: DeleteWebhookEndpointByIdDocument }),
  // The account's own fields (docs/custom-fields.md): members read them, the owner defines them; the body of a POST carries account_id beside the input.
  { method: 'GET', path: '/api/v1/custom_fields', operation: ListCustomFieldsDocument, input: 'query', answer: LIST, extension: true },
  { method: 'POST', path: '/api/v1/custom_fields', operation: CreateCustomFieldDocument, input: 'body-as-input', answer: CREATED, extension: true },
  { method: 'PATCH', path: '/api/v1/custom_fields/:id', operation: UpdateCustomFieldByIdDocument, input: 'body-as-input', answer: RECORD, ifMatch: 'expectedUpdatedAt', ...BY_ID },
  // Workflows that act (docs/workflows.md): members manage them, keys read them with workflows:read.
  { method: 'GET', path: '/api/v1/workflows', operation: ListWorkflowsDocument, input: 'query', answer: PAGE, extension: true },
  { method: 'POST', path: '/api/v1/workflows', operation: CreateWorkflowDocument, input: 'body-as-input', answer: CREATED, extension: true },
  { method: 'GET', path: '/api/v1/workflows/:id/runs', operation: WorkflowRunsByIdDocument, input: 'query', answer: PAGE, ...BY_ID },
  // A dry run (docs/decisions.md §25: POST with {"event_id"}): a query, it writes nothing, so it takes no Idempotency-Key.
  { method: 'POST', path: '/api/v1/workflows/:id/test', operation: TestWorkflowByIdDocument, input: 'body-as-variables', answer: UNVERSIONED, ...BY_ID },
  { method: 'GET', path: '/api/v1/workflows/:id', operation: WorkflowByIdDocument, input: 'query', answer: RECORD, ...BY_ID },
  // No If-Match on a workflow (updateWorkflow takes no expectedUpdatedAt): its answer carries no ETag to send back.
  { method: 'PATCH', path: '/api/v1/workflows/:id', operation: UpdateWorkflowByIdDocument, input: 'body-as-input', answer: UNVERSIONED, ...BY_ID },
  { method: 'DELETE', path: '/api/v1/workflows/:id', operation: DeleteWorkflowByIdDocument, input: 'query', answer: NO_CONTENT, ...BY_ID },
];
