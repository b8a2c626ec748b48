import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type GqlResult, type TestApp, type TestUser } from '../helpers/app.js';

const PROPOSAL = `mutation ($input: CreateProposalInput!) {
  createProposal(input: $input) { id accountId title amount contact { id firstName } createdAt } }`;
const CONTRACT = `mutation ($input: CreateContractInput!) {
  createContract(input: $input) { id accountId title contact { id } createdAt } }`;
const GALLERY = `mutation ($input: CreateGalleryInput!) {
  createGallery(input: $input) { id accountId title contact { id } createdAt } }`;
const BOOKING = `mutation ($input: CreateBookingInput!) {
  createBooking(input: $input) { id accountId title startsAt endsAt contact { id } createdAt } }`;
const WORKFLOW = `mutation ($input: CreateWorkflowInput!) {
  createWorkflow(input: $input) { id accountId name active createdAt } }`;

const START = '2030-05-01T09:00:00.000Z';
const END = '2030-05-01T10:30:00.000Z';

/** Each mutation with the least valid input, for the access matrix. */
const MUTATIONS = [
  { field: 'createProposal', doc: PROPOSAL, input: (accountId: string) => ({ accountId, title: unique('Proposal') }) },
  { field: 'createContract', doc: CONTRACT, input: (accountId: string) => ({ accountId, title: unique('Contract') }) },
  { field: 'createGallery', doc: GALLERY, input: (accountId: string) => ({ accountId, title: unique('Gallery') }) },
  {
    field: 'createBooking',
    doc: BOOKING,
    input: (accountId: string) => ({ accountId, title: unique('Booking'), startsAt: START, endsAt: END }),
  },
  { field: 'createWorkflow', doc: WORKFLOW, input: (accountId: string) => ({ accountId, name: unique('Workflow') }) },
] as const;

let t: TestApp;
let acc: TestAccount;
let other: TestAccount;

const codeOf = (r: GqlResult) => r.errors?.[0]?.extensions?.code;
const detailsOf = (r: GqlResult) => r.errors?.[0]?.extensions?.details;
const call = (doc: string, input: Record<string, unknown>, as: TestUser | null = acc.member) => t.gql(doc, { input }, { as });

beforeAll(async () => {
  t = await createTestApp();
  [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
});
afterAll(() => t.close());

describe('record access (owner, member, outsider, anonymous)', () => {
  describe.each(MUTATIONS)('$field', ({ field, doc, input }) => {
    it('the owner can create one', async () => {
      const r = await call(doc, input(acc.id), acc.owner);
      expect(r.errors).toBeUndefined();
      expect(r.data[field].accountId).toBe(acc.id);
    });

    it('a member can create one', async () => {
      const r = await call(doc, input(acc.id), acc.member);
      expect(r.errors).toBeUndefined();
      expect(r.data[field]).toMatchObject({ accountId: acc.id, id: expect.any(String) });
    });

    it('an outsider is FORBIDDEN and nothing is written', async () => {
      const r = await call(doc, input(acc.id), acc.outsider);
      expect(codeOf(r)).toBe('FORBIDDEN');
      expect(r.errors?.[0]?.message).toBe('Forbidden: no access to this account');
      expect(Object.values(r.data ?? {})).toEqual([null]); // the refused root field is null (decisions §9 amended)
    });

    it('an unknown account is the same FORBIDDEN (no existence oracle)', async () => {
      const r = await call(doc, input(randomUUID()), acc.member);
      expect(codeOf(r)).toBe('FORBIDDEN');
      expect(r.errors?.[0]?.message).toBe('Forbidden: no access to this account');
    });

    it('an anonymous caller is UNAUTHENTICATED', async () => {
      const r = await call(doc, input(acc.id), null);
      expect(codeOf(r)).toBe('UNAUTHENTICATED');
    });

    it('an account id that is not a UUID is a BAD_USER_INPUT on accountId', async () => {
      const r = await call(doc, input('nope'), acc.member);
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(detailsOf(r)).toEqual({ accountId: ['Must be a UUID'] });
    });
  });
});

describe('createProposal', () => {
  it('a proposal keeps its title, amount and contact', async () => {
    const contact = await createContact(t, acc, { firstName: 'Ada' });
    const r = await call(PROPOSAL, { accountId: acc.id, title: '  Wedding package  ', amount: 1234.5, contactId: contact.id });
    expect(r.errors).toBeUndefined();
    expect(r.data.createProposal).toMatchObject({
      title: 'Wedding package',
      amount: 1234.5,
      contact: { id: contact.id, firstName: 'Ada' },
    });
    expect(r.data.createProposal.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const row = await t.db.proposal.findUniqueOrThrow({ where: { id: r.data.createProposal.id } });
    expect(row.amount?.toString()).toBe('1234.5');
  });

  it('amount and contact are optional and come back null', async () => {
    const r = await call(PROPOSAL, { accountId: acc.id, title: unique('P') });
    expect(r.errors).toBeUndefined();
    expect(r.data.createProposal).toMatchObject({ amount: null, contact: null });
  });

  it.each([
    [12.345, 'Must have at most two decimals'],
    [-1, 'Must be from 0 to 9999999999.99'],
    [10_000_000_000, 'Must be from 0 to 9999999999.99'],
  ])('amount %s is a BAD_USER_INPUT on amount', async (amount, message) => {
    const r = await call(PROPOSAL, { accountId: acc.id, title: unique('P'), amount });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(detailsOf(r)).toEqual({ amount: [message] });
  });

  it('a blank title is Required; a title over 200 characters is refused', async () => {
    const blank = await call(PROPOSAL, { accountId: acc.id, title: '   ' });
    expect(detailsOf(blank)).toEqual({ title: ['Required'] });
    const long = await call(PROPOSAL, { accountId: acc.id, title: 'x'.repeat(201) });
    expect(detailsOf(long)).toEqual({ title: ['Must be at most 200 characters'] });
    const max = await call(PROPOSAL, { accountId: acc.id, title: 'x'.repeat(200) });
    expect(max.errors).toBeUndefined();
  });
});

describe('contact of the same account', () => {
  describe.each([
    ['createProposal', PROPOSAL],
    ['createContract', CONTRACT],
    ['createGallery', GALLERY],
    ['createBooking', BOOKING],
  ] as const)('%s', (field, doc) => {
    const base = () => ({ accountId: acc.id, title: unique('T'), ...(field === 'createBooking' ? { startsAt: START, endsAt: END } : {}) });

    it('links a contact of the same account', async () => {
      const contact = await createContact(t, acc);
      const r = await call(doc, { ...base(), contactId: contact.id });
      expect(r.errors).toBeUndefined();
      expect(r.data[field].contact).toMatchObject({ id: contact.id });
    });

    it("another account's contact is Not found in this account", async () => {
      const foreign = await createContact(t, other);
      const r = await call(doc, { ...base(), contactId: foreign.id });
      expect(codeOf(r)).toBe('BAD_USER_INPUT');
      expect(detailsOf(r)).toEqual({ contactId: ['Not found in this account'] });
    });

    it('an unknown contact id is Not found in this account', async () => {
      const r = await call(doc, { ...base(), contactId: randomUUID() });
      expect(detailsOf(r)).toEqual({ contactId: ['Not found in this account'] });
    });

    it('a contact id that is not a UUID is refused on contactId', async () => {
      const r = await call(doc, { ...base(), contactId: 'abc' });
      expect(detailsOf(r)).toEqual({ contactId: ['Must be a UUID'] });
    });
  });

  it('an outsider naming a foreign contact learns only FORBIDDEN (the contact is checked after access)', async () => {
    const contact = await createContact(t, acc);
    const r = await call(CONTRACT, { accountId: acc.id, title: 'x', contactId: randomUUID() }, acc.outsider);
    expect(codeOf(r)).toBe('FORBIDDEN');
    const own = await call(CONTRACT, { accountId: acc.id, title: 'x', contactId: contact.id }, acc.outsider);
    expect(codeOf(own)).toBe('FORBIDDEN');
  });
});

describe('createContract and createGallery', () => {
  it('a contract and a gallery are created with a title', async () => {
    const c = await call(CONTRACT, { accountId: acc.id, title: 'Service agreement' });
    expect(c.data.createContract).toMatchObject({ title: 'Service agreement', contact: null });
    const g = await call(GALLERY, { accountId: acc.id, title: 'Summer shoot' });
    expect(g.data.createGallery).toMatchObject({ title: 'Summer shoot', contact: null });
  });

  it('a contract or gallery without a title is Required', async () => {
    expect(detailsOf(await call(CONTRACT, { accountId: acc.id, title: '' }))).toEqual({ title: ['Required'] });
    expect(detailsOf(await call(GALLERY, { accountId: acc.id, title: ' ' }))).toEqual({ title: ['Required'] });
  });
});

describe('createBooking', () => {
  it('a booking keeps its start and end in UTC', async () => {
    const r = await call(BOOKING, { accountId: acc.id, title: 'Shoot', startsAt: '2030-05-01T11:00:00+02:00', endsAt: END });
    expect(r.errors).toBeUndefined();
    expect(r.data.createBooking).toMatchObject({ startsAt: START, endsAt: END });
  });

  it.each([
    ['equal to', START],
    ['before', '2030-05-01T08:59:59.999Z'],
  ])('endsAt %s startsAt is refused: Must be after startsAt', async (_how, endsAt) => {
    const r = await call(BOOKING, { accountId: acc.id, title: 'Shoot', startsAt: START, endsAt });
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(detailsOf(r)).toEqual({ endsAt: ['Must be after startsAt'] });
  });

  it('a timestamp without a time zone is refused', async () => {
    const r = await call(BOOKING, { accountId: acc.id, title: 'Shoot', startsAt: '2030-05-01T09:00:00', endsAt: END });
    expect(Object.values(r.errors?.[0]?.extensions?.details ?? {}).flat().join('\n')).toMatch(/ISO 8601/);
  });
});

describe('createWorkflow', () => {
  it('a workflow is active unless told otherwise', async () => {
    const on = await call(WORKFLOW, { accountId: acc.id, name: 'Onboarding' });
    expect(on.data.createWorkflow).toMatchObject({ name: 'Onboarding', active: true });
    const off = await call(WORKFLOW, { accountId: acc.id, name: 'Paused', active: false });
    expect(off.data.createWorkflow).toMatchObject({ active: false });
  });

  it('a workflow needs a name of at most 200 characters', async () => {
    expect(detailsOf(await call(WORKFLOW, { accountId: acc.id, name: '  ' }))).toEqual({ name: ['Required'] });
    expect(detailsOf(await call(WORKFLOW, { accountId: acc.id, name: 'n'.repeat(201) }))).toEqual({
      name: ['Must be at most 200 characters'],
    });
  });
});
