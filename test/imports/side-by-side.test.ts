// One tenant never holds back another's imports (docs/decisions.md §26, docs/imports.md#the-worker):
// an instance's worker runs imports of different accounts side by side (IMPORT_CONCURRENCY, at least
// two), one per account at a time. Account A's import is made long here (one row a chunk, by the
// worker's chunk limits), so that B's one-row import, stored while A's runs, is seen to end first.
// How long B waits beside a 1,000,000-row import is measured, not tested: npm run bench:import -- --beside.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_LIMITS } from '../../src/imports/chunk.js';
import { DEFAULT_IMPORT_CONCURRENCY, startImportWorker } from '../../src/imports/worker.js';
import { loadConfig } from '../../src/config.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, TEST_SECRET, type TestApp } from '../helpers/app.js';
import { importCsv, silentLog } from './helpers.js';

let t: TestApp;
let a: TestAccount;
let b: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  [a, b] = await Promise.all([createAccount(t), createAccount(t)]);
});
afterAll(() => t?.close());

/** One stored row a chunk: an import of n rows takes n transactions. */
const ONE_ROW_A_CHUNK = { ...CHUNK_LIMITS, chunkBytes: 1 };

const stateOf = (id: string) => t.db.import.findUniqueOrThrow({ where: { id }, select: { status: true, rowsProcessed: true, rowsTotal: true } });

describe('imports of different accounts run side by side', () => {
  it("a second account's import starts and ends while another account's import is running (the worker runs two at once)", async () => {
    const rows = Array.from({ length: 300 }, (_, i) => `A${i},a${i}@example.com`).join('\n');
    const long = await importCsv(t, a.member, a.id, `first_name,email\n${rows}\n`);
    expect(long.status).toBe(202);
    const worker = startImportWorker(t.db, { leaseMs: 60_000, pollMs: 100, log: silentLog, limits: ONE_ROW_A_CHUNK, concurrency: 2 });
    try {
      await expect.poll(async () => (await stateOf(long.body.data.id)).rowsProcessed).toBeGreaterThan(0);
      const short = await importCsv(t, b.member, b.id, 'first_name,email\nBea,bea@example.com\n');
      expect(short.status).toBe(202);
      worker.nudge();
      await expect.poll(async () => (await stateOf(short.body.data.id)).status).toBe('completed');
      const meanwhile = await stateOf(long.body.data.id);
      expect(meanwhile.status).toBe('running');
      expect(meanwhile.rowsProcessed).toBeLessThan(meanwhile.rowsTotal!);
    } finally {
      await worker.close();
    }
  });

  it('two imports of one account never run at once, even with a slot free', async () => {
    const c = await createAccount(t);
    const first = await importCsv(t, c.member, c.id, `first_name\n${Array.from({ length: 50 }, (_, i) => `F${i}`).join('\n')}\n`);
    const second = await importCsv(t, c.member, c.id, 'first_name\nSecond\n');
    const worker = startImportWorker(t.db, { leaseMs: 60_000, pollMs: 100, log: silentLog, limits: ONE_ROW_A_CHUNK, concurrency: 2 });
    try {
      await expect.poll(async () => (await stateOf(first.body.data.id)).rowsProcessed).toBeGreaterThan(0);
      // Each time the first is seen running, the second has not started.
      await expect
        .poll(async () => {
          const [one, two] = await Promise.all([stateOf(first.body.data.id), stateOf(second.body.data.id)]);
          if (one.status === 'running') expect(two.status).toBe('queued');
          return two.status;
        })
        .toBe('completed');
      expect((await stateOf(first.body.data.id)).status).toBe('completed');
    } finally {
      await worker.close();
    }
  });

  it('IMPORT_CONCURRENCY is two unless set, and never less', () => {
    const base = { NODE_ENV: 'test', AUTH_JWT_SECRET: TEST_SECRET };
    expect(loadConfig(base).imports.concurrency).toBe(DEFAULT_IMPORT_CONCURRENCY);
    expect(DEFAULT_IMPORT_CONCURRENCY).toBeGreaterThanOrEqual(2);
    expect(loadConfig({ ...base, IMPORT_CONCURRENCY: '4' }).imports.concurrency).toBe(4);
    expect(() => loadConfig({ ...base, IMPORT_CONCURRENCY: '1' })).toThrow(/IMPORT_CONCURRENCY/);
  });
});
