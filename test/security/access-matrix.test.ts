/**
 * OWASP API1 (BOLA) and API5 (BFLA): one table row per account-scoped GraphQL root field and per REST
 * endpoint. For every row: anonymous is refused as unauthenticated; an outsider, a user with no
 * account and a caller naming an unknown account are refused alike (no existence oracle); a member
 * may do what a member may and no more; the owner may. A refused call changes nothing: every row of
 * every account-scoped table is compared before and after.
 *
 * The table is checked against the schema and the REST route table: a new root field or endpoint
 * without a row here fails the first tests of this file.
 */
import { randomUUID } from 'node:crypto';
import { getNamedType, getOperationAST, isInputObjectType, type FieldNode, type GraphQLArgument, type GraphQLInputType } from 'graphql/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rootRules } from '../../src/graphql/rules.js';
import { answerReadScope } from '../../src/graphql/write-answer.js';
import { schema } from '../../src/schema.js';
import { routes } from '../../src/rest/routes.js';
import { newSigningSecret } from '../../src/webhooks/secret.js';
import { API_SCOPES, type ApiScope } from '../../src/scopes.js';
import { newSecret } from '../../src/auth/api-key-secret.js';
import { lacksScopeMessage, MESSAGES } from '../../src/errors.js';
import { createAccount, createContact, createUser, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type GqlResult, type TestApp, type TestUser } from '../helpers/app.js';
import { accountSnapshot } from './snapshot.js';

const NO_ACCESS = 'Forbidden: no access to this account';
const NOT_IN_ACCOUNT = 'Not found in this account';

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

let ipSeq = 0;
const nextIp = () => `10.77.${Math.floor(++ipSeq / 250) % 250}.${(ipSeq % 250) + 1}`;

// ---------------------------------------------------------------------------------------------
// Fixtures: an account with one record of each kind, and another account whose ids get smuggled.

type Records = {
  contactId: string; stageId: string; dealId: string; invoiceId: string; formId: string;
  submissionId: string; proposalId: string; contractId: string; galleryId: string; bookingId: string; workflowId: string;
};
type Fixture = Records & { acc: TestAccount; stranger: TestUser; other: Records & { acc: TestAccount } };

async function seed(acc: TestAccount): Promise<Records> {
  const contact = await createContact(t, acc);
  const stage = await t.db.pipelineStage.create({ data: { accountId: acc.id, name: unique('Stage').slice(0, 90), position: 0 } });
  const deal = await t.db.deal.create({ data: { accountId: acc.id, title: unique('Deal'), contactId: contact.id, stageId: stage.id } });
  const invoice = await t.db.invoice.create({
    data: { accountId: acc.id, contactId: contact.id, invoiceNumber: unique('INV'), amount: 10, dueDate: new Date('2030-01-31') },
  });
  const form = await t.db.leadForm.create({
    data: {
      accountId: acc.id,
      name: unique('Form'),
      fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email', position: 0 }] },
    },
  });
  const linked = { accountId: acc.id, contactId: contact.id, title: unique('Record') };
  const [submission, proposal, contract, gallery, booking, workflow] = await Promise.all([
    t.db.formSubmission.create({ data: { accountId: acc.id, formId: form.id, contactId: contact.id, data: { email: 'x@example.com' } } }),
    t.db.proposal.create({ data: { ...linked, amount: 5 } }),
    t.db.contract.create({ data: linked }),
    t.db.gallery.create({ data: linked }),
    t.db.booking.create({ data: { ...linked, startsAt: new Date('2030-01-01T09:00:00Z'), endsAt: new Date('2030-01-01T10:00:00Z') } }),
    t.db.workflow.create({ data: { accountId: acc.id, name: unique('Workflow') } }),
  ]);
  return {
    contactId: contact.id, stageId: stage.id, dealId: deal.id, invoiceId: invoice.id, formId: form.id,
    submissionId: submission.id, proposalId: proposal.id, contractId: contract.id, galleryId: gallery.id, bookingId: booking.id, workflowId: workflow.id,
  };
}

async function fixture(): Promise<Fixture> {
  const acc = await createAccount(t);
  const other = await createAccount(t);
  return { acc, ...(await seed(acc)), stranger: await createUser(t), other: { acc: other, ...(await seed(other)) } };
}

const snapshot = (accountId: string) => accountSnapshot(t, accountId);

/** An API key of the account holding `scopes`, written straight to the table (docs/decisions.md §15). */
async function keyOf(accountId: string, scopes: readonly ApiScope[]): Promise<TestUser> {
  const { secret, prefix, hash } = newSecret();
  const key = await t.db.apiKey.create({ data: { accountId, name: 'Matrix', prefix, secretHash: hash, scopes: [...scopes] } });
  return { id: key.id, token: secret };
}
/** The scope a root field declares for keys (src/graphql/rules.ts), read from the built schema as REST and OpenAPI read it. */
const scopeOf = (name: string) => {
  const [type, field] = name.split('.') as ['Query' | 'Mutation', string];
  return rootRules(schema, type === 'Query' ? 'query' : 'mutation', field);
};
const newApiKey = async (f: Fixture) => (await keyOf(f.acc.id, ['CONTACTS_READ'])).id;

/** Every `accountId` anywhere in an answer: all must be the caller's account. */
function accountIdsIn(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => accountIdsIn(v, found));
  else if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'accountId' && typeof v === 'string') found.add(v);
      else accountIdsIn(v, found);
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// The GraphQL table.

type Role = 'member' | 'owner';
type GqlRow = {
  /** The least role that may call the field. */
  role: Role;
  doc: string;
  /** Variables naming `accountId` (an id-addressed field: a record of it, or an unknown id). */
  vars: (f: Fixture, accountId: string) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Ids of another account smuggled into an otherwise valid call, and the input fields that must name them. */
  smuggle?: (f: Fixture) => { vars: Record<string, unknown>; fields: string[] };
  ownerOnlyMessage?: string;
  /**
   * An id-addressed field of docs/decisions.md §9 amended: a record that is unknown or not the
   * caller's is NOT_FOUND for a mutation and null for a read (instead of the account's FORBIDDEN).
   */
  hidden?: 'not-found' | 'null';
  /** The owner is refused with this code (leaveAccount: the owner cannot leave). */
  ownerRefused?: string;
  /**
   * The scopes a key also needs for the records of other kinds the selection reaches (docs/decisions.md §15),
   * an embedded contact's fields beyond its name included (§24).
   */
  nestedScopes?: ApiScope[];
};

/** `Query.<name>(id:)`: the fixture's record for its own account, an id nobody has otherwise. */
const readRow = (name: string, selection: string, id: (f: Fixture) => string, nestedScopes?: ApiScope[]): GqlRow => ({
  role: 'member',
  hidden: 'null',
  doc: `query ($id: ID!) { ${name}(id: $id) { id accountId ${selection} } }`,
  vars: (f, a) => ({ id: a === f.acc.id ? id(f) : randomUUID() }),
  nestedScopes,
});

const newDeal = async (f: Fixture) => (await t.db.deal.create({ data: { accountId: f.acc.id, title: unique('Deal') } })).id;
const newInvoice = async (f: Fixture) =>
  (await t.db.invoice.create({ data: { accountId: f.acc.id, invoiceNumber: unique('INV'), amount: 1, dueDate: new Date('2030-01-31') } })).id;
/** A sent invoice of 100 (it takes payments) and a payment of 5 on another (docs/decisions.md §20). */
const newSentInvoice = async (f: Fixture) =>
  (await t.db.invoice.create({ data: { accountId: f.acc.id, invoiceNumber: unique('INV'), amount: 100, status: 'sent', dueDate: new Date('2030-01-31') } })).id;
const newPayment = async (f: Fixture) => {
  const invoiceId = await newSentInvoice(f);
  await t.db.invoice.update({ where: { id: invoiceId }, data: { status: 'partial', amountPaid: 5 } });
  return (await t.db.payment.create({ data: { accountId: f.acc.id, invoiceId, amount: 5, currency: 'USD', method: 'cash', paidAt: new Date() } })).id;
};
/** An endpoint to a loopback address: every send is refused by the target guard, so nothing leaves the machine. */
const newEndpoint = async (f: Fixture) => {
  const id = randomUUID();
  const secretCiphertext = t.deps.events.box!.seal(newSigningSecret(), id);
  return (await t.db.webhookEndpoint.create({ data: { id, accountId: f.acc.id, url: 'http://127.0.0.1:9/hook', eventTypes: ['*'], secretCiphertext } })).id;
};
/** A custom field's key nobody has taken yet (docs/custom-fields.md). */
const fieldKey = () => `k${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const newCustomField = async (f: Fixture) =>
  (await t.db.customField.create({ data: { accountId: f.acc.id, object: 'CONTACT', key: fieldKey(), label: 'Matrix', type: 'TEXT' } })).id;
/** An id-addressed field: a fresh record of the fixture's account, or an id nobody has. */
const recordOf = (f: Fixture, accountId: string, make: (f: Fixture) => Promise<string>) =>
  accountId === f.acc.id ? make(f) : Promise.resolve(randomUUID());

const input = (f: Fixture, accountId: string, extra: Record<string, unknown>) => ({ input: { accountId, ...extra } });
const withContact = (f: Fixture, accountId: string, extra: Record<string, unknown>) =>
  input(f, accountId, { ...extra, contactId: accountId === f.acc.id ? f.contactId : null });
const foreignContact = (field: string, extra: (f: Fixture) => Record<string, unknown>) => (f: Fixture) => ({
  vars: { input: { accountId: f.acc.id, ...extra(f), contactId: f.other.contactId } },
  fields: [field],
});

// docs/decisions.md §12: reads by id, update*, delete*, eraseContact and the team changes.
const newImport = async (f: Fixture) =>
  (await t.db.import.create({ data: { accountId: f.acc.id, object: 'contacts', headers: ['first_name'], columns: ['firstName'], unknownColumns: [] } })).id;
const newContact = async (f: Fixture) => (await createContact(t, f.acc)).id;
/** A company of the fixture's account with one contact and one deal (docs/decisions.md §21). */
const newCompany = async (f: Fixture) => {
  const company = await t.db.company.create({ data: { accountId: f.acc.id, name: unique('Company') } });
  await t.db.contact.update({ where: { id: f.contactId }, data: { companyId: company.id } });
  await t.db.deal.update({ where: { id: f.dealId }, data: { companyId: company.id } });
  return company.id;
};
/** A note and a task on the fixture's contact (docs/decisions.md §21). */
const newNote = async (f: Fixture) => (await t.db.note.create({ data: { accountId: f.acc.id, body: 'Matrix', contactId: f.contactId } })).id;
const newTask = async (f: Fixture) => (await t.db.task.create({ data: { accountId: f.acc.id, title: 'Matrix', contactId: f.contactId } })).id;
const newEvent = async (f: Fixture) =>
  (await t.db.event.create({ data: { accountId: f.acc.id, type: 'contact.created', actorType: 'system', data: { object: { id: f.contactId } } } })).id;
const newStage = async (f: Fixture) => (await t.db.pipelineStage.create({ data: { accountId: f.acc.id, name: unique('Stage').slice(0, 90) } })).id;
const newForm = async (f: Fixture) =>
  (await t.db.leadForm.create({
    data: { accountId: f.acc.id, name: unique('Form'), fields: { create: [{ key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email', position: 0 }] } },
  })).id;
const newRecord = (model: 'proposal' | 'contract' | 'gallery' | 'booking' | 'workflow') => async (f: Fixture) => {
  const data: Record<string, unknown> = { accountId: f.acc.id, ...(model === 'workflow' ? { name: 'Matrix' } : { title: 'Matrix' }) };
  if (model === 'booking') Object.assign(data, { startsAt: new Date('2030-01-01T09:00:00Z'), endsAt: new Date('2030-01-01T10:00:00Z') });
  return ((await (t.db[model] as unknown as { create(a: object): Promise<{ id: string }> }).create({ data })) as { id: string }).id;
};
const byId = (make: (f: Fixture) => Promise<string>, extra: (f: Fixture) => Record<string, unknown> = () => ({})) => async (f: Fixture, a: string) => ({
  id: await recordOf(f, a, make),
  ...extra(f),
});
const updateRow = (type: string, make: (f: Fixture) => Promise<string>, input: Record<string, unknown>, smuggle?: string[]): GqlRow => ({
  role: 'member',
  hidden: 'not-found',
  doc: `mutation ($id: ID!, $input: Update${type}Input!) { update${type}(id: $id, input: $input) { id accountId } }`,
  vars: byId(make, () => ({ input })),
  ...(smuggle
    ? {
        smuggle: (f: Fixture) => ({
          vars: { id: f.dealId, input: Object.fromEntries(smuggle.map((k) => [k, k === 'contactId' ? f.other.contactId : f.other.stageId])) },
          fields: smuggle,
        }),
      }
    : {}),
});
const deleteRow = (type: string, make: (f: Fixture) => Promise<string>): GqlRow => ({
  role: 'member',
  hidden: 'not-found',
  doc: `mutation ($id: ID!) { delete${type}(id: $id) { id deletedAt } }`,
  vars: byId(make),
});
/** docs/trash.md: a record of the fixture's account, deleted, so in the trash: what restore<Type> takes. */
const trashed = (type: string, make: (f: Fixture) => Promise<string>) => async (f: Fixture) => {
  const id = await make(f);
  const r = await t.gql(`mutation ($id: ID!) { delete${type}(id: $id) { id } }`, { id }, { as: f.acc.owner });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return id;
};
const restoreRow = (type: string, make: (f: Fixture) => Promise<string>): GqlRow => ({
  role: 'member',
  hidden: 'not-found',
  doc: `mutation ($id: ID!) { restore${type}(id: $id) { id accountId } }`,
  vars: byId(trashed(type, make)),
});
const OWNER_ONLY = 'Forbidden: only the account owner can do this';

const CHANGES: Record<string, GqlRow> = {
  'Mutation.updateContact': updateRow('Contact', newContact, { firstName: 'Matrix' }),
  'Mutation.deleteContact': deleteRow('Contact', newContact),
  'Mutation.eraseContact': {
    role: 'owner',
    hidden: 'not-found',
    ownerOnlyMessage: OWNER_ONLY,
    doc: 'mutation ($id: ID!) { eraseContact(id: $id) { contactId submissionsErased } }',
    vars: byId(newContact),
  },
  'Mutation.updateDeal': updateRow('Deal', newDeal, { title: 'Matrix' }, ['contactId', 'stageId']),
  'Mutation.updateCompany': updateRow('Company', newCompany, { name: 'Matrix' }),
  'Mutation.deleteCompany': deleteRow('Company', newCompany),
  // docs/decisions.md §22: a merge names records of one account; another's, or unknown, is NOT_FOUND.
  'Mutation.mergeContacts': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!, $d: [ID!]!) { mergeContacts(primaryId: $id, duplicateIds: $d) { id accountId } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newContact), d: [await recordOf(f, a, newContact)] }),
  },
  'Mutation.mergeCompanies': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!, $d: [ID!]!) { mergeCompanies(primaryId: $id, duplicateIds: $d) { id accountId } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newCompany), d: [await recordOf(f, a, newCompany)] }),
  },
  'Mutation.deleteDeal': deleteRow('Deal', newDeal),
  'Mutation.restoreContact': restoreRow('Contact', newContact),
  'Mutation.restoreDeal': restoreRow('Deal', newDeal),
  'Mutation.restoreCompany': restoreRow('Company', newCompany),
  'Mutation.updateNote': updateRow('Note', newNote, { body: 'Matrix' }),
  'Mutation.deleteNote': deleteRow('Note', newNote),
  'Mutation.updateTask': updateRow('Task', newTask, { title: 'Matrix' }),
  'Mutation.deleteTask': deleteRow('Task', newTask),
  'Mutation.completeTask': { role: 'member', hidden: 'not-found', doc: 'mutation ($id: ID!) { completeTask(id: $id) { id accountId } }', vars: byId(newTask) },
  'Mutation.reopenTask': { role: 'member', hidden: 'not-found', doc: 'mutation ($id: ID!) { reopenTask(id: $id) { id accountId } }', vars: byId(newTask) },
  'Mutation.updateInvoice': updateRow('Invoice', newInvoice, { amount: 3 }),
  'Mutation.deleteInvoice': deleteRow('Invoice', newInvoice),
  'Mutation.updatePipelineStage': updateRow('PipelineStage', newStage, { name: 'Matrix' }),
  'Mutation.deletePipelineStage': deleteRow('PipelineStage', newStage),
  'Mutation.updateLeadForm': updateRow('LeadForm', newForm, { name: 'Matrix' }),
  'Mutation.deleteLeadForm': deleteRow('LeadForm', newForm),
  'Mutation.updateProposal': updateRow('Proposal', newRecord('proposal'), { title: 'Matrix' }),
  'Mutation.deleteProposal': deleteRow('Proposal', newRecord('proposal')),
  'Mutation.updateContract': updateRow('Contract', newRecord('contract'), { title: 'Matrix' }),
  'Mutation.deleteContract': deleteRow('Contract', newRecord('contract')),
  'Mutation.updateGallery': updateRow('Gallery', newRecord('gallery'), { title: 'Matrix' }),
  'Mutation.deleteGallery': deleteRow('Gallery', newRecord('gallery')),
  'Mutation.updateBooking': updateRow('Booking', newRecord('booking'), { title: 'Matrix' }),
  'Mutation.deleteBooking': deleteRow('Booking', newRecord('booking')),
  'Mutation.updateWorkflow': updateRow('Workflow', newRecord('workflow'), { name: 'Matrix' }),
  'Mutation.deleteWorkflow': deleteRow('Workflow', newRecord('workflow')),
  'Mutation.removeTeamMember': {
    role: 'owner',
    ownerOnlyMessage: OWNER_ONLY,
    doc: 'mutation ($a: ID!, $u: ID!) { removeTeamMember(accountId: $a, userId: $u) { id } }',
    vars: (f, a) => ({ a, u: f.acc.member.id }),
  },
  'Mutation.transferOwnership': {
    role: 'owner',
    ownerOnlyMessage: OWNER_ONLY,
    doc: 'mutation ($a: ID!, $u: ID!) { transferOwnership(accountId: $a, userId: $u) { id owner { id } } }',
    vars: (f, a) => ({ a, u: f.acc.member.id }),
  },
  'Mutation.updateAccount': {
    role: 'owner',
    ownerOnlyMessage: OWNER_ONLY,
    doc: 'mutation ($a: ID!) { updateAccount(id: $a, input: { defaultCurrency: "EUR" }) { id defaultCurrency } }',
    vars: (_f, a) => ({ a }),
  },
  'Mutation.leaveAccount': {
    role: 'member',
    ownerRefused: 'CONFLICT',
    doc: 'mutation ($a: ID!) { leaveAccount(accountId: $a) }',
    vars: (_f, a) => ({ a }),
  },
};

const GQL: Record<string, GqlRow> = {
  'Query.contact': readRow('contact', 'updatedAt deals { nodes { id accountId } } invoices { totalCount } submissions { nodes { id accountId } }', (f) => f.contactId, ['DEALS_READ', 'INVOICES_READ', 'FORMS_READ']),
  'Query.deal': readRow('deal', 'updatedAt contact { id accountId } stage { id accountId }', (f) => f.dealId, ['CONTACTS_READ']),
  'Query.company': {
    role: 'member',
    hidden: 'null',
    doc: 'query ($id: ID!) { company(id: $id) { id accountId updatedAt contacts { nodes { id accountId } } deals { nodes { id accountId } } } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newCompany) }),
    nestedScopes: ['CONTACTS_READ', 'DEALS_READ'],
  },
  'Query.companies': {
    role: 'member',
    doc: 'query ($a: ID!) { companies(accountId: $a) { total nodes { id accountId } } }',
    vars: (_f, a) => ({ a }),
  },
  'Query.duplicateContacts': {
    role: 'member',
    doc: 'query ($a: ID!) { duplicateContacts(accountId: $a) { score reasons contacts { id accountId } } }',
    vars: (_f, a) => ({ a }),
  },
  'Query.duplicateCompanies': {
    role: 'member',
    doc: 'query ($a: ID!) { duplicateCompanies(accountId: $a) { score reasons companies { id accountId } } }',
    vars: (_f, a) => ({ a }),
  },
  'Mutation.createCompany': {
    role: 'member',
    doc: 'mutation ($input: CreateCompanyInput!) { createCompany(input: $input) { id accountId } }',
    vars: (f, a) => input(f, a, { name: 'Matrix' }),
  },
  'Query.note': {
    role: 'member',
    hidden: 'null',
    doc: 'query ($id: ID!) { note(id: $id) { id accountId updatedAt contact { id accountId } } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newNote) }),
    nestedScopes: ['CONTACTS_READ'],
  },
  'Query.task': {
    role: 'member',
    hidden: 'null',
    doc: 'query ($id: ID!) { task(id: $id) { id accountId updatedAt contact { id accountId } } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newTask) }),
    nestedScopes: ['CONTACTS_READ'],
  },
  'Query.notes': { role: 'member', doc: 'query ($a: ID!) { notes(accountId: $a) { total nodes { id accountId } } }', vars: (_f, a) => ({ a }) },
  'Query.tasks': { role: 'member', doc: 'query ($a: ID!) { tasks(accountId: $a) { total nodes { id accountId } } }', vars: (_f, a) => ({ a }) },
  'Mutation.createNote': {
    role: 'member',
    doc: 'mutation ($input: CreateNoteInput!) { createNote(input: $input) { id accountId } }',
    vars: (f, a) => withContact(f, a, { body: 'Matrix' }),
    smuggle: foreignContact('contactId', () => ({ body: 'Smuggled' })),
  },
  'Mutation.createTask': {
    role: 'member',
    doc: 'mutation ($input: CreateTaskInput!) { createTask(input: $input) { id accountId } }',
    vars: (f, a) => withContact(f, a, { title: 'Matrix' }),
    smuggle: foreignContact('contactId', () => ({ title: 'Smuggled' })),
  },
  'Query.invoice': readRow('invoice', 'updatedAt contact { id accountId }', (f) => f.invoiceId, ['CONTACTS_READ']),
  // An invoice's payments as a page (docs/decisions.md §26): addressed by the invoice, so NOT_FOUND for one not the caller's.
  'Query.invoicePayments': {
    role: 'member',
    hidden: 'not-found',
    doc: 'query ($id: ID!) { invoicePayments(invoiceId: $id) { total nodes { id invoice { id accountId } } } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newInvoice) }),
  },
  'Query.pipelineStage': readRow('pipelineStage', 'updatedAt deals { nodes { id accountId } }', (f) => f.stageId),
  'Query.leadForm': readRow('leadForm', 'updatedAt fields { key } submissions { nodes { id accountId } }', (f) => f.formId),
  'Query.formSubmission': readRow('formSubmission', 'data isSpam form { id accountId } contact { id accountId }', (f) => f.submissionId, ['CONTACTS_READ']),
  'Query.proposal': readRow('proposal', 'updatedAt contact { id accountId }', (f) => f.proposalId),
  'Query.contract': readRow('contract', 'updatedAt contact { id accountId }', (f) => f.contractId),
  'Query.gallery': readRow('gallery', 'updatedAt contact { id accountId }', (f) => f.galleryId),
  'Query.booking': readRow('booking', 'updatedAt contact { id accountId }', (f) => f.bookingId),
  'Query.workflow': readRow('workflow', 'updatedAt', (f) => f.workflowId),
  // Workflows (docs/workflows.md): members; keys read them with WORKFLOWS_READ and never test them (no scope).
  'Query.workflows': { role: 'member', doc: 'query ($a: ID!) { workflows(accountId: $a) { total nodes { id accountId } } }', vars: (_f, a) => ({ a }) },
  'Query.workflowRuns': {
    role: 'member',
    hidden: 'not-found',
    doc: 'query ($id: ID!) { workflowRuns(workflowId: $id) { total nodes { id } } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newRecord('workflow')) }),
  },
  'Query.testWorkflow': {
    role: 'member',
    hidden: 'null',
    doc: 'query ($id: ID!, $e: ID!) { testWorkflow(id: $id, eventId: $e) { status } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newRecord('workflow')), e: await newEvent(f) }),
  },
  'Query.account': {
    role: 'member',
    doc: 'query ($id: ID!) { account(id: $id) { id name owner { id } members { accountId userId user { id email } } } }',
    vars: (_f, a) => ({ id: a }),
  },
  'Query.contacts': {
    role: 'member',
    doc: 'query ($a: ID!) { contacts(accountId: $a) { total nodes { id accountId email } } }',
    vars: (_f, a) => ({ a }),
  },
  'Query.deals': {
    role: 'member',
    doc: 'query ($a: ID!) { deals(accountId: $a) { total nodes { id accountId contact { id accountId } stage { id accountId } } } }',
    vars: (_f, a) => ({ a }),
    nestedScopes: ['CONTACTS_READ'],
  },
  'Query.invoices': {
    role: 'member',
    doc: 'query ($a: ID!) { invoices(accountId: $a) { total nodes { id accountId contact { id accountId } } } }',
    vars: (_f, a) => ({ a }),
    nestedScopes: ['CONTACTS_READ'],
  },
  // The events feed (docs/decisions.md §18): members, keys with EVENTS_READ.
  'Query.events': { role: 'member', doc: 'query ($a: ID!) { events(accountId: $a) { nodes { id accountId } nextCursor } }', vars: (_f, a) => ({ a }) },
  'Query.event': {
    role: 'member',
    hidden: 'null',
    doc: 'query ($a: ID!, $id: ID!) { event(accountId: $a, id: $id) { id accountId } }',
    vars: async (f, a) => ({ a, id: await recordOf(f, a, newEvent) }),
    nestedScopes: ['CONTACTS_READ'], // a key reads the events of the kinds its scopes read (newEvent: contact.created)
  },
  // Cross-object search (docs/decisions.md §19): members only; no scope, so every key is refused.
  'Query.search': { role: 'member', doc: 'query ($a: ID!) { search(accountId: $a, query: "a") { id record { ... on Contact { accountId } ... on Deal { accountId } ... on Invoice { accountId } } } }', vars: (_f, a) => ({ a }) },
  // The dashboard reports (docs/decisions.md §19): members, keys with the read scope of what each sums.
  'Query.pipelineReport': { role: 'member', doc: 'query ($a: ID!) { pipelineReport(accountId: $a) { count value } }', vars: (_f, a) => ({ a }) },
  'Query.dealReport': { role: 'member', doc: 'query ($a: ID!) { dealReport(accountId: $a) { byStatus { key count } } }', vars: (_f, a) => ({ a }) },
  'Query.receivablesReport': { role: 'member', doc: 'query ($a: ID!) { receivablesReport(accountId: $a) { total count } }', vars: (_f, a) => ({ a }) },
  'Query.contactReport': { role: 'member', doc: 'query ($a: ID!) { contactReport(accountId: $a) { byType { key count } } }', vars: (_f, a) => ({ a }) },
  'Query.revenueReport': { role: 'member', doc: 'query ($a: ID!) { revenueReport(accountId: $a) { month currency count value } }', vars: (_f, a) => ({ a }) },
  'Query.pipelineStages': {
    role: 'member',
    doc: 'query ($a: ID!) { pipelineStages(accountId: $a) { id accountId name } }',
    vars: (_f, a) => ({ a }),
  },
  'Query.leadForms': {
    role: 'member',
    doc: 'query ($a: ID!) { leadForms(accountId: $a) { id accountId honeypotField fields { key mapsTo } } }',
    vars: (_f, a) => ({ a }),
  },
  'Mutation.addTeamMember': {
    role: 'owner',
    ownerOnlyMessage: 'Forbidden: only the account owner can do this',
    doc: 'mutation ($input: AddTeamMemberInput!) { addTeamMember(input: $input) { accountId userId role } }',
    vars: (f, a) => input(f, a, { userId: randomUUID() }),
  },
  'Mutation.createContact': {
    role: 'member',
    doc: 'mutation ($input: CreateContactInput!) { createContact(input: $input) { id accountId } }',
    vars: (f, a) => input(f, a, { firstName: 'Matrix' }),
  },
  'Mutation.createDeal': {
    role: 'member',
    doc: 'mutation ($input: CreateDealInput!) { createDeal(input: $input) { id accountId contact { id accountId } stage { id accountId } } }',
    nestedScopes: ['CONTACTS_READ'],
    vars: (f, a) => input(f, a, { title: 'Matrix', ...(a === f.acc.id ? { contactId: f.contactId, stageId: f.stageId } : {}) }),
    smuggle: (f) => ({
      vars: { input: { accountId: f.acc.id, title: 'Smuggled', contactId: f.other.contactId, stageId: f.other.stageId } },
      fields: ['contactId', 'stageId'],
    }),
  },
  // docs/decisions.md §16: batches (ids of another account fail their item: test/graphql/batches.test.ts).
  'Mutation.createContacts': {
    role: 'member',
    doc: 'mutation ($accountId: ID!, $inputs: [BatchContactInput!]!) { createContacts(accountId: $accountId, inputs: $inputs) { created items { contact { id accountId } } } }',
    nestedScopes: ['CONTACTS_READ'], // a batch answers its records to a key that reads them (docs/decisions.md §24)
    vars: (_f, a) => ({ accountId: a, inputs: [{ firstName: 'Matrix' }] }),
  },
  'Mutation.upsertContacts': {
    role: 'member',
    doc: 'mutation ($accountId: ID!, $inputs: [BatchContactInput!]!) { upsertContacts(accountId: $accountId, matchOn: EXTERNAL_ID, inputs: $inputs) { created items { contact { id accountId } } } }',
    nestedScopes: ['CONTACTS_READ'], // a batch answers its records to a key that reads them (docs/decisions.md §24)
    vars: (_f, a) => ({ accountId: a, inputs: [{ firstName: 'Matrix', externalId: unique('matrix') }] }),
  },
  'Mutation.upsertCompanies': {
    role: 'member',
    doc: 'mutation ($accountId: ID!, $inputs: [BatchCompanyInput!]!) { upsertCompanies(accountId: $accountId, matchOn: DOMAIN, inputs: $inputs) { created items { company { id accountId } } } }',
    nestedScopes: ['COMPANIES_READ'], // a batch answers its records to a key that reads them (docs/decisions.md §24)
    vars: (_f, a) => ({ accountId: a, inputs: [{ name: 'Matrix', domain: `${unique('m')}.example.org` }] }),
  },
  'Mutation.createDeals': {
    role: 'member',
    doc: 'mutation ($accountId: ID!, $inputs: [BatchDealInput!]!) { createDeals(accountId: $accountId, inputs: $inputs) { created items { deal { id accountId } } } }',
    nestedScopes: ['DEALS_READ'], // a batch answers its records to a key that reads them (docs/decisions.md §24)
    vars: (_f, a) => ({ accountId: a, inputs: [{ title: 'Matrix' }] }),
  },
  'Mutation.upsertDeals': {
    role: 'member',
    doc: 'mutation ($accountId: ID!, $inputs: [BatchDealInput!]!) { upsertDeals(accountId: $accountId, inputs: $inputs) { created items { deal { id accountId } } } }',
    nestedScopes: ['DEALS_READ'], // a batch answers its records to a key that reads them (docs/decisions.md §24)
    vars: (_f, a) => ({ accountId: a, inputs: [{ title: 'Matrix', externalId: unique('matrix') }] }),
  },
  'Mutation.deleteContacts': {
    role: 'member',
    doc: 'mutation ($accountId: ID!, $ids: [ID!]!) { deleteContacts(accountId: $accountId, ids: $ids) { deleted items { id deleted } } }',
    vars: (_f, a) => ({ accountId: a, ids: [randomUUID()] }),
  },
  'Mutation.setDealStatus': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!, $status: DealStatus!) { setDealStatus(id: $id, status: $status) { id accountId status } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newDeal), status: 'won' }),
  },
  'Mutation.createPipelineStage': {
    role: 'member',
    doc: 'mutation ($input: CreatePipelineStageInput!) { createPipelineStage(input: $input) { id accountId } }',
    vars: (f, a) => input(f, a, { name: 'Matrix' }),
  },
  'Mutation.createInvoice': {
    role: 'member',
    doc: 'mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { id accountId contact { id accountId } } }',
    nestedScopes: ['CONTACTS_READ'],
    vars: (f, a) => withContact(f, a, { amount: 12.5, dueDate: '2030-06-30' }),
    smuggle: foreignContact('contactId', () => ({ amount: 1, dueDate: '2030-06-30' })),
  },
  'Mutation.setInvoiceStatus': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!, $status: InvoiceStatus!) { setInvoiceStatus(id: $id, status: $status) { id accountId status } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newInvoice), status: 'sent' }),
  },
  'Mutation.sendInvoice': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!) { sendInvoice(id: $id) { id accountId status } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newInvoice) }),
  },
  'Mutation.recordPayment': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!) { recordPayment(invoiceId: $id, input: { amount: 1, method: cash }) { id invoice { id accountId } } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newSentInvoice) }),
  },
  'Mutation.refundPayment': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!) { refundPayment(paymentId: $id) { id invoice { id accountId } } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newPayment) }),
  },
  'Mutation.createLeadForm': {
    role: 'member',
    doc: 'mutation ($input: CreateLeadFormInput!) { createLeadForm(input: $input) { id accountId } }',
    vars: (f, a) => input(f, a, { name: 'Matrix', fields: [{ key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email' }] }),
  },
  'Mutation.setLeadFormActive': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!, $active: Boolean!) { setLeadFormActive(id: $id, active: $active) { id accountId active } }',
    vars: (f, a) => ({ id: a === f.acc.id ? f.formId : randomUUID(), active: false }),
  },
  'Mutation.createProposal': {
    role: 'member',
    doc: 'mutation ($input: CreateProposalInput!) { createProposal(input: $input) { id accountId contact { id accountId } } }',
    vars: (f, a) => withContact(f, a, { title: 'Matrix', amount: 5 }),
    smuggle: foreignContact('contactId', () => ({ title: 'Smuggled' })),
  },
  'Mutation.createContract': {
    role: 'member',
    doc: 'mutation ($input: CreateContractInput!) { createContract(input: $input) { id accountId contact { id accountId } } }',
    vars: (f, a) => withContact(f, a, { title: 'Matrix' }),
    smuggle: foreignContact('contactId', () => ({ title: 'Smuggled' })),
  },
  'Mutation.createGallery': {
    role: 'member',
    doc: 'mutation ($input: CreateGalleryInput!) { createGallery(input: $input) { id accountId contact { id accountId } } }',
    vars: (f, a) => withContact(f, a, { title: 'Matrix' }),
    smuggle: foreignContact('contactId', () => ({ title: 'Smuggled' })),
  },
  'Mutation.createBooking': {
    role: 'member',
    doc: 'mutation ($input: CreateBookingInput!) { createBooking(input: $input) { id accountId contact { id accountId } } }',
    vars: (f, a) => withContact(f, a, { title: 'Matrix', startsAt: '2030-01-01T09:00:00Z', endsAt: '2030-01-01T10:00:00Z' }),
    smuggle: foreignContact('contactId', () => ({ title: 'Smuggled', startsAt: '2030-01-01T09:00:00Z', endsAt: '2030-01-01T10:00:00Z' })),
  },
  'Mutation.createWorkflow': {
    role: 'member',
    doc: 'mutation ($input: CreateWorkflowInput!) { createWorkflow(input: $input) { id accountId } }',
    vars: (f, a) => input(f, a, { name: 'Matrix' }),
  },
  // Imports (docs/decisions.md §17): owner and members.
  'Query.import': { role: 'member', hidden: 'null', doc: 'query ($id: ID!) { import(id: $id) { id accountId } }', vars: async (f, a) => ({ id: await recordOf(f, a, newImport) }) },
  'Query.imports': { role: 'member', doc: 'query ($a: ID!) { imports(accountId: $a) { id accountId } }', vars: (_f, a) => ({ a }) },
  'Mutation.admitImport': {
    role: 'member',
    doc: 'mutation ($a: ID!) { admitImport(accountId: $a, object: CONTACTS) }',
    nestedScopes: ['CONTACTS_WRITE'], // an import writes its object's records: that write scope too (docs/decisions.md §24)
    vars: (_f, a) => ({ a }),
  },
  'Mutation.startImport': {
    role: 'member',
    doc: 'mutation ($a: ID!) { startImport(accountId: $a, object: CONTACTS, columns: ["first_name"]) { id accountId } }',
    nestedScopes: ['CONTACTS_WRITE'], // an import writes its object's records: that write scope too (docs/decisions.md §24)
    vars: (_f, a) => ({ a }),
  },
  'Mutation.queueImport': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!) { queueImport(id: $id, fileSha256: "' + '0'.repeat(64) + '") { id accountId rowsTotal } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newImport) }),
  },
  'Mutation.cancelImport': {
    role: 'member',
    hidden: 'not-found',
    doc: 'mutation ($id: ID!) { cancelImport(id: $id) { id accountId status } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newImport) }),
  },
  'Mutation.exportContacts': {
    role: 'member',
    doc: 'mutation ($a: ID!) { exportContacts(accountId: $a) { id accountId fileName } }',
    vars: (_f, a) => ({ a }),
  },
  'Mutation.exportAccount': {
    role: 'owner',
    ownerOnlyMessage: 'Forbidden: only the account owner can export account data',
    doc: 'mutation ($a: ID!) { exportAccount(accountId: $a) { id accountId fileName } }',
    vars: (_f, a) => ({ a }),
  },
  ...CHANGES,
  // API keys (docs/decisions.md §15): the owner manages them, with a session token only.
  'Mutation.createApiKey': {
    role: 'owner',
    ownerOnlyMessage: OWNER_ONLY,
    doc: 'mutation ($input: CreateApiKeyInput!) { createApiKey(input: $input) { apiKey { id } secret } }',
    vars: (f, a) => input(f, a, { name: 'Matrix', scopes: ['CONTACTS_READ'] }),
  },
  'Mutation.revokeApiKey': {
    role: 'owner',
    hidden: 'not-found',
    ownerOnlyMessage: OWNER_ONLY,
    doc: 'mutation ($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }',
    vars: byId(newApiKey),
  },
  // The account's own fields (docs/custom-fields.md): members read them, the owner alone defines them.
  'Mutation.createCustomField': {
    role: 'owner',
    ownerOnlyMessage: OWNER_ONLY,
    doc: 'mutation ($a: ID!, $input: CreateCustomFieldInput!) { createCustomField(accountId: $a, input: $input) { id } }',
    vars: (_f, a) => ({ a, input: { object: 'CONTACT', key: fieldKey(), label: 'Matrix', type: 'TEXT' } }),
  },
  'Mutation.updateCustomField': {
    role: 'owner',
    hidden: 'not-found',
    ownerOnlyMessage: OWNER_ONLY,
    doc: 'mutation ($id: ID!) { updateCustomField(id: $id, input: { label: "Matrix" }) { id } }',
    vars: byId(newCustomField),
  },
  'Query.customFields': {
    role: 'member',
    doc: 'query ($a: ID!) { customFields(accountId: $a) { id key } }',
    vars: (_f, a) => ({ a }),
  },
  // Webhooks (docs/events.md): the owner manages them; a member may not.
  'Mutation.createWebhookEndpoint': {
    role: 'owner',
    ownerOnlyMessage: 'Forbidden: only the account owner can do this',
    doc: 'mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id url } secret } }',
    vars: (f, a) => input(f, a, { url: 'https://93.184.215.14/hook', eventTypes: ['*'] }),
  },
  'Query.webhookEndpoints': {
    role: 'owner',
    ownerOnlyMessage: 'Forbidden: only the account owner can do this',
    doc: 'query ($a: ID!) { webhookEndpoints(accountId: $a) { id url } }',
    vars: (_f, a) => ({ a }),
  },
  'Query.webhookEndpoint': {
    role: 'owner',
    hidden: 'null',
    ownerOnlyMessage: 'Forbidden: only the account owner can do this',
    doc: 'query ($id: ID!) { webhookEndpoint(id: $id) { id url } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newEndpoint) }),
  },
  'Mutation.updateWebhookEndpoint': {
    role: 'owner',
    hidden: 'not-found',
    ownerOnlyMessage: 'Forbidden: only the account owner can do this',
    doc: 'mutation ($id: ID!) { updateWebhookEndpoint(id: $id, input: { description: "Matrix" }) { id description } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newEndpoint) }),
  },
  'Mutation.deleteWebhookEndpoint': {
    role: 'owner',
    hidden: 'not-found',
    ownerOnlyMessage: 'Forbidden: only the account owner can do this',
    doc: 'mutation ($id: ID!) { deleteWebhookEndpoint(id: $id) { id } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newEndpoint) }),
  },
  'Mutation.rotateWebhookSecret': {
    role: 'owner',
    hidden: 'not-found',
    ownerOnlyMessage: 'Forbidden: only the account owner can do this',
    doc: 'mutation ($id: ID!) { rotateWebhookSecret(id: $id) { endpoint { id } secret } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newEndpoint) }),
  },
  'Mutation.sendTestWebhook': {
    role: 'owner',
    hidden: 'not-found',
    ownerOnlyMessage: 'Forbidden: only the account owner can do this',
    doc: 'mutation ($id: ID!) { sendTestWebhook(endpointId: $id) { id succeeded error } }',
    vars: async (f, a) => ({ id: await recordOf(f, a, newEndpoint) }),
  },
  'Mutation.redeliverEvent': {
    role: 'owner',
    hidden: 'not-found',
    ownerOnlyMessage: 'Forbidden: only the account owner can do this',
    doc: 'mutation ($id: ID!, $e: ID!) { redeliverEvent(endpointId: $id, eventId: $e) { id succeeded error } }',
    vars: async (f, a) => ({
      id: await recordOf(f, a, newEndpoint),
      e: (await t.db.event.create({ data: { accountId: f.acc.id, type: 'contact.created', actorType: 'system', data: { object: {} } } })).id,
    }),
  },
};

/** Root fields that name no account, each with the reason; checked below to take no account id. */
const NOT_ACCOUNT_SCOPED: Record<string, string> = {
  'Query.me': 'the caller themself; its nested accounts are only those the caller owns or belongs to (tested below)',
  'Mutation.createAccount': 'makes a new account owned by the caller',
  'Query.publicLeadForm': 'public by design: an active form as its page shows it, nothing about the account behind it',
  'Mutation.submitLeadForm': 'public by design: the lead form submit (the form decides the account, never the caller)',
  'Query.publicInvoice': "public by design: the invoice behind a client's page token, as its PDF shows it (the token decides the invoice, never the caller)",
  'Mutation.viewInvoicePage': "public by design: the client's page view (the token decides the invoice; only a sent one's first view moves it to viewed)",
};

const rootFields = (): string[] => [
  ...Object.keys(schema.getQueryType()!.getFields()).map((name) => `Query.${name}`),
  ...Object.keys(schema.getMutationType()?.getFields() ?? {}).map((name) => `Mutation.${name}`),
];

/** True when an argument, or any field of an input object it takes (recursively), is named accountId. */
function takesAccountId(args: readonly GraphQLArgument[]): boolean {
  const seen = new Set<string>();
  const visit = (name: string, type: GraphQLInputType): boolean => {
    if (name === 'accountId') return true;
    const named = getNamedType(type);
    if (!isInputObjectType(named) || seen.has(named.name)) return false;
    seen.add(named.name);
    return Object.values(named.getFields()).some((field) => visit(field.name, field.type));
  };
  return args.some((arg) => visit(arg.name, arg.type));
}

describe('the table covers the whole schema', () => {
  it('every root field of the schema has a row in the access table or a reasoned exemption', () => {
    const missing = rootFields().filter((name) => !(name in GQL) && !(name in NOT_ACCOUNT_SCOPED));
    expect(missing, 'add a row to GQL in test/security/access-matrix.test.ts').toEqual([]);
  });

  it('the table names no field the schema lacks', () => {
    const fields = new Set(rootFields());
    expect([...Object.keys(GQL), ...Object.keys(NOT_ACCOUNT_SCOPED)].filter((name) => !fields.has(name))).toEqual([]);
  });

  it('an exempt field takes no account id, directly or inside its input', () => {
    for (const name of Object.keys(NOT_ACCOUNT_SCOPED)) {
      const [type, field] = name.split('.') as ['Query' | 'Mutation', string];
      const root = type === 'Query' ? schema.getQueryType()! : schema.getMutationType()!;
      expect(takesAccountId(root.getFields()[field]!.args), name).toBe(false);
    }
  });

  it('every field that takes an account id has a row (so none can hide among the exemptions)', () => {
    const scoped = rootFields().filter((name) => {
      const [type, field] = name.split('.') as ['Query' | 'Mutation', string];
      const root = type === 'Query' ? schema.getQueryType()! : schema.getMutationType()!;
      return takesAccountId(root.getFields()[field]!.args);
    });
    expect(scoped.filter((name) => !(name in GQL))).toEqual([]);
  });
});

const fieldOf = (name: string) => name.split('.')[1]!;
const gql = (row: GqlRow, vars: Record<string, unknown>, as: TestUser | null) => t.gql(row.doc, vars, { as, clientIp: nextIp() });
const codeOf = (r: GqlResult) => r.errors?.[0]?.extensions?.code;

function expectRefused(r: GqlResult, name: string, code: string, message?: string) {
  expect(r.errors?.length, `${name}: ${JSON.stringify(r.errors)}`).toBeGreaterThan(0);
  expect(codeOf(r)).toBe(code);
  if (message) expect(r.errors![0]!.message).toBe(message);
  expect(r.data?.[fieldOf(name)] ?? null).toBeNull();
}

function expectAllowed(r: GqlResult, name: string, f: Fixture) {
  expect(r.errors, name).toBeUndefined();
  const answer = r.data[fieldOf(name)];
  expect(answer).toBeTruthy();
  // Nested fields too: nothing in the answer belongs to another account.
  const ids = accountIdsIn(answer);
  ids.delete(f.acc.id);
  expect([...ids]).toEqual([]);
  const text = JSON.stringify(answer);
  const { acc: _acc, ...otherRecords } = f.other;
  for (const foreign of [f.other.acc.id, ...Object.values(otherRecords)]) {
    expect(text).not.toContain(foreign);
  }
}

describe.each(Object.entries(GQL))('%s', (name, row) => {
  let f: Fixture;
  beforeAll(async () => void (f = await fixture()));

  /** Calls the field as `as`, and returns the answer and whether the account's data changed. */
  async function call(as: TestUser | null, accountId = f.acc.id) {
    const vars = await row.vars(f, accountId);
    const before = await snapshot(f.acc.id);
    const r = await gql(row, vars, as);
    return { r, changed: (await snapshot(f.acc.id)) !== before };
  }

  it('an anonymous caller is UNAUTHENTICATED and nothing is written', async () => {
    const { r, changed } = await call(null);
    expectRefused(r, name, 'UNAUTHENTICATED', 'Unauthorized');
    expect(changed).toBe(false);
  });

  /** No access: the account's FORBIDDEN, or for a record addressed by id NOT_FOUND (mutations) / null (reads). */
  function expectNoAccess(r: GqlResult) {
    if (row.hidden === 'null') {
      expect(r.errors, name).toBeUndefined();
      expect(r.data[fieldOf(name)]).toBeNull();
    } else if (row.hidden === 'not-found') expectRefused(r, name, 'NOT_FOUND', 'Not found');
    else expectRefused(r, name, 'FORBIDDEN', NO_ACCESS);
  }

  it('an outsider (owner of another account) is refused alike and nothing is written', async () => {
    const { r, changed } = await call(f.acc.outsider);
    expectNoAccess(r);
    expect(changed).toBe(false);
  });

  it('a user with no account at all is refused alike and nothing is written', async () => {
    const { r, changed } = await call(f.stranger);
    expectNoAccess(r);
    expect(changed).toBe(false);
  });

  it('an account or record that does not exist gives the same answer (no existence oracle)', async () => {
    const { r } = await call(f.acc.owner, randomUUID());
    expectNoAccess(r);
  });

  const rules = scopeOf(name)!;
  if (rules.scope) {
    const scope = rules.scope;
    it(`an API key of the account with ${scope} may call it; one without it is FORBIDDEN naming the scope; another account's key is refused alike`, async () => {
      // A limit per account (the account export) is spent by the owner's call below: the key calls on an account of its own.
      const g = rules.limit?.per === 'account' ? await fixture() : f;
      const vars = await row.vars(g, g.acc.id);
      // The key also reads what it writes: what a write answers a key that may not is write-answers.test.ts's.
      const [kind, fieldName] = name.split('.') as ['Query' | 'Mutation', string];
      const reads = kind === 'Mutation' ? answerReadScope(schema.getMutationType()!.getFields()[fieldName]!) : undefined;
      const allowed = await gql(row, vars, await keyOf(g.acc.id, [scope, ...(reads ? [reads] : []), ...(row.nestedScopes ?? [])]));
      if (row.ownerRefused) expectRefused(allowed, name, row.ownerRefused);
      else expectAllowed(allowed, name, g);
      const lackingKey = await keyOf(f.acc.id, API_SCOPES.filter((s) => s !== scope));
      const otherKey = await keyOf(f.other.acc.id, API_SCOPES);
      const lackingVars = await row.vars(f, f.acc.id);
      const otherVars = await row.vars(f, f.acc.id);
      const before = await snapshot(f.acc.id);
      const lacking = await gql(row, lackingVars, lackingKey);
      expectRefused(lacking, name, 'FORBIDDEN', lacksScopeMessage(scope));
      expect(lacking.errors![0]!.extensions!.requiredScope).toBe(scope);
      expectNoAccess(await gql(row, otherVars, otherKey));
      expect(await snapshot(f.acc.id)).toBe(before);
    });
  } else {
    it('no API key may call it (it declares no scope), and nothing is written', async () => {
      const key = await keyOf(f.acc.id, API_SCOPES);
      const { r, changed } = await call(key);
      expectRefused(r, name, 'FORBIDDEN', MESSAGES.notForKeys);
      expect(changed).toBe(false);
    });
  }

  if (row.role === 'member') {
    it('a team member may call it', async () => {
      const { r, changed } = await call(f.acc.member);
      expectAllowed(r, name, f);
      void changed;
    });
  } else {
    it('a team member is FORBIDDEN (owner only) and nothing is written', async () => {
      const { r, changed } = await call(f.acc.member);
      expectRefused(r, name, 'FORBIDDEN', row.ownerOnlyMessage);
      expect(changed).toBe(false);
    });
  }

  it('the owner may call it', async () => {
    const { r } = await call(f.acc.owner);
    if (row.ownerRefused) expectRefused(r, name, row.ownerRefused);
    else expectAllowed(r, name, f);
  });

  if (row.smuggle) {
    it('ids of another account smuggled into the input are BAD_USER_INPUT "Not found in this account" and nothing is written', async () => {
      const { vars, fields } = row.smuggle!(f);
      const before = await snapshot(f.acc.id);
      const otherBefore = await snapshot(f.other.acc.id);
      const r = await gql(row, vars, f.acc.member);
      expectRefused(r, name, 'BAD_USER_INPUT', 'Invalid payload');
      expect(r.errors![0]!.extensions!.details).toEqual(Object.fromEntries(fields.map((k) => [k, [NOT_IN_ACCOUNT]])));
      expect(await snapshot(f.acc.id)).toBe(before);
      expect(await snapshot(f.other.acc.id)).toBe(otherBefore);
    });
  }
});

/**
 * The Account connections and lists (docs/decisions.md §11), reached only through Query.account:
 * each answers the owner and a member with that account's records only, and an outsider or an
 * anonymous caller gets the account's refusal, never a record.
 */
const ACCOUNT_FIELDS: Record<string, string> = {
  contacts: 'contacts { totalCount nodes { id accountId deals { nodes { id accountId } } invoices { nodes { id accountId } } submissions { nodes { id accountId } } proposals { nodes { id accountId } } contracts { nodes { id accountId } } galleries { nodes { id accountId } } bookings { nodes { id accountId } } } }',
  deals: 'deals { totalCount edges { cursor node { id accountId contact { id accountId } stage { id accountId } company { id accountId } } } }',
  companies: 'companies { totalCount nodes { id accountId contacts { nodes { id accountId linkedCompany { id accountId } } } deals { nodes { id accountId } } } }',
  invoices: 'invoices { totalCount nodes { id accountId contact { id accountId } } }',
  notes: 'notes { totalCount nodes { id accountId contact { id accountId } deal { id accountId } company { id accountId } } }',
  tasks: 'tasks { totalCount nodes { id accountId contact { id accountId } deal { id accountId } company { id accountId } } }',
  formSubmissions: 'formSubmissions { totalCount nodes { id accountId form { id accountId } contact { id accountId } } }',
  proposals: 'proposals { totalCount nodes { id accountId } }',
  contracts: 'contracts { totalCount nodes { id accountId } }',
  galleries: 'galleries { totalCount nodes { id accountId } }',
  bookings: 'bookings { totalCount nodes { id accountId } }',
  workflows: 'workflows { totalCount nodes { id accountId } }',
  exports: 'exports { totalCount nodes { id accountId userId } }',
  pipelineStages: 'pipelineStages { id accountId deals { nodes { id accountId } } }',
  leadForms: 'leadForms { id accountId submissions { nodes { id accountId } } }',
};

describe.each(Object.entries(ACCOUNT_FIELDS))('Account.%s', (field, selection) => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
    await t.db.exportLog.create({ data: { accountId: f.acc.id, userId: f.acc.owner.id, kind: 'contacts_csv' } });
    await t.db.exportLog.create({ data: { accountId: f.other.acc.id, userId: f.other.acc.owner.id, kind: 'contacts_csv' } });
    await newCompany(f);
    await newCompany({ ...f, ...f.other });
    for (const g of [f, { ...f, ...f.other }]) await Promise.all([newNote(g), newTask(g)]);
  });
  const doc = `query ($id: ID!) { account(id: $id) { id ${selection} } }`;

  it('the owner and a member see every record of the account and nothing of another', async () => {
    for (const as of [f.acc.owner, f.acc.member]) {
      const r = await t.gql(doc, { id: f.acc.id }, { as });
      expect(r.errors, field).toBeUndefined();
      expectAllowed(r, 'Query.account', f);
      const list = r.data.account[field];
      expect(Array.isArray(list) ? list.length : list.totalCount, field).toBeGreaterThan(0);
    }
  });

  it('an outsider is FORBIDDEN and an anonymous caller UNAUTHENTICATED: no record either way', async () => {
    expectRefused(await t.gql(doc, { id: f.acc.id }, { as: f.acc.outsider }), 'Query.account', 'FORBIDDEN', NO_ACCESS);
    expectRefused(await t.gql(doc, { id: f.acc.id }, { as: null }), 'Query.account', 'UNAUTHENTICATED', 'Unauthorized');
  });
});

describe('nested fields and the caller themself', () => {
  let f: Fixture;
  beforeAll(async () => void (f = await fixture()));
  const ME = 'query { me { id accounts { id members { userId user { id email } } } } }';

  it("Query.me lists only the accounts the caller owns or belongs to, so another account's members stay out of reach", async () => {
    const outsider = await t.gql(ME, {}, { as: f.acc.outsider });
    expect(outsider.errors).toBeUndefined();
    expect(outsider.data.me.accounts.map((a: { id: string }) => a.id)).not.toContain(f.acc.id);
    expect(JSON.stringify(outsider.data)).not.toContain(f.acc.member.id);
    const stranger = await t.gql(ME, {}, { as: f.stranger });
    expect(stranger.data.me.accounts).toEqual([]);
    const member = await t.gql(ME, {}, { as: f.acc.member });
    expect(member.data.me.accounts.map((a: { id: string }) => a.id)).toEqual([f.acc.id]);
  });

  it('Query.me is UNAUTHENTICATED for an anonymous caller', async () => {
    expect(codeOf(await t.gql(ME, {}, { as: null }))).toBe('UNAUTHENTICATED');
  });

  it('the database itself refuses a row that links records of two accounts (composite foreign keys)', async () => {
    const attempts = [
      t.db.deal.create({ data: { accountId: f.acc.id, title: 'Cross', contactId: f.other.contactId } }),
      t.db.deal.create({ data: { accountId: f.acc.id, title: 'Cross', stageId: f.other.stageId } }),
      t.db.invoice.create({ data: { accountId: f.acc.id, contactId: f.other.contactId, invoiceNumber: unique('X'), amount: 1, dueDate: new Date() } }),
      t.db.formSubmission.create({ data: { accountId: f.acc.id, formId: f.other.formId, data: {} } }),
    ];
    for (const attempt of attempts) await expect(attempt).rejects.toThrow();
  });

  it('Query.publicLeadForm shows nothing about the account behind the form', async () => {
    const type = schema.getType('PublicLeadForm') as unknown as { getFields(): Record<string, unknown> };
    const fieldType = schema.getType('PublicLeadFormField') as unknown as { getFields(): Record<string, unknown> };
    expect(Object.keys(type.getFields())).not.toContain('accountId');
    expect(Object.keys(fieldType.getFields())).not.toContain('mapsTo');
    const r = await t.gql('query ($id: ID!) { publicLeadForm(id: $id) { id name } }', { id: f.formId }, { as: null });
    expect(r.data.publicLeadForm).toMatchObject({ id: f.formId });
  });
});

// ---------------------------------------------------------------------------------------------
// The REST table.

/** `csv`: a CSV file as the body (the import route) instead of JSON. */
type Req = { path: string; body?: unknown; csv?: string };
type RestRow = {
  role: Role | 'public';
  request: (f: Fixture, accountId: string) => Req | Promise<Req>;
  ok: number;
  ownerOnlyMessage?: string;
  /** A record addressed by id (docs/decisions.md §12): unknown or not visible is 404 {"error":"Not found"}. */
  hidden?: true;
  /** The scopes a key also needs for the records of other kinds the answer carries (docs/decisions.md §15). */
  nestedScopes?: ApiScope[];
};

/** A route over a record of the fixture's account (fresh), or over an id nobody has. */
const restById = (base: string, make: (f: Fixture) => Promise<string>, body?: unknown): RestRow['request'] => async (f, a) => ({
  path: `${base}/${await recordOf(f, a, make)}`,
  body,
});

const REST: Record<string, RestRow> = {
  'GET /api/v1/contacts': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/contacts?account_id=${a}` }) },
  'POST /api/v1/contacts': { role: 'member', ok: 201, request: (_f, a) => ({ path: '/api/v1/contacts', body: { account_id: a, first_name: 'Matrix' } }) },
  'GET /api/v1/contacts/export': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/contacts/export?account_id=${a}` }) },
  'GET /api/v1/deals': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/deals?account_id=${a}` }) },
  'POST /api/v1/deals': {
    role: 'member',
    ok: 201,
    request: (f, a) => ({
      path: '/api/v1/deals',
      body: { account_id: a, title: 'Matrix', ...(a === f.acc.id ? { contact_id: f.contactId, stage_id: f.stageId } : {}) },
    }),
  },
  'GET /api/v1/invoices': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/invoices?account_id=${a}` }) },
  'POST /api/v1/forms/:form_id/submit': {
    role: 'public',
    ok: 200,
    request: (f) => ({ path: `/api/v1/forms/${f.formId}/submit`, body: { data: { email: `${unique('m')}@example.com` } } }),
  },
  'GET /api/v1/account/export': {
    role: 'owner',
    ok: 200,
    ownerOnlyMessage: 'Forbidden: only the account owner can export account data',
    request: (_f, a) => ({ path: `/api/v1/account/export?account_id=${a}` }),
  },
  'POST /api/v1/contacts/batch': {
    role: 'member', ok: 200, request: (_f, a) => ({ path: '/api/v1/contacts/batch', body: { account_id: a, records: [{ first_name: 'Matrix' }] } }),
  },
  'POST /api/v1/imports': { role: 'member', ok: 202, nestedScopes: ['CONTACTS_WRITE'], request: (_f, a) => ({ path: `/api/v1/imports?account_id=${a}&object=contacts`, csv: 'first_name\r\nMatrix\r\n' }) },
  'GET /api/v1/imports': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/imports?account_id=${a}` }) },
  'GET /api/v1/imports/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/imports', newImport) },
  'DELETE /api/v1/imports/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/imports', newImport) },
  'GET /api/v1/imports/:id/errors': { role: 'member', ok: 200, hidden: true, request: async (f, a) => ({ path: `/api/v1/imports/${await recordOf(f, a, newImport)}/errors` }) },
  'POST /api/v1/deals/batch': {
    role: 'member', ok: 200, request: (_f, a) => ({ path: '/api/v1/deals/batch', body: { account_id: a, mode: 'upsert', records: [{ title: 'Matrix', external_id: unique('m') }] } }),
  },
  'GET /api/v1/contacts/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/contacts', (f) => createContact(t, f.acc).then((c) => c.id)) },
  'PATCH /api/v1/contacts/:id': {
    role: 'member', ok: 200, hidden: true, request: restById('/api/v1/contacts', (f) => createContact(t, f.acc).then((c) => c.id), { company: 'Matrix' }),
  },
  'DELETE /api/v1/contacts/:id': { role: 'member', ok: 204, hidden: true, request: restById('/api/v1/contacts', (f) => createContact(t, f.acc).then((c) => c.id)) },
  'GET /api/v1/companies': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/companies?account_id=${a}` }) },
  'POST /api/v1/companies': { role: 'member', ok: 201, request: (_f, a) => ({ path: '/api/v1/companies', body: { account_id: a, name: 'Matrix' } }) },
  'POST /api/v1/companies/batch': {
    role: 'member', ok: 200, request: (_f, a) => ({ path: '/api/v1/companies/batch', body: { account_id: a, match_on: 'domain', records: [{ name: 'Matrix', domain: `${unique('m')}.example.org` }] } }),
  },
  'GET /api/v1/companies/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/companies', newCompany) },
  'PATCH /api/v1/companies/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/companies', newCompany, { name: 'Matrix' }) },
  'DELETE /api/v1/companies/:id': { role: 'member', ok: 204, hidden: true, request: restById('/api/v1/companies', newCompany) },
  'GET /api/v1/contacts/duplicates': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/contacts/duplicates?account_id=${a}` }) },
  'GET /api/v1/companies/duplicates': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/companies/duplicates?account_id=${a}` }) },
  'POST /api/v1/contacts/:id/merge': {
    role: 'member', ok: 200, hidden: true,
    request: async (f, a) => ({ path: `/api/v1/contacts/${await recordOf(f, a, newContact)}/merge`, body: { duplicate_ids: [await recordOf(f, a, newContact)] } }),
  },
  'POST /api/v1/companies/:id/merge': {
    role: 'member', ok: 200, hidden: true,
    request: async (f, a) => ({ path: `/api/v1/companies/${await recordOf(f, a, newCompany)}/merge`, body: { duplicate_ids: [await recordOf(f, a, newCompany)] } }),
  },
  // docs/trash.md: a record of the account in the trash comes back; an unknown id is 404.
  ...Object.fromEntries(([['contacts', 'Contact', newContact], ['deals', 'Deal', newDeal], ['companies', 'Company', newCompany]] as const).map(([path, type, make]) => [
    `POST /api/v1/${path}/:id/restore`,
    { role: 'member', ok: 200, hidden: true, request: async (f: Fixture, a: string) => ({ path: `/api/v1/${path}/${await recordOf(f, a, trashed(type, make))}/restore`, body: {} }) } as RestRow,
  ])),
  'GET /api/v1/notes': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/notes?account_id=${a}` }) },
  'POST /api/v1/notes': {
    role: 'member', ok: 201,
    request: (f, a) => ({ path: '/api/v1/notes', body: { account_id: a, body: 'Matrix', contact_id: a === f.acc.id ? f.contactId : null } }),
  },
  'GET /api/v1/notes/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/notes', newNote) },
  'PATCH /api/v1/notes/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/notes', newNote, { pinned: true }) },
  'DELETE /api/v1/notes/:id': { role: 'member', ok: 204, hidden: true, request: restById('/api/v1/notes', newNote) },
  'GET /api/v1/tasks': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/tasks?account_id=${a}&overdue=true` }) },
  'POST /api/v1/tasks': {
    role: 'member', ok: 201,
    request: (f, a) => ({ path: '/api/v1/tasks', body: { account_id: a, title: 'Matrix', contact_id: a === f.acc.id ? f.contactId : null } }),
  },
  'GET /api/v1/tasks/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/tasks', newTask) },
  'PATCH /api/v1/tasks/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/tasks', newTask, { title: 'Matrix' }) },
  'POST /api/v1/tasks/:id/complete': { role: 'member', ok: 200, hidden: true, request: async (f, a) => ({ path: `/api/v1/tasks/${await recordOf(f, a, newTask)}/complete`, body: {} }) },
  'POST /api/v1/tasks/:id/reopen': { role: 'member', ok: 200, hidden: true, request: async (f, a) => ({ path: `/api/v1/tasks/${await recordOf(f, a, newTask)}/reopen`, body: {} }) },
  'DELETE /api/v1/tasks/:id': { role: 'member', ok: 204, hidden: true, request: restById('/api/v1/tasks', newTask) },
  'GET /api/v1/deals/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/deals', newDeal) },
  'PATCH /api/v1/deals/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/deals', newDeal, { title: 'Matrix' }) },
  'DELETE /api/v1/deals/:id': { role: 'member', ok: 204, hidden: true, request: restById('/api/v1/deals', newDeal) },
  'GET /api/v1/invoices/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/invoices', newInvoice) },
  'GET /api/v1/reports/pipeline': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/reports/pipeline?account_id=${a}` }) },
  'GET /api/v1/reports/deals': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/reports/deals?account_id=${a}` }) },
  'GET /api/v1/reports/receivables': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/reports/receivables?account_id=${a}` }) },
  'GET /api/v1/reports/contacts': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/reports/contacts?account_id=${a}` }) },
  'GET /api/v1/reports/revenue': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/reports/revenue?account_id=${a}` }) },
  'GET /api/v1/events': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/events?account_id=${a}` }) },
  'GET /api/v1/events/:id': {
    role: 'member', ok: 200, hidden: true, nestedScopes: ['CONTACTS_READ'],
    request: async (f, a) => ({ path: `/api/v1/events/${await recordOf(f, a, newEvent)}?account_id=${a}` }),
  },
  'POST /api/v1/invoices': { role: 'member', ok: 201, request: (_f, a) => ({ path: '/api/v1/invoices', body: { account_id: a, amount: 1, due_date: '2030-06-30' } }) },
  'PATCH /api/v1/invoices/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/invoices', newInvoice, { amount: 2 }) },
  'DELETE /api/v1/invoices/:id': { role: 'member', ok: 204, hidden: true, request: restById('/api/v1/invoices', newInvoice) },
  'POST /api/v1/invoices/:id/status': {
    role: 'member', ok: 200, hidden: true,
    request: async (f, a) => ({ path: `/api/v1/invoices/${await recordOf(f, a, newInvoice)}/status`, body: { status: 'sent' } }),
  },
  'GET /api/v1/invoices/:id/pdf': { role: 'member', ok: 200, hidden: true, request: async (f, a) => ({ path: `/api/v1/invoices/${await recordOf(f, a, newInvoice)}/pdf` }) },
  'POST /api/v1/invoices/:id/send': {
    role: 'member', ok: 200, hidden: true,
    request: async (f, a) => ({ path: `/api/v1/invoices/${await recordOf(f, a, newInvoice)}/send`, body: {} }),
  },
  'GET /api/v1/invoices/:id/payments': { role: 'member', ok: 200, hidden: true, request: async (f, a) => ({ path: `/api/v1/invoices/${await recordOf(f, a, newInvoice)}/payments` }) },
  'POST /api/v1/invoices/:id/payments': {
    role: 'member', ok: 201, hidden: true,
    request: async (f, a) => ({ path: `/api/v1/invoices/${await recordOf(f, a, newSentInvoice)}/payments`, body: { amount: 1, method: 'cash' } }),
  },
  'POST /api/v1/payments/:id/refund': {
    role: 'member', ok: 200, hidden: true,
    request: async (f, a) => ({ path: `/api/v1/payments/${await recordOf(f, a, newPayment)}/refund`, body: {} }),
  },
  'GET /api/v1/workflows': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/workflows?account_id=${a}` }) },
  'POST /api/v1/workflows': { role: 'member', ok: 201, request: (_f, a) => ({ path: '/api/v1/workflows', body: { account_id: a, name: 'Matrix' } }) },
  'GET /api/v1/workflows/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/workflows', newRecord('workflow')) },
  'PATCH /api/v1/workflows/:id': { role: 'member', ok: 200, hidden: true, request: restById('/api/v1/workflows', newRecord('workflow'), { name: 'Matrix' }) },
  'DELETE /api/v1/workflows/:id': { role: 'member', ok: 204, hidden: true, request: restById('/api/v1/workflows', newRecord('workflow')) },
  'GET /api/v1/workflows/:id/runs': {
    role: 'member', ok: 200, hidden: true,
    request: async (f, a) => ({ path: `/api/v1/workflows/${await recordOf(f, a, newRecord('workflow'))}/runs` }),
  },
  'POST /api/v1/workflows/:id/test': {
    role: 'member', ok: 200, hidden: true,
    request: async (f, a) => ({ path: `/api/v1/workflows/${await recordOf(f, a, newRecord('workflow'))}/test`, body: { event_id: await newEvent(f) } }),
  },
  'GET /api/v1/custom_fields': { role: 'member', ok: 200, request: (_f, a) => ({ path: `/api/v1/custom_fields?account_id=${a}` }) },
  'POST /api/v1/custom_fields': {
    role: 'owner', ok: 201, ownerOnlyMessage: OWNER_ONLY,
    request: (_f, a) => ({ path: '/api/v1/custom_fields', body: { account_id: a, object: 'contact', key: fieldKey(), label: 'Matrix', type: 'text' } }),
  },
  'PATCH /api/v1/custom_fields/:id': { role: 'owner', ok: 200, hidden: true, ownerOnlyMessage: OWNER_ONLY, request: restById('/api/v1/custom_fields', newCustomField, { label: 'Matrix' }) },
  'GET /api/v1/webhook_endpoints': {
    role: 'owner', ok: 200, ownerOnlyMessage: OWNER_ONLY, request: (_f, a) => ({ path: `/api/v1/webhook_endpoints?account_id=${a}` }),
  },
  'POST /api/v1/webhook_endpoints': {
    role: 'owner', ok: 201, ownerOnlyMessage: OWNER_ONLY,
    request: (_f, a) => ({ path: '/api/v1/webhook_endpoints', body: { account_id: a, url: 'https://93.184.215.14/hook', event_types: ['*'] } }),
  },
  'GET /api/v1/webhook_endpoints/:id': { role: 'owner', ok: 200, hidden: true, ownerOnlyMessage: OWNER_ONLY, request: restById('/api/v1/webhook_endpoints', newEndpoint) },
  'PATCH /api/v1/webhook_endpoints/:id': {
    role: 'owner', ok: 200, hidden: true, ownerOnlyMessage: OWNER_ONLY, request: restById('/api/v1/webhook_endpoints', newEndpoint, { description: 'Matrix' }),
  },
  'DELETE /api/v1/webhook_endpoints/:id': { role: 'owner', ok: 204, hidden: true, ownerOnlyMessage: OWNER_ONLY, request: restById('/api/v1/webhook_endpoints', newEndpoint) },
  'POST /api/v1/deals/:id/status': {
    role: 'member', ok: 200, hidden: true,
    request: async (f, a) => ({ path: `/api/v1/deals/${await recordOf(f, a, newDeal)}/status`, body: { status: 'won' } }),
  },
};

describe('the REST table covers every route', () => {
  it('every route of src/rest/routes.ts has a row in the access table', () => {
    const missing = routes.map((r) => `${r.method} ${r.path}`).filter((key) => !(key in REST));
    expect(missing, 'add a row to REST in test/security/access-matrix.test.ts').toEqual([]);
    expect(Object.keys(REST).length).toBe(routes.length);
  });

  it('only the form submit is public', () => {
    const access = (r: (typeof routes)[number]) => {
      const operation = getOperationAST(r.operation)!;
      const root = operation.selectionSet.selections[0] as FieldNode;
      return rootRules(schema, operation.operation === 'mutation' ? 'mutation' : 'query', root.name.value)?.access;
    };
    expect(routes.filter((r) => access(r) === 'public').map((r) => r.path)).toEqual(['/api/v1/forms/:form_id/submit']);
    expect(Object.entries(REST).filter(([, row]) => row.role === 'public').map(([key]) => key)).toEqual(['POST /api/v1/forms/:form_id/submit']);
  });
});

describe.each(Object.entries(REST))('%s', (key, row) => {
  const method = key.split(' ')[0]!;
  let f: Fixture;
  beforeAll(async () => void (f = await fixture()));

  /** The row's request (made first: it may create the record it addresses), then a function sending it. */
  async function prepare(fx: Fixture, accountId: string) {
    const { path, body, csv } = await row.request(fx, accountId);
    return (as: TestUser | null) =>
      t.rest(method, path, csv === undefined ? { as, body, clientIp: nextIp() } : { as, rawBody: csv, headers: { 'content-type': 'text/csv' }, clientIp: nextIp() });
  }

  async function call(as: TestUser | null, accountId = f.acc.id) {
    const send = await prepare(f, accountId);
    const before = await snapshot(f.acc.id);
    const r = await send(as);
    return { r, changed: (await snapshot(f.acc.id)) !== before };
  }

  if (row.role === 'public') {
    it('anyone may call it: anonymous, an outsider, a user with no account, a member, the owner', async () => {
      for (const as of [null, f.acc.outsider, f.stranger, f.acc.member, f.acc.owner]) {
        const { r } = await call(as);
        expect(r.status, r.text).toBe(row.ok);
      }
    });
    return;
  }

  it('an anonymous caller gets 401 {"error":"Unauthorized"} and nothing is written', async () => {
    const { r, changed } = await call(null);
    expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: { error: 'Unauthorized' } });
    expect(changed).toBe(false);
  });

  const refused = row.hidden ? { status: 404, body: { error: 'Not found' } } : { status: 403, body: { error: NO_ACCESS } };

  it(`an outsider gets ${refused.status} ${JSON.stringify(refused.body)} and nothing is written`, async () => {
    const { r, changed } = await call(f.acc.outsider);
    expect({ status: r.status, body: r.body }).toEqual(refused);
    expect(changed).toBe(false);
  });

  it(`a user with no account gets the same ${refused.status} and nothing is written`, async () => {
    const { r, changed } = await call(f.stranger);
    expect({ status: r.status, body: r.body }).toEqual(refused);
    expect(changed).toBe(false);
  });

  it(`an account or record that does not exist gives the same ${refused.status} (no existence oracle)`, async () => {
    const { r } = await call(f.acc.owner, randomUUID());
    expect({ status: r.status, body: r.body }).toEqual(refused);
  });

  const operation = getOperationAST(routes.find((r) => `${r.method} ${r.path}` === key)!.operation)!;
  const rules = rootRules(schema, operation.operation === 'mutation' ? 'mutation' : 'query', (operation.selectionSet.selections[0] as FieldNode).name.value)!;

  if (!rules.scope) {
    it('no API key may call it, whatever its scopes: 403 saying it needs a session token, and nothing is written', async () => {
      const { r, changed } = await call(await keyOf(f.acc.id, API_SCOPES));
      expect({ status: r.status, body: r.body }).toEqual({ status: 403, body: { error: MESSAGES.notForKeys } });
      expect(changed).toBe(false);
    });
  } else it('an API key of the account gets the same answer with the route\'s scope, and 403 naming the scope without it', async () => {
    const g = rules.limit?.per === 'account' ? await fixture() : f; // the owner's call below spends the account's budget
    const allowed = await (await prepare(g, g.acc.id))(await keyOf(g.acc.id, [rules.scope!, ...(row.nestedScopes ?? [])]));
    expect(allowed.status, allowed.text).toBe(row.ok);
    const lackingKey = await keyOf(f.acc.id, API_SCOPES.filter((s) => s !== rules.scope));
    const { r, changed } = await call(lackingKey);
    expect({ status: r.status, body: r.body }).toEqual({ status: 403, body: { error: lacksScopeMessage(rules.scope!) } });
    expect(changed).toBe(false);
    const other = await call(await keyOf(f.other.acc.id, API_SCOPES));
    expect({ status: other.r.status, body: other.r.body }).toEqual(refused);
  });

  if (row.role === 'member') {
    it(`a team member gets ${row.ok}`, async () => {
      const { r } = await call(f.acc.member);
      expect(r.status, r.text).toBe(row.ok);
    });
  } else {
    it('a team member gets the owner-only 403 and nothing is written', async () => {
      const { r, changed } = await call(f.acc.member);
      expect({ status: r.status, body: r.body }).toEqual({ status: 403, body: { error: row.ownerOnlyMessage } });
      expect(changed).toBe(false);
    });
  }

  it(`the owner gets ${row.ok}, and nothing of another account is in the answer`, async () => {
    const { r } = await call(f.acc.owner);
    expect(r.status, r.text).toBe(row.ok);
    for (const foreign of [f.other.acc.id, f.other.contactId, f.other.stageId, f.other.dealId, f.other.invoiceId]) {
      expect(r.text).not.toContain(foreign);
    }
  });
});

describe('ids smuggled in REST bodies', () => {
  let f: Fixture;
  beforeAll(async () => void (f = await fixture()));

  const post = (body: Record<string, unknown>) => t.rest('POST', '/api/v1/deals', { as: f.acc.member, body, clientIp: nextIp() });

  it.each([
    ['contact_id', (x: Fixture) => ({ contact_id: x.other.contactId })],
    ['stage_id', (x: Fixture) => ({ stage_id: x.other.stageId })],
  ])('POST /api/v1/deals with another account\'s %s is a 400 "Not found in this account" and nothing is written', async (field, ids) => {
    const before = [await snapshot(f.acc.id), await snapshot(f.other.acc.id)];
    const r = await post({ account_id: f.acc.id, title: 'Smuggled', ...ids(f) });
    expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { error: 'Invalid payload', details: { [field]: [NOT_IN_ACCOUNT] } } });
    expect([await snapshot(f.acc.id), await snapshot(f.other.acc.id)]).toEqual(before);
  });

  it('both smuggled at once are both named', async () => {
    const r = await post({ account_id: f.acc.id, title: 'Smuggled', contact_id: f.other.contactId, stage_id: f.other.stageId });
    expect(r.body.details).toEqual({ contact_id: [NOT_IN_ACCOUNT], stage_id: [NOT_IN_ACCOUNT] });
  });

  it('an id that exists nowhere reads the same as another account\'s (no oracle)', async () => {
    const r = await post({ account_id: f.acc.id, title: 'Nowhere', contact_id: randomUUID(), stage_id: randomUUID() });
    expect(r.body.details).toEqual({ contact_id: [NOT_IN_ACCOUNT], stage_id: [NOT_IN_ACCOUNT] });
  });

  it('an outsider probing ids of the account learns nothing: 403 before any check of contact_id, and nothing is written', async () => {
    const before = await snapshot(f.acc.id);
    const r = await t.rest('POST', '/api/v1/deals', {
      as: f.acc.outsider,
      body: { account_id: f.acc.id, title: 'Probe', contact_id: randomUUID() },
      clientIp: nextIp(),
    });
    expect({ status: r.status, body: r.body }).toEqual({ status: 403, body: { error: NO_ACCESS } });
    expect(await snapshot(f.acc.id)).toBe(before);
  });

  it('a member of two accounts cannot link records across them either', async () => {
    await t.db.teamMember.create({ data: { accountId: f.other.acc.id, userId: f.acc.member.id } });
    const r = await post({ account_id: f.acc.id, title: 'Bridge', contact_id: f.other.contactId });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual({ contact_id: [NOT_IN_ACCOUNT] });
  });
});

describe('object properties (OWASP API3): no mass assignment, no extra data', () => {
  let f: Fixture;
  beforeAll(async () => void (f = await fixture()));

  it.each([
    ['POST /api/v1/contacts', '/api/v1/contacts', { first_name: 'Mass', id: randomUUID(), created_at: '2000-01-01T00:00:00Z', accountId: randomUUID() }, ['id', 'created_at', 'accountId']],
    ['POST /api/v1/deals', '/api/v1/deals', { title: 'Mass', status: 'won', closed_at: '2000-01-01T00:00:00Z' }, ['status', 'closed_at']],
  ])('%s refuses fields the contract does not accept, each named "Unknown field", and writes nothing', async (_name, path, extra, fields) => {
    const before = await snapshot(f.acc.id);
    const r = await t.rest('POST', path, { as: f.acc.owner, body: { account_id: f.acc.id, ...extra }, clientIp: nextIp() });
    expect(r.status).toBe(400);
    for (const field of fields) expect(r.body.details[field]).toEqual(['Unknown field']);
    expect(await snapshot(f.acc.id)).toBe(before);
  });

  it('the form submit refuses an account_id or contact_id in its body', async () => {
    const r = await t.rest('POST', `/api/v1/forms/${f.formId}/submit`, {
      body: { data: { email: 'a@example.com' }, account_id: f.other.acc.id, contact_id: f.other.contactId },
      clientIp: nextIp(),
    });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual({ account_id: ['Unknown field'], contact_id: ['Unknown field'] });
  });

  it('a new invoice cannot be created already paid (state only moves through setInvoiceStatus)', async () => {
    const r = await t.gql(
      'mutation ($input: CreateInvoiceInput!) { createInvoice(input: $input) { id } }',
      { input: { accountId: f.acc.id, amount: 1, dueDate: '2030-01-01', status: 'paid' } },
      { as: f.acc.owner },
    );
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(Object.keys(r.errors![0]!.extensions!.details!)).toEqual(['status']);
  });

  it('REST list items carry exactly the contract\'s fields (and external_id, docs/decisions.md §16; updated_at, §24)', async () => {
    const contacts = await t.rest('GET', `/api/v1/contacts?account_id=${f.acc.id}`, { as: f.acc.owner });
    expect(Object.keys(contacts.body.data[0]).sort()).toEqual(
      // docs/decisions.md §21: company_id and owner_id.
      ['company', 'company_id', 'contact_type', 'created_at', 'custom_fields', 'email', 'external_id', 'first_name', 'id', 'last_name', 'owner_id', 'phone', 'source', 'updated_at'],
    );
    const deals = await t.rest('GET', `/api/v1/deals?account_id=${f.acc.id}`, { as: f.acc.owner });
    expect(Object.keys(deals.body.data[0]).sort()).toEqual(
      ['company_id', 'contacts', 'custom_fields', 'expected_close_date', 'external_id', 'id', 'owner_id', 'pipeline_stages', 'probability', 'status', 'title', 'updated_at', 'value'],
    );
    expect(Object.keys(deals.body.data[0].contacts).sort()).toEqual(['first_name', 'id', 'last_name']);
    const invoices = await t.rest('GET', `/api/v1/invoices?account_id=${f.acc.id}`, { as: f.acc.owner });
    // docs/decisions.md §20: list items gain currency and amount_due.
    expect(Object.keys(invoices.body.data[0]).sort()).toEqual(['amount', 'amount_due', 'contacts', 'created_at', 'currency', 'custom_fields', 'due_date', 'external_id', 'id', 'invoice_number', 'status', 'updated_at']);
  });
});

describe('exports hold only the account\'s own data', () => {
  let f: Fixture;
  beforeAll(async () => void (f = await fixture()));

  it('the contacts CSV of a member holds none of another account\'s contacts', async () => {
    const foreign = await t.db.contact.findUniqueOrThrow({ where: { id: f.other.contactId } });
    const own = await t.db.contact.findUniqueOrThrow({ where: { id: f.contactId } });
    const r = await t.rest('GET', `/api/v1/contacts/export?account_id=${f.acc.id}`, { as: f.acc.member });
    expect(r.status).toBe(200);
    expect(r.text).toContain(own.email!);
    expect(r.text).not.toContain(foreign.email!);
  });

  it('the account export of the owner names no id of another account', async () => {
    const r = await t.rest('GET', `/api/v1/account/export?account_id=${f.acc.id}`, { as: f.acc.owner });
    expect(r.status).toBe(200);
    expect(r.text).toContain(f.contactId);
    for (const foreign of [f.other.acc.id, f.other.contactId, f.other.stageId, f.other.dealId, f.other.invoiceId, f.other.formId, f.acc.outsider.id]) {
      expect(r.text).not.toContain(foreign);
    }
  });
});
