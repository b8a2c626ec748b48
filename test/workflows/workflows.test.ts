// docs/decisions.md §25, docs/workflows.md: workflows that act. A worker runs in the app (the events
// worker's step); mail goes to a real SMTP server on loopback, webhooks to a real HTTP receiver
// verified with Standard Webhooks. Waits pass by moving the runs' clock, never by sleeping.
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { createAccount, createApiKey, createContact, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type GqlResult, type TestApp } from '../helpers/app.js';
import { startSmtpReceiver, type SmtpReceiver } from '../invoices/smtp-receiver.js';
import { startReceiver } from '../events/receiver.js';
import { clock, STEP_ATTEMPTS } from '../../src/workflows/workflow-runner.js';

let t: TestApp;
let smtp: SmtpReceiver;
beforeAll(async () => {
  smtp = await startSmtpReceiver();
  t = await createTestApp({
    worker: true,
    env: {
      SMTP_URL: smtp.url, MAIL_FROM: 'Studio <studio@example.test>', MAIL_RETRY_BASE_MS: '20', EVENT_POLL_MS: '30',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_BASE_MS: '40', WORKFLOW_RETRY_BASE_MS: '20', WORKFLOW_LEASE_MS: '2000',
    },
  });
});
afterAll(async () => {
  await t?.close();
  await smtp?.close();
});
afterEach(() => void (clock.now = () => Date.now()));

const CREATE = `mutation ($input: CreateWorkflowInput!) { createWorkflow(input: $input) { id active trigger { event conditions { path op value } } actions { type params } } }`;
const UPDATE = `mutation ($id: ID!, $input: UpdateWorkflowInput!) { updateWorkflow(id: $id, input: $input) { id active } }`;
const ok = <T = any>(r: GqlResult, field: string): T => {
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data[field] as T;
};
type Flow = { trigger?: { event: string; conditions?: { path: string; op: string; value?: unknown }[] } | null; actions?: { type: string; params: Record<string, unknown> }[] };
const workflow = async (acc: TestAccount, flow: Flow, name = unique('Flow')) =>
  ok<{ id: string }>(await t.gql(CREATE, { input: { accountId: acc.id, name, ...flow } }, { as: acc.member }), 'createWorkflow');
const runsOf = (workflowId: string) => t.db.workflowRun.findMany({ where: { workflowId }, orderBy: { startedAt: 'asc' } });
/** Waits until the workflow has `count` runs, all ended (or in `status`). */
const settled = (workflowId: string, count: number, statuses = ['succeeded', 'failed', 'skipped']) =>
  vi.waitFor(
    async () => {
      const runs = await runsOf(workflowId);
      expect(runs.filter((r) => statuses.includes(r.status))).toHaveLength(count);
      return runs;
    },
    { timeout: 90_000, interval: 25 },
  );
const updateContact = (acc: TestAccount, id: string, input: object) =>
  t.gql('mutation ($id: ID!, $input: UpdateContactInput!) { updateContact(id: $id, input: $input) { id } }', { id, input }, { as: acc.member });

describe('saving a workflow', { timeout: 60_000 }, () => {
  test('text the database cannot keep (a NUL, an unpaired surrogate) in a condition or a step is refused, each part named, never a 500', async () => {
    const acc = await createAccount(t);
    const unstorable = ['Must not contain NUL characters or unpaired surrogates'];
    const flow = {
      trigger: { event: 'contact.created', conditions: [{ path: 'object.first_name', op: 'eq', value: 'a\u0000b' }] },
      actions: [{ type: 'create_task', params: { title: 'a\u0000b' } }, { type: 'add_note', params: { body: 'a\ud800b' } }, { type: 'update_record', params: { fields: { first_name: 'a\u0000' } } }],
    };
    const r = await t.gql(CREATE, { input: { accountId: acc.id, name: 'x', ...flow } }, { as: acc.member });
    expect(errorOf(r).extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      details: { 'trigger.conditions.0.value': unstorable, 'actions.0.params.title': unstorable, 'actions.1.params.body': unstorable, 'actions.2.params.fields': unstorable },
    });
    const rest = await t.rest('POST', '/api/v1/workflows', { as: acc.owner, body: { account_id: acc.id, name: 'y', trigger: { event: 'contact.created' }, actions: [{ type: 'create_task', params: { title: 'a\u0000b' } }] } });
    expect({ status: rest.status, details: rest.body.details }).toEqual({ status: 400, details: { 'actions.0.params.title': unstorable } });
    expect(await t.db.workflow.count({ where: { accountId: acc.id } })).toBe(0);
  });

  test('an unknown event type, a path no record of it has and a value of the wrong type are refused, each part named', async () => {
    const acc = await createAccount(t);
    const r1 = await t.gql(CREATE, { input: { accountId: acc.id, name: 'x', trigger: { event: 'contact.exploded', conditions: [] } } }, { as: acc.member });
    expect(errorOf(r1).extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { 'trigger.event': [expect.any(String)] } });
    const r2 = await t.gql(
      CREATE,
      {
        input: {
          accountId: acc.id, name: 'x',
          trigger: { event: 'contact.updated', conditions: [{ path: 'object.shoe_size', op: 'eq', value: 1 }, { path: 'object.email', op: 'gt', value: 'a' }, { path: 'object.created_at', op: 'lt', value: 7 }, { path: 'object.email', op: 'is_set', value: 'yes' }] },
          actions: [{ type: 'add_note', params: { body: 'Hi {{object.nickname}}' } }, { type: 'wait', params: { days: 91 } }, { type: 'send_email', params: { to: 'nobody', subject: 's', body: 'b' } }],
        },
      },
      { as: acc.member },
    );
    expect(Object.keys(errorOf(r2).extensions!.details as object).sort()).toEqual([
      'actions.0.params.body', 'actions.1.params.days', 'actions.2.params.to',
      'trigger.conditions.0.path', 'trigger.conditions.1.op', 'trigger.conditions.2.value', 'trigger.conditions.3.value',
    ]);
  });

  test('placeholders {{object.<field>}}, {{account.name}} and {{record_owner.name}} are accepted; custom fields too', async () => {
    const acc = await createAccount(t);
    await t.db.customField.create({ data: { accountId: acc.id, object: 'CONTACT', key: 'tier', label: 'Tier', type: 'TEXT' } });
    await workflow(acc, {
      trigger: { event: 'contact.created', conditions: [{ path: 'object.custom_fields.tier', op: 'eq', value: 'gold' }] },
      actions: [{ type: 'add_note', params: { body: '{{object.first_name}} of {{account.name}}, owned by {{record_owner.name}} ({{object.custom_fields.tier}})' } }],
    });
  });

  test('a send_webhook step names an endpoint of the account: another account\'s is "Not found in this account"', async () => {
    const [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
    const ep = await t.db.webhookEndpoint.create({ data: { accountId: other.id, url: 'http://127.0.0.1:9/x', eventTypes: ['*'], secretCiphertext: 'x' } });
    const r = await t.gql(CREATE, { input: { accountId: acc.id, name: 'x', trigger: { event: 'contact.created' }, actions: [{ type: 'send_webhook', params: { endpoint_id: ep.id } }] } }, { as: acc.member });
    expect(errorOf(r).extensions!.details).toEqual({ 'actions.0.params.endpoint_id': ['Not found in this account'] });
  });

  test('an account has at most 50 workflows: the 51st is refused', async () => {
    const acc = await createAccount(t);
    await t.db.workflow.createMany({ data: Array.from({ length: 50 }, (_, i) => ({ accountId: acc.id, name: `w${i}` })) });
    const r = await t.gql(CREATE, { input: { accountId: acc.id, name: 'one too many' } }, { as: acc.member });
    expect(errorOf(r).extensions!.code).toBe('BAD_USER_INPUT');
    expect(await t.db.workflow.count({ where: { accountId: acc.id } })).toBe(50);
  });

  test('an API key reads workflows with workflows:read and never changes them', async () => {
    const acc = await createAccount(t);
    const { id } = await workflow(acc, { trigger: { event: 'contact.created' } });
    const key = await createApiKey(t, acc, ['WORKFLOWS_READ', 'CONTACTS_WRITE']);
    const read = await t.gql('query ($id: ID!) { workflow(id: $id) { id trigger { event } runs { totalCount } } }', { id }, { as: key });
    expect(ok(read, 'workflow')).toMatchObject({ id, trigger: { event: 'contact.created' } });
    expect(errorOf(await t.gql(UPDATE, { id, input: { active: false } }, { as: key })).extensions!.code).toBe('FORBIDDEN');
    expect(errorOf(await t.gql(CREATE, { input: { accountId: acc.id, name: 'k' } }, { as: key })).extensions!.code).toBe('FORBIDDEN');
    const keyless = await createApiKey(t, acc, ['CONTACTS_READ']);
    expect(errorOf(await t.gql('query ($id: ID!) { workflow(id: $id) { id } }', { id }, { as: keyless })).extensions!.code).toBe('FORBIDDEN');
  });

  test('another account\'s member neither reads nor tests a workflow (null, as an unknown id)', async () => {
    const [acc, other] = await Promise.all([createAccount(t), createAccount(t)]);
    const { id } = await workflow(acc, { trigger: { event: 'contact.created' } });
    expect((await t.gql('query ($id: ID!) { workflow(id: $id) { id } }', { id }, { as: other.member })).data.workflow).toBeNull();
    const event = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id } });
    expect((await t.gql('query ($id: ID!, $e: ID!) { testWorkflow(id: $id, eventId: $e) { status } }', { id, e: event.id }, { as: other.member })).data.testWorkflow).toBeNull();
  });
});

describe('conditions', () => {
  const data = { object: { first_name: 'Ada', value: 1500, closed_at: '2030-01-02T00:00:00.000Z', email: 'Ada@Example.test', tags: null, custom_fields: { tier: 'gold' } }, previous: { value: 1000 } };
  const cases: [string, { path: string; op: string; value?: unknown }, boolean][] = [
    ['eq', { path: 'object.first_name', op: 'eq', value: 'Ada' }, true],
    ['ne', { path: 'object.first_name', op: 'ne', value: 'Ada' }, false],
    ['in', { path: 'object.first_name', op: 'in', value: ['Bob', 'Ada'] }, true],
    ['gt (numbers as numbers)', { path: 'object.value', op: 'gt', value: 999 }, true],
    ['gte', { path: 'previous.value', op: 'gte', value: 1000 }, true],
    ['lt (dates as dates)', { path: 'object.closed_at', op: 'lt', value: '2030-01-03' }, true],
    ['lte', { path: 'object.value', op: 'lte', value: 1499 }, false],
    ['contains (case-insensitive)', { path: 'object.email', op: 'contains', value: 'example.TEST' }, true],
    ['is_set true', { path: 'object.tags', op: 'is_set', value: true }, false],
    ['is_set false', { path: 'object.tags', op: 'is_set', value: false }, true],
    ['changed (in previous)', { path: 'object.value', op: 'changed' }, true],
    ['changed (not in previous)', { path: 'object.email', op: 'changed' }, false],
    ['eq on a custom field', { path: 'object.custom_fields.tier', op: 'eq', value: 'gold' }, true],
  ];
  test.each(cases)('%s', async (_name, condition, expected) => {
    const { holds } = await import('../../src/studio/workflow-rules.js');
    expect(holds(condition as never, data)).toBe(expected);
  });
});

// A shared machine runs these slowly: generous limits, never a sleep.
describe('runs', { timeout: 120_000 }, () => {
  test('a lead form\'s contact gets a task assigned to its owner, made by actor workflow; a contact that does not match gets no run', async () => {
    const acc = await createAccount(t);
    const { id } = await workflow(acc, {
      trigger: { event: 'contact.created', conditions: [{ path: 'object.source', op: 'eq', value: 'website' }] },
      actions: [{ type: 'create_task', params: { title: 'Call {{object.first_name}}', due_in_days: 1, assignee_id: 'record_owner' } }],
    });
    const lead = await createContact(t, acc, { firstName: 'Ada', source: 'website', ownerId: acc.member.id });
    await createContact(t, acc, { firstName: 'Bob', source: 'referral' });
    // createContact writes the row directly: the event is what a write through the service emits.
    await t.db.event.create({ data: { accountId: acc.id, type: 'contact.created', actorType: 'user', actorId: acc.member.id, subjectId: lead.id, contactId: lead.id, data: { object: { id: lead.id, first_name: 'Ada', source: 'website', owner_id: acc.member.id } } } });
    const [run] = await settled(id, 1);
    expect(run!.status).toBe('succeeded');
    const task = await t.db.task.findFirstOrThrow({ where: { accountId: acc.id, contactId: lead.id } });
    expect(task).toMatchObject({ title: 'Call Ada', assigneeId: acc.member.id });
    const made = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'task.created', subjectId: task.id } });
    expect(made).toMatchObject({ actorType: 'workflow', actorId: id });
  });

  test('exactly one run per (workflow, event): 20 events at once, two workers, none twice', async () => {
    const acc = await createAccount(t);
    const second = await createTestApp({ worker: true, env: { EVENT_POLL_MS: '30', WORKFLOW_LEASE_MS: '2000' } });
    try {
      const { id } = await workflow(acc, { trigger: { event: 'contact.created' }, actions: [{ type: 'add_note', params: { body: 'Welcome {{object.first_name}}' } }] });
      const made = await Promise.all(Array.from({ length: 20 }, (_, i) => t.gql('mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }', { input: { accountId: acc.id, firstName: `P${i}` } }, { as: acc.member })));
      const ids = made.map((r) => ok<{ id: string }>(r, 'createContact').id);
      const runs = await settled(id, 20);
      expect(runs.every((r) => r.status === 'succeeded')).toBe(true);
      expect(await t.db.note.count({ where: { accountId: acc.id, contactId: { in: ids } } })).toBe(20);
      const dup = await t.db.workflowRun.create({ data: { accountId: acc.id, workflowId: id, eventId: runs[0]!.eventId } }).then(() => 'inserted', () => 'refused');
      expect(dup).toBe('refused');
    } finally {
      await second.close();
    }
  });

  test('a won deal makes its contact a client (through the contact\'s update) and e-mails the owner, values HTML-escaped', async () => {
    const acc = await createAccount(t);
    const ownerEmail = `${unique('owner')}@example.test`;
    const { id } = await workflow(acc, {
      trigger: { event: 'deal.status_changed', conditions: [{ path: 'object.status', op: 'eq', value: 'won' }] },
      actions: [
        { type: 'update_record', params: { record: 'contact', fields: { contact_type: 'client' } } },
        { type: 'send_email', params: { to: 'record_owner', subject: 'Won: {{object.title}}', body: '<p>{{object.title}} is won, {{record_owner.name}}.</p>' } },
      ],
    });
    const contact = await createContact(t, acc, { firstName: 'Cy' });
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: '<b>Big</b> & co', contactId: contact.id, ownerId: acc.member.id } });
    // After the member's last request (a request refreshes its user from the token's claims); the owner wins the deal.
    await t.db.user.update({ where: { id: acc.member.id }, data: { email: ownerEmail, name: 'Olive' } });
    ok(await t.gql('mutation ($id: ID!) { setDealStatus(id: $id, status: won) { id } }', { id: deal.id }, { as: acc.owner }), 'setDealStatus');
    const [run] = await settled(id, 1);
    expect(run!.status, run!.error ?? '').toBe('succeeded');
    expect((await t.db.contact.findUniqueOrThrow({ where: { id: contact.id } })).contactType).toBe('client');
    const changed = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'contact.updated', subjectId: contact.id } });
    expect(changed.actorType).toBe('workflow');
    await smtp.until(() => smtp.received.some((m) => JSON.stringify(m.to).includes(ownerEmail)));
    const mail = smtp.received.find((m) => JSON.stringify(m.to).includes(ownerEmail))!;
    expect(mail.subject).toBe('Won: <b>Big</b> & co');
    expect(mail.html).toContain('<p>&lt;b&gt;Big&lt;/b&gt; &amp; co is won, Olive.</p>');
    expect(mail.text).toContain('<b>Big</b> & co is won');
  });

  test('an overdue invoice e-mails the client a reminder after a 3-day wait (the clock moved, no sleep)', async () => {
    const acc = await createAccount(t);
    const email = `${unique('client')}@example.test`;
    const contact = await createContact(t, acc, { firstName: 'Di', email });
    const { id } = await workflow(acc, {
      trigger: { event: 'invoice.status_changed', conditions: [{ path: 'object.status', op: 'eq', value: 'overdue' }] },
      actions: [{ type: 'wait', params: { days: 3 } }, { type: 'send_email', params: { to: 'contact', subject: 'Reminder: {{object.invoice_number}}', body: 'Invoice {{object.invoice_number}} is overdue.' } }],
    });
    const invoice = await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: unique('INV'), amount: 100, dueDate: new Date('2020-01-01'), contactId: contact.id, status: 'sent' } });
    ok(await t.gql('mutation ($id: ID!) { setInvoiceStatus(id: $id, status: overdue) { id } }', { id: invoice.id }, { as: acc.member }), 'setInvoiceStatus');
    const [waiting] = await settled(id, 1, ['waiting']);
    expect(waiting!.resumeAt!.getTime() - Date.now()).toBeGreaterThan(3 * 86_400_000 - 60_000);
    expect(smtp.received.some((m) => JSON.stringify(m.to).includes(email))).toBe(false);
    clock.now = () => Date.now() + 3 * 86_400_000 + 1000;
    const [run] = await settled(id, 1);
    expect(run!.status).toBe('succeeded');
    await smtp.until(() => smtp.received.some((m) => JSON.stringify(m.to).includes(email)));
  });

  test('a webhook step sends workflow.webhook to the endpoint alone, signed (Standard Webhooks), with the triggering event', async () => {
    const acc = await createAccount(t);
    const receiver = await startReceiver();
    try {
      const created = ok<{ endpoint: { id: string }; secret: string }>(
        await t.gql('mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } secret } }', { input: { accountId: acc.id, url: receiver.url, eventTypes: ['deal.deleted'] } }, { as: acc.owner }),
        'createWebhookEndpoint',
      );
      const { id } = await workflow(acc, { trigger: { event: 'contact.created' }, actions: [{ type: 'send_webhook', params: { endpoint_id: created.endpoint.id } }] });
      const contact = ok<{ id: string }>(await t.gql('mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }', { input: { accountId: acc.id, firstName: 'Hook' } }, { as: acc.member }), 'createContact');
      await receiver.waitFor(1);
      const [req] = receiver.received;
      const body = new Webhook(created.secret).verify(req!.body, req!.headers as Record<string, string>) as { type: string; data: { workflow_id: string; run_id: string; event: { type: string; data: { object: { id: string } } } } };
      expect(body.type).toBe('workflow.webhook');
      expect(body.data).toMatchObject({ workflow_id: id, event: { type: 'contact.created', data: { object: { id: contact.id } } } });
      const [run] = await settled(id, 1);
      expect(body.data.run_id).toBe(run!.id);
    } finally {
      await receiver.close();
    }
  });

  test('a failing step is tried 4 times with backoff, then the run is failed with its error and workflow.run_failed; later steps do not run', async () => {
    const acc = await createAccount(t);
    const { id } = await workflow(acc, {
      trigger: { event: 'contact.created' },
      actions: [{ type: 'add_note', params: { body: 'first' } }, { type: 'add_note', params: { body: 'never' } }],
    });
    // A note cannot be written while this trigger refuses them: a fault of the database, retried.
    await t.db.$executeRawUnsafe(`CREATE OR REPLACE FUNCTION wf_refuse_notes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.body = 'first' AND NEW.account_id = '${acc.id}' THEN RAISE EXCEPTION 'notes are down'; END IF; RETURN NEW; END $$`);
    await t.db.$executeRawUnsafe(`CREATE TRIGGER wf_refuse_notes_${acc.id.slice(0, 8)} BEFORE INSERT ON notes FOR EACH ROW EXECUTE FUNCTION wf_refuse_notes()`);
    try {
      ok(await t.gql('mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }', { input: { accountId: acc.id, firstName: 'F' } }, { as: acc.member }), 'createContact');
      const [run] = await settled(id, 1);
      expect(run!.status).toBe('failed');
      expect(run!.error).toContain('notes are down');
      expect(run!.steps).toEqual([expect.objectContaining({ index: 0, status: 'failed', attempts: STEP_ATTEMPTS })]);
      expect(await t.db.note.count({ where: { accountId: acc.id } })).toBe(0);
      const failed = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'workflow.run_failed' } });
      expect(failed.data).toMatchObject({ run_id: run!.id, error: expect.stringContaining('notes are down') });
    } finally {
      await t.db.$executeRawUnsafe(`DROP TRIGGER wf_refuse_notes_${acc.id.slice(0, 8)} ON notes`);
    }
  });

  test('a chain of workflows deeper than 5 runs is skipped with error "loop"', async () => {
    const acc = await createAccount(t);
    // Each run updates the contact, whose contact.updated starts the next run.
    const { id } = await workflow(acc, { trigger: { event: 'contact.updated' }, actions: [{ type: 'update_record', params: { fields: { phone: '{{object.updated_at}}' } } }] });
    const contact = ok<{ id: string }>(await t.gql('mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }', { input: { accountId: acc.id, firstName: 'L' } }, { as: acc.member }), 'createContact');
    ok(await updateContact(acc, contact.id, { phone: '0' }), 'updateContact');
    const runs = await settled(id, 6);
    expect(runs.map((r) => [r.depth, r.status, r.error])).toEqual([
      [1, 'succeeded', null], [2, 'succeeded', null], [3, 'succeeded', null], [4, 'succeeded', null], [5, 'succeeded', null], [6, 'skipped', 'loop'],
    ]);
  });

  test('deactivating a workflow stops its waiting runs at their next step (skipped)', async () => {
    const acc = await createAccount(t);
    const { id } = await workflow(acc, { trigger: { event: 'contact.created' }, actions: [{ type: 'wait', params: { minutes: 10 } }, { type: 'add_note', params: { body: 'late' } }] });
    ok(await t.gql('mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }', { input: { accountId: acc.id, firstName: 'W' } }, { as: acc.member }), 'createContact');
    await settled(id, 1, ['waiting']);
    ok(await t.gql(UPDATE, { id, input: { active: false } }, { as: acc.member }), 'updateWorkflow');
    clock.now = () => Date.now() + 11 * 60_000;
    const [run] = await settled(id, 1);
    expect(run).toMatchObject({ status: 'skipped', error: 'The workflow was deactivated' });
    expect(await t.db.note.count({ where: { accountId: acc.id } })).toBe(0);
  });

  test('a run resumes after a crash mid-run: a claimed run whose lease passed is taken again, its done steps not redone', async () => {
    const acc = await createAccount(t);
    const { id } = await workflow(acc, { trigger: { event: 'contact.created' }, actions: [{ type: 'add_note', params: { body: 'one' } }, { type: 'add_note', params: { body: 'two' } }] });
    const contact = await createContact(t, acc, { firstName: 'C' });
    // As an instance that died after step 0 committed: step 0 done, the run claimed (due later, its lease).
    // One transaction with the event's: no worker sees the run before it stands so.
    await t.db.$transaction(async (tx) => {
      const event = await tx.event.create({ data: { accountId: acc.id, type: 'contact.created', actorType: 'user', actorId: acc.member.id, subjectId: contact.id, contactId: contact.id, data: { object: { id: contact.id, first_name: 'C' } } } });
      const note = await tx.note.create({ data: { accountId: acc.id, body: 'one', contactId: contact.id } });
      await tx.workflowRun.updateMany({
        where: { workflowId: id, eventId: event.id },
        data: { status: 'running', nextStep: 1, dueAt: new Date(Date.now() + 60_000), steps: [{ index: 0, type: 'add_note', status: 'succeeded', attempts: 1, error: null, result: { note_id: note.id } }] },
      });
    });
    clock.now = () => Date.now() + 61_000;
    const [run] = await settled(id, 1);
    expect(run!.status).toBe('succeeded');
    const bodies = (await t.db.note.findMany({ where: { accountId: acc.id }, select: { body: true } })).map((n) => n.body).sort();
    expect(bodies).toEqual(['one', 'two']);
  });

  test('testWorkflow is a dry run: each step\'s would-be result, nothing written or sent; skipped with no steps when the conditions fail', async () => {
    const acc = await createAccount(t);
    const { id } = await workflow(acc, {
      trigger: { event: 'contact.updated', conditions: [{ path: 'object.first_name', op: 'eq', value: 'Eve' }] },
      actions: [{ type: 'create_task', params: { title: 'Hello {{object.first_name}}' } }, { type: 'send_email', params: { to: 'ops@example.test', subject: 'S', body: 'B' } }],
    });
    await t.db.workflow.update({ where: { id }, data: { active: false } }); // no real run beside the dry one
    const contact = ok<{ id: string }>(await t.gql('mutation ($input: CreateContactInput!) { createContact(input: $input) { id } }', { input: { accountId: acc.id, firstName: 'Eve' } }, { as: acc.member }), 'createContact');
    ok(await updateContact(acc, contact.id, { lastName: 'X' }), 'updateContact');
    const event = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'contact.updated', subjectId: contact.id } });
    const [tasks, mails, events] = await Promise.all([t.db.task.count({ where: { accountId: acc.id } }), t.db.invoiceMail.count({ where: { accountId: acc.id } }), t.db.event.count({ where: { accountId: acc.id } })]);
    const TEST = 'query ($id: ID!, $e: ID!) { testWorkflow(id: $id, eventId: $e) { status eventId steps { index type status result } } }';
    const dry = ok(await t.gql(TEST, { id, e: event.id }, { as: acc.member }), 'testWorkflow');
    expect(dry).toMatchObject({ status: 'succeeded', eventId: event.id, steps: [{ index: 0, type: 'create_task', status: 'succeeded', result: { title: 'Hello Eve' } }, { index: 1, type: 'send_email', result: { to: 'ops@example.test' } }] });
    expect([await t.db.task.count({ where: { accountId: acc.id } }), await t.db.invoiceMail.count({ where: { accountId: acc.id } }), await t.db.event.count({ where: { accountId: acc.id } })]).toEqual([tasks, mails, events]);
    const created = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'contact.created', subjectId: contact.id } });
    expect(ok(await t.gql(TEST, { id, e: created.id }, { as: acc.member }), 'testWorkflow')).toMatchObject({ status: 'skipped', steps: [] });
  });
});
