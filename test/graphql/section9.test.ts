import { buildSchema, DangerousChangeType, findBreakingChanges, findDangerousChanges, printSchema } from 'graphql/index.js';
import { describe, expect, test } from 'vitest';
import { schema } from '../../src/schema.js';

// docs/decisions.md §9: the GraphQL surface internal tools rely on. Names, arguments, defaults,
// nullability and input fields are fixed; more is welcome. Copied verbatim from the spec; the
// amendment (root fields nullable) is applied below by `amended`, names and arguments unchanged.
const SECTION_9 = /* GraphQL */ `
scalar DateTime   # ISO 8601 UTC
scalar Date       # YYYY-MM-DD
scalar JSON

type Query {
  me: User!
  account(id: ID!): Account
  contacts(accountId: ID!, page: Int = 1, pageSize: Int = 25, search: String, type: ContactType): ContactPage!
  deals(accountId: ID!, page: Int = 1, pageSize: Int = 25, status: DealStatus): DealPage!
  invoices(accountId: ID!, page: Int = 1, pageSize: Int = 25, status: InvoiceStatus): InvoicePage!
  pipelineStages(accountId: ID!): [PipelineStage!]!
  leadForms(accountId: ID!): [LeadForm!]!
}

type Mutation {
  createAccount(input: CreateAccountInput!): Account!                 # caller becomes owner
  addTeamMember(input: AddTeamMemberInput!): TeamMember!              # owner only
  createContact(input: CreateContactInput!): Contact!
  createDeal(input: CreateDealInput!): Deal!
  setDealStatus(id: ID!, status: DealStatus!): Deal!
  createPipelineStage(input: CreatePipelineStageInput!): PipelineStage!
  createInvoice(input: CreateInvoiceInput!): Invoice!
  setInvoiceStatus(id: ID!, status: InvoiceStatus!): Invoice!
  createLeadForm(input: CreateLeadFormInput!): LeadForm!
  setLeadFormActive(id: ID!, active: Boolean!): LeadForm!
  submitLeadForm(formId: ID!, data: JSON!, metadata: FormMetadataInput): FormSubmissionResult!  # public
  createProposal(input: CreateProposalInput!): Proposal!
  createContract(input: CreateContractInput!): Contract!
  createGallery(input: CreateGalleryInput!): Gallery!
  createBooking(input: CreateBookingInput!): Booking!
  createWorkflow(input: CreateWorkflowInput!): Workflow!
}

type ContactPage { nodes: [Contact!]!  total: Int!  page: Int!  pageSize: Int! }   # DealPage, InvoicePage alike

input CreateAccountInput      { name: String! }
input AddTeamMemberInput      { accountId: ID!  userId: ID!  email: String }
input CreateContactInput      { accountId: ID!  firstName: String!  lastName: String  email: String
                                phone: String  company: String  contactType: ContactType  source: ContactSource }
input CreateDealInput         { accountId: ID!  title: String!  contactId: ID  stageId: ID  value: Float
                                probability: Float  expectedCloseDate: Date }
input CreatePipelineStageInput { accountId: ID!  name: String!  position: Int }
input CreateInvoiceInput      { accountId: ID!  contactId: ID  invoiceNumber: String  amount: Float!
                                dueDate: Date!  status: InvoiceStatus }            # number assigned if absent
input CreateLeadFormInput     { accountId: ID!  name: String!  fields: [LeadFormFieldInput!]!
                                successMessage: String  redirectUrl: String  active: Boolean }
input LeadFormFieldInput      { key: String!  label: String!  type: FormFieldType!  required: Boolean
                                mapsTo: ContactField  options: [String!]  maxLength: Int }
input FormMetadataInput       { referrer: String  page: String }
type FormSubmissionResult     { success: Boolean!  contactId: ID!  successMessage: String!  redirectUrl: String }
input CreateProposalInput     { accountId: ID!  title: String!  contactId: ID  amount: Float }
input CreateContractInput     { accountId: ID!  title: String!  contactId: ID }
input CreateGalleryInput      { accountId: ID!  title: String!  contactId: ID }
input CreateBookingInput      { accountId: ID!  title: String!  startsAt: DateTime!  endsAt: DateTime!  contactId: ID }
input CreateWorkflowInput     { accountId: ID!  name: String!  active: Boolean }
`;

// Types §9 names without spelling out, declared with their kind only, so buildSchema can build it
// and the check still compares their kind; the page types follow "DealPage, InvoicePage alike".
const NAMED_ONLY = /* GraphQL */ `
  type User
  type Account
  type TeamMember
  type Contact
  type Deal
  type Invoice
  type PipelineStage
  type LeadForm
  type Proposal
  type Contract
  type Gallery
  type Booking
  type Workflow
  type DealPage { nodes: [Deal!]!  total: Int!  page: Int!  pageSize: Int! }
  type InvoicePage { nodes: [Invoice!]!  total: Int!  page: Int!  pageSize: Int! }
  enum ContactType
  enum ContactSource
  enum DealStatus
  enum InvoiceStatus
  enum FormFieldType
  enum ContactField
`;

/** §9 amended: every root field of Query and Mutation drops its outer `!` (a failed field answers null). */
const amended = (sdl: string) =>
  sdl.replace(/type (Query|Mutation) \{[^}]*\}/g, (block) => block.replace(/^(\s+\w+(?:\([^)]*\))?: [^#\n]*?)!(\s*(?:#.*)?)$/gm, '$1$2'));

// assumeValidSDL: the named-only object types have no fields, which plain SDL validation refuses.
const fixed = (sdl: string) => buildSchema(`${sdl}\n${NAMED_ONLY}`, { assumeValidSDL: true });
const section9 = fixed(amended(SECTION_9));

const defaultChanges = (from: typeof schema, to: typeof schema) =>
  findDangerousChanges(from, to).filter((change) => change.type === DangerousChangeType.ARG_DEFAULT_VALUE_CHANGE);

describe('docs/decisions.md §9: the fixed GraphQL surface', () => {
  test('our schema breaks nothing §9 fixes: no name, argument, nullability, type or input field drifts', () => {
    expect(findBreakingChanges(section9, schema)).toEqual([]);
  });

  test('no argument default of §9 changed (page 1, pageSize 25)', () => {
    expect(defaultChanges(section9, schema)).toEqual([]);
  });

  test('§9 amended: every root field of Query and Mutation is nullable, so one failing field leaves the others', () => {
    const rootFields = [schema.getQueryType()!, schema.getMutationType()!].flatMap((root) =>
      Object.values(root.getFields()).map((field) => ({ field: `${root.name}.${field.name}`, type: String(field.type) })),
    );
    expect(rootFields.length).toBeGreaterThan(20);
    expect(rootFields.filter(({ type }) => type.endsWith('!'))).toEqual([]);
    // The amendment keeps names and arguments: each §9 field is still there, only its `!` dropped.
    expect(String(section9.getQueryType()!.getFields().me!.type)).toBe('User');
    expect(String(section9.getQueryType()!.getFields().pipelineStages!.type)).toBe('[PipelineStage!]');
  });

  test('the check sees drift: a changed default, a changed root type and a dropped input field are reported', () => {
    const drifted = buildSchema(
      printSchema(schema)
        .replace(/(\n  contacts\(\n    accountId: ID![\s\S]*?pageSize: Int = )25/, '$150')
        .replace(/\n  me: User\n/, '\n  me: Account\n')
        .replace(/(input CreateContactInput \{[^}]*?)\n\s*phone: String/, '$1'),
    );
    const breaking = findBreakingChanges(section9, drifted).map((change) => change.description);
    expect(breaking.sort()).toEqual(['CreateContactInput.phone was removed.', 'Query.me changed type from User to Account.']);
    expect(defaultChanges(section9, drifted).map((change) => change.description)).toEqual([
      'Query.contacts arg pageSize has changed defaultValue from 25 to 50.',
    ]);
  });
});
