// docs/decisions.md §17 limits: one running import per account, 20 started an hour, 200 MB a file;
// and the GraphQL surface (Import, Account.imports, import(id), cancelImport).
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimImport } from '../../src/imports/worker.js';
import { MAX_IMPORT_BYTES } from '../../src/imports/intake.js';
import { createAccount, createMember, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';
import { drain, importCsv } from './helpers.js';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

describe('imports: limits', () => {
  it('a second import while one runs waits QUEUED: no instance claims it until the first ends', async () => {
    const a = await createAccount(t);
    const first = await importCsv(t, a.member, a.id, 'first_name\r\nOne\r\n');
    const second = await importCsv(t, a.member, a.id, 'first_name\r\nTwo\r\n');
    expect(await claimImport(t.db, crypto.randomUUID(), 60_000)).toBe(first.body.data.id);
    expect(await claimImport(t.db, crypto.randomUUID(), 60_000)).toBeNull(); // another instance: the account has one running
    expect((await t.rest('GET', `/api/v1/imports/${second.body.data.id}`, { as: a.member })).body.data.status).toBe('queued');
    await t.db.import.update({ where: { id: first.body.data.id }, data: { status: 'completed' } });
    expect(await claimImport(t.db, crypto.randomUUID(), 60_000)).toBe(second.body.data.id);
  });

  it('the 21st import started in an hour is a 429 for the account, whoever sends it', async () => {
    const a = await createAccount(t);
    const other = await createMember(t, a.id);
    for (let i = 0; i < 20; i++) expect((await importCsv(t, i % 2 ? a.member : other, a.id, `first_name\r\nP${i}\r\n`)).status).toBe(202);
    const r = await importCsv(t, a.owner, a.id, 'first_name\r\nP21\r\n');
    expect(r.status).toBe(429);
    expect(r.body).toEqual({ error: 'Rate limit exceeded' });
    await drain(t);
  });

  it('a body declared larger than 200 MB is a 413 before it is read', async () => {
    // 300 MB announced; 1 MiB sent: the answer comes without the rest.
    const url = new URL(`${t.baseUrl}/api/v1/imports?account_id=${acc.id}&object=contacts`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${acc.member.token}`, 'content-type': 'text/csv', 'content-length': String(300 * 1024 * 1024), 'x-forwarded-for': '198.51.100.9' },
      });
      req.on('response', (res) => {
        resolve(res.statusCode!);
        res.resume();
        req.destroy();
      });
      req.on('error', reject);
      req.write(`first_name\r\n${'x\r\n'.repeat(1024 * 1024 / 3)}`);
    });
    expect(status).toBe(413);
    expect(300 * 1024 * 1024).toBeGreaterThan(MAX_IMPORT_BYTES);
  });
});

describe('imports: GraphQL', () => {
  it('import(id), Account.imports and cancelImport answer members; an outsider sees null and NOT_FOUND', async () => {
    const r = await importCsv(t, acc.member, acc.id, 'first_name\r\nGql\r\n');
    const id = r.body.data.id;
    const read = await t.gql(`query($id: ID!) { import(id: $id) { id status object matchOn rowsTotal createdBy { id } } }`, { id }, { as: acc.member });
    expect(read.data.import).toEqual({ id, status: 'QUEUED', object: 'CONTACTS', matchOn: null, rowsTotal: 1, createdBy: { id: acc.member.id } });
    const list = await t.gql(`query($id: ID!) { account(id: $id) { imports(first: 5) { nodes { id } totalCount } } }`, { id: acc.id }, { as: acc.owner });
    expect(list.data.account.imports.nodes.map((n: { id: string }) => n.id)).toContain(id);
    const hidden = await t.gql(`query($id: ID!) { import(id: $id) { id } }`, { id }, { as: acc.outsider });
    expect(hidden.data.import).toBeNull();
    const refused = await t.gql(`mutation($id: ID!) { cancelImport(id: $id) { id } }`, { id }, { as: acc.outsider });
    expect(errorOf(refused).extensions?.code).toBe('NOT_FOUND');
    const cancelled = await t.gql(`mutation($id: ID!) { cancelImport(id: $id) { status finishedAt } }`, { id }, { as: acc.member });
    expect(cancelled.data.cancelImport.status).toBe('CANCELLED');
  });
});
