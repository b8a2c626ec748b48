// docs/imports.md#what-a-dead-instance-leaves: an upload cut off by its instance's death, and rows
// stored for an import cancelled meanwhile, are cleared by any instance's worker.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ABANDONED_UPLOAD_MS, sweepImports } from '../../src/imports/import.service.js';
import { startImportWorker } from '../../src/imports/worker.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { importCsv, silentLog } from './helpers.js';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

/** An import as an intake leaves it: begun `ageMs` ago, `rows` of its file stored, no rows_total unless given. */
async function begun(ageMs: number, rows: number, data: { status?: 'queued' | 'cancelled'; rowsTotal?: number } = {}) {
  const created = await t.db.import.create({
    data: { accountId: acc.id, object: 'contacts', headers: ['first_name'], columns: ['firstName'], unknownColumns: [], createdAt: new Date(Date.now() - ageMs), ...data },
  });
  await t.db.importRow.createMany({ data: Array.from({ length: rows }, (_, i) => ({ accountId: acc.id, importId: created.id, seq: i + 1, line: i + 2, cells: ['Row'] })) });
  return created.id;
}
const exists = async (id: string) => (await t.db.import.count({ where: { id } })) === 1;
const storedRows = (id: string) => t.db.importRow.count({ where: { importId: id } });

describe('what a dead instance leaves is swept', () => {
  it('an upload whose file never finished arriving is removed with its stored rows once it is older than any upload can last', async () => {
    const cutOff = await begun(ABANDONED_UPLOAD_MS + 60_000, 3);
    const arriving = await begun(60_000, 3);
    const queued = await begun(ABANDONED_UPLOAD_MS + 60_000, 3, { rowsTotal: 3 });
    await sweepImports(t.db);
    expect([await exists(cutOff), await storedRows(cutOff)]).toEqual([false, 0]);
    expect([await exists(arriving), await storedRows(arriving)]).toEqual([true, 3]);
    expect([await exists(queued), await storedRows(queued)]).toEqual([true, 3]);
  });

  it("rows stored for an import cancelled while its file arrived are dropped; the import stays, cancelled", async () => {
    const upload = await importCsv(t, acc.member, acc.id, 'first_name\r\nAda\r\n');
    const id = upload.body.data.id as string;
    await t.rest('DELETE', `/api/v1/imports/${id}`, { as: acc.member });
    // What the intake stores after the cancel dropped the rows there were.
    await t.db.importRow.create({ data: { accountId: acc.id, importId: id, seq: 2, line: 3, cells: ['Late'] } });
    await sweepImports(t.db);
    expect(await storedRows(id)).toBe(0);
    expect((await t.db.import.findUniqueOrThrow({ where: { id } })).status).toBe('cancelled');
  });

  it("a dead worker's heartbeat is deleted a day after it lapsed; a live one stays", async () => {
    const [dead, alive] = [randomUUID(), randomUUID()];
    await t.db.importWorker.createMany({ data: [
      { id: dead, aliveUntil: new Date(Date.now() - 86_400_000 - 60_000) },
      { id: alive, aliveUntil: new Date(Date.now() + 60_000) },
    ] });
    await sweepImports(t.db);
    expect((await t.db.importWorker.findMany({ where: { id: { in: [dead, alive] } } })).map((w) => w.id)).toEqual([alive]);
  });

  it("every instance's worker sweeps, without being asked", async () => {
    const cutOff = await begun(ABANDONED_UPLOAD_MS + 60_000, 1);
    const worker = startImportWorker(t.db, { leaseMs: 60_000, pollMs: 600_000, log: silentLog }, randomUUID());
    try {
      await vi.waitFor(async () => expect(await exists(cutOff)).toBe(false), { timeout: 30_000, interval: 50 });
    } finally {
      await worker.close();
    }
  });
});
