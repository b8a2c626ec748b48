import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §11: relations both ways, reads by id, FormSubmission, and no N+1.

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

// The embedded database runs in this process: a long seed keeps the event loop busy past the
// server's keep-alive timeout, and the next request may meet a socket the server just closed
// (ECONNRESET). One throwaway request after a seed lets the client drop that socket.
const settle = () => t.gql('{ __typename }').catch(() => undefined);

/** Counts the SQL statements sent while `work` runs, on PostgreSQL (pg) or the embedded PGlite. */
async function statements(work: () => Promise<unknown>): Promise<number> {
  let n = 0;
  const owner = (proto: object, name: string): any => {
    for (let p: any = proto; p; p = Object.getPrototypeOf(p)) if (Object.prototype.hasOwnProperty.call(p, name)) return p;
    throw new Error(`no ${name}`);
  };
  const targets = [owner(pg.Client.prototype, 'query'), owner(PGlite.prototype, 'query')];
  const originals = targets.map((p) => p.query);
  targets.forEach((p, i) => {
    p.query = function (this: unknown, ...args: unknown[]) {
      n += 1;
      return originals[i].apply(this, args);
    };
  });
  try {
    await work();
  } finally {
    targets.forEach((p, i) => (p.query = originals[i]));
  }
  return n;
}

describe('no N+1: a page of contacts with their deals and the deals\' stages', () => {
  let acc: TestAccount;
  beforeAll(async () => {
    acc = await createAccount(t);
    const stages = await Promise.all([0, 1, 2].map((i) => t.db.pipelineStage.create({ data: { accountId: acc.id, name: `s${i}`, position: i } })));
    for (let i = 0; i < 100; i++) {
      const contact = await createContact(t, acc);
      await t.db.deal.createMany({
        data: Array.from({ length: 12 }, (_, j) => ({ accountId: acc.id, contactId: contact.id, stageId: stages[j % 3]!.id, title: `d${i}-${j}` })),
      });
    }
    await settle();
  });

  const DOC = /* GraphQL */ `
    query ($id: ID!, $n: Int!) {
      account(id: $id) {
        contacts(first: $n) {
          totalCount
          nodes { id deals(first: 10) { totalCount nodes { id title stage { id name } contact { id } } } }
        }
      }
    }
  `;
  const run = async (n: number) => {
    const r = await t.gql(DOC, { id: acc.id, n }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    const contacts = r.data.account.contacts.nodes;
    expect(contacts).toHaveLength(n);
    for (const c of contacts) {
      expect(c.deals.totalCount).toBe(12);
      expect(c.deals.nodes).toHaveLength(10);
      for (const d of c.deals.nodes) expect(d.stage.id && d.contact.id).toBe(c.id);
    }
  };

  test('a field that asks for its list after the list was read (a deferred fragment) gets a statement of its own: never a total of 0', async () => {
    const { contacts } = await import('../../src/contacts/contact-reads.schema.js');
    const { planOf, sliceOf } = await import('../../src/graphql/list.js');
    const ctx = { state: {}, db: t.db, reader: { $replica: () => t.db } } as never;
    const account = { accountId: acc.id, id: acc.id };
    const plan = planOf(contacts, null, account, { filter: null, order: { field: 'CREATED_AT', direction: 'DESC' }, size: 5, cursorKey: Buffer.alloc(32) });
    const first = await sliceOf(ctx, plan, account, { nodes: {} });
    expect(first.rows).toHaveLength(5);
    expect((await sliceOf(ctx, plan, account, { total: true })).total).toBe(100);
  });

  test('100 contacts with their first 10 deals and stages cost the same statements as 10 contacts', async () => {
    await run(5); // warm-up: the caller's first sighting and the catalogue lookups are one-off
    const ten = await statements(() => run(10));
    const hundred = await statements(() => run(100));
    expect(hundred).toBe(ten);
    // Counted for real (role, account, two pages with rows and totals, stages, contacts), and bounded.
    expect(ten).toBeGreaterThan(5);
    expect(ten).toBeLessThanOrEqual(12);
  });
});

describe('rows asked for their cursors only', () => {
  test("a connection read by id answers pageInfo (endCursor) in its one list statement, reading no node", async () => {
    const acc = await createAccount(t);
    const contact = await createContact(t, acc);
    await t.db.proposal.createMany({ data: Array.from({ length: 3 }, (_, i) => ({ accountId: acc.id, contactId: contact.id, title: `P${i}` })) });
    await settle();
    const ask = async (fields: string) => {
      const r = await t.gql(`query ($id: ID!) { contact(id: $id) { proposals(first: 2) { ${fields} } } }`, { id: contact.id }, { as: acc.member });
      expect(r.errors).toBeUndefined();
      return r.data.contact.proposals;
    };
    await ask('totalCount'); // warm-up: the caller's first sighting is one-off
    const total = await statements(() => ask('totalCount'));
    let cursor: unknown;
    const pageInfo = await statements(async () => void (cursor = (await ask('pageInfo { endCursor hasNextPage }')).pageInfo));
    const nodes = await statements(() => ask('nodes { id } pageInfo { endCursor }'));
    expect(cursor).toMatchObject({ hasNextPage: true, endCursor: expect.any(String) });
    expect(pageInfo, 'as many statements as the total alone').toBe(total);
    expect(nodes, 'its nodes are read by id: one statement more').toBe(total + 1);
  });
});

describe('relations both ways', () => {
  let acc: TestAccount;
  let ids: Record<string, string>;
  beforeAll(async () => {
    acc = await createAccount(t);
    const contact = await createContact(t, acc);
    const stage = await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'Won' } });
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'D', contactId: contact.id, stageId: stage.id } });
    const invoice = await t.db.invoice.create({ data: { accountId: acc.id, contactId: contact.id, invoiceNumber: 'I-1', amount: 5, dueDate: new Date('2030-01-01') } });
    const form = await t.db.leadForm.create({
      data: { accountId: acc.id, name: 'F', fields: { create: [{ key: 'email', label: 'E', type: 'email', position: 0 }] } },
    });
    const submission = await t.db.formSubmission.create({
      data: { accountId: acc.id, formId: form.id, contactId: contact.id, data: { email: 'a@b.c' }, referrer: 'https://r', page: '/p', clientIp: '203.0.113.9', userAgent: 'UA' },
    });
    const linked = { accountId: acc.id, contactId: contact.id, title: 'R' };
    const proposal = await t.db.proposal.create({ data: linked });
    const contract = await t.db.contract.create({ data: linked });
    const gallery = await t.db.gallery.create({ data: linked });
    const booking = await t.db.booking.create({ data: { ...linked, startsAt: new Date(), endsAt: new Date() } });
    ids = { contact: contact.id, stage: stage.id, deal: deal.id, invoice: invoice.id, form: form.id, submission: submission.id, proposal: proposal.id, contract: contract.id, gallery: gallery.id, booking: booking.id };
  });

  test('Contact reaches its deals, invoices, submissions, proposals, contracts, galleries and bookings', async () => {
    const r = await t.gql(
      `query ($id: ID!) { contact(id: $id) { id updatedAt
        deals { nodes { id contact { id } stage { id deals { nodes { id } } } } }
        invoices { nodes { id contact { id } } } submissions { nodes { id } } proposals { nodes { id } }
        contracts { nodes { id } } galleries { nodes { id } } bookings { nodes { id } } } }`,
      { id: ids.contact },
      { as: acc.member },
    );
    expect(r.errors).toBeUndefined();
    const c = r.data.contact;
    expect(c.deals.nodes).toEqual([{ id: ids.deal, contact: { id: ids.contact }, stage: { id: ids.stage, deals: { nodes: [{ id: ids.deal }] } } }]);
    expect(c.invoices.nodes).toEqual([{ id: ids.invoice, contact: { id: ids.contact } }]);
    for (const k of ['submission', 'proposal', 'contract', 'gallery', 'booking']) {
      const field = k === 'submission' ? 'submissions' : k === 'gallery' ? 'galleries' : `${k}s`;
      expect(c[field].nodes, field).toEqual([{ id: ids[k] }]);
    }
  });

  test('FormSubmission: its form and contact, values and metadata, and no IP address or user agent', async () => {
    const r = await t.gql(
      `query ($id: ID!, $f: ID!) {
        formSubmission(id: $id) { id form { id } contact { id } data referrer page isSpam createdAt updatedAt }
        leadForm(id: $f) { fields { key } submissions { totalCount nodes { id } } } }`,
      { id: ids.submission, f: ids.form },
      { as: acc.member },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.formSubmission).toMatchObject({ id: ids.submission, form: { id: ids.form }, contact: { id: ids.contact }, data: { email: 'a@b.c' }, referrer: 'https://r', page: '/p', isSpam: false });
    expect(r.data.leadForm).toEqual({ fields: [{ key: 'email' }], submissions: { totalCount: 1, nodes: [{ id: ids.submission }] } });
    expect(JSON.stringify(r.data)).not.toMatch(/203\.0\.113\.9|UA/);
    const fields = await t.gql('{ __type(name: "FormSubmission") { fields { name } } }', {}, { as: acc.member });
    expect(fields.data.__type.fields.map((f: { name: string }) => f.name)).not.toEqual(expect.arrayContaining(['clientIp']));
    expect(fields.data.__type.fields.map((f: { name: string }) => f.name)).not.toContain('userAgent');
  });

  test('reads by id: visible answers the record, invisible and unknown answer null without an error', async () => {
    const doc = 'query ($id: ID!) { deal(id: $id) { id title } }';
    expect((await t.gql(doc, { id: ids.deal }, { as: acc.owner })).data.deal).toEqual({ id: ids.deal, title: 'D' });
    const outsider = await t.gql(doc, { id: ids.deal }, { as: acc.outsider });
    expect(outsider).toMatchObject({ data: { deal: null } });
    expect(outsider.errors).toBeUndefined();
    const unknown = await t.gql(doc, { id: '00000000-0000-4000-8000-000000000000' }, { as: acc.owner });
    expect(unknown.errors).toBeUndefined();
    expect(unknown.data.deal).toBeNull();
  });

  test('every record type has updatedAt', async () => {
    for (const type of ['Contact', 'Deal', 'Invoice', 'PipelineStage', 'LeadForm', 'FormSubmission', 'Proposal', 'Contract', 'Gallery', 'Booking', 'Workflow', 'Account']) {
      const r = await t.gql(`{ __type(name: "${type}") { fields { name } } }`, {}, { as: acc.member });
      expect(r.data.__type.fields.map((f: { name: string }) => f.name), type).toContain('updatedAt');
    }
  });
});

describe('a read by id reads the caller\'s role with the record', () => {
  let acc: TestAccount;
  let contactId: string;
  beforeAll(async () => {
    acc = await createAccount(t);
    // Through the API, so the contact has its contact.created event.
    const made = await t.gql('mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: { accountId: acc.id, firstName: 'Timeline' } }, { as: acc.member });
    expect(made.errors).toBeUndefined();
    contactId = made.data.createContact.id;
    await settle();
  });
  const TIMELINE = 'query ($id: ID!) { contact(id: $id) { id firstName createdAt timeline(first: 50) { nodes { id type data } } } }';

  test("a contact's timeline is two statements: the contact with the caller's role, then the page", async () => {
    const ask = async () => {
      const r = await t.gql(TIMELINE, { id: contactId }, { as: acc.member });
      expect(r.errors).toBeUndefined();
      expect(r.data.contact.id).toBe(contactId);
      expect(r.data.contact.timeline.nodes.map((n: { type: string }) => n.type)).toContain('contact.created');
    };
    await ask(); // warm: the caller known
    expect(await statements(ask)).toBe(2);
  });

  test('the record read with the role is the one Prisma reads, and a caller of another account gets null', async () => {
    const other = await createAccount(t);
    const DOC = 'query ($id: ID!) { contact(id: $id) { id firstName lastName email phone company contactType source externalId createdAt updatedAt } }';
    const row = await t.db.contact.findUniqueOrThrow({ where: { id: contactId } });
    const r = await t.gql(DOC, { id: contactId }, { as: acc.member });
    expect(r.errors).toBeUndefined();
    expect(r.data.contact).toEqual({
      id: row.id, firstName: row.firstName, lastName: row.lastName, email: row.email, phone: row.phone, company: row.company,
      contactType: row.contactType, source: row.source, externalId: row.externalId,
      createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString(),
    });
    const hidden = await t.gql(DOC, { id: contactId }, { as: other.member });
    expect(hidden.errors).toBeUndefined();
    expect(hidden.data.contact).toBeNull();
  });
});
