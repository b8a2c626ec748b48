// docs/decisions.md §24 "Imports read what other systems write": the files HubSpot, Pipedrive,
// Salesforce, Google Contacts and a European Excel write, as they write them (their headers, their
// delimiter and encoding), import with `delimiter`, `encoding`, `mapping` and `value_mapping`; with
// neither mapping, test/imports/without-a-mapping.test.ts (docs/decisions.md §26).
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { drain, importBytes, importCsv } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

/** Imports `file` into a new account and runs it to its end: the import as GET answers it, and the account. */
async function imported(file: string | Buffer, params: Record<string, string> = {}, contentType?: string) {
  const acc = await createAccount(t);
  const r = typeof file === 'string' && !contentType ? await importCsv(t, acc.member, acc.id, file, params) : await importBytes(t, acc.member, acc.id, Buffer.from(file), params, contentType);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  await drain(t);
  const done = await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: acc.member });
  return { acc, started: r.body.data, done: done.body.data };
}

const contactsOf = (acc: TestAccount) =>
  t.db.contact.findMany({ where: { accountId: acc.id }, orderBy: { email: 'asc' }, select: { firstName: true, lastName: true, email: true, phone: true, company: true, contactType: true, externalId: true } });

// A European Excel's "CSV (semicolon-separated)": `;`, Windows-1252, CRLF.
const EUROPEAN = 'Vorname;Nachname;E-Mail;Firma\r\nJürgen;Müller;jurgen@example.de;Bäckerei Müller & Söhne\r\nRenée;Façade;renee@example.fr;Café € Crème\r\n';
const EUROPEAN_MAPPING = JSON.stringify({ Vorname: 'first_name', Nachname: 'last_name', 'E-Mail': 'email', Firma: 'company' });

describe('the delimiter', () => {
  it('is detected from the header line: a European Excel file with `;` imports (it was refused: no column for first_name)', async () => {
    const { done, acc } = await imported('first_name;last_name;email;company\r\nAda;Lovelace;ada@example.com;Engines, Ltd\r\n');
    expect(done).toMatchObject({ status: 'completed', created: 1, failed: 0 });
    expect(await contactsOf(acc)).toMatchObject([{ firstName: 'Ada', lastName: 'Lovelace', company: 'Engines, Ltd' }]);
  });

  it('is detected as a tab or a pipe; one column is one column', async () => {
    const tabs = await imported('First Name\tEmail\r\nGrace\tgrace@example.com\r\n');
    expect(await contactsOf(tabs.acc)).toMatchObject([{ firstName: 'Grace', email: 'grace@example.com' }]);
    const pipes = await imported('first_name|email|company\r\nLinus|linus@example.com|Transmeta, Inc\r\n');
    expect(await contactsOf(pipes.acc)).toMatchObject([{ firstName: 'Linus', company: 'Transmeta, Inc' }]);
    const one = await imported('first_name\r\nSolo; the only\r\n');
    expect(await contactsOf(one.acc)).toMatchObject([{ firstName: 'Solo; the only' }]);
  });

  it('given as delimiter= wins over detection; an unknown one is a 400 on delimiter before the file is read', async () => {
    // The header holds more commas than semicolons, but the client says `;`.
    const { acc } = await imported('"first_name, given";email\r\nAda;ada@example.com\r\n', { delimiter: ';', mapping: JSON.stringify({ 'first_name, given': 'first_name' }) });
    expect(await contactsOf(acc)).toMatchObject([{ firstName: 'Ada', email: 'ada@example.com' }]);
    const tab = await imported('first_name\temail\r\nTab\ttab@example.com\r\n', { delimiter: 'tab' });
    expect(await contactsOf(tab.acc)).toMatchObject([{ firstName: 'Tab' }]);
    const other = await createAccount(t);
    const r = await importCsv(t, other.member, other.id, 'first_name\r\nX\r\n', { delimiter: '#' });
    expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { delimiter: ['Must be one of: ",", ";", "|", tab'] } }]);
  });
});

describe('the encoding', () => {
  const windows1252 = iconv.encode(EUROPEAN, 'windows-1252');

  it('encoding=windows-1252 reads a European Excel file (`;`, Windows-1252) as written: umlauts, accents and € (it was refused as not UTF-8)', async () => {
    expect(windows1252.includes(0x80)).toBe(true); // € is one byte, 0x80, in Windows-1252
    const { done, acc } = await imported(windows1252, { encoding: 'windows-1252', mapping: EUROPEAN_MAPPING });
    expect(done).toMatchObject({ status: 'completed', created: 2, failed: 0 });
    expect(await contactsOf(acc)).toMatchObject([
      { firstName: 'Jürgen', lastName: 'Müller', company: 'Bäckerei Müller & Söhne' },
      { firstName: 'Renée', lastName: 'Façade', company: 'Café € Crème' },
    ]);
  });

  it("the Content-Type's charset says it too; an unknown charset is a 415 before the file is read", async () => {
    const { acc } = await imported(windows1252, { mapping: EUROPEAN_MAPPING }, 'text/csv; charset=windows-1252');
    expect((await contactsOf(acc)).map((c) => c.firstName)).toEqual(['Jürgen', 'Renée']);
    const latin1 = await imported(Buffer.from('first_name,email\r\nJosé,jose@example.es\r\n', 'latin1'), {}, 'text/csv; charset="ISO-8859-1"');
    expect((await contactsOf(latin1.acc)).map((c) => c.firstName)).toEqual(['José']);
    const other = await createAccount(t);
    const r = await importBytes(t, other.member, other.id, Buffer.from('first_name\r\nX\r\n'), {}, 'text/csv; charset=klingon');
    expect([r.status, r.body]).toEqual([415, { error: 'Unsupported media type' }]);
  });

  it('without an encoding, Windows-1252 bytes are a 400 on body saying how to send them; an unknown encoding= is a 400 on encoding', async () => {
    const acc = await createAccount(t);
    const r = await importBytes(t, acc.member, acc.id, windows1252, { mapping: EUROPEAN_MAPPING });
    expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { body: ['Not UTF-8: give the encoding the file is in (encoding=windows-1252, for one), or save it as UTF-8 and send it again'] } }]);
    const bad = await importBytes(t, acc.member, acc.id, windows1252, { encoding: 'ebcdic' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'Invalid query', details: { encoding: ['Must be one of: utf-8, utf-16le, utf-16be, windows-1252, iso-8859-1, iso-8859-15'] } });
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(0);
  });

  it("a UTF-16 file with its BOM (Excel's \"Unicode text\": tabs, UTF-16LE) and a UTF-8 one with its BOM import as written, whatever encoding= says", async () => {
    const unicodeText = Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('First Name\tLast Name\tEmail\r\nZoë\t東京\tzoe@example.jp\r\n', 'utf-16le')]);
    const { acc } = await imported(unicodeText);
    expect(await contactsOf(acc)).toMatchObject([{ firstName: 'Zoë', lastName: '東京', email: 'zoe@example.jp' }]);
    const bigEndian = Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode('first_name;email\r\nÅsa;asa@example.se\r\n', 'utf-16be')]);
    expect(await contactsOf((await imported(bigEndian, { encoding: 'windows-1252' })).acc)).toMatchObject([{ firstName: 'Åsa' }]);
    const utf8Bom = Buffer.from('\ufefffirst_name;email\r\nÅsa;asa@example.se\r\n');
    expect(await contactsOf((await imported(utf8Bom, { encoding: 'windows-1252' })).acc)).toMatchObject([{ firstName: 'Åsa' }]);
  });
});

describe('files other systems export', () => {
  it('HubSpot contacts: a mapping and a value mapping still win over the headers and values recognised (Lifecycle Stage Lead/Customer -> contact_type lead/client); Record ID kept as the external id', async () => {
    const hubspot = [
      '"Record ID","First Name","Last Name","Email","Phone Number","Company Name","Lifecycle Stage","Create Date","Contact owner"',
      '"51","Brian","Halligan","bh@hubspot.example","+1 617 555 0100","HubSpot","Customer","2023-01-05 10:12","Dharmesh Shah"',
      '"52","Dharmesh","Shah","ds@hubspot.example","","HubSpot","Lead","2023-01-06 09:00",""',
      '"53","Kipp","Bodnar","kb@hubspot.example","","HubSpot","Marketing Qualified Lead","2023-01-07 11:30",""',
    ].join('\r\n');
    const { done, acc } = await imported(`${hubspot}\r\n`, {
      match_on: 'external_id',
      mapping: JSON.stringify({ 'Record ID': 'external_id', 'Phone Number': 'phone', 'Company Name': 'company', 'Lifecycle Stage': 'contact_type' }),
      value_mapping: JSON.stringify({ contact_type: { Lead: 'lead', customer: 'client', 'Marketing Qualified Lead': 'lead' } }),
    });
    expect(done).toMatchObject({ status: 'completed', created: 3, failed: 0, unknown_columns: ['Contact owner'] });
    expect(await contactsOf(acc)).toEqual([
      { firstName: 'Brian', lastName: 'Halligan', email: 'bh@hubspot.example', phone: '+1 617 555 0100', company: 'HubSpot', contactType: 'client', externalId: '51' },
      { firstName: 'Dharmesh', lastName: 'Shah', email: 'ds@hubspot.example', phone: null, company: 'HubSpot', contactType: 'lead', externalId: '52' },
      { firstName: 'Kipp', lastName: 'Bodnar', email: 'kb@hubspot.example', phone: null, company: 'HubSpot', contactType: 'lead', externalId: '53' },
    ]);
  });

  it('a value neither the value mapping, the field\'s values nor a synonym names is judged as it is (a Martian is no contact type: that row fails by name)', async () => {
    const { done, acc } = await imported('First Name,Lifecycle Stage\r\nAda,Customer\r\nBob,Martian\r\n', {
      mapping: JSON.stringify({ 'Lifecycle Stage': 'contact_type' }),
      value_mapping: JSON.stringify({ contact_type: { Customer: 'client' } }),
    });
    expect(done).toMatchObject({ created: 1, failed: 1 });
    expect(await t.db.importError.findMany({ where: { importId: done.id }, select: { line: true, details: true } })).toEqual([
      { line: 3, details: { contact_type: [expect.stringContaining('Must be one of')] } },
    ]);
    expect(await contactsOf(acc)).toMatchObject([{ firstName: 'Ada', contactType: 'client' }]);
  });

  it('value_mapping naming a field the object lacks, or not an object of objects, is a 400 on value_mapping', async () => {
    const acc = await createAccount(t);
    const r = await importCsv(t, acc.member, acc.id, 'first_name\r\nX\r\n', { value_mapping: JSON.stringify({ lifecycle: { Lead: 'lead' } }) });
    expect([r.status, r.body]).toEqual([400, { error: 'Invalid query', details: { 'value_mapping.lifecycle': ['Must be one of: first_name, last_name, email, phone, company, contact_type, source, created_at, external_id'] } }]);
    const flat = await importCsv(t, acc.member, acc.id, 'first_name\r\nX\r\n', { value_mapping: JSON.stringify({ contact_type: 'lead' }) });
    expect([flat.status, flat.body.error, Object.keys(flat.body.details)]).toEqual([400, 'Invalid query', ['value_mapping']]);
  });

  it('value_mapping naming a field the object lacks is judged with the other query problems: one 400 names them all, before the body is read', async () => {
    const acc = await createAccount(t);
    const r = await importCsv(t, acc.member, acc.id, 'first_name\r\nX\r\n', { delimiter: ':', value_mapping: JSON.stringify({ lifecycle: { Lead: 'lead' } }) });
    expect([r.status, r.body.error, Object.keys(r.body.details).sort()]).toEqual([400, 'Invalid query', ['delimiter', 'value_mapping.lifecycle']]);
    // Deals have their own fields: contact_type is none of them.
    const deals = await importCsv(t, acc.member, acc.id, 'title\r\nX\r\n', { object: 'deals', value_mapping: JSON.stringify({ contact_type: { Lead: 'lead' } }) });
    expect([deals.status, deals.body.error, Object.keys(deals.body.details)]).toEqual([400, 'Invalid query', ['value_mapping.contact_type']]);
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(0);
  });

  it('Pipedrive persons: a column mapped to "-" is skipped, even one whose header names a field (a Person - Label of a meaning of its own kept out)', async () => {
    const pipedrive = 'Person - Name,Person - First name,Person - Last name,Person - Email - Work,Person - Phone - Work,Person - Organization,Person - Label\r\n' +
      'Ada Lovelace,Ada,Lovelace,ada@engines.example,+44 20 7946 0000,Analytical Engines,Hot lead\r\n';
    const { done, acc } = await imported(pipedrive, {
      mapping: JSON.stringify({
        'Person - First name': 'first_name', 'Person - Last name': 'last_name', 'Person - Email - Work': 'email',
        'Person - Phone - Work': 'phone', 'Person - Organization': 'company', 'Person - Label': '-', 'Person - Name': '-',
      }),
    });
    expect(done).toMatchObject({ status: 'completed', created: 1, failed: 0, unknown_columns: [] });
    expect(await contactsOf(acc)).toMatchObject([{ firstName: 'Ada', email: 'ada@engines.example', company: 'Analytical Engines', contactType: 'lead' }]);
    const skipped = await imported('first_name,email,contact_type\r\nAda,ada@example.com,wizard\r\n', { mapping: JSON.stringify({ contact_type: '-' }) });
    expect(skipped.done).toMatchObject({ created: 1, failed: 0, unknown_columns: [] });
  });

  it('Salesforce contacts (its API names): FirstName, LastName, LeadSource and CreatedDate are recognised; Id, AccountId and every other column that feeds no field are listed as unknown', async () => {
    const salesforce = 'Id,AccountId,FirstName,LastName,Email,Phone,Title,LeadSource,CreatedDate\r\n' +
      '0035g00000XyZaBAAV,0015g00000AbCdEAAV,Marc,Benioff,marc@sf.example,(415) 555-0100,CEO,Web,2023-02-01T10:00:00.000Z\r\n';
    const { done, acc } = await imported(salesforce);
    expect(done).toMatchObject({ status: 'completed', created: 1, unknown_columns: ['Id', 'AccountId', 'Title'] });
    expect(await contactsOf(acc)).toMatchObject([{ firstName: 'Marc', lastName: 'Benioff', phone: '(415) 555-0100' }]);
    expect(await t.db.contact.findFirst({ where: { accountId: acc.id }, select: { source: true, createdAt: true } })).toEqual({ source: 'website', createdAt: new Date('2023-02-01T10:00:00.000Z') });
    // Mapped, Salesforce's Id is the external id an upsert matches on.
    const again = await imported(salesforce, { match_on: 'external_id', mapping: JSON.stringify({ Id: 'external_id' }) });
    expect(again.done.unknown_columns).toEqual(['AccountId', 'Title']);
    expect(await contactsOf(again.acc)).toMatchObject([{ externalId: '0035g00000XyZaBAAV' }]);
  });

  it('Google Contacts: its labels mapped, its many other columns listed as unknown', async () => {
    const google = 'First Name,Middle Name,Last Name,Phonetic First Name,Nickname,Birthday,Notes,Labels,E-mail 1 - Label,E-mail 1 - Value,Phone 1 - Label,Phone 1 - Value,Organization Name,Organization Title\r\n' +
      'Larry,,Page,,,1973-03-26,"Met at the conference, said ""hi""",* myContacts,* Work,larry@google.example,Mobile,+1 650 555 0101,Google,CEO\r\n';
    const { done, acc } = await imported(google, { mapping: JSON.stringify({ 'E-mail 1 - Value': 'email', 'Phone 1 - Value': 'phone', 'Organization Name': 'company' }) });
    expect(done).toMatchObject({ status: 'completed', created: 1 });
    expect(done.unknown_columns).toEqual(['Middle Name', 'Phonetic First Name', 'Nickname', 'Birthday', 'Notes', 'Labels', 'E-mail 1 - Label', 'Phone 1 - Label', 'Organization Title']);
    expect(await contactsOf(acc)).toMatchObject([{ firstName: 'Larry', lastName: 'Page', email: 'larry@google.example', phone: '+1 650 555 0101', company: 'Google' }]);
  });

  it('a mapping naming no field is a 400 "Invalid payload" on mapping.<column>, the column spelled as the file spells it', async () => {
    const acc = await createAccount(t);
    const r = await importCsv(t, acc.member, acc.id, 'First Name,Phone Number\r\nAda,1\r\n', { mapping: JSON.stringify({ 'phone number': 'phone_number' }) });
    expect([r.status, r.body]).toEqual([
      400,
      { error: 'Invalid payload', details: { 'mapping.Phone Number': ['Must be one of: first_name, last_name, email, phone, company, contact_type, source, created_at, external_id, or - to skip the column'] } },
    ]);
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(0);
  });

  it('a mapping naming a column the file does not have is a 400 "Invalid payload" on mapping.<column>, never silently ignored', async () => {
    const acc = await createAccount(t);
    const r = await importCsv(t, acc.member, acc.id, 'First Name,E-mail\r\nAda,ada@example.com\r\n', { mapping: JSON.stringify({ 'E-mail': 'email', 'Phone Numbr': 'phone' }) });
    expect([r.status, r.body]).toEqual([400, { error: 'Invalid payload', details: { 'mapping.Phone Numbr': ['No such column in the file'] } }]);
    // Skipping a column the file lacks is the same typo.
    const skip = await importCsv(t, acc.member, acc.id, 'First Name\r\nAda\r\n', { mapping: JSON.stringify({ Labels: '-' }) });
    expect([skip.status, skip.body]).toEqual([400, { error: 'Invalid payload', details: { 'mapping.Labels': ['No such column in the file'] } }]);
    // Matched as headers are (case, spaces, underscores): `first name` is the file's `First Name`.
    const { done } = await imported('First Name,E-mail\r\nAda,ada@example.com\r\n', { mapping: JSON.stringify({ 'first name': 'first_name', 'e-mail': 'email' }) });
    expect(done).toMatchObject({ status: 'completed', created: 1 });
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(0);
  });
});

describe('deals from a European Excel', () => {
  it('a `;` file reads decimal commas (1.234,50 and 99,5), as that Excel writes them', async () => {
    const acc = await createAccount(t);
    const file = iconv.encode('Title;Value;Probability\r\nGroßauftrag Köln;12.500,50;75\r\nWartung;99,5;40,5\r\nKlein;100;10\r\n', 'windows-1252');
    const r = await importBytes(t, acc.member, acc.id, file, { object: 'deals', encoding: 'windows-1252' });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await drain(t);
    const deals = await t.db.deal.findMany({ where: { accountId: acc.id }, orderBy: { title: 'asc' }, select: { title: true, value: true, probability: true } });
    expect(deals.map((d) => [d.title, d.value.toString(), Number(d.probability)])).toEqual([
      ['Großauftrag Köln', '12500.5', 75],
      ['Klein', '100', 10],
      ['Wartung', '99.5', 40.5],
    ]);
  });
});
