/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type ContactSource =
  | 'advertising'
  | 'cold_outreach'
  | 'other'
  | 'referral'
  | 'repeat_client'
  | 'social_media'
  | 'website';

export type ContactType =
  | 'client'
  | 'lead'
  | 'other'
  | 'past_client'
  | 'vendor';

export type CreateContactInput = {
  accountId: string;
  company?: string | null | undefined;
  contactType?: ContactType | null | undefined;
  email?: string | null | undefined;
  /** At most 255 characters; unique in the account. */
  externalId?: string | null | undefined;
  firstName: string;
  lastName?: string | null | undefined;
  phone?: string | null | undefined;
  source?: ContactSource | null | undefined;
};

export type CreateDealInput = {
  accountId: string;
  contactId?: string | null | undefined;
  expectedCloseDate?: string | null | undefined;
  /** At most 255 characters; unique in the account. */
  externalId?: string | null | undefined;
  /** Default 50; 0 to 100. */
  probability?: number | null | undefined;
  stageId?: string | null | undefined;
  title: string;
  /** Default 0; 0 to 9999999999.99, at most two decimals. */
  value?: number | null | undefined;
};

export type DealStatus =
  | 'abandoned'
  | 'lost'
  | 'open'
  | 'won';

export type FormMetadataInput = {
  page?: string | null | undefined;
  referrer?: string | null | undefined;
};

export type InvoiceStatus =
  | 'cancelled'
  | 'draft'
  | 'overdue'
  | 'paid'
  | 'partial'
  | 'refunded'
  | 'sent'
  | 'viewed';

/** Absent = unchanged; null = cleared (Required for firstName, contactType, source). At least one field. */
export type UpdateContactInput = {
  company?: string | null | undefined;
  contactType?: ContactType | null | undefined;
  email?: string | null | undefined;
  /** At most 255 characters; unique in the account. */
  externalId?: string | null | undefined;
  firstName?: string | null | undefined;
  lastName?: string | null | undefined;
  phone?: string | null | undefined;
  source?: ContactSource | null | undefined;
};

/** Absent = unchanged; null = cleared (Required for title, value, probability). At least one field. */
export type UpdateDealInput = {
  contactId?: string | null | undefined;
  expectedCloseDate?: string | null | undefined;
  /** At most 255 characters; unique in the account. */
  externalId?: string | null | undefined;
  /** 0 to 100. */
  probability?: number | null | undefined;
  stageId?: string | null | undefined;
  title?: string | null | undefined;
  /** 0 to 9999999999.99, at most two decimals. */
  value?: number | null | undefined;
};

export type ExportAccountMutationVariables = Exact<{
  accountId: string;
}>;


export type ExportAccountMutation = { exportAccount: { accountId: string, fileName: string, createdAt: string } | null };

export type ListContactsQueryVariables = Exact<{
  accountId: string;
  page?: number | null | undefined;
  pageSize?: number | null | undefined;
  search?: string | null | undefined;
  type?: ContactType | null | undefined;
  externalId?: string | null | undefined;
}>;


export type ListContactsQuery = { contacts: { total: number, page: number, page_size: number, data: Array<{ id: string, email: string | null, phone: string | null, company: string | null, source: ContactSource, first_name: string, last_name: string | null, contact_type: ContactType, external_id: string | null, created_at: string }> } | null };

export type CreateContactMutationVariables = Exact<{
  input: CreateContactInput;
}>;


export type CreateContactMutation = { createContact: { id: string, email: string | null, source: ContactSource, first_name: string, last_name: string | null, contact_type: ContactType, external_id: string | null, created_at: string } | null };

export type ExportContactsMutationVariables = Exact<{
  accountId: string;
}>;


export type ExportContactsMutation = { exportContacts: { accountId: string, fileName: string } | null };

export type ContactByIdQueryVariables = Exact<{
  id: string;
}>;


export type ContactByIdQuery = { contact: { id: string, email: string | null, phone: string | null, company: string | null, source: ContactSource, updated_at: string, first_name: string, last_name: string | null, contact_type: ContactType, external_id: string | null, created_at: string } | null };

export type UpdateContactByIdMutationVariables = Exact<{
  id: string;
  input: UpdateContactInput;
  expectedUpdatedAt?: string | null | undefined;
}>;


export type UpdateContactByIdMutation = { updateContact: { id: string, email: string | null, phone: string | null, company: string | null, source: ContactSource, updated_at: string, first_name: string, last_name: string | null, contact_type: ContactType, external_id: string | null, created_at: string } | null };

export type DeleteContactByIdMutationVariables = Exact<{
  id: string;
}>;


export type DeleteContactByIdMutation = { deleteContact: { id: string } | null };

export type ContactItemFragment = { id: string, email: string | null, phone: string | null, company: string | null, source: ContactSource, first_name: string, last_name: string | null, contact_type: ContactType, external_id: string | null, created_at: string };

export type ContactRecordFragment = { id: string, email: string | null, phone: string | null, company: string | null, source: ContactSource, updated_at: string, first_name: string, last_name: string | null, contact_type: ContactType, external_id: string | null, created_at: string };

export type ListDealsQueryVariables = Exact<{
  accountId: string;
  page?: number | null | undefined;
  pageSize?: number | null | undefined;
  status?: DealStatus | null | undefined;
  externalId?: string | null | undefined;
}>;


export type ListDealsQuery = { deals: { total: number, page: number, page_size: number, data: Array<{ id: string, title: string, value: number, probability: number, status: DealStatus, expected_close_date: string | null, external_id: string | null, contacts: { id: string, first_name: string, last_name: string | null } | null, pipeline_stages: { id: string, name: string } | null }> } | null };

export type CreateDealMutationVariables = Exact<{
  input: CreateDealInput;
}>;


export type CreateDealMutation = { createDeal: { id: string, title: string, value: number, probability: number, status: DealStatus, external_id: string | null, created_at: string } | null };

export type DealByIdQueryVariables = Exact<{
  id: string;
}>;


export type DealByIdQuery = { deal: { id: string, title: string, value: number, probability: number, status: DealStatus, updated_at: string, expected_close_date: string | null, external_id: string | null, contacts: { id: string, first_name: string, last_name: string | null } | null, pipeline_stages: { id: string, name: string } | null } | null };

export type UpdateDealByIdMutationVariables = Exact<{
  id: string;
  input: UpdateDealInput;
  expectedUpdatedAt?: string | null | undefined;
}>;


export type UpdateDealByIdMutation = { updateDeal: { id: string, title: string, value: number, probability: number, status: DealStatus, updated_at: string, expected_close_date: string | null, external_id: string | null, contacts: { id: string, first_name: string, last_name: string | null } | null, pipeline_stages: { id: string, name: string } | null } | null };

export type DeleteDealByIdMutationVariables = Exact<{
  id: string;
}>;


export type DeleteDealByIdMutation = { deleteDeal: { id: string } | null };

export type DealItemFragment = { id: string, title: string, value: number, probability: number, status: DealStatus, expected_close_date: string | null, external_id: string | null, contacts: { id: string, first_name: string, last_name: string | null } | null, pipeline_stages: { id: string, name: string } | null };

export type DealRecordFragment = { id: string, title: string, value: number, probability: number, status: DealStatus, updated_at: string, expected_close_date: string | null, external_id: string | null, contacts: { id: string, first_name: string, last_name: string | null } | null, pipeline_stages: { id: string, name: string } | null };

export type SubmitLeadFormMutationVariables = Exact<{
  formId: string;
  data: unknown;
  metadata?: FormMetadataInput | null | undefined;
}>;


export type SubmitLeadFormMutation = { submitLeadForm: { success: boolean, successMessage: string, redirectUrl: string | null, contact_id: string } | null };

export type LeadFormToSubmitQueryVariables = Exact<{
  formId: string;
}>;


export type LeadFormToSubmitQuery = { publicLeadForm: { id: string } | null };

export type ListInvoicesQueryVariables = Exact<{
  accountId: string;
  page?: number | null | undefined;
  pageSize?: number | null | undefined;
  status?: InvoiceStatus | null | undefined;
  externalId?: string | null | undefined;
}>;


export type ListInvoicesQuery = { invoices: { total: number, page: number, page_size: number, data: Array<{ id: string, amount: number, status: InvoiceStatus, invoice_number: string, due_date: string, external_id: string | null, created_at: string, contacts: { id: string, first_name: string, last_name: string | null } | null }> } | null };

export type InvoiceByIdQueryVariables = Exact<{
  id: string;
}>;


export type InvoiceByIdQuery = { invoice: { id: string, amount: number, status: InvoiceStatus, updated_at: string, invoice_number: string, due_date: string, external_id: string | null, created_at: string, contacts: { id: string, first_name: string, last_name: string | null } | null } | null };

export type InvoiceItemFragment = { id: string, amount: number, status: InvoiceStatus, invoice_number: string, due_date: string, external_id: string | null, created_at: string, contacts: { id: string, first_name: string, last_name: string | null } | null };

export const ContactItemFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ContactItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Contact"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"phone"}},{"kind":"Field","name":{"kind":"Name","value":"company"}},{"kind":"Field","alias":{"kind":"Name","value":"contact_type"},"name":{"kind":"Name","value":"contactType"}},{"kind":"Field","name":{"kind":"Name","value":"source"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}}]} as unknown as DocumentNode<ContactItemFragment, unknown>;
export const ContactRecordFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ContactRecord"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Contact"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ContactItem"}},{"kind":"Field","alias":{"kind":"Name","value":"updated_at"},"name":{"kind":"Name","value":"updatedAt"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ContactItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Contact"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"phone"}},{"kind":"Field","name":{"kind":"Name","value":"company"}},{"kind":"Field","alias":{"kind":"Name","value":"contact_type"},"name":{"kind":"Name","value":"contactType"}},{"kind":"Field","name":{"kind":"Name","value":"source"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}}]} as unknown as DocumentNode<ContactRecordFragment, unknown>;
export const DealItemFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DealItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Deal"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"probability"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","alias":{"kind":"Name","value":"expected_close_date"},"name":{"kind":"Name","value":"expectedCloseDate"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"contacts"},"name":{"kind":"Name","value":"contact"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"pipeline_stages"},"name":{"kind":"Name","value":"stage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<DealItemFragment, unknown>;
export const DealRecordFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DealRecord"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Deal"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DealItem"}},{"kind":"Field","alias":{"kind":"Name","value":"updated_at"},"name":{"kind":"Name","value":"updatedAt"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DealItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Deal"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"probability"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","alias":{"kind":"Name","value":"expected_close_date"},"name":{"kind":"Name","value":"expectedCloseDate"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"contacts"},"name":{"kind":"Name","value":"contact"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"pipeline_stages"},"name":{"kind":"Name","value":"stage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<DealRecordFragment, unknown>;
export const InvoiceItemFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"InvoiceItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Invoice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"invoice_number"},"name":{"kind":"Name","value":"invoiceNumber"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","alias":{"kind":"Name","value":"due_date"},"name":{"kind":"Name","value":"dueDate"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"contacts"},"name":{"kind":"Name","value":"contact"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}}]} as unknown as DocumentNode<InvoiceItemFragment, unknown>;
export const ExportAccountDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ExportAccount"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"exportAccount"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"accountId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"accountId"}},{"kind":"Field","name":{"kind":"Name","value":"fileName"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<ExportAccountMutation, ExportAccountMutationVariables>;
export const ListContactsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ListContacts"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"page"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"pageSize"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"search"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"type"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ContactType"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"externalId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"contacts"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"accountId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}}},{"kind":"Argument","name":{"kind":"Name","value":"page"},"value":{"kind":"Variable","name":{"kind":"Name","value":"page"}}},{"kind":"Argument","name":{"kind":"Name","value":"pageSize"},"value":{"kind":"Variable","name":{"kind":"Name","value":"pageSize"}}},{"kind":"Argument","name":{"kind":"Name","value":"search"},"value":{"kind":"Variable","name":{"kind":"Name","value":"search"}}},{"kind":"Argument","name":{"kind":"Name","value":"type"},"value":{"kind":"Variable","name":{"kind":"Name","value":"type"}}},{"kind":"Argument","name":{"kind":"Name","value":"externalId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"externalId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","alias":{"kind":"Name","value":"data"},"name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ContactItem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"page"}},{"kind":"Field","alias":{"kind":"Name","value":"page_size"},"name":{"kind":"Name","value":"pageSize"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ContactItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Contact"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"phone"}},{"kind":"Field","name":{"kind":"Name","value":"company"}},{"kind":"Field","alias":{"kind":"Name","value":"contact_type"},"name":{"kind":"Name","value":"contactType"}},{"kind":"Field","name":{"kind":"Name","value":"source"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}}]} as unknown as DocumentNode<ListContactsQuery, ListContactsQueryVariables>;
export const CreateContactDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateContact"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateContactInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createContact"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","alias":{"kind":"Name","value":"contact_type"},"name":{"kind":"Name","value":"contactType"}},{"kind":"Field","name":{"kind":"Name","value":"source"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<CreateContactMutation, CreateContactMutationVariables>;
export const ExportContactsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ExportContacts"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"exportContacts"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"accountId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"accountId"}},{"kind":"Field","name":{"kind":"Name","value":"fileName"}}]}}]}}]} as unknown as DocumentNode<ExportContactsMutation, ExportContactsMutationVariables>;
export const ContactByIdDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ContactById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"contact"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ContactRecord"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ContactItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Contact"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"phone"}},{"kind":"Field","name":{"kind":"Name","value":"company"}},{"kind":"Field","alias":{"kind":"Name","value":"contact_type"},"name":{"kind":"Name","value":"contactType"}},{"kind":"Field","name":{"kind":"Name","value":"source"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ContactRecord"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Contact"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ContactItem"}},{"kind":"Field","alias":{"kind":"Name","value":"updated_at"},"name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<ContactByIdQuery, ContactByIdQueryVariables>;
export const UpdateContactByIdDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateContactById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateContactInput"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"expectedUpdatedAt"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateContact"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}},{"kind":"Argument","name":{"kind":"Name","value":"expectedUpdatedAt"},"value":{"kind":"Variable","name":{"kind":"Name","value":"expectedUpdatedAt"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ContactRecord"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ContactItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Contact"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"phone"}},{"kind":"Field","name":{"kind":"Name","value":"company"}},{"kind":"Field","alias":{"kind":"Name","value":"contact_type"},"name":{"kind":"Name","value":"contactType"}},{"kind":"Field","name":{"kind":"Name","value":"source"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ContactRecord"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Contact"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ContactItem"}},{"kind":"Field","alias":{"kind":"Name","value":"updated_at"},"name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<UpdateContactByIdMutation, UpdateContactByIdMutationVariables>;
export const DeleteContactByIdDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteContactById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteContact"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]} as unknown as DocumentNode<DeleteContactByIdMutation, DeleteContactByIdMutationVariables>;
export const ListDealsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ListDeals"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"page"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"pageSize"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"status"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DealStatus"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"externalId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deals"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"accountId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}}},{"kind":"Argument","name":{"kind":"Name","value":"page"},"value":{"kind":"Variable","name":{"kind":"Name","value":"page"}}},{"kind":"Argument","name":{"kind":"Name","value":"pageSize"},"value":{"kind":"Variable","name":{"kind":"Name","value":"pageSize"}}},{"kind":"Argument","name":{"kind":"Name","value":"status"},"value":{"kind":"Variable","name":{"kind":"Name","value":"status"}}},{"kind":"Argument","name":{"kind":"Name","value":"externalId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"externalId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","alias":{"kind":"Name","value":"data"},"name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DealItem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"page"}},{"kind":"Field","alias":{"kind":"Name","value":"page_size"},"name":{"kind":"Name","value":"pageSize"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DealItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Deal"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"probability"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","alias":{"kind":"Name","value":"expected_close_date"},"name":{"kind":"Name","value":"expectedCloseDate"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"contacts"},"name":{"kind":"Name","value":"contact"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"pipeline_stages"},"name":{"kind":"Name","value":"stage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<ListDealsQuery, ListDealsQueryVariables>;
export const CreateDealDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateDeal"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateDealInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createDeal"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"probability"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<CreateDealMutation, CreateDealMutationVariables>;
export const DealByIdDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"DealById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deal"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DealRecord"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DealItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Deal"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"probability"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","alias":{"kind":"Name","value":"expected_close_date"},"name":{"kind":"Name","value":"expectedCloseDate"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"contacts"},"name":{"kind":"Name","value":"contact"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"pipeline_stages"},"name":{"kind":"Name","value":"stage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DealRecord"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Deal"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DealItem"}},{"kind":"Field","alias":{"kind":"Name","value":"updated_at"},"name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<DealByIdQuery, DealByIdQueryVariables>;
export const UpdateDealByIdDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateDealById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateDealInput"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"expectedUpdatedAt"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateDeal"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}},{"kind":"Argument","name":{"kind":"Name","value":"expectedUpdatedAt"},"value":{"kind":"Variable","name":{"kind":"Name","value":"expectedUpdatedAt"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DealRecord"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DealItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Deal"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"title"}},{"kind":"Field","name":{"kind":"Name","value":"value"}},{"kind":"Field","name":{"kind":"Name","value":"probability"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","alias":{"kind":"Name","value":"expected_close_date"},"name":{"kind":"Name","value":"expectedCloseDate"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"contacts"},"name":{"kind":"Name","value":"contact"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"pipeline_stages"},"name":{"kind":"Name","value":"stage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DealRecord"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Deal"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DealItem"}},{"kind":"Field","alias":{"kind":"Name","value":"updated_at"},"name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<UpdateDealByIdMutation, UpdateDealByIdMutationVariables>;
export const DeleteDealByIdDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteDealById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteDeal"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]} as unknown as DocumentNode<DeleteDealByIdMutation, DeleteDealByIdMutationVariables>;
export const SubmitLeadFormDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SubmitLeadForm"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"formId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"data"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"JSON"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"metadata"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"FormMetadataInput"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"submitLeadForm"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"formId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"formId"}}},{"kind":"Argument","name":{"kind":"Name","value":"data"},"value":{"kind":"Variable","name":{"kind":"Name","value":"data"}}},{"kind":"Argument","name":{"kind":"Name","value":"metadata"},"value":{"kind":"Variable","name":{"kind":"Name","value":"metadata"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"success"}},{"kind":"Field","alias":{"kind":"Name","value":"contact_id"},"name":{"kind":"Name","value":"contactId"}},{"kind":"Field","name":{"kind":"Name","value":"successMessage"}},{"kind":"Field","name":{"kind":"Name","value":"redirectUrl"}}]}}]}}]} as unknown as DocumentNode<SubmitLeadFormMutation, SubmitLeadFormMutationVariables>;
export const LeadFormToSubmitDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"LeadFormToSubmit"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"formId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"publicLeadForm"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"formId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]} as unknown as DocumentNode<LeadFormToSubmitQuery, LeadFormToSubmitQueryVariables>;
export const ListInvoicesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ListInvoices"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"page"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"pageSize"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"status"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"InvoiceStatus"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"externalId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"invoices"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"accountId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"accountId"}}},{"kind":"Argument","name":{"kind":"Name","value":"page"},"value":{"kind":"Variable","name":{"kind":"Name","value":"page"}}},{"kind":"Argument","name":{"kind":"Name","value":"pageSize"},"value":{"kind":"Variable","name":{"kind":"Name","value":"pageSize"}}},{"kind":"Argument","name":{"kind":"Name","value":"status"},"value":{"kind":"Variable","name":{"kind":"Name","value":"status"}}},{"kind":"Argument","name":{"kind":"Name","value":"externalId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"externalId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","alias":{"kind":"Name","value":"data"},"name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"InvoiceItem"}}]}},{"kind":"Field","name":{"kind":"Name","value":"total"}},{"kind":"Field","name":{"kind":"Name","value":"page"}},{"kind":"Field","alias":{"kind":"Name","value":"page_size"},"name":{"kind":"Name","value":"pageSize"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"InvoiceItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Invoice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"invoice_number"},"name":{"kind":"Name","value":"invoiceNumber"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","alias":{"kind":"Name","value":"due_date"},"name":{"kind":"Name","value":"dueDate"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"contacts"},"name":{"kind":"Name","value":"contact"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}}]} as unknown as DocumentNode<ListInvoicesQuery, ListInvoicesQueryVariables>;
export const InvoiceByIdDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"InvoiceById"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"invoice"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"InvoiceItem"}},{"kind":"Field","alias":{"kind":"Name","value":"updated_at"},"name":{"kind":"Name","value":"updatedAt"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"InvoiceItem"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Invoice"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"invoice_number"},"name":{"kind":"Name","value":"invoiceNumber"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","alias":{"kind":"Name","value":"due_date"},"name":{"kind":"Name","value":"dueDate"}},{"kind":"Field","alias":{"kind":"Name","value":"external_id"},"name":{"kind":"Name","value":"externalId"}},{"kind":"Field","alias":{"kind":"Name","value":"contacts"},"name":{"kind":"Name","value":"contact"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","alias":{"kind":"Name","value":"first_name"},"name":{"kind":"Name","value":"firstName"}},{"kind":"Field","alias":{"kind":"Name","value":"last_name"},"name":{"kind":"Name","value":"lastName"}}]}},{"kind":"Field","alias":{"kind":"Name","value":"created_at"},"name":{"kind":"Name","value":"createdAt"}}]}}]} as unknown as DocumentNode<InvoiceByIdQuery, InvoiceByIdQueryVariables>;