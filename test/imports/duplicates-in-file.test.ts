// docs/decisions.md §24: a key (e-mail or external id, as match_on says) seen twice in one file fails
// the later row, `Duplicate in this file (line N)`, whatever chunk of 1,000 rows either falls in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrubContactFromImports } from '../../src/contacts/erase.js';
import { CHUNK_ROWS } from '../../src/imports/chunk.js';
import { takeKeys } from '../../src/imports/keys.js';
import { contactBatch } from '../../src/contacts/contact.service.js';
import { createAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { drain, importCsv } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

async function run(csv: string, params: Record<string, string>) {
  const acc = await createAccount(t);
  const r = await importCsv(t, acc.member, acc.id, csv, params);
  expect(r.status, r.text).toBe(202);
  await drain(t);
  const done = (await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: acc.member })).body.data;
  const errors = await t.db.importError.findMany({ where: { importId: done.id }, orderBy: { line: 'asc' }, select: { line: true, details: true } });
  return { acc, done, errors };
}

describe('a key twice in one file', () => {
  it('match_on=email: the later row fails "Duplicate in this file (line 2)" in a later chunk, and the first row\'s contact keeps what it wrote (it was silently overwritten)', async () => {
    // Line 2 is Ada; line CHUNK_ROWS + 502 (the next chunk) gives her address again, in other case.
    const rows = ['First Name,Email', 'Ada,ada@example.com'];
    for (let i = 1; i <= CHUNK_ROWS + 500; i++) rows.push(i === CHUNK_ROWS + 500 ? 'Impostor,ADA@Example.com' : `Person ${i},p${i}@example.com`);
    const { acc, done, errors } = await run(`${rows.join('\r\n')}\r\n`, { match_on: 'email' });
    expect(done).toMatchObject({ status: 'completed', rows_total: CHUNK_ROWS + 501, created: CHUNK_ROWS + 500, updated: 0, failed: 1 });
    expect(errors).toEqual([{ line: CHUNK_ROWS + 502, details: { email: ['Duplicate in this file (line 2)'] } }]);
    expect(await t.db.contact.findMany({ where: { accountId: acc.id, email: 'ada@example.com' }, select: { firstName: true } })).toEqual([{ firstName: 'Ada' }]);
    // The keys lived while the import ran; they end with it.
    expect(await t.db.importKey.count({ where: { importId: done.id } })).toBe(0);
  });

  it('match_on=external_id: within one chunk the later rows fail naming the first one\'s line', async () => {
    const csv = 'Id,FirstName,LastName\r\n003A,Marc,Benioff\r\n003B,Parker,Harris\r\n003A,Marc,Again\r\n003A,Marc,Thrice\r\n';
    const { acc, done, errors } = await run(csv, { match_on: 'external_id', mapping: JSON.stringify({ Id: 'external_id' }) });
    expect(done).toMatchObject({ created: 2, failed: 2 });
    expect(errors).toEqual([
      { line: 4, details: { external_id: ['Duplicate in this file (line 2)'] } },
      { line: 5, details: { external_id: ['Duplicate in this file (line 2)'] } },
    ]);
    expect(await t.db.contact.findFirst({ where: { accountId: acc.id, externalId: '003A' }, select: { lastName: true } })).toEqual({ lastName: 'Benioff' });
  });

  it('a row that fails its own rules takes no key: a later row with its external id is written', async () => {
    const { done, errors } = await run('first_name,email,external_id\r\nAda,not-an-address,X-1\r\nAda,ada@example.com,X-1\r\n', { match_on: 'external_id' });
    expect(done).toMatchObject({ created: 1, failed: 1 });
    expect(errors).toEqual([{ line: 2, details: { email: ['Must be a valid e-mail address'] } }]);
  });
});

describe('erasure', () => {
  it("erasing a person deletes the digests of their e-mail and external id that a running import keeps (docs/changes.md)", async () => {
    const acc = await createAccount(t);
    const r = await importCsv(t, acc.member, acc.id, 'first_name,email\r\nAda,ada@example.com\r\n', { match_on: 'email' });
    expect(r.status, r.text).toBe(202);
    const imp = { accountId: acc.id, id: r.body.data.id as string, matchOn: 'email' };
    // As a chunk takes them: Ada's e-mail and external id, and someone else's e-mail.
    await t.db.$transaction((tx) =>
      takeKeys(tx, contactBatch, imp, [{ index: 0, data: { email: 'Ada@Example.com', externalId: 'crm-1' } }, { index: 1, data: { email: 'bob@example.com' } }], [2, 3]));
    expect(await t.db.importKey.count({ where: { importId: imp.id } })).toBe(3);
    await t.db.$transaction((tx) => scrubContactFromImports(tx, contactBatch, acc.id, { email: 'ada@example.com', externalId: 'crm-1' }));
    expect(await t.db.importKey.findMany({ where: { importId: imp.id }, select: { line: true } })).toEqual([{ line: 3 }]);
  });
});
