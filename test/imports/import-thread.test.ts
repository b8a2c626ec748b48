// docs/imports.md#the-worker: on PostgreSQL the import worker runs in a thread of its own
// (src/imports/thread.ts), started when an import is due, ended when idle, restarted when it dies.
// PGlite keeps it in-process.
import { threadId } from 'node:worker_threads';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { startImportThread } from '../../src/imports/thread.js';
import { createLogger } from '../../src/logger.js';
import { createAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { WAIT } from '../helpers/live.js';
import { importCsv } from './helpers.js';
import { skipIfMissing } from '../helpers/prerequisites.js';

// Two chunk-sized imports each, on two shared cores beside other test files.
vi.setConfig({ testTimeout: 120_000 });

type LogRecord = { msg: string; importThread?: number; importId?: string; level: number };

const template = inject('template');
let t: TestApp;
let databaseUrl: string;
beforeAll(async () => {
  if (template.kind !== 'postgres') return;
  t = await createTestApp();
  const [{ name }] = await t.db.$queryRaw<[{ name: string }]>`SELECT current_database() AS name`;
  const url = new URL(template.url);
  url.pathname = `/${name}`;
  databaseUrl = url.href;
});
afterAll(() => t?.close());

/** An import thread on the test's database whose records (its own and the main side's) are kept in `records`. */
function startThread(records: LogRecord[], options: Partial<Parameters<typeof startImportThread>[0]> = {}) {
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => void records.push(JSON.parse(line) as LogRecord) } });
  return startImportThread({ databaseUrl, bounds: {}, leaseMs: 60_000, pollMs: 50, logLevel: 'debug', heapMb: 96, log, db: t.db, ...options });
}

/** The test's client, counting the main side's raw reads (the watch's due checks among them). */
function countingDb() {
  const reads = { count: 0 };
  const db = new Proxy(t.db, {
    get(target, key, receiver) {
      if (key !== '$queryRaw') return Reflect.get(target, key, receiver) as unknown;
      return (...args: Parameters<typeof target.$queryRaw>) => {
        reads.count++;
        return target.$queryRaw(...args);
      };
    },
  });
  return { db, reads };
}

const csvOf = (rows: number, domain: string) => `first_name,email\r\n${Array.from({ length: rows }, (_, i) => `P${i},p${i}@${domain}\r\n`).join('')}`;

/** Waits until the import has ended (a condition, not a sleep); its row. */
const ended = (id: string) =>
  vi.waitFor(async () => {
    const row = await t.db.import.findUniqueOrThrow({ where: { id } });
    if (row.status === 'running' || row.status === 'queued') throw new Error(`still ${row.status} at ${row.doneSeq}`);
    return row;
  }, { timeout: 100_000, interval: 50 });

describe.skipIf(skipIfMissing(template.kind === 'postgres' ? null : 'DATABASE_URL (a PostgreSQL template)'))('the import thread (PostgreSQL)', () => {
  it('an import on PostgreSQL is written by the import thread, not the main thread', async () => {
    const a = await createAccount(t);
    const records: LogRecord[] = [];
    const imports = startThread(records);
    try {
      const started = await importCsv(t, a.member, a.id, csvOf(2_500, 'thread.example'), { match_on: 'email' });
      expect(started.status, started.text).toBe(202);
      imports.nudge();
      expect(await ended(started.body.data.id)).toMatchObject({ status: 'completed', created: 2_500, failed: 0 });
      // The thread logs after each commit, so its last records may still be on their way.
      await vi.waitFor(() => expect(records.some((r) => r.msg === 'import left' && r.importId === started.body.data.id)).toBe(true), WAIT);
      const chunks = records.filter((r) => r.msg === 'import chunk committed' && r.importId === started.body.data.id);
      expect(chunks).toHaveLength(4); // three of rows and the one that finds none left
      const thread = imports.thread()!.threadId;
      expect(thread).not.toBe(threadId);
      expect(chunks.every((r) => r.importThread === thread)).toBe(true);
      expect(records.some((r) => r.msg === 'import thread started' && r.importThread === thread)).toBe(true);
    } finally {
      await imports.close();
    }
    expect(await t.db.contact.count({ where: { accountId: a.id } })).toBe(2_500);
  });

  it('a thread that dies is restarted and the import completes, each row written once', async () => {
    const a = await createAccount(t);
    const rows = 3_000;
    // The test holds the upsert lock of a row of the second chunk: the thread dies with one chunk
    // committed and the next one open, as a thread out of heap would (deterministic).
    const holder = new pg.Client({ connectionString: databaseUrl });
    holder.on('error', () => {}); // the database is dropped under it when the file ends
    await holder.connect();
    const records: LogRecord[] = [];
    const imports = startThread(records);
    try {
      await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`${a.id}:p1500@restart.example`]);
      const started = await importCsv(t, a.member, a.id, csvOf(rows, 'restart.example'), { match_on: 'email' });
      expect(started.status, started.text).toBe(202);
      const id = started.body.data.id as string;
      imports.nudge();
      await vi.waitFor(async () => {
        const { rows: [state] } = await holder.query<{ done: number; waiting: number }>(
          `SELECT (SELECT done_seq FROM imports WHERE id = $1) AS done,
                  (SELECT count(*)::int FROM pg_locks l JOIN pg_database d ON d.oid = l.database
                   WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted) AS waiting`,
          [id],
        );
        expect(state).toMatchObject({ done: 1000, waiting: 1 });
      }, { timeout: 100_000, interval: 50 });
      await imports.thread()!.terminate();
      await holder.query('SELECT pg_advisory_unlock_all()');

      // Its lease is handed back at once (IMPORT_LEASE_MS here is 60 s, longer than the test may take).
      expect(await ended(id)).toMatchObject({ status: 'completed', rowsProcessed: rows, created: rows, failed: 0 });
      await vi.waitFor(() => expect(records.some((r) => r.msg === 'import left' && r.importId === id)).toBe(true), WAIT);
      expect(records.some((r) => r.msg === 'import thread exited; restarting it')).toBe(true);
      const writers = new Set(records.filter((r) => r.msg === 'import chunk committed').map((r) => r.importThread));
      expect(writers.size).toBe(2); // the first chunk by the thread that died, the rest by the new one
      expect(writers.has(threadId)).toBe(false);
    } finally {
      await holder.end();
      await imports.close();
    }
    const [written] = await t.db.$queryRaw<{ n: number; emails: number }[]>`
      SELECT count(*)::int AS n, count(DISTINCT email)::int AS emails FROM contacts WHERE account_id = ${a.id}::uuid`;
    expect(written).toEqual({ n: rows, emails: rows });
  });

  it('a stored row that makes the thread run out of memory ends the thread, not the process: each attempt fails as "ran out of memory", and the third fails the import; the next import runs', async () => {
    const a = await createAccount(t);
    // A 20 MB cell stored as is (the intake refuses one; a row stored before its bounds, or written
    // straight into import_rows, is not), and the chunk's own bounds lifted, so the thread's
    // 64 MB heap cannot hold its chunk.
    const poisoned = await t.db.import.create({
      data: { accountId: a.id, object: 'contacts', headers: ['first_name'], columns: ['firstName'], unknownColumns: [], rowsTotal: 2 },
    });
    await t.db.importRow.createMany({
      data: [['Ann'], ['x'.repeat(20 * 1024 * 1024)]].map((cells, i) => ({ accountId: a.id, importId: poisoned.id, seq: i + 1, line: i + 2, cells })),
    });
    const records: LogRecord[] = [];
    const unbounded = { recordBytes: 2 ** 31 - 1, chunkBytes: 2 ** 31 - 1 };
    const imports = startThread(records, { heapMb: 64, limits: unbounded });
    try {
      imports.nudge();
      expect(await ended(poisoned.id)).toMatchObject({
        status: 'failed', attempts: 3,
        error: 'Stopped after 3 failed attempts (the last: ran out of memory); the rows before it are written',
      });
      const deaths = records.filter((r) => r.msg === 'import thread exited; restarting it') as (LogRecord & { reason?: string })[];
      expect(deaths.map((r) => r.reason)).toEqual(['ran out of memory', 'ran out of memory', 'ran out of memory']);
      expect(await t.db.event.count({ where: { accountId: a.id, type: 'import.failed', subjectId: poisoned.id } })).toBe(1);

      // The restarted thread goes on with the next import.
      const next = await importCsv(t, a.member, a.id, csvOf(10, 'after-oom.example'));
      expect(next.status, next.text).toBe(202);
      imports.nudge();
      expect(await ended(next.body.data.id)).toMatchObject({ status: 'completed', created: 10 });
    } finally {
      await imports.close();
    }
  });

  it('no thread runs until an import is due; one stored by another instance starts it, and it ends after idleMs without work', async () => {
    const a = await createAccount(t);
    const records: LogRecord[] = [];
    const { db, reads } = countingDb();
    const imports = startThread(records, { db, idleMs: 300 });
    try {
      // The watch has asked several times (every 50 ms here) and found nothing due: no thread.
      await vi.waitFor(() => expect(reads.count).toBeGreaterThanOrEqual(5), WAIT);
      expect(imports.thread()).toBeNull();
      expect(records.some((r) => r.msg === 'import thread started')).toBe(false);

      // Stored through the test app, whose nudge is not this worker's: as another instance would.
      const started = await importCsv(t, a.member, a.id, csvOf(10, 'on-demand.example'));
      expect(started.status, started.text).toBe(202);
      expect(await ended(started.body.data.id)).toMatchObject({ status: 'completed', created: 10 });
      expect(records.some((r) => r.msg === 'import thread started')).toBe(true);

      // Idle 300 ms: the thread ends by itself, is not taken for dead, and a nudge starts one again.
      await vi.waitFor(() => expect(imports.thread()).toBeNull(), WAIT);
      expect(records.some((r) => r.msg === 'import thread idle; ending')).toBe(true);
      expect(records.some((r) => r.msg === 'import thread exited; restarting it')).toBe(false);
      const next = await importCsv(t, a.member, a.id, csvOf(5, 'on-demand-2.example'));
      expect(next.status, next.text).toBe(202);
      imports.nudge();
      expect(imports.thread()).not.toBeNull();
      expect(await ended(next.body.data.id)).toMatchObject({ status: 'completed', created: 5 });
    } finally {
      await imports.close();
    }
    expect(imports.thread()).toBeNull();
  });
});
