import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, createMember, type TestAccount } from '../factories/index.js';
import { createTestApp, type RestResult, type TestApp, type TestUser } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';

// REST contract: GET /api/v1/contacts/export and GET /api/v1/account/export (docs/rest.md; docs/decisions.md §2, §6, §7).

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HEADER = 'First Name,Last Name,Email,Phone,Company,Contact Type,Source,Created At,External Id';
const NO_ACCESS = { error: 'Forbidden: no access to this account' };
const OWNER_ONLY = { error: 'Forbidden: only the account owner can export account data' };
const UNAUTHORIZED = { error: 'Unauthorized' };

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const csv = (accountId: string, as: TestUser | null) => t.rest('GET', `/api/v1/contacts/export?account_id=${encodeURIComponent(accountId)}`, { as });
const accountExport = (accountId: string, as: TestUser | null) =>
  t.rest('GET', `/api/v1/account/export?account_id=${encodeURIComponent(accountId)}`, { as });
const auditRows = (accountId: string) => t.db.exportLog.findMany({ where: { accountId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });

const fileName = (r: RestResult) => /^attachment; filename="([^"]+)"$/.exec(r.headers.get('content-disposition') ?? '')?.[1];

describe('GET /api/v1/contacts/export', () => {
  let acc: TestAccount;
  beforeAll(async () => {
    acc = await createAccount(t);
  });

  it('answers 200 text/csv as an attachment named contacts-YYYY-MM-DD.csv (the UTC date of the export)', async () => {
    const r = await csv(acc.id, acc.owner);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')!.split(';')[0]).toBe('text/csv');
    const name = fileName(r);
    expect(name).toMatch(/^contacts-\d{4}-\d{2}-\d{2}\.csv$/);
    const [log] = (await auditRows(acc.id)).slice(-1);
    expect(name).toBe(`contacts-${log!.createdAt.toISOString().slice(0, 10)}.csv`);
  });

  it('is UTF-8, never cached, and carries nosniff and a request id', async () => {
    const r = await csv(acc.id, acc.member);
    expect(r.headers.get('content-type')).toMatch(/charset=utf-8/i);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  it("the Company column shows the contact's company text, else its linked company's name (decisions §26)", async () => {
    const own = await createAccount(t);
    const company = await t.db.company.create({ data: { accountId: own.id, name: 'Analytical Engines Ltd' } });
    await t.db.contact.create({ data: { accountId: own.id, firstName: 'Linked', companyId: company.id } });
    await t.db.contact.create({ data: { accountId: own.id, firstName: 'Both', company: 'Babbage & Co', companyId: company.id } });
    await t.db.contact.create({ data: { accountId: own.id, firstName: 'Neither' } });
    const rows = parseCsv((await csv(own.id, own.owner)).text).slice(1);
    const companyOf = (name: string) => rows.find((row) => row[0] === name)![4];
    expect([companyOf('Linked'), companyOf('Both'), companyOf('Neither')]).toEqual(['Analytical Engines Ltd', 'Babbage & Co', '']);
  });

  it('an account without contacts gives the header row alone', async () => {
    const empty = await createAccount(t);
    const r = await csv(empty.id, empty.owner);
    expect(parseCsv(r.text)).toEqual([HEADER.split(',')]);
  });

  describe('content', () => {
    let content: TestAccount;
    let text: string;
    const base = Date.UTC(2024, 2, 1);
    beforeAll(async () => {
      content = await createAccount(t);
      // Inserted out of order: the file must still be oldest first.
      await createContact(t, content, { firstName: 'Third', lastName: null, email: null, createdAt: new Date(base + 2000) });
      await createContact(t, content, {
        firstName: '=HYPERLINK("http://evil.example","x")',
        lastName: 'O"Brien, Jr.',
        email: 'zoë@example.com',
        phone: '+1 555 0100',
        company: 'Line one\nLine two\r\nLine three',
        contactType: 'client',
        source: 'referral',
        createdAt: new Date(base),
      });
      await createContact(t, content, {
        firstName: 'Zoë 東京 🚀', lastName: '-minus', email: '@at.example', phone: '\tTab', company: '\rCR',
        createdAt: new Date(base + 1000),
      });
      await createContact(t, await createAccount(t), { firstName: 'Elsewhere' });
      text = (await csv(content.id, content.owner)).text;
    });

    it('the header row is exactly First Name, Last Name, Email, Phone, Company, Contact Type, Source, Created At, External Id', () => {
      expect(text.startsWith(`${HEADER}\r\n`)).toBe(true);
    });

    it('rows are oldest first and hold only this account\'s contacts', () => {
      const rows = parseCsv(text).slice(1);
      expect(rows.map((row) => row[7])).toEqual([0, 1000, 2000].map((ms) => new Date(base + ms).toISOString()));
      expect(text).not.toContain('Elsewhere');
    });

    it('commas, quotes, line breaks and non-ASCII round-trip; a leading = is prefixed with \'', () => {
      const [, first] = parseCsv(text);
      expect(first).toEqual([
        '\'=HYPERLINK("http://evil.example","x")',
        'O"Brien, Jr.',
        'zoë@example.com',
        "'+1 555 0100",
        'Line one\nLine two\r\nLine three',
        'client',
        'referral',
        new Date(base).toISOString(),
        '',
      ]);
    });

    it('cells beginning with +, -, @, tab or carriage return are prefixed with \' too', () => {
      const [, , second] = parseCsv(text);
      expect(second!.slice(0, 5)).toEqual(['Zoë 東京 🚀', "'-minus", "'@at.example", "'\tTab", "'\rCR"]);
    });

    it('missing values are empty cells; created_at is ISO 8601 UTC', () => {
      const [, , , third] = parseCsv(text);
      expect(third).toEqual(['Third', '', '', '', '', 'lead', 'other', new Date(base + 2000).toISOString(), '']);
      expect(third![7]).toMatch(ISO_Z);
    });

    it('every record is one CSV record (quoted line breaks do not split it)', () => {
      expect(parseCsv(text).map((row) => row.length)).toEqual([9, 9, 9, 9]);
    });
  });

  it('each export is recorded (who, when) in the audit log', async () => {
    const audited = await createAccount(t);
    const r = await csv(audited.id, audited.member);
    expect(r.status).toBe(200);
    const rows = await auditRows(audited.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ userId: audited.member.id, kind: 'contacts_csv' });
  });

  describe('access', () => {
    it('the owner and a team member may export (200)', async () => {
      expect((await csv(acc.id, acc.owner)).status).toBe(200);
      expect((await csv(acc.id, acc.member)).status).toBe(200);
    });

    it('a user who is neither owner nor team member gets 403 and nothing is recorded', async () => {
      const guarded = await createAccount(t);
      const r = await csv(guarded.id, guarded.outsider);
      expect([r.status, r.body]).toEqual([403, NO_ACCESS]);
      expect(await auditRows(guarded.id)).toEqual([]);
    });

    it('an anonymous caller gets 401 {"error":"Unauthorized"}', async () => {
      const r = await csv(acc.id, null);
      expect([r.status, r.body]).toEqual([401, UNAUTHORIZED]);
    });

    it('an account that does not exist gives the same 403 as a foreign one', async () => {
      const r = await csv(randomUUID(), acc.owner);
      expect([r.status, r.body]).toEqual([403, NO_ACCESS]);
    });

    it('an account_id that is not a UUID is a 400 on account_id', async () => {
      const r = await csv('acc-1', await createMember(t, acc.id));
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { account_id: ['Must be a UUID'] } }]);
    });
  });

  describe('rate limit', () => {
    it('5 requests per minute per user: the 6th is a 429 and is not recorded', async () => {
      const limited = await createAccount(t);
      for (let i = 0; i < 5; i++) expect((await csv(limited.id, limited.member)).status).toBe(200);
      const r = await csv(limited.id, limited.member);
      expect([r.status, r.body]).toEqual([429, { error: 'Rate limit exceeded' }]);
      expect(r.headers.get('ratelimit-limit')).toBe('5');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await auditRows(limited.id)).toHaveLength(5);
      expect((await csv(limited.id, limited.owner)).status).toBe(200);
    });
  });
});

describe('GET /api/v1/account/export', () => {
  /** Keys the contract names, plus the collections docs/decisions.md §6 adds. */
  const KEYS = [
    'export_metadata', 'account', 'contacts', 'deals', 'invoices', 'proposals', 'contracts', 'galleries', 'bookings', 'workflows',
    'pipeline_stages', 'team_members', 'forms', 'form_submissions', 'exports',
  ];

  describe('the document', () => {
    let acc: TestAccount;
    let r: RestResult;
    let doc: Record<string, any>;
    beforeAll(async () => {
      acc = await createAccount(t, 'Export Co');
      const contact = await createContact(t, acc, { firstName: 'Ada', lastName: 'Lovelace' });
      const stage = await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 'Won' } });
      await t.db.deal.create({ data: { accountId: acc.id, title: 'Big', value: 1234.5, contactId: contact.id, stageId: stage.id, expectedCloseDate: new Date(Date.UTC(2027, 5, 30)) } });
      await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: 'INV-9', amount: 99.99, dueDate: new Date(Date.UTC(2027, 0, 1)), contactId: contact.id } });
      await createContact(t, await createAccount(t), { firstName: 'Elsewhere' });
      r = await accountExport(acc.id, acc.owner);
      doc = JSON.parse(r.text);
    });

    it('the owner gets 200 application/json as an attachment named service-data-export-<account_id>-<date>.json', async () => {
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')!.split(';')[0]).toBe('application/json');
      const [log] = await auditRows(acc.id);
      expect(fileName(r)).toBe(`service-data-export-${acc.id}-${log!.createdAt.toISOString().slice(0, 10)}.json`);
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    });

    it('has the top-level keys of the contract and decisions §6', () => {
      for (const key of KEYS) expect(doc).toHaveProperty(key);
      for (const key of KEYS.slice(2)) expect(Array.isArray(doc[key]), key).toBe(true);
    });

    it('export_metadata holds exported_at (ISO 8601 UTC), account_id, format_version "1.0" and gdpr_request true', () => {
      expect(doc.export_metadata).toEqual({ exported_at: expect.stringMatching(ISO_Z), account_id: acc.id, format_version: '1.0', gdpr_request: true });
    });

    it('account is the account record', () => {
      expect(doc.account).toMatchObject({ id: acc.id, name: 'Export Co', owner_id: acc.owner.id });
    });

    it("holds this account's records in snake_case, amounts as numbers and dates as YYYY-MM-DD, and no other account's", () => {
      expect(doc.contacts).toHaveLength(1);
      expect(doc.contacts[0]).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', account_id: acc.id, created_at: expect.stringMatching(ISO_Z) });
      expect(doc.deals[0]).toMatchObject({ title: 'Big', value: 1234.5, expected_close_date: '2027-06-30', status: 'open' });
      expect(doc.invoices[0]).toMatchObject({ invoice_number: 'INV-9', amount: 99.99, due_date: '2027-01-01' });
      expect(doc.pipeline_stages[0]).toMatchObject({ name: 'Won' });
      expect(doc.team_members).toEqual([expect.objectContaining({ user_id: acc.member.id })]);
      expect(r.text).not.toContain('Elsewhere');
    });

    it('the export is recorded in `exports` (who, when), in the audit log and in the document itself', async () => {
      const rows = await auditRows(acc.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ userId: acc.owner.id, kind: 'account_json' });
      expect(doc.exports).toEqual([expect.objectContaining({ id: rows[0]!.id, user_id: acc.owner.id, kind: 'account_json' })]);
    });
  });

  describe('access: owner only', () => {
    it('a team member gets 403 {"error":"Forbidden: only the account owner can export account data"} and nothing is recorded', async () => {
      const acc = await createAccount(t);
      const r = await accountExport(acc.id, acc.member);
      expect([r.status, r.body]).toEqual([403, OWNER_ONLY]);
      expect(await auditRows(acc.id)).toEqual([]);
    });

    it('a user who is neither owner nor team member gets 403 {"error":"Forbidden: no access to this account"}', async () => {
      const acc = await createAccount(t);
      const r = await accountExport(acc.id, acc.outsider);
      expect([r.status, r.body]).toEqual([403, NO_ACCESS]);
    });

    it('an anonymous caller gets 401 {"error":"Unauthorized"}', async () => {
      const acc = await createAccount(t);
      const r = await accountExport(acc.id, null);
      expect([r.status, r.body]).toEqual([401, UNAUTHORIZED]);
    });

    it('an account that does not exist gives the same 403 as a foreign one', async () => {
      const acc = await createAccount(t);
      const r = await accountExport(randomUUID(), acc.owner);
      expect([r.status, r.body]).toEqual([403, NO_ACCESS]);
    });

    it('an account_id that is not a UUID is a 400 on account_id; a missing one is Required', async () => {
      const acc = await createAccount(t);
      const r = await accountExport('nope', acc.owner);
      expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { account_id: ['Must be a UUID'] } }]);
      const missing = await t.rest('GET', '/api/v1/account/export', { as: acc.owner });
      expect([missing.status, missing.body]).toEqual([400, { error: 'Invalid query', details: { account_id: ['Required'] } }]);
    });
  });

  describe('rate limit: 1 request per hour per account', () => {
    it('a second export of the account within the hour is a 429 with Retry-After, and is not recorded', async () => {
      const acc = await createAccount(t);
      expect((await accountExport(acc.id, acc.owner)).status).toBe(200);
      const r = await accountExport(acc.id, acc.owner);
      expect([r.status, r.body]).toEqual([429, { error: 'Rate limit exceeded' }]);
      expect(r.headers.get('ratelimit-limit')).toBe('1');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(60);
      expect(await auditRows(acc.id)).toHaveLength(1);
    });

    it('calls refused for access do not use up the budget: a member first, then the owner still exports', async () => {
      const acc = await createAccount(t);
      for (const who of [acc.member, acc.outsider, acc.member]) expect((await accountExport(acc.id, who)).status).toBe(403);
      expect((await accountExport(acc.id, acc.owner)).status).toBe(200);
    });

    it('the budget is per account: another account of the same owner exports too', async () => {
      const acc = await createAccount(t);
      const second = await t.db.account.create({ data: { name: 'Second', ownerId: acc.owner.id } });
      expect((await accountExport(acc.id, acc.owner)).status).toBe(200);
      expect((await accountExport(second.id, acc.owner)).status).toBe(200);
    });

    it('order 401 -> 400 -> 403 -> 429: once the budget is spent, others still get 401, 400 and 403', async () => {
      const acc = await createAccount(t);
      expect((await accountExport(acc.id, acc.owner)).status).toBe(200);
      expect((await accountExport(acc.id, null)).status).toBe(401);
      expect((await accountExport('x', acc.owner)).status).toBe(400);
      expect((await accountExport(acc.id, acc.member)).body).toEqual(OWNER_ONLY);
      expect((await accountExport(acc.id, acc.owner)).status).toBe(429);
    });
  });
});
