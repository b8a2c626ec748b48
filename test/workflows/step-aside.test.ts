// docs/workflows.md#the-job-runner-and-why: workflow runs step aside while the requests the process is
// answering keep it busy (src/http/requests-in-flight.ts): no claim or step starts then, and the runs
// go on at the first quiet moment. Proven by conditions (the runner waiting on the requests, the run
// still pending), never by times: the tests count requests as keeping the process busy at once (busyMs 0).
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createAccount, createContact } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { RequestsInFlight, requestsInFlight } from '../../src/http/requests-in-flight.js';
import { runDueWorkflows, type RunnerOptions } from '../../src/workflows/workflow-runner.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** A workflow contact.created → add_note, and one event of it: its run, pending. */
async function pendingRun() {
  const acc = await createAccount(t);
  const flow = await t.db.workflow.create({
    data: { accountId: acc.id, name: 'Welcome', active: true, triggerEvent: 'contact.created', trigger: { event: 'contact.created', conditions: [] }, actions: [{ type: 'add_note', params: { body: 'Welcome' } }] },
  });
  const contact = await createContact(t, acc, { firstName: 'Ada' });
  await t.db.event.create({ data: { accountId: acc.id, type: 'contact.created', actorType: 'user', actorId: acc.member.id, subjectId: contact.id, contactId: contact.id, data: { object: { id: contact.id, first_name: 'Ada' } } } });
  const run = await t.db.workflowRun.findFirstOrThrow({ where: { workflowId: flow.id } });
  expect(run.status).toBe('pending');
  return { run, contact };
}

const options = (requests: RequestsInFlight): RunnerOptions => ({
  retryBaseMs: 20, leaseMs: 60_000, mail: false, log: t.deps.log, yieldTo: { requests, busyMs: 0 },
});

describe('workflow runs step aside for requests in flight', { timeout: 60_000 }, () => {
  test('no run is claimed or stepped while requests keep the process busy; once none is in flight, the run goes on', async () => {
    const { run, contact } = await pendingRun();
    const requests = new RequestsInFlight();
    const leave = requests.enter();
    const stepping = runDueWorkflows(t.db, options(requests));
    await vi.waitFor(() => expect(requests.waiting).toBe(1), { interval: 5 });
    const meanwhile = await t.db.workflowRun.findUniqueOrThrow({ where: { accountId_id: { accountId: run.accountId, id: run.id } } });
    expect(meanwhile).toMatchObject({ status: 'pending', dueAt: run.dueAt }); // not even claimed
    leave();
    await stepping;
    const after = await t.db.workflowRun.findUniqueOrThrow({ where: { accountId_id: { accountId: run.accountId, id: run.id } } });
    expect(after.status).toBe('succeeded');
    expect(await t.db.note.count({ where: { accountId: run.accountId, contactId: contact.id } })).toBe(1);
  });

  test('under requests that never end, the runs still go on (each step waits a bounded time)', async () => {
    const { run } = await pendingRun();
    const requests = new RequestsInFlight();
    requests.enter(); // never left
    while ((await t.db.workflowRun.findUniqueOrThrow({ where: { accountId_id: { accountId: run.accountId, id: run.id } } })).status !== 'succeeded') {
      await runDueWorkflows(t.db, options(requests));
    }
    expect(requests.size).toBe(1);
  });

  test('every request the app answers is counted from its arrival to its answer', async () => {
    const enter = vi.spyOn(requestsInFlight, 'enter');
    try {
      const response = await t.app.fetch(new Request('http://localhost/healthz'));
      expect(response.status).toBe(200);
      expect(enter).toHaveBeenCalledTimes(1);
      expect(requestsInFlight.size).toBe(0); // ended with its answer
    } finally {
      enter.mockRestore();
    }
  });

  test('background work waiting for a quiet moment goes on when the last request ends', async () => {
    const requests = new RequestsInFlight();
    const [first, second] = [requests.enter(), requests.enter()];
    const quiet = requests.quiet({ busyMs: 0, atMostMs: 600_000 });
    first();
    expect(requests.waiting).toBe(1);
    second();
    await quiet; // by the requests' end: its bound is ten minutes
    expect(requests.waiting).toBe(0);
  });

  test('requests that have not yet been in flight without a pause for busyMs hold nothing back', async () => {
    const requests = new RequestsInFlight();
    requests.enter();
    await requests.quiet({ busyMs: 600_000, atMostMs: 600_000 }); // at once: busy for ten minutes it is not
    expect(requests.waiting).toBe(0);
  });

  test('a request ended twice is ended once', () => {
    const requests = new RequestsInFlight();
    const first = requests.enter();
    requests.enter();
    first();
    first();
    expect(requests.size).toBe(1);
  });
});
