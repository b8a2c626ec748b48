// docs/decisions.md §17: POST /api/v1/imports and the import's routes (beyond the contract).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startImportWorker } from '../../src/imports/worker.js';
import { createAccount, createApiKey, createContact, createMember, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';
import { drain, importCsv, silentLog } from './helpers.js';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

describe('POST /api/v1/imports', () => {
  it('answers 202 {data: the QUEUED import} with a Location; the worker writes every row with its event and the import ends COMPLETED with import.completed', async () => {
    const a = await createAccount(t);
    const tag = unique('imp');
    const csv = `first_name,last_name,email\r\nAda,${tag},ada-${tag}@example.com\r\nGrace,${tag},grace-${tag}@example.com\r\n`;
    const r = await importCsv(t, a.member, a.id, csv, {}, { 'x-file-name': 'people.csv' });
    expect(r.status, r.text).toBe(202);
    expect(r.headers.get('location')).toBe(`/api/v1/imports/${r.body.data.id}`);
    expect(r.body.data).toMatchObject({ status: 'queued', object: 'contacts', file_name: 'people.csv', rows_total: 2, rows_processed: 0, match_on: null });
    expect(await drain(t)).toBe(1);
    const done = await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: a.member });
    expect(done.body.data).toMatchObject({ status: 'completed', rows_processed: 2, created: 2, failed: 0 });
    expect(await t.db.contact.count({ where: { accountId: a.id, lastName: tag } })).toBe(2);
    const events = await t.db.event.findMany({ where: { accountId: a.id }, select: { type: true } });
    expect(events.filter((e) => e.type === 'contact.created')).toHaveLength(2);
    expect(events.filter((e) => e.type === 'import.completed')).toHaveLength(1);
  });

  it("answers QUEUED even where this instance's worker is woken by the upload: it is woken once the answer is read", async () => {
    const a = await createAccount(t);
    // Only the upload's nudge wakes it (its poll is ten minutes away), as on an instance whose worker waits.
    const worker = startImportWorker(t.db, { leaseMs: 60_000, pollMs: 600_000, log: silentLog }, randomUUID());
    t.deps.imports = worker;
    try {
      const r = await importCsv(t, a.member, a.id, 'first_name\r\nWoken\r\n');
      expect(r.status, r.text).toBe(202);
      expect(r.body.data.status).toBe('queued');
      await vi.waitFor(async () => expect((await t.db.import.findUniqueOrThrow({ where: { id: r.body.data.id } })).status).toBe('completed'), { timeout: 60_000, interval: 50 });
    } finally {
      t.deps.imports = null;
      await worker.close();
    }
  });

  it('an IMPORTS key starts an import, and every record it writes names the key as actor (docs/decisions.md §15); a key without the scope is a 403 naming it', async () => {
    const a = await createAccount(t);
    const key = await createApiKey(t, a, ['IMPORTS', 'CONTACTS_WRITE']); // and the object's write scope (docs/decisions.md §24)
    const refused = await importCsv(t, await createApiKey(t, a, ['CONTACTS_WRITE']), a.id, 'first_name\r\nNo\r\n');
    expect([refused.status, refused.body]).toEqual([403, { error: 'Forbidden: this API key lacks the scope imports' }]);
    const r = await importCsv(t, key, a.id, 'first_name\r\nKeyed\r\n');
    expect(r.status, r.text).toBe(202);
    await drain(t);
    const events = await t.db.event.findMany({ where: { accountId: a.id, type: { in: ['contact.created', 'import.completed'] } }, select: { actorType: true, actorId: true } });
    expect(events).toHaveLength(2);
    for (const e of events) expect(e).toEqual({ actorType: 'api_key', actorId: key.id });
  });

  it('a bad row is recorded with its line and messages by REST name and the others are written; ragged rows fail; quoted newlines keep line numbers', async () => {
    const a = await createAccount(t);
    // Ada's name spans lines 2-4 (a CRLF and a lone LF inside quotes); line 6 is blank.
    const csv = 'First Name,Email,Phone\r\n"Ada\r\nAugusta\nLovelace",ada@example.com,1\r\n,bad,=1+1\r\n\r\nGrace,grace@example.com\r\nLinus,linus@example.com,3\r\n';
    const r = await importCsv(t, a.member, a.id, csv);
    expect(r.status, r.text).toBe(202);
    await drain(t);
    const done = await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: a.member });
    expect(done.body.data).toMatchObject({ status: 'completed', rows_total: 4, created: 2, failed: 2 });
    const errors = await t.rest('GET', `/api/v1/imports/${r.body.data.id}/errors`, { as: a.member });
    expect(errors.status).toBe(200);
    expect(errors.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = errors.text.split('\r\n');
    expect(lines[0]).toBe('line,First Name,Email,Phone,errors');
    // Line 5 (the record on lines 2-4 comes first); its formula-looking cell guarded as in exports.
    expect(lines[1]).toBe('5,,bad,\'=1+1,"email: Must be a valid e-mail address; first_name: Required"');
    expect(lines[2]).toBe('7,Grace,grace@example.com,,"row: Has 2 cells; the header has 3"');
    expect(await t.db.contact.findFirst({ where: { accountId: a.id, email: 'ada@example.com' } })).toMatchObject({ firstName: 'Ada\r\nAugusta\nLovelace' });
  });

  it('the errors CSV keeps `errors` the last column, under its header: a short row gets empty cells, a long one keeps the cells beyond the header in `errors`', async () => {
    const a = await createAccount(t);
    const csv = 'First Name,Last Name,Email,Phone\r\nRagged,row\r\nToo,Long,too@example.com,1,extra,"x, y"\r\nFits,Fine,fits@example.com,2\r\n';
    const r = await importCsv(t, a.member, a.id, csv);
    expect(r.status, r.text).toBe(202);
    await drain(t);
    const errors = await t.rest('GET', `/api/v1/imports/${r.body.data.id}/errors`, { as: a.member });
    expect(errors.status).toBe(200);
    const [header, ...rows] = parseCsv(errors.text);
    expect(header).toEqual(['line', 'First Name', 'Last Name', 'Email', 'Phone', 'errors']);
    expect(rows).toEqual([
      ['2', 'Ragged', 'row', '', '', 'row: Has 2 cells; the header has 4'],
      ['3', 'Too', 'Long', 'too@example.com', '1', 'row: Has 6 cells; the header has 4; beyond the header: ["extra","x, y"]'],
    ]);
  });

  it("a row is judged by create's rules in create's words: an unreal day is refused (never moved to another), a wrong type or number named as REST names it", async () => {
    const a = await createAccount(t);
    const deals = await importCsv(t, a.member, a.id, 'Title,Value,Expected Close Date\r\nLeap,5,2027-02-30\r\nWord,abc,2027-03-01\r\nReal,7,2028-02-29\r\n', { object: 'deals' });
    const contacts = await importCsv(t, a.member, a.id, 'First Name,Contact Type\r\nOdd,weird\r\n');
    await drain(t);
    const errorsOf = async (id: string) => parseCsv((await t.rest('GET', `/api/v1/imports/${id}/errors`, { as: a.member })).text).slice(1).map((row) => row.at(-1));
    expect(await errorsOf(deals.body.data.id)).toEqual(['expected_close_date: Must be a real date in the form YYYY-MM-DD', 'value: Expected a number']);
    expect(await errorsOf(contacts.body.data.id)).toEqual(['contact_type: Must be one of: client, lead, other, past_client, vendor']);
    // The same words as a create over REST.
    const created = await t.rest('POST', '/api/v1/deals', { as: a.member, body: { account_id: a.id, title: 'X', value: 'abc', expected_close_date: '2027-02-30' } });
    expect(created.body.details).toMatchObject({ value: ['Expected a number'], expected_close_date: ['Must be a real date in the form YYYY-MM-DD'] });
    expect((await t.db.deal.findMany({ where: { accountId: a.id }, select: { title: true, expectedCloseDate: true } }))).toEqual([{ title: 'Real', expectedCloseDate: new Date('2028-02-29T00:00:00Z') }]);
  });

  it('match_on=email updates the oldest match with the given cells only, counts unchanged rows, and creates the others', async () => {
    const a = await createAccount(t);
    const old = await createContact(t, a, { firstName: 'Old', email: 'Known@Example.com', company: 'Keep' });
    const csv = 'email,first_name\r\nknown@example.com,New\r\nnew@example.com,Fresh\r\n';
    const r = await importCsv(t, a.member, a.id, csv, { match_on: 'email' });
    expect(r.status, r.text).toBe(202);
    expect(r.body.data.match_on).toBe('email');
    await drain(t);
    const again = await importCsv(t, a.member, a.id, 'email,first_name\r\nknown@example.com,New\r\n', { match_on: 'email' });
    await drain(t);
    expect((await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: a.member })).body.data).toMatchObject({ created: 1, updated: 1 });
    expect((await t.rest('GET', `/api/v1/imports/${again.body.data.id}`, { as: a.member })).body.data).toMatchObject({ unchanged: 1 });
    expect(await t.db.contact.findUniqueOrThrow({ where: { id: old.id } })).toMatchObject({ firstName: 'New', company: 'Keep' });
  });

  it('headers are recognised case-, space- and underscore-insensitively; unknown columns are listed and ignored; mapping overrides', async () => {
    const r = await importCsv(t, acc.member, acc.id, 'Given,FIRST NAME,Shoe Size\r\nAda,Ignored,42\r\n', { mapping: JSON.stringify({ Given: 'first_name', 'FIRST NAME': 'last_name' }) });
    expect(r.status, r.text).toBe(202);
    expect(r.body.data.unknown_columns).toEqual(['Shoe Size']);
    await drain(t);
    expect(await t.db.contact.findFirst({ where: { accountId: acc.id, firstName: 'Ada', lastName: 'Ignored' } })).not.toBeNull();
  });
});

describe('POST /api/v1/imports with Idempotency-Key (docs/imports.md#retries)', () => {
  it("a retry of the same file answers the first import, Location and all; the retry's copy is dropped and each row is written once", async () => {
    const a = await createAccount(t);
    const tag = unique('retry');
    const csv = `first_name,last_name\r\nAda,${tag}\r\nGrace,${tag}\r\n`;
    const send = () => importCsv(t, a.member, a.id, csv, {}, { 'idempotency-key': tag });
    const first = await send();
    const again = await send();
    expect(first.status, first.text).toBe(202);
    expect([again.status, again.headers.get('location'), again.body]).toEqual([202, first.headers.get('location'), first.body]);
    expect(await t.db.import.count({ where: { accountId: a.id } })).toBe(1);
    expect(await t.db.importRow.count({ where: { accountId: a.id } })).toBe(2);
    await drain(t);
    expect(await t.db.contact.count({ where: { accountId: a.id, lastName: tag } })).toBe(2);
  });

  it('the same key with another file, or the same file with other settings, is a 422 and leaves only the first import', async () => {
    const a = await createAccount(t);
    const k = unique('retry');
    const send = (csv: string, params: Record<string, string> = {}) => importCsv(t, a.member, a.id, csv, params, { 'idempotency-key': k });
    expect((await send('first_name,email\r\nAda,ada@example.com\r\n')).status).toBe(202);
    for (const [csv, params] of [['first_name,email\r\nGrace,grace@example.com\r\n', {}], ['first_name,email\r\nAda,ada@example.com\r\n', { match_on: 'email' }]] as const) {
      const r = await send(csv, params);
      expect([r.status, r.body]).toEqual([422, { error: 'Idempotency key reused with a different payload' }]);
    }
    expect(await t.db.import.count({ where: { accountId: a.id } })).toBe(1);
  });
});

describe('POST /api/v1/imports: bad input', () => {
  it('a malformed Idempotency-Key is a 400 on idempotency_key, and no import is left', async () => {
    const a = await createAccount(t);
    const r = await importCsv(t, a.member, a.id, 'first_name\r\nAda\r\n', {}, { 'idempotency-key': 'x'.repeat(256) });
    expect([r.status, Object.keys(r.body.details ?? {})]).toEqual([400, ['idempotency_key']]);
    expect(await t.db.import.count({ where: { accountId: a.id } })).toBe(0);
  });

  it('no column for a required field is a 400 naming it, at once, and no import is left', async () => {
    const before = await t.db.import.count({ where: { accountId: acc.id } });
    const r = await importCsv(t, acc.member, acc.id, 'email,phone\r\nada@example.com,1\r\n');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'Invalid payload', details: { first_name: ['No column for this required field'] } });
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(before);
  });

  it('an unknown object or match_on is a 400 on that query parameter', async () => {
    const r = await importCsv(t, acc.member, acc.id, 'first_name\r\nAda\r\n', { object: 'planets', match_on: 'phone' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Invalid query');
    expect(Object.keys(r.body.details).sort()).toEqual(['match_on', 'object']);
  });

  it("match_on a key the object has not (contacts by domain) is a 400 naming match_on before any 403: an outsider's, a key's without the object's write scope (docs/decisions.md §2)", async () => {
    const a = await createAccount(t);
    const companiesKey = await createApiKey(t, a, ['IMPORTS', 'COMPANIES_WRITE']);
    const expected = { error: 'Invalid query', details: { match_on: ['Contacts match on email, external_id or none'] } };
    for (const as of [a.member, companiesKey, a.outsider]) {
      const r = await importCsv(t, as, a.id, 'first_name,email\r\nAda,ada@example.com\r\n', { match_on: 'domain' });
      expect([r.status, r.body], as === a.member ? 'member' : as === a.outsider ? 'outsider' : 'key').toEqual([400, expected]);
    }
    expect(await t.db.import.count({ where: { accountId: a.id } })).toBe(0);
    // The same key where match_on fits the object it may not write: the 403 stands.
    const r = await importCsv(t, companiesKey, a.id, 'first_name,email\r\nAda,ada@example.com\r\n', { match_on: 'email' });
    expect(r.status).toBe(403);
  });

  it('an empty file and a header only are 400 on body', async () => {
    const empty = await importCsv(t, acc.member, acc.id, '');
    expect(empty.status).toBe(400);
    expect(empty.body.details).toEqual({ body: ['Empty file'] });
    const header = await importCsv(t, acc.member, acc.id, 'first_name,email\r\n');
    expect(header.status).toBe(400);
    expect(header.body.details).toEqual({ body: ['No rows: the file has a header only'] });
  });

  it('a NUL character in a header or a cell, or escaped in a mapping, is a 400 naming its line or the parameter, never a 500; nothing of it stays', async () => {
    const before = await t.db.import.count({ where: { accountId: acc.id } });
    const nul = (line: number) => ({ body: [`Line ${line} holds a NUL character: not text in utf-8 (a UTF-16 file without a byte order mark wants encoding=utf-16le or utf-16be)`] });
    for (const [file, details] of [['first_name,email\u0000\r\nAda,ada@example.com\r\n', nul(1)], ['first_name,email\r\nAda,ada@example.com\r\nBo\u0000,bo@example.com\r\n', nul(3)]] as const) {
      const r = await importCsv(t, acc.member, acc.id, file);
      expect({ status: r.status, details: r.body.details }).toEqual({ status: 400, details });
    }
    const unstorable = ['Must not contain NUL characters or unpaired surrogates'];
    for (const [name, value] of [['mapping', '{"first_name":"first_\\u0000name"}'], ['value_mapping', '{"contact_type":{"x\\u0000":"lead"}}']] as const) {
      const r = await importCsv(t, acc.member, acc.id, 'first_name,contact_type\r\nAda,x\r\n', { [name]: value });
      expect({ status: r.status, details: r.body.details }).toEqual({ status: 400, details: { [name]: unstorable } });
    }
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(before);
  });

  it('a body that is not UTF-8 is a 400 on body, and nothing of it stays', async () => {
    const before = await t.db.import.count({ where: { accountId: acc.id } });
    const latin1 = Buffer.concat([Buffer.from('first_name\r\n'), Buffer.from([0x4a, 0xf6, 0x72, 0x67]), Buffer.from('\r\n')]);
    const response = await fetch(`${t.baseUrl}/api/v1/imports?account_id=${acc.id}&object=contacts`, {
      method: 'POST',
      body: latin1,
      headers: { authorization: `Bearer ${acc.member.token}`, 'content-type': 'text/csv' },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'Invalid payload', details: { body: ['Not UTF-8: give the encoding the file is in (encoding=windows-1252, for one), or save it as UTF-8 and send it again'] } });
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(before);
  });

  it('a UTF-8 BOM is not part of the first header', async () => {
    const r = await importCsv(t, acc.member, acc.id, '\ufefffirst_name\r\nBom\r\n');
    expect(r.status, r.text).toBe(202);
    expect(r.body.data.unknown_columns).toEqual([]);
  });

  it('a body that is not text/csv is a 415', async () => {
    const r = await t.rest('POST', `/api/v1/imports?account_id=${acc.id}&object=contacts`, { as: acc.member, body: { first_name: 'x' } });
    expect(r.status).toBe(415);
  });

  it('an outsider gets the 403 and no import', async () => {
    const r = await importCsv(t, acc.outsider, acc.id, 'first_name\r\nAda\r\n');
    expect(r.status).toBe(403);
  });
});

describe('the import routes', () => {
  it('GET /api/v1/imports lists the account\'s imports newest first; DELETE cancels a queued one and the worker leaves it', async () => {
    const a = await createAccount(t);
    const first = await importCsv(t, a.member, a.id, 'first_name\r\nOne\r\n');
    const second = await importCsv(t, a.member, a.id, 'first_name\r\nTwo\r\n');
    const list = await t.rest('GET', `/api/v1/imports?account_id=${a.id}`, { as: a.member });
    expect(list.status).toBe(200);
    expect(list.body.data.map((i: { id: string }) => i.id)).toEqual([second.body.data.id, first.body.data.id]);
    const cancelled = await t.rest('DELETE', `/api/v1/imports/${second.body.data.id}`, { as: a.member });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.status).toBe('cancelled');
    await drain(t);
    expect(await t.db.contact.count({ where: { accountId: a.id } })).toBe(1);
    expect((await t.rest('GET', `/api/v1/imports/${second.body.data.id}`, { as: a.member })).body.data.status).toBe('cancelled');
  });

  it('the read routes count 120 a minute per user (docs/rest.md#rate-limits): an import and its errors CSV together, the list apart', async () => {
    const a = await createAccount(t);
    const user = await createMember(t, a.id);
    const r = await importCsv(t, a.member, a.id, 'first_name\r\nAda\r\n');
    for (let i = 0; i < 120; i++) {
      const read = await t.rest('GET', `/api/v1/imports/${r.body.data.id}${i % 2 ? '/errors' : ''}`, { as: user });
      expect(read.status, `request ${i + 1}`).toBe(200);
    }
    const refused = await t.rest('GET', `/api/v1/imports/${r.body.data.id}/errors`, { as: user });
    expect([refused.status, refused.body, refused.headers.get('ratelimit-limit')]).toEqual([429, { error: 'Rate limit exceeded' }, '120']);
    for (let i = 0; i < 120; i++) expect((await t.rest('GET', `/api/v1/imports?account_id=${a.id}`, { as: user })).status, `list ${i + 1}`).toBe(200);
    expect((await t.rest('GET', `/api/v1/imports?account_id=${a.id}`, { as: user })).status).toBe(429);
    expect((await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: a.member })).status).toBe(200);
    // A ceiling against a hang: 241 requests in a row took over the 30 s default on a loaded machine.
  }, 120_000);

  it('an import of another account is a 404 on every route', async () => {
    const r = await importCsv(t, acc.member, acc.id, 'first_name\r\nAda\r\n');
    for (const [method, path] of [['GET', ''], ['GET', '/errors'], ['DELETE', '']] as const) {
      const other = await t.rest(method, `/api/v1/imports/${r.body.data.id}${path}`, { as: acc.outsider });
      expect(other.status, `${method} ${path}`).toBe(404);
    }
  });
});
