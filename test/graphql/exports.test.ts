import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/errors.js';
import { accountExportStream, COLLECTIONS, NOT_EXPORTED } from '../../src/exports/account-json.js';
import { createAccount, createContact, createUser, type TestAccount } from '../factories/index.js';
import type { Prisma, PrismaClient } from '../../src/generated/prisma/client.js';
import { createTestApp, type GqlResult, type TestApp, type TestUser } from '../helpers/app.js';

const TICKET = 'id accountId kind fileName createdAt';
const EXPORT_CONTACTS = `mutation ($accountId: ID!) { exportContacts(accountId: $accountId) { ${TICKET} } }`;
const EXPORT_ACCOUNT = `mutation ($accountId: ID!) { exportAccount(accountId: $accountId) { ${TICKET} } }`;

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const codeOf = (r: GqlResult) => r.errors?.[0]?.extensions?.code;
const exportContacts = (accountId: string, as: TestUser | null) => t.gql(EXPORT_CONTACTS, { accountId }, { as });
const exportAccount = (accountId: string, as: TestUser | null) => t.gql(EXPORT_ACCOUNT, { accountId }, { as });
const auditRows = (accountId: string) => t.db.exportLog.findMany({ where: { accountId }, orderBy: { createdAt: 'asc' } });

describe('exportContacts', () => {
  let acc: TestAccount;
  beforeAll(async () => {
    acc = await createAccount(t);
  });

  it('a member can export contacts and gets a ticket named contacts-<UTC date>.csv', async () => {
    const r = await exportContacts(acc.id, acc.member);
    expect(r.errors).toBeUndefined();
    const ticket = r.data.exportContacts;
    expect(ticket).toMatchObject({ accountId: acc.id, kind: 'contacts_csv' });
    expect(ticket.createdAt).toMatch(ISO_Z);
    expect(ticket.fileName).toBe(`contacts-${ticket.createdAt.slice(0, 10)}.csv`);
  });

  it('each export is recorded in the audit log (who, which account, what, when)', async () => {
    const r = await exportContacts(acc.id, acc.owner);
    const row = await t.db.exportLog.findUniqueOrThrow({ where: { id: r.data.exportContacts.id } });
    expect(row).toMatchObject({ accountId: acc.id, userId: acc.owner.id, kind: 'contacts_csv' });
    expect(row.createdAt.toISOString()).toBe(r.data.exportContacts.createdAt);
  });

  it('an outsider is FORBIDDEN, an anonymous caller UNAUTHENTICATED, and neither is recorded', async () => {
    const fresh = await createAccount(t);
    expect(codeOf(await exportContacts(fresh.id, fresh.outsider))).toBe('FORBIDDEN');
    expect(codeOf(await exportContacts(fresh.id, null))).toBe('UNAUTHENTICATED');
    expect(codeOf(await exportContacts(randomUUID(), fresh.member))).toBe('FORBIDDEN');
    expect(await auditRows(fresh.id)).toEqual([]);
  });

  it('an account id that is not a UUID is a BAD_USER_INPUT on accountId', async () => {
    const r = await exportContacts('nope', acc.member);
    expect(codeOf(r)).toBe('BAD_USER_INPUT');
    expect(r.errors?.[0]?.extensions?.details).toEqual({ accountId: ['Must be a UUID'] });
  });

  it('the sixth export by one user within a minute is RATE_LIMITED; another user is not affected', async () => {
    const fresh = await createAccount(t);
    for (let i = 0; i < 5; i++) expect((await exportContacts(fresh.id, fresh.member)).errors).toBeUndefined();
    const sixth = await exportContacts(fresh.id, fresh.member);
    expect(codeOf(sixth)).toBe('RATE_LIMITED');
    expect((await exportContacts(fresh.id, fresh.owner)).errors).toBeUndefined();
    expect(await auditRows(fresh.id)).toHaveLength(6);
  });
});

describe('exportAccount', () => {
  it('the owner gets a ticket named service-data-export-<account_id>-<date>.json, and it is recorded', async () => {
    const acc = await createAccount(t);
    const r = await exportAccount(acc.id, acc.owner);
    expect(r.errors).toBeUndefined();
    const ticket = r.data.exportAccount;
    expect(ticket).toMatchObject({ accountId: acc.id, kind: 'account_json' });
    expect(ticket.fileName).toBe(`service-data-export-${acc.id}-${ticket.createdAt.slice(0, 10)}.json`);
    const [row] = await auditRows(acc.id);
    expect(row).toMatchObject({ id: ticket.id, userId: acc.owner.id, kind: 'account_json' });
  });

  it('a member is refused with the owner-only message', async () => {
    const acc = await createAccount(t);
    const r = await exportAccount(acc.id, acc.member);
    expect(codeOf(r)).toBe('FORBIDDEN');
    expect(r.errors?.[0]?.message).toBe(MESSAGES.ownerOnlyExport);
    expect(r.errors?.[0]?.message).toBe('Forbidden: only the account owner can export account data');
  });

  it('an outsider gets the no-access FORBIDDEN, an unknown account the same, anonymous UNAUTHENTICATED', async () => {
    const acc = await createAccount(t);
    const outsider = await exportAccount(acc.id, acc.outsider);
    expect(codeOf(outsider)).toBe('FORBIDDEN');
    expect(outsider.errors?.[0]?.message).toBe(MESSAGES.noAccess);
    const unknown = await exportAccount(randomUUID(), acc.owner);
    expect(unknown.errors?.[0]?.message).toBe(MESSAGES.noAccess);
    expect(codeOf(await exportAccount(acc.id, null))).toBe('UNAUTHENTICATED');
    expect(await auditRows(acc.id)).toEqual([]);
  });

  it('validation comes before access: a bad account id is BAD_USER_INPUT even for a stranger', async () => {
    const stranger = await createUser(t);
    expect(codeOf(await exportAccount('nope', stranger))).toBe('BAD_USER_INPUT');
  });

  it("a second export by the owner within the hour is RATE_LIMITED, and a member's refused attempts do not use up the budget", async () => {
    const acc = await createAccount(t);
    for (let i = 0; i < 3; i++) expect(codeOf(await exportAccount(acc.id, acc.member))).toBe('FORBIDDEN');
    for (let i = 0; i < 3; i++) expect(codeOf(await exportAccount(acc.id, acc.outsider))).toBe('FORBIDDEN');
    expect((await exportAccount(acc.id, acc.owner)).errors).toBeUndefined();
    const second = await exportAccount(acc.id, acc.owner);
    expect(codeOf(second)).toBe('RATE_LIMITED');
    // Still 403 for the member once the budget is spent: access is checked before the limit.
    expect(codeOf(await exportAccount(acc.id, acc.member))).toBe('FORBIDDEN');
    expect(await auditRows(acc.id)).toHaveLength(1);
  });

  it("one account's hourly budget does not touch another account of the same owner", async () => {
    const acc = await createAccount(t);
    const second = await t.db.account.create({ data: { name: 'Second', ownerId: acc.owner.id } });
    expect((await exportAccount(acc.id, acc.owner)).errors).toBeUndefined();
    expect((await exportAccount(second.id, acc.owner)).errors).toBeUndefined();
  });
});

describe('account export document', () => {
  it('every account-scoped table is in the account export, but the derived ones NOT_EXPORTED names', async () => {
    const tables = await t.db.$queryRaw<{ table_name: string }[]>`
      SELECT DISTINCT table_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND column_name = 'account_id' AND table_name <> '_prisma_migrations'
      ORDER BY table_name`;
    expect(tables.length).toBeGreaterThan(10);
    const exported = new Set(COLLECTIONS.map((c) => c.table));
    const missing = tables.map((row) => row.table_name).filter((name) => !exported.has(name) && !(name in NOT_EXPORTED));
    expect(Object.keys(NOT_EXPORTED).filter((name) => exported.has(name) || !tables.some((row) => row.table_name === name))).toEqual([]);
    expect(missing, 'account-scoped tables missing from COLLECTIONS in src/exports/account-json.ts').toEqual([]);
  });

  /** One row in every collection of a fresh account, plus a contact in another account. */
  async function seed() {
    const acc = await createAccount(t);
    const other = await createAccount(t);
    const db = t.db;
    const contact = await createContact(t, acc, { firstName: 'Ada', phone: null });
    await createContact(t, other, { firstName: 'Not mine' });
    const stage = await db.pipelineStage.create({ data: { accountId: acc.id, name: 'Lead in', position: 1 } });
    await db.deal.create({
      data: { accountId: acc.id, title: 'Deal', value: 1500.25, contactId: contact.id, stageId: stage.id, expectedCloseDate: new Date('2030-02-28') },
    });
    const invoice = await db.invoice.create({
      data: { accountId: acc.id, contactId: contact.id, invoiceNumber: 'INV-000001', amount: 99.9, dueDate: new Date('2030-03-31') },
    });
    await db.invoiceLine.create({
      data: { accountId: acc.id, invoiceId: invoice.id, position: 0, description: 'Design', quantity: 3, unitPrice: 33.3, discountPercent: 0, taxRate: 0, amount: 99.9, tax: 0 },
    });
    await db.payment.create({ data: { accountId: acc.id, invoiceId: invoice.id, amount: 10, currency: 'USD', method: 'card', paidAt: new Date('2030-03-01') } });
    await db.invoiceMail.create({ data: { accountId: acc.id, invoiceId: invoice.id, to: 'ada@example.com', status: 'sent', attempts: 1, sentAt: new Date('2030-03-01') } });
    await db.proposal.create({ data: { accountId: acc.id, title: 'Proposal', amount: 10, contactId: contact.id } });
    await db.contract.create({ data: { accountId: acc.id, title: 'Contract' } });
    await db.gallery.create({ data: { accountId: acc.id, title: 'Gallery' } });
    await db.booking.create({
      data: { accountId: acc.id, title: 'Booking', startsAt: new Date('2030-05-01T09:00:00Z'), endsAt: new Date('2030-05-01T10:00:00Z') },
    });
    const workflow = await db.workflow.create({ data: { accountId: acc.id, name: 'Workflow' } });
    await db.company.create({ data: { accountId: acc.id, name: 'Company', domain: 'company.example' } }); // docs/decisions.md §21
    await db.note.create({ data: { accountId: acc.id, body: '  *Called* ', contactId: contact.id } });
    await db.task.create({ data: { accountId: acc.id, title: 'Call back', contactId: contact.id, dueAt: new Date('2030-04-01T09:00:00Z') } });
    await db.customField.create({ data: { accountId: acc.id, object: 'CONTACT', key: 'tier', label: 'Tier', type: 'SELECT', options: ['gold'] } }); // docs/custom-fields.md
    const form = await db.leadForm.create({ data: { accountId: acc.id, name: 'Form' } });
    await db.leadFormField.create({
      data: { accountId: acc.id, formId: form.id, key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email', position: 0 },
    });
    await db.formSubmission.create({
      data: { accountId: acc.id, formId: form.id, contactId: contact.id, data: { email: 'ada@example.com' }, clientIp: '10.0.0.1' },
    });
    await db.exportLog.create({ data: { accountId: acc.id, userId: acc.owner.id, kind: 'account_json' } });
    await db.idempotencyKey.create({
      data: { accountId: acc.id, scope: `user:${acc.owner.id}`, operation: 'createContact', key: 'retry-1', requestHash: 'h', result: { id: contact.id } },
    });
    await db.erasureLog.create({
      data: { accountId: acc.id, userId: acc.owner.id, contactId: randomUUID(), submissionsErased: 1, dealsUnlinked: 0, invoicesUnlinked: 0, answersRemoved: 0 },
    });
    const event = await db.event.create({ data: { accountId: acc.id, type: 'contact.created', actorType: 'system', subjectId: contact.id, contactId: contact.id, data: { object: { id: contact.id } } } });
    const endpoint = await db.webhookEndpoint.create({ data: { accountId: acc.id, url: 'https://hooks.example.com/in', eventTypes: ['*'], secretCiphertext: 'v1.sealed' } });
    await db.webhookMessage.create({ data: { accountId: acc.id, endpointId: endpoint.id, eventId: event.id, status: 'succeeded', attempts: 1 } });
    await db.workflowRun.create({ data: { accountId: acc.id, workflowId: workflow.id, eventId: event.id, status: 'succeeded' } });
    await db.webhookDelivery.create({ data: { accountId: acc.id, endpointId: endpoint.id, eventId: event.id, attempt: 1, statusCode: 204, durationMs: 12, succeeded: true } });
    const started = await db.import.create({ data: { accountId: acc.id, object: 'contacts', headers: ['first_name'], columns: ['firstName'], unknownColumns: [], status: 'completed', rowsTotal: 2, rowsProcessed: 2, created: 1, failed: 1 } });
    await db.importError.create({ data: { accountId: acc.id, importId: started.id, line: 3, cells: [''], details: { first_name: ['Required'] } } });
    await db.apiKey.create({ data: { accountId: acc.id, name: 'Sync', prefix: randomUUID().slice(0, 8), secretHash: 'f'.repeat(64), scopes: ['CONTACTS_READ'] } });
    return { acc, contact };
  }

  const read = async (stream: ReadableStream<Uint8Array>) => JSON.parse(await new Response(stream).text());

  it('is one JSON object: metadata, the account, then one array per collection, snake_case records', async () => {
    const { acc, contact } = await seed();
    const exportedAt = new Date('2030-01-02T03:04:05.678Z');
    const doc = await read(accountExportStream(t.db, acc.id, exportedAt));

    expect(Object.keys(doc)).toEqual(['export_metadata', 'account', ...COLLECTIONS.map((c) => c.key)]);
    expect(Object.keys(doc).slice(2, 19)).toEqual([
      'contacts', 'deals', 'invoices', 'invoice_lines', 'payments', 'proposals', 'contracts', 'galleries', 'bookings', 'workflows',
      'workflow_runs', 'pipeline_stages', 'team_members', 'forms', 'form_fields', 'form_submissions', 'exports',
    ]);
    expect(doc.export_metadata).toEqual({
      exported_at: '2030-01-02T03:04:05.678Z',
      account_id: acc.id,
      format_version: '1.0',
      gdpr_request: true,
    });
    expect(doc.account).toMatchObject({ id: acc.id, owner_id: acc.owner.id, next_invoice_number: 1 });
    for (const { key } of COLLECTIONS) {
      expect(doc[key], key).toHaveLength(1);
      const record = doc[key][0];
      expect(record.account_id, key).toBe(acc.id);
      for (const field of Object.keys(record)) expect(field, `${key}.${field}`).toMatch(/^[a-z][a-z0-9_]*$/);
    }
    expect(doc.contacts[0]).toMatchObject({ id: contact.id, first_name: 'Ada', phone: null, contact_type: 'lead' });
    expect(doc.contacts[0].created_at).toMatch(ISO_Z);
    expect(doc.team_members[0]).toMatchObject({ user_id: acc.member.id, role: 'member' });
    expect(doc.form_fields[0]).toMatchObject({ key: 'email', maps_to: 'email', options: [], max_length: 1000 });
    expect(doc.form_submissions[0]).toMatchObject({ data: { email: 'ada@example.com' }, client_ip: '10.0.0.1' });
    expect(doc.exports[0]).toMatchObject({ user_id: acc.owner.id, kind: 'account_json' });
  });

  it('money is a JSON number, dates are YYYY-MM-DD and timestamps ISO 8601 with Z', async () => {
    const { acc } = await seed();
    const doc = await read(accountExportStream(t.db, acc.id, new Date()));
    expect(doc.deals[0]).toMatchObject({ value: 1500.25, probability: 50, expected_close_date: '2030-02-28', closed_at: null });
    expect(doc.invoices[0]).toMatchObject({ amount: 99.9, due_date: '2030-03-31', invoice_number: 'INV-000001' });
    expect(doc.invoice_lines[0]).toMatchObject({ invoice_id: doc.invoices[0].id, position: 0, description: 'Design', quantity: 3, unit_price: 33.3, amount: 99.9, tax: 0 });
    expect(doc.payments[0]).toMatchObject({ invoice_id: doc.invoices[0].id, amount: 10, currency: 'USD', method: 'card', refunded_amount: 0 });
    expect(doc.proposals[0].amount).toBe(10);
    expect(doc.bookings[0]).toMatchObject({ starts_at: '2030-05-01T09:00:00.000Z', ends_at: '2030-05-01T10:00:00.000Z' });
    expect(doc.account.created_at).toMatch(ISO_Z);
  });

  it('every record carries every column of its table', async () => {
    const { acc } = await seed();
    const doc = await read(accountExportStream(t.db, acc.id, new Date()));
    const columns = await t.db.$queryRaw<{ table_name: string; column_name: string }[]>`
      SELECT table_name, column_name FROM information_schema.columns
      WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`;
    const of = (table: string) => columns.filter((c) => c.table_name === table).map((c) => c.column_name);
    expect(Object.keys(doc.account)).toEqual(of('accounts'));
    for (const { key, table, omit = [] } of COLLECTIONS) expect(Object.keys(doc[key][0]), key).toEqual(of(table).filter((c) => !omit.includes(c)));
  });

  it("holds only the account's own rows", async () => {
    const { acc } = await seed();
    const text = await new Response(accountExportStream(t.db, acc.id, new Date())).text();
    expect(text).not.toContain('Not mine');
  });

  it('streams collections in pages: all rows, oldest first, across chunk boundaries', async () => {
    const acc = await createAccount(t);
    const base = Date.UTC(2024, 0, 1);
    await t.db.contact.createMany({
      data: Array.from({ length: 25 }, (_, i) => ({ accountId: acc.id, firstName: `n${i}`, createdAt: new Date(base + Math.floor(i / 2) * 1000) })).reverse(),
    });
    const expected = await t.db.contact.findMany({
      where: { accountId: acc.id },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      select: { id: true },
    });
    const doc = await read(accountExportStream(t.db, acc.id, new Date(), { chunkSize: 4 }));
    expect(doc.contacts.map((c: { id: string }) => c.id)).toEqual(expected.map((c) => c.id));
    expect(doc.team_members).toHaveLength(1);
  });

  it('reads as the client reads: a page is queried only when the client asks for more, and cancelling stops the rest', async () => {
    const acc = await createAccount(t);
    await t.db.contact.createMany({
      data: Array.from({ length: 5 }, (_, i) => ({ accountId: acc.id, firstName: `c${i}`, createdAt: new Date(Date.UTC(2022, 0, 1) + i * 1000) })),
    });
    const pages: string[] = [];
    // Page queries of the contacts, seen when they are sent (a read-ahead would send one without being asked).
    const db = {
      $queryRaw: (query: Prisma.Sql) => {
        if (query.sql.includes('FROM "contacts"')) pages.push(String(query.values.at(-1)));
        return t.db.$queryRaw(query);
      },
    } as unknown as PrismaClient;
    // Once microtasks and I/O callbacks have run, anything the stream would read unasked has been asked for.
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    // Pages of one record and chunks of one part at least: each read of the client is one page at most.
    const reader = accountExportStream(db, acc.id, new Date(), { chunkSize: 1, chunkChars: 1 }).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('"c0"')) text += decoder.decode((await reader.read()).value);
    await turn();
    expect(pages, 'pages read while the client has not asked again').toHaveLength(1);
    expect(decoder.decode((await reader.read()).value)).toContain('"c1"');
    await turn();
    expect(pages).toHaveLength(2);
    await reader.cancel();
    await turn();
    expect(pages).toHaveLength(2);
  });

  it('the document read through the pool is the same as through Prisma (PostgreSQL; PGlite has no pool)', async ({ skip }) => {
    const pool = t.deps.db.pool;
    if (!pool) return skip();
    const { acc } = await seed();
    const at = new Date('2030-01-02T03:04:05.678Z');
    const [viaPool, viaPrisma] = await Promise.all([
      new Response(accountExportStream(t.db, acc.id, at, { pool })).text(),
      new Response(accountExportStream(t.db, acc.id, at)).text(),
    ]);
    expect(viaPool).toBe(viaPrisma);
    expect(JSON.parse(viaPool).contacts).toHaveLength(1);
  });

  it('an account with nothing in it still gives every key, with empty arrays', async () => {
    const user = await createUser(t);
    const account = await t.db.account.create({ data: { name: 'Empty', ownerId: user.id } });
    const doc = await read(accountExportStream(t.db, account.id, new Date()));
    for (const { key } of COLLECTIONS) expect(doc[key], key).toEqual([]);
    expect(doc.account.name).toBe('Empty');
  });
});
