// docs/decisions.md §21: an open task whose due time has passed gets `task.overdue` once, from a
// job that runs in one instance at a time. The job is run by calling it, never by waiting a minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { announceOverdueTasks } from '../../src/activities/overdue.js';
import { createAccount, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';

const HOUR = 3_600_000;
const NOW = new Date();

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t?.close());

/** `n` tasks of a new account: due an hour ago (open), unless `make` says otherwise. */
async function tasks(n: number, make: (i: number) => object = () => ({})): Promise<{ account: TestAccount; ids: string[] }> {
  const account = await createAccount(t);
  const contactId = (await createContact(t, account)).id;
  const rows = await t.db.task.createManyAndReturn({
    data: Array.from({ length: n }, (_, i) => ({ accountId: account.id, title: `T${i}`, contactId, dueAt: new Date(NOW.getTime() - HOUR), ...make(i) })),
  });
  return { account, ids: rows.map((r) => r.id) };
}
const overdueEvents = (accountId: string) => t.db.event.findMany({ where: { accountId, type: 'task.overdue' }, select: { subjectId: true, actorType: true } });
const run = (db = t.db, batchSize = 25) => announceOverdueTasks(db, { batchSize, asOf: NOW });

describe('task.overdue is written once per task', () => {
  it('open tasks past due are announced once (actor system); due later, done or undated ones are not; a second run announces nothing', async () => {
    const { account, ids } = await tasks(5, (i) =>
      [{}, {}, { dueAt: new Date(NOW.getTime() + HOUR) }, { status: 'done', completedAt: NOW }, { dueAt: null }][i]!,
    );
    await run();
    await run();
    const events = await overdueEvents(account.id);
    expect(events.map((e) => e.subjectId).sort()).toEqual([ids[0], ids[1]].sort());
    expect(events.every((e) => e.actorType === 'system')).toBe(true);
  });

  it('a new due date clears the mark: the task is announced again when the new one passes', async () => {
    const { account, ids } = await tasks(1);
    await run();
    const r = await t.gql('mutation ($id: ID!, $d: DateTime!) { updateTask(id: $id, input: { dueAt: $d }) { id } }', { id: ids[0], d: new Date(NOW.getTime() - 2 * HOUR).toISOString() }, { as: account.owner });
    expect(r.errors).toBeUndefined();
    await run();
    expect(await overdueEvents(account.id)).toHaveLength(2);
  });

  it('concurrent runs announce each task exactly once, in bounded batches', async () => {
    const { account } = await tasks(40);
    let announced = (await Promise.all(Array.from({ length: 4 }, () => run(t.db, 7)))).reduce((sum, r) => sum + r.announced, 0);
    // A run locked out leaves the rest to the next one: run until nothing is left.
    while (await t.db.task.count({ where: { accountId: account.id, overdueNotifiedAt: null } })) announced += (await run(t.db, 7)).announced;
    expect(announced).toBe(40);
    const events = await overdueEvents(account.id);
    expect(new Set(events.map((e) => e.subjectId)).size).toBe(40);
    expect(events).toHaveLength(40);
  });

  it.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('two instances on one PostgreSQL give one event per task', async () => {
    const { account } = await tasks(60);
    // Instance B: a pool of its own on the same database, as a second process would have.
    const other = await openDatabase({ databaseUrl: t.deps.db.pool!.options.connectionString!, dataDir: '', poolMax: 3 });
    try {
      const instances = [t.db, other.prisma];
      let announced = 0;
      while (await t.db.task.count({ where: { accountId: account.id, overdueNotifiedAt: null } })) {
        const runs = await Promise.all([0, 1, 0, 1].map((i) => run(instances[i], 6)));
        announced += runs.reduce((sum, r) => sum + r.announced, 0);
      }
      expect(announced).toBe(60);
      const events = await overdueEvents(account.id);
      expect(events).toHaveLength(60);
      expect(new Set(events.map((e) => e.subjectId)).size).toBe(60);
    } finally {
      await other.close();
    }
  });
});
