// docs/imports.md#the-worker: each chunk's transaction judges the next chunk while its statement
// runs; the next transaction uses that judged chunk only if, after its lock, the import's done_seq is
// where the chunk begins. Anything else (a retry, a stale chunk) is read from the stored rows again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_ROWS, runChunk, type JudgedChunk } from '../../src/imports/chunk.js';
import { claimImport } from '../../src/imports/worker.js';
import { createAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { importCsv } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const csvOf = (rows: number) => `first_name,email\r\n${Array.from({ length: rows }, (_, i) => `P${i},p${i}@pipelined.example`).join('\r\n')}\r\n`;

describe('imports: pipelined chunks', () => {
  it('the next chunk is judged during this one and written by the next transaction: every row once, in order, with its own cells', async () => {
    const a = await createAccount(t);
    const started = await importCsv(t, a.member, a.id, csvOf(CHUNK_ROWS + 10), { match_on: 'email' });
    const owner = crypto.randomUUID();
    expect(await claimImport(t.db, owner, 60_000)).toBe(started.body.data.id);

    const first = await runChunk(t.db, started.body.data.id, owner);
    expect(first.outcome).toBe('more');
    const ahead = await first.next!;
    expect(ahead).toMatchObject({ from: CHUNK_ROWS });
    expect(ahead!.rows).toHaveLength(10);
    expect((await runChunk(t.db, started.body.data.id, owner, ahead)).outcome).toBe('more');
    expect((await runChunk(t.db, started.body.data.id, owner)).outcome).toBe('finished');

    const contacts = await t.db.contact.findMany({ where: { accountId: a.id }, select: { firstName: true, email: true } });
    expect(contacts).toHaveLength(CHUNK_ROWS + 10);
    expect(new Set(contacts.map((c) => c.email)).size).toBe(CHUNK_ROWS + 10);
    expect(contacts.every((c) => c.email === `p${c.firstName.slice(1)}@pipelined.example`)).toBe(true);
  });

  it('a judged chunk that does not begin at done_seq (a retry, a stale one) is not written: the stored rows are read again', async () => {
    const a = await createAccount(t);
    const started = await importCsv(t, a.member, a.id, csvOf(3));
    const owner = crypto.randomUUID();
    expect(await claimImport(t.db, owner, 60_000)).toBe(started.body.data.id);
    // Judged for another place in the file: were it used, "Stale" would be written in place of P0..P2.
    const stale: JudgedChunk = {
      from: 1000, rows: [{ seq: 1001, line: 1002, cells: '["Stale","stale@pipelined.example"]', size: 35 }], failures: [],
      sources: [{ seq: 1001, line: 1002, cells: '["Stale","stale@pipelined.example"]', size: 35 }], judged: [{ index: 0, data: { firstName: 'Stale', email: 'stale@pipelined.example' } }], refs: [null],
    };
    expect((await runChunk(t.db, started.body.data.id, owner, stale)).outcome).toBe('more');
    expect((await runChunk(t.db, started.body.data.id, owner)).outcome).toBe('finished');

    const names = (await t.db.contact.findMany({ where: { accountId: a.id }, orderBy: { firstName: 'asc' } })).map((c) => c.firstName);
    expect(names).toEqual(['P0', 'P1', 'P2']);
    expect((await t.rest('GET', `/api/v1/imports/${started.body.data.id}`, { as: a.member })).body.data).toMatchObject({ status: 'completed', created: 3, rows_processed: 3 });
  });
});
