// docs/decisions.md §24, "No tenant takes the service down": a CSV record and cell are bounded
// (docs/imports.md#bounds). A record over 1 MB refuses the file with a 400 naming its line, while the
// service goes on answering everyone else; a cell over 64 KB fails its row, naming its column.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { parseCsv } from '../helpers/csv.js';
import { drain, importCsv } from './helpers.js';

vi.setConfig({ testTimeout: 120_000 });

let t: TestApp;
let acc: TestAccount;
let other: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
});
afterAll(() => t?.close());

const MB = 1024 * 1024;

/**
 * POSTs `head`, then `megabytes` MB of `fill`, then `tail`, a megabyte a pull; once two megabytes
 * are out (past the record bound), `meanwhile` runs before any more is sent.
 */
async function streamedImport(head: string, fill: string, megabytes: number, tail: string, meanwhile: () => Promise<void>) {
  const encoder = new TextEncoder();
  const block = encoder.encode(fill.repeat(MB / fill.length));
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === 0) controller.enqueue(encoder.encode(head));
      else if (sent <= megabytes) controller.enqueue(block);
      else {
        controller.enqueue(encoder.encode(tail));
        controller.close();
      }
      if (sent++ === 2) await meanwhile();
    },
  });
  const response = await fetch(`${t.baseUrl}/api/v1/imports?account_id=${acc.id}&object=contacts`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${acc.member.token}`, 'content-type': 'text/csv', 'x-forwarded-for': '198.51.100.24' },
    duplex: 'half',
  } as RequestInit);
  return { status: response.status, body: (await response.json()) as unknown };
}

/** Another tenant's list and the liveness probe, answered while an upload is under way. */
async function othersAreServed() {
  const [health, list] = await Promise.all([
    fetch(`${t.baseUrl}/healthz`),
    t.rest('GET', `/api/v1/contacts?account_id=${other.id}`, { as: other.member }),
  ]);
  expect([health.status, list.status]).toEqual([200, 200]);
}

describe('imports: a record and a cell are bounded (docs/decisions.md §24)', () => {
  it('a 20 MB cell is a record over 1 MB: 400 naming line 2, others served meanwhile, and the next import works', async () => {
    const r = await streamedImport('First Name,Company\nB,', 'x', 20, '\n', othersAreServed);
    expect(r).toEqual({ status: 400, body: { error: 'Invalid payload', details: { body: ['Line 2: a record longer than 1 MB (1048576 bytes)'] } } });
    expect(await t.db.import.count({ where: { accountId: acc.id } })).toBe(0); // nothing of the refused file stays
    const next = await importCsv(t, acc.member, acc.id, 'First Name,Company\nNext,Works\n');
    expect(next.status, next.text).toBe(202);
  });

  it('a 2 MB record of small cells (line 3) is a 400 naming line 3; the next import works', async () => {
    const cells = `"${'y'.repeat(50 * 1024)}",`;
    const r = await streamedImport('First Name,Company\nA,Fine\nB,', cells, 2, 'end\n', othersAreServed);
    expect(r).toEqual({ status: 400, body: { error: 'Invalid payload', details: { body: ['Line 3: a record longer than 1 MB (1048576 bytes)'] } } });
    const next = await importCsv(t, acc.member, acc.id, 'First Name\nAgain\n');
    expect(next.status, next.text).toBe(202);
  });

  it('a cell over 64 KB fails its row, naming its column; the other rows are imported', async () => {
    const a = await createAccount(t);
    const csv = `First Name,Notes\r\nShort,ok\r\nLong,${'z'.repeat(64 * 1024 + 1)}\r\nAfter,ok\r\n`;
    const r = await importCsv(t, a.member, a.id, csv);
    expect(r.status, r.text).toBe(202);
    await drain(t);
    const done = await t.rest('GET', `/api/v1/imports/${r.body.data.id}`, { as: a.member });
    expect(done.body.data).toMatchObject({ status: 'completed', created: 2, failed: 1 });
    const [, ...rows] = parseCsv((await t.rest('GET', `/api/v1/imports/${r.body.data.id}/errors`, { as: a.member })).text);
    expect(rows.map((row) => [row[0], row.at(-1)])).toEqual([['3', 'Notes: Longer than 64 KB (65536 bytes)']]);
  });
});
