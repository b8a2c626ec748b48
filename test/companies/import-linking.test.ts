import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { drain, importCsv } from '../imports/helpers.js';

// docs/decisions.md §21: an imported contact without a company is linked by its e-mail domain, never by free mail.

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

describe('linking by e-mail domain on import', () => {
  it('imported contacts whose e-mail domain is a company domain are linked to it; free-mail addresses are not', async () => {
    const host = `${randomUUID().slice(0, 8)}.example.com`;
    const company = await t.db.company.create({ data: { accountId: acc.id, name: 'Imported Co', domain: host } });
    await t.db.company.create({ data: { accountId: acc.id, name: 'Mail Co', domain: 'gmail.com' } });
    const csv = `first_name,email\r\nAda,ada@${host.toUpperCase()}\r\nBo,bo@gmail.com\r\nCy,cy@elsewhere.example\r\n`;
    const started = await importCsv(t, acc.member, acc.id, csv);
    expect(started.status, started.text).toBe(202);
    await drain(t);
    const done = await t.rest('GET', `/api/v1/imports/${started.body.data.id}`, { as: acc.member });
    expect(done.body.data).toMatchObject({ status: 'completed', created: 3, failed: 0 });
    const rows = await t.db.contact.findMany({ where: { accountId: acc.id }, select: { firstName: true, companyId: true }, orderBy: { firstName: 'asc' } });
    expect(rows).toEqual([
      { firstName: 'Ada', companyId: company.id },
      { firstName: 'Bo', companyId: null },
      { firstName: 'Cy', companyId: null },
    ]);
  });
});
