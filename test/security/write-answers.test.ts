/**
 * A write answers only what its caller may read (docs/decisions.md §26, OWASP API3): an API key
 * that may write a kind of record but not read it gets, from every write, the record's id, its
 * status where it has one, `updated_at`, and the fields it sent; nothing else. Through REST (the
 * answer holds only those keys, and the OpenAPI document describes it: t.rest checks every answer)
 * and GraphQL (each other field selected is a FORBIDDEN error at its path; the write stands).
 * A key holding the read scope too gets the whole record: the same calls, compared.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type GqlResult, type RestResult, type TestApp, type TestUser } from '../helpers/app.js';

let t: TestApp;
let acc: TestAccount;
let ids: { contact: string; deal: string; company: string; note: string; task: string; invoice: string };
const keys: Record<string, { writeOnly: TestUser; readWrite: TestUser }> = {};

beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  const contact = await createContact(t, acc, { email: 'ada@example.com', phone: '+44 20 7946 0000', company: 'Analytical Engines' } as never);
  const company = await t.db.company.create({ data: { accountId: acc.id, name: unique('Engines'), domain: `${unique('engines')}.example` } });
  const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Difference engine', value: 12_000, contactId: contact.id } });
  const note = await t.db.note.create({ data: { accountId: acc.id, body: 'Prefers calls after noon', contactId: contact.id } });
  const task = await t.db.task.create({ data: { accountId: acc.id, title: 'Call Ada back', contactId: contact.id } });
  const invoice = await t.rest('POST', '/api/v1/invoices', {
    as: acc.owner,
    body: { account_id: acc.id, contact_id: contact.id, due_date: '2030-06-30', lines: [{ description: 'Engine design', quantity: 2, unit_price: 500 }], memo: 'Wire to IBAN GB00 0000' },
  });
  expect(invoice.status).toBe(201);
  expect((await t.rest('POST', `/api/v1/invoices/${invoice.body.data.id}/send`, { as: acc.owner, body: {} })).status).toBe(200);
  ids = { contact: contact.id, deal: deal.id, company: company.id, note: note.id, task: task.id, invoice: invoice.body.data.id };
  for (const kind of ['CONTACTS', 'DEALS', 'COMPANIES', 'ACTIVITIES', 'INVOICES']) {
    keys[kind] = {
      writeOnly: await createApiKey(t, acc, [`${kind}_WRITE`]),
      readWrite: await createApiKey(t, acc, [`${kind}_WRITE`, `${kind}_READ`]),
    };
  }
});
afterAll(() => t?.close());

/** The REST answer's record keys, which must be among `allowed`; and those the read-write key sees beside them. */
function expectOnly(r: RestResult, allowed: string[]) {
  expect(r.status, r.text).toBeLessThan(300);
  expect(Object.keys(r.body.data).sort()).toEqual(expect.arrayContaining(['id']));
  expect(Object.keys(r.body.data).filter((k) => !allowed.includes(k)), r.text).toEqual([]);
}

/** The GraphQL answer: the record's id is there, each field in `refused` a FORBIDDEN error at its path. */
function expectRefused(r: GqlResult, field: string, refused: string[]) {
  expect(r.data?.[field]?.id, JSON.stringify(r)).toBeTruthy();
  const paths = (r.errors ?? []).map((e) => ({ path: (e.path ?? []).join('.'), code: e.extensions?.code }));
  expect(paths).toEqual(expect.arrayContaining(refused.map((name) => ({ path: `${field}.${name}`, code: 'FORBIDDEN' }))));
  for (const name of refused) expect(r.data[field][name]).toBeNull();
}

type RestCase = { name: string; kind: string; call: (as: TestUser) => Promise<RestResult>; allowed: string[]; secret: string };

const restCases = (): RestCase[] => [
  {
    name: 'PATCH /contacts/{id} answers the contact type it sent, not the e-mail, phone or company',
    kind: 'CONTACTS', allowed: ['id', 'updated_at', 'contact_type'], secret: 'email',
    call: (as) => t.rest('PATCH', `/api/v1/contacts/${ids.contact}`, { as, body: { contact_type: 'lead' } }),
  },
  {
    name: 'POST /contacts answers what it sent and the new id',
    kind: 'CONTACTS', allowed: ['id', 'first_name', 'account_id'], secret: 'contact_type',
    call: (as) => t.rest('POST', '/api/v1/contacts', { as, body: { account_id: acc.id, first_name: unique('Grace') } }),
  },
  {
    name: 'PATCH /deals/{id} answers the probability it sent, not the value or contact',
    kind: 'DEALS', allowed: ['id', 'status', 'updated_at', 'probability'], secret: 'value',
    call: (as) => t.rest('PATCH', `/api/v1/deals/${ids.deal}`, { as, body: { probability: 40 } }),
  },
  {
    name: 'POST /deals/{id}/status answers the status, not the deal',
    kind: 'DEALS', allowed: ['id', 'status', 'updated_at'], secret: 'title',
    // won, then open again: each call a move the state machine allows
    call: async (as) => t.rest('POST', `/api/v1/deals/${ids.deal}/status`, { as, body: { status: (await t.db.deal.findUniqueOrThrow({ where: { id: ids.deal } })).status === 'open' ? 'won' : 'open' } }),
  },
  {
    name: 'PATCH /companies/{id} answers the industry it sent, not the name or domain',
    kind: 'COMPANIES', allowed: ['id', 'updated_at', 'industry'], secret: 'domain',
    call: (as) => t.rest('PATCH', `/api/v1/companies/${ids.company}`, { as, body: { industry: 'Machinery' } }),
  },
  {
    name: 'PATCH /notes/{id} answers pinned, not the body',
    kind: 'ACTIVITIES', allowed: ['id', 'updated_at', 'pinned'], secret: 'body',
    call: (as) => t.rest('PATCH', `/api/v1/notes/${ids.note}`, { as, body: { pinned: false } }),
  },
  {
    name: 'POST /tasks/{id}/complete answers the status, not the title',
    kind: 'ACTIVITIES', allowed: ['id', 'status', 'updated_at'], secret: 'title',
    call: (as) => t.rest('POST', `/api/v1/tasks/${ids.task}/complete`, { as, body: {} }),
  },
  {
    name: 'POST /invoices/{id}/send on a sent invoice answers its status, not hosted_url',
    kind: 'INVOICES', allowed: ['id', 'status', 'updated_at'], secret: 'hosted_url',
    call: (as) => t.rest('POST', `/api/v1/invoices/${ids.invoice}/send`, { as, body: {} }),
  },
  {
    name: 'POST /invoices/{id}/payments answers the payment it sent, not the invoice',
    kind: 'INVOICES', allowed: ['id', 'status', 'updated_at', 'amount', 'method'], secret: 'currency',
    call: (as) => t.rest('POST', `/api/v1/invoices/${ids.invoice}/payments`, { as, body: { amount: 1, method: 'cash' } }),
  },
];

describe('REST: a write-only key reads back only what it wrote (docs/decisions.md §26)', () => {
  for (const c of restCases()) {
    it(c.name, async () => {
      const { writeOnly, readWrite } = keys[c.kind]!;
      expectOnly(await c.call(writeOnly), c.allowed);
      // The same write by a key that may read the record answers the whole of it.
      const whole = await c.call(readWrite);
      expect(whole.status, whole.text).toBeLessThan(300);
      expect(whole.body.data).toHaveProperty(c.secret);
    });
  }

  it('a write-only key still gets the 400 naming every failing field (nothing of the record)', async () => {
    const r = await t.rest('PATCH', `/api/v1/deals/${ids.deal}`, { as: keys.DEALS!.writeOnly, body: { probability: 140 } });
    expect([r.status, Object.keys(r.body.details ?? {})]).toEqual([400, ['probability']]);
  });
});

describe('GraphQL: each field a write-only key did not send is FORBIDDEN at its path; the write stands', () => {
  it('updateContact { email phone company } refuses them, answers id and contactType', async () => {
    const r = await t.gql(
      'mutation ($id: ID!) { updateContact(id: $id, input: { contactType: client }) { id contactType updatedAt email phone company } }',
      { id: ids.contact }, { as: keys.CONTACTS!.writeOnly },
    );
    expectRefused(r, 'updateContact', ['email', 'phone', 'company']);
    expect(r.data.updateContact.contactType).toBe('client');
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: ids.contact } })).contactType).toBe('client');
  });

  it('updateDeal { contact closedAt } refuses them', async () => {
    const r = await t.gql('mutation ($id: ID!) { updateDeal(id: $id, input: { probability: 55 }) { id probability closedAt contact { id } } }', { id: ids.deal }, { as: keys.DEALS!.writeOnly });
    expectRefused(r, 'updateDeal', ['closedAt', 'contact']);
    expect(r.data.updateDeal.probability).toBe(55);
  });

  it('updateCompany { domain } refuses it', async () => {
    const r = await t.gql('mutation ($id: ID!) { updateCompany(id: $id, input: { industry: "Looms" }) { id industry domain } }', { id: ids.company }, { as: keys.COMPANIES!.writeOnly });
    expectRefused(r, 'updateCompany', ['domain']);
  });

  it('updateNote { contactId contact } refuses them', async () => {
    const r = await t.gql('mutation ($id: ID!) { updateNote(id: $id, input: { pinned: false }) { id pinned contactId contact { id } } }', { id: ids.note }, { as: keys.ACTIVITIES!.writeOnly });
    expectRefused(r, 'updateNote', ['contactId', 'contact']);
  });

  it('a refused non-null field nulls the answer, as GraphQL does, and the write still stands', async () => {
    const r = await t.gql('mutation ($id: ID!) { updateNote(id: $id, input: { pinned: true }) { id body } }', { id: ids.note }, { as: keys.ACTIVITIES!.writeOnly });
    expect(r.data.updateNote).toBeNull();
    expect(r.errors?.map((e) => [e.path?.join('.'), e.extensions?.code])).toEqual([['updateNote.body', 'FORBIDDEN']]);
    expect((await t.db.note.findUniqueOrThrow({ where: { id: ids.note } })).pinned).toBe(true);
  });

  it('sendInvoice { hostedUrl memo } refuses them', async () => {
    const r = await t.gql('mutation ($id: ID!) { sendInvoice(id: $id) { id status hostedUrl memo } }', { id: ids.invoice }, { as: keys.INVOICES!.writeOnly });
    expectRefused(r, 'sendInvoice', ['hostedUrl', 'memo']);
    expect(r.data.sendInvoice.status).toBeTruthy();
  });

  it('a key that may read contacts reads the whole answer', async () => {
    const r = await t.gql('mutation ($id: ID!) { updateContact(id: $id, input: { contactType: lead }) { id email } }', { id: ids.contact }, { as: keys.CONTACTS!.readWrite });
    expect(r.errors).toBeUndefined();
    expect(r.data.updateContact.email).toBe('ada@example.com');
  });
});
