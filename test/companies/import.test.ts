// docs/decisions.md §17 and §21: imports take `object=companies`, on the batch path that
// upsertCompanies takes: columns from the company's fields (and HubSpot's labels), domains
// normalised, a domain twice in a file, in the account or not a host name, an owner who is not a member.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_ROWS } from '../../src/imports/chunk.js';
import { createAccount, createApiKey, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { drain, importCsv } from '../imports/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const host = () => `${randomUUID().slice(0, 8)}.example.org`;

async function run(acc: TestAccount, csv: string, params: Record<string, string>) {
  const r = await importCsv(t, acc.member, acc.id, csv, { object: 'companies', ...params });
  expect(r.status, r.text).toBe(202);
  await drain(t);
  const done = (await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: acc.member })).body.data;
  const errors = await t.db.importError.findMany({ where: { importId: done.id }, orderBy: { line: 'asc' }, select: { line: true, details: true } });
  return { done, errors };
}

// HubSpot's companies export, as it writes one (its owner is a name, its dates its own format).
const HUBSPOT_HEADER = 'Record ID,Company name,Company owner,Create Date,Phone Number,City,Country/Region,Industry,Company Domain Name,Website URL';
// Its owner is a person's name, not a user id: skipped. Everything else needs no mapping (docs/decisions.md §26).
const HUBSPOT_MAPPING = JSON.stringify({ 'Company owner': '-' });

describe('importing companies', () => {
  it("a HubSpot companies export imports with its owner skipped and no other mapping: its labels name the fields (Record ID the external id, Create Date kept as created_at), domains are normalised, the unknown columns are listed", async () => {
    const acc = await createAccount(t);
    const [a, b] = [host(), host()];
    const csv = [
      HUBSPOT_HEADER,
      `9001,Acme Corp,Jane Roe,2024-01-02 10:00,+1 555 0100,Springfield,United States,COMPUTER_SOFTWARE,https://www.${a.toUpperCase()}/,https://www.${a}`,
      `9002,Globex,,2024-02-03 11:00,,Paris,France,,${b},`,
    ].join('\r\n');
    const { done, errors } = await run(acc, `${csv}\r\n`, { match_on: 'domain', mapping: HUBSPOT_MAPPING });
    expect(errors).toEqual([]);
    expect(done).toMatchObject({ object: 'companies', match_on: 'domain', status: 'completed', created: 2, failed: 0, unknown_columns: ['City', 'Country/Region'] });
    const rows = await t.db.company.findMany({ where: { accountId: acc.id }, orderBy: { externalId: 'asc' }, select: { name: true, domain: true, phone: true, industry: true, website: true, externalId: true, createdAt: true } });
    expect(rows).toEqual([
      { name: 'Acme Corp', domain: a, phone: '+1 555 0100', industry: 'COMPUTER_SOFTWARE', website: `https://www.${a}`, externalId: '9001', createdAt: new Date('2024-01-02T10:00:00Z') },
      { name: 'Globex', domain: b, phone: null, industry: null, website: null, externalId: '9002', createdAt: new Date('2024-02-03T11:00:00Z') },
    ]);
    // The same file again matches every company by its domain: nothing changes.
    const again = await run(acc, `${csv}\r\n`, { match_on: 'domain', mapping: HUBSPOT_MAPPING });
    expect(again.done).toMatchObject({ created: 0, updated: 0, unchanged: 2, failed: 0 });
    // Companies imported first link the contacts imported after them by e-mail domain.
    const contacts = await importCsv(t, acc.member, acc.id, `first_name,email\r\nWile,wile@${a}\r\n`);
    expect(contacts.status).toBe(202);
    await drain(t);
    const acme = await t.db.company.findFirstOrThrow({ where: { accountId: acc.id, domain: a } });
    expect(await t.db.contact.findFirst({ where: { accountId: acc.id, firstName: 'Wile' }, select: { companyId: true } })).toEqual({ companyId: acme.id });
  });

  it('a domain twice in one file (as written differently) fails the later row "Duplicate in this file (line 2)", in a later chunk too', async () => {
    const acc = await createAccount(t);
    const first = host();
    const rows = ['name,domain', `First,${first}`];
    for (let i = 1; i <= CHUNK_ROWS + 10; i++) rows.push(i === CHUNK_ROWS + 10 ? `Impostor,https://WWW.${first}/` : `Company ${i},c${i}-${first}`);
    const { done, errors } = await run(acc, `${rows.join('\r\n')}\r\n`, { match_on: 'domain' });
    expect(done).toMatchObject({ status: 'completed', created: CHUNK_ROWS + 10, failed: 1 });
    expect(errors).toEqual([{ line: CHUNK_ROWS + 12, details: { domain: ['Duplicate in this file (line 2)'] } }]);
    expect(await t.db.company.findMany({ where: { accountId: acc.id, domain: first }, select: { name: true } })).toEqual([{ name: 'First' }]);
  });

  it('match_on=none: a domain twice in one chunk fails the later row; a domain the account holds fails its row on domain', async () => {
    const acc = await createAccount(t);
    const [held, twice] = [host(), host()];
    await t.db.company.create({ data: { accountId: acc.id, name: 'Holder', domain: held } });
    const { done, errors } = await run(acc, `name,domain\r\nA,${twice}\r\nB,${twice.toUpperCase()}\r\nC,www.${held}\r\nD,${host()}\r\n`, { match_on: 'none' });
    expect(done).toMatchObject({ created: 2, failed: 2 });
    expect(errors).toEqual([
      { line: 3, details: { domain: ['Duplicate in this file (line 2)'] } },
      { line: 4, details: { domain: ['Already used by another company'] } },
    ]);
  });

  it('a domain that is not a host name, a missing name and an owner who is not a member fail their rows by REST name; the others are written', async () => {
    const acc = await createAccount(t);
    const csv = `name,domain,owner_id\r\nBad,not a host,\r\n,${host()},\r\nStranger,${host()},${acc.outsider.id}\r\nOwned,${host()},${acc.member.id}\r\n`;
    const { done, errors } = await run(acc, csv, { match_on: 'none' });
    expect(done).toMatchObject({ created: 1, failed: 3 });
    expect(errors).toEqual([
      { line: 2, details: { domain: ['Must be a host name such as acme.com'] } },
      { line: 3, details: { name: ['Required'] } },
      { line: 4, details: { owner_id: ['Not a member of this account'] } },
    ]);
    expect(await t.db.company.findFirst({ where: { accountId: acc.id, name: 'Owned' }, select: { ownerId: true } })).toEqual({ ownerId: acc.member.id });
  });

  it('match_on names a key companies have (domain or external_id); no column for name or for the match_on field is a 400 naming it', async () => {
    const acc = await createAccount(t);
    const refused = async (csv: string, params: Record<string, string>) => {
      const r = await importCsv(t, acc.member, acc.id, csv, { object: 'companies', ...params });
      expect(r.status, r.text).toBe(400);
      return r.body.details;
    };
    expect(await refused(`name,domain\r\nA,${host()}\r\n`, { match_on: 'email' })).toEqual({ match_on: ['Companies match on domain, external_id or none'] });
    expect(await refused(`domain\r\n${host()}\r\n`, { match_on: 'domain' })).toEqual({ name: ['No column for this required field'] });
    expect(await refused('name\r\nA\r\n', { match_on: 'domain' })).toEqual({ domain: ['No column for the match_on field'] });
    expect(await refused(`first_name,email\r\nA,a@${host()}\r\n`, { object: 'contacts', match_on: 'domain' })).toEqual({ match_on: ['Contacts match on email, external_id or none'] });
  });

  it('an API key needs companies:write beside imports: with contacts:write alone it is a 403 and nothing is imported', async () => {
    const acc = await createAccount(t);
    const csv = `name,domain\r\nKeyed,${host()}\r\n`;
    const refused = await importCsv(t, await createApiKey(t, acc, ['IMPORTS', 'CONTACTS_WRITE']), acc.id, csv, { object: 'companies' });
    expect(refused.status, refused.text).toBe(403);
    const allowed = await importCsv(t, await createApiKey(t, acc, ['IMPORTS', 'COMPANIES_WRITE']), acc.id, csv, { object: 'companies' });
    expect(allowed.status, allowed.text).toBe(202);
    await drain(t);
    expect(await t.db.company.count({ where: { accountId: acc.id } })).toBe(1);
  });
});
