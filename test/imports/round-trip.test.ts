// docs/decisions.md §17: the CSV export's own file imports back. Export an account's contacts, import
// the file into another account, export again: the same rows, Created At included (docs/decisions.md §26).
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { drain, importCsv } from './helpers.js';

let t: TestApp;
let from: TestAccount;
let to: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  [from, to] = [await createAccount(t), await createAccount(t)];
});
afterAll(() => t?.close());

/** The export's rows, in a stable order. */
const rowsOf = (csv: string) => (parse(csv, { bom: true }) as string[][]).slice(1).map((row) => row.join('\u0000')).sort();

describe('export, import, export', () => {
  it('the export of an account imports into another and exports again as the same rows: guarded phones and formulas come back as they were, external ids and creation times kept', async () => {
    await createContact(t, from, { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', phone: '+1 660 555 0198', company: 'Engines, "Analytical"', contactType: 'client', source: 'referral', externalId: 'crm-0042', createdAt: new Date('2024-05-01T10:00:00.123Z') });
    await createContact(t, from, { firstName: '=SUM(1;2)', lastName: 'Line\r\nBreak', email: null, phone: '-5', company: '@corp;=x', contactType: 'past_client', createdAt: new Date('2023-12-31T23:59:59.999Z') });
    await createContact(t, from, { firstName: 'Plain', lastName: null, email: 'PLAIN@example.com', phone: null, company: null, createdAt: new Date('2020-02-29T00:00:00.000Z') });
    const first = await t.rest('GET', `/api/v1/contacts/export?account_id=${from.id}`, { as: from.owner });
    expect(first.status).toBe(200);
    expect(first.text).toContain("'+1 660 555 0198");

    const imported = await importCsv(t, to.member, to.id, first.text);
    expect(imported.status, imported.text).toBe(202);
    // Every column feeds a field: Created At too, a real time not in the future.
    expect(imported.body.data.unknown_columns).toEqual([]);
    await drain(t);
    const done = await t.rest('GET', `/api/v1/imports/${imported.body.data.id}`, { as: to.member });
    expect(done.body.data).toMatchObject({ status: 'completed', created: 3, failed: 0 });
    expect(await t.db.contact.findFirst({ where: { accountId: to.id, email: 'ada@example.com' } })).toMatchObject({ phone: '+1 660 555 0198', externalId: 'crm-0042' });

    const again = await t.rest('GET', `/api/v1/contacts/export?account_id=${to.id}`, { as: to.owner });
    expect(rowsOf(again.text)).toEqual(rowsOf(first.text));
  });
});
