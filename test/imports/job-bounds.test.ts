// docs/security.md#what-a-job-holds: whatever a stored row holds (written by the intake, or straight
// into import_rows), the import job never holds more than a row's 1 MB, a chunk's 2 MB of cells, or
// an errors CSV page's 2 MB at once: a huge stored row fails by its line, unread.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CHUNK_LIMITS, runChunk } from '../../src/imports/chunk.js';
import { importErrorsCsvStream } from '../../src/imports/errors-csv.js';
import { claimImport } from '../../src/imports/worker.js';
import { createAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { drain } from './helpers.js';

// Rows of many MB through PGlite, on two shared cores.
vi.setConfig({ testTimeout: 120_000 });

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

const MB = 1024 * 1024;

/** A stored import of `rows` (cells under `first_name`, `notes`), in an account of its own. */
async function stored(rows: string[][]) {
  const a = await createAccount(t);
  const created = await t.db.import.create({
    data: { accountId: a.id, object: 'contacts', headers: ['first_name', 'notes'], columns: ['firstName', null], unknownColumns: ['notes'], rowsTotal: rows.length },
  });
  await t.db.importRow.createMany({ data: rows.map((cells, i) => ({ accountId: a.id, importId: created.id, seq: i + 1, line: i + 2, cells })) });
  return { id: created.id, account: a };
}

/** Every chunk of the stream, as bytes. */
async function chunksOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return chunks;
}

describe('imports: what the job holds is bounded', () => {
  it('a stored row larger than 1 MB (a 20 MB cell) fails by its line, unread; the other rows are written', async () => {
    const huge = ['Huge', 'x'.repeat(20 * MB)];
    const { id, account } = await stored([['Ann', ''], huge, ['Bob', '']]);
    const size = JSON.stringify(huge).length;
    await drain(t);
    expect(await t.db.import.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'completed', created: 2, failed: 1 });
    const [error] = await t.db.importError.findMany({ where: { importId: id } });
    expect(error).toMatchObject({ line: 3, cells: [], details: { row: [`Too large: ${size} bytes; a row may have at most ${MB} bytes`] } });
    const csv = await t.rest('GET', `/api/v1/imports/${id}/errors`, { as: account.member });
    expect(csv.text).toBe(`line,first_name,notes,errors\r\n3,,,"row: Too large: ${size} bytes; a row may have at most ${MB} bytes"\r\n`);
  });

  // The bound is CHUNK_LIMITS.chunkBytes (2 MB); here 250 KB, as rows of cells within the intake's
  // 64 KB a cell (docs/imports.md#bounds) would need 35 of them to pass 2 MB.
  it('a chunk stops at the row that takes its cells past its bound: rows of 60 KB are written a few a chunk', async () => {
    const rows = Array.from({ length: 20 }, (_, i) => [`P${i}`, 'x'.repeat(60 * 1024)]);
    const { id } = await stored(rows);
    const owner = randomUUID();
    expect(await claimImport(t.db, owner, 60_000)).toBe(id);
    await runChunk(t.db, id, owner, null, { ...CHUNK_LIMITS, chunkBytes: 250 * 1024 });
    const { doneSeq } = await t.db.import.findUniqueOrThrow({ where: { id } });
    expect(doneSeq).toBe(5); // four rows are 240 KB: the fifth takes the chunk past 250 KB
    while ((await runChunk(t.db, id, owner)).outcome === 'more');
    expect(await t.db.import.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'completed', created: 20 });
  });

  it('the errors CSV is read a page of at most 2 MB of cells at a time; a stored error row over 1 MB is listed by its line without its cells', async () => {
    const { id, account } = await stored([]);
    const big = 'y'.repeat(500 * 1024);
    await t.db.importError.createMany({
      data: [
        ...Array.from({ length: 12 }, (_, i) => ({ accountId: account.id, importId: id, line: i + 2, cells: [`P${i}`, big], details: { first_name: ['Bad'] } })),
        { accountId: account.id, importId: id, line: 14, cells: ['Huge', 'z'.repeat(20 * MB)], details: { row: ['Bad'] } },
      ],
    });
    const chunks = await chunksOf(importErrorsCsvStream(t.db, account.id, id));
    expect(Math.max(...chunks.map((c) => c.byteLength))).toBeLessThan(CHUNK_LIMITS.chunkBytes + CHUNK_LIMITS.recordBytes);
    const lines = Buffer.concat(chunks).toString().split('\r\n');
    expect(lines[0]).toBe('line,first_name,notes,errors');
    expect(lines.slice(1, 13).map((line) => line.split(',')[0])).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 2)));
    expect(lines[1]).toBe(`2,P0,${big},first_name: Bad`);
    expect(lines[13]).toBe('14,,,row: Bad');
  });
});
