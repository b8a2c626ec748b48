// docs/imports.md#attempts: an import job that dies (an error in its chunk, its thread out of memory,
// its process killed) is tried at most three times, counted in the database when it is claimed, then
// ends failed with its reason and import.failed: never a crash loop. While no live worker holds a
// running import, its reads say it is waiting to resume (docs/imports.md#waiting-to-resume).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChunk } from '../../src/imports/chunk.js';
import { claimImport, MAX_ATTEMPTS } from '../../src/imports/worker.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { drain } from './helpers.js';

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
  // A real failure in a chunk's statement: the database refuses one row's insert, every time.
  await t.db.$executeRawUnsafe(`CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.first_name = 'Poison' THEN RAISE EXCEPTION 'poisoned row'; END IF; RETURN NEW; END $$`);
  await t.db.$executeRawUnsafe('CREATE TRIGGER refuse_poison BEFORE INSERT ON contacts FOR EACH ROW EXECUTE FUNCTION refuse_poison()');
});
afterAll(() => t?.close());

/** An import whose file is stored (claimable), its rows' first names as given, in an account of its own unless one is given. */
async function stored(names: string[], account?: TestAccount) {
  const a = account ?? (await createAccount(t));
  const created = await t.db.import.create({
    data: { accountId: a.id, object: 'contacts', headers: ['first_name'], columns: ['firstName'], unknownColumns: [], rowsTotal: names.length },
  });
  await t.db.importRow.createMany({ data: names.map((name, i) => ({ accountId: a.id, importId: created.id, seq: i + 1, line: i + 2, cells: [name] })) });
  return { id: created.id, account: a };
}

/** What a SIGKILL leaves: the worker's heartbeat stops, so it lapses. */
const dies = (owner: string) => t.db.$executeRaw`UPDATE import_workers SET alive_until = now() - interval '1 second' WHERE id = ${owner}::uuid`;

const failedEvents = (accountId: string, id: string) => t.db.event.count({ where: { accountId, type: 'import.failed', subjectId: id } });

describe('imports: a job that dies is tried three times, then fails with its reason', () => {
  it('a chunk that throws is tried three times, counted in the database, then the import ends failed with its reason and import.failed; the next import runs', async () => {
    const poisoned = await stored(['Ann', 'Poison']);
    const next = await stored(['Bob'], poisoned.account);
    await drain(t);

    const row = await t.db.import.findUniqueOrThrow({ where: { id: poisoned.id } });
    expect(row).toMatchObject({ status: 'failed', attempts: MAX_ATTEMPTS, error: 'Stopped after 3 failed attempts (the last: an internal error); the rows before it are written' });
    expect(await failedEvents(poisoned.account.id, poisoned.id)).toBe(1);
    expect(await t.db.import.findUniqueOrThrow({ where: { id: next.id } })).toMatchObject({ status: 'completed', created: 1 });
  });

  it('attempts hold across restarts and instances: an import whose worker dies mid-chunk three times fails at the next claim, never claimed a fourth time', async () => {
    const { id, account } = await stored(['Ann']);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const owner = randomUUID(); // each time another instance, or the same one restarted
      expect(await claimImport(t.db, owner, 60_000)).toBe(id);
      expect(await t.db.import.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'running', attempts: attempt });
      await dies(owner);
    }
    expect(await claimImport(t.db, randomUUID(), 60_000)).toBeNull();
    expect(await t.db.import.findUniqueOrThrow({ where: { id } })).toMatchObject({
      status: 'failed',
      error: 'Stopped after 3 failed attempts (the last: its worker stopped mid-chunk (its instance died or restarted)); the rows before it are written',
    });
    expect(await failedEvents(account.id, id)).toBe(1);
    expect(await t.db.importRow.count({ where: { importId: id } })).toBe(0);
  });

  it('a committed chunk starts the count again: an import whose instance dies after every chunk still completes', async () => {
    const names = ['A', 'B', 'C', 'D', 'E'];
    const { id } = await stored(names);
    const oneRowChunks = { recordBytes: 1024, chunkBytes: 1 };
    for (let i = 0; i < names.length; i++) {
      const owner = randomUUID();
      expect(await claimImport(t.db, owner, 60_000)).toBe(id);
      expect((await runChunk(t.db, id, owner, null, oneRowChunks)).outcome).toBe('more');
      await dies(owner);
    }
    const owner = randomUUID();
    expect(await claimImport(t.db, owner, 60_000)).toBe(id);
    expect((await runChunk(t.db, id, owner)).outcome).toBe('finished');
    expect(await t.db.import.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'completed', created: names.length, failed: 0 });
  });
});

describe('imports: waiting to resume', () => {
  const read = async (id: string) => {
    const rest = (await t.rest('GET', `/api/v1/imports/${id}`, { as: acc.member })).body.data as { status: string; waiting_to_resume: boolean };
    const gql = await t.gql<{ import: { status: string; waitingToResume: boolean } }>(`query($id: ID!) { import(id: $id) { status waitingToResume } }`, { id }, { as: acc.member });
    expect(gql.data!.import).toEqual({ status: rest.status.toUpperCase(), waitingToResume: rest.waiting_to_resume });
    return rest;
  };

  it('a running import whose worker died says waiting_to_resume (status stays running) until a worker takes it up again', async () => {
    const { id } = await stored(['Ann', 'Bob'], acc);
    expect(await read(id)).toMatchObject({ status: 'queued', waiting_to_resume: false });
    const first = randomUUID();
    expect(await claimImport(t.db, first, 60_000)).toBe(id);
    expect(await read(id)).toMatchObject({ status: 'running', waiting_to_resume: false });
    await dies(first);
    expect(await read(id)).toMatchObject({ status: 'running', waiting_to_resume: true });
    expect(await claimImport(t.db, randomUUID(), 60_000)).toBe(id);
    expect(await read(id)).toMatchObject({ status: 'running', waiting_to_resume: false });
  });
});
