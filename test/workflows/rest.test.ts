import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, createApiKey, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// docs/decisions.md §25 on REST: /api/v1/workflows, its runs and its dry run. Params keep their
// snake_case keys both ways.

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const FLOW = {
  name: 'Welcome leads',
  trigger: { event: 'contact.created', conditions: [{ path: 'object.source', op: 'eq', value: 'website' }] },
  actions: [{ type: 'create_task', params: { title: 'Call {{object.first_name}}', due_in_days: 1, assignee_id: 'record_owner' } }],
};

describe('/api/v1/workflows', { timeout: 60_000 }, () => {
  it('POST answers 201 with trigger and actions as given (params in snake_case); GET by id, PATCH, list and DELETE work', async () => {
    const r = await t.rest('POST', '/api/v1/workflows', { as: acc.member, body: { account_id: acc.id, ...FLOW } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.data).toMatchObject({ name: 'Welcome leads', active: true, trigger: FLOW.trigger, actions: FLOW.actions });
    const id = r.body.data.id as string;
    expect((await t.rest('GET', `/api/v1/workflows/${id}`, { as: acc.member })).body.data).toEqual(r.body.data);
    const patched = await t.rest('PATCH', `/api/v1/workflows/${id}`, { as: acc.member, body: { active: false } });
    expect([patched.status, patched.body.data.active]).toEqual([200, false]);
    const list = await t.rest('GET', `/api/v1/workflows?account_id=${acc.id}`, { as: acc.member });
    expect(list.body.data.map((w: { id: string }) => w.id)).toContain(id);
    const runs = await t.rest('GET', `/api/v1/workflows/${id}/runs`, { as: acc.member });
    expect([runs.status, runs.body.data, runs.body.total]).toEqual([200, [], 0]);
    expect((await t.rest('DELETE', `/api/v1/workflows/${id}`, { as: acc.member })).status).toBe(204);
    expect((await t.rest('GET', `/api/v1/workflows/${id}`, { as: acc.member })).status).toBe(404);
  });

  it('a bad trigger or action is a 400 naming each part (trigger.event, actions.<i>.params.<name>)', async () => {
    const r = await t.rest('POST', '/api/v1/workflows', {
      as: acc.member,
      body: { account_id: acc.id, name: 'x', trigger: { event: 'nope.happened' }, actions: [{ type: 'wait', params: { minutes: 0 } }, { type: 'add_note', params: { body: '{{secret.value}}' } }] },
    });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.details).sort()).toEqual(['actions.0.params.minutes', 'actions.1.params.body', 'trigger.event']);
  });

  it('POST /{id}/test {"event_id"} answers the dry run (a query: no Idempotency-Key needed); keys read with workflows:read and get 403 on writes', async () => {
    const made = await t.rest('POST', '/api/v1/workflows', { as: acc.member, body: { account_id: acc.id, name: 'dry', trigger: { event: 'contact.created' }, actions: [{ type: 'add_note', params: { body: 'Hi {{object.first_name}}' } }] } });
    const id = made.body.data.id as string;
    const contact = await t.rest('POST', '/api/v1/contacts', { as: acc.member, body: { account_id: acc.id, first_name: 'Zoe' } });
    const event = await t.db.event.findFirstOrThrow({ where: { accountId: acc.id, type: 'contact.created', subjectId: contact.body.data.id } });
    const dry = await t.rest('POST', `/api/v1/workflows/${id}/test`, { as: acc.member, body: { event_id: event.id } });
    expect(dry.status, dry.text).toBe(200);
    expect(dry.body.data).toMatchObject({ workflow_id: id, event_id: event.id, status: 'succeeded', steps: [{ index: 0, type: 'add_note', status: 'succeeded', result: { body: 'Hi Zoe' } }] });
    expect(await t.db.note.count({ where: { accountId: acc.id } })).toBe(0);
    const key = await createApiKey(t, acc, ['WORKFLOWS_READ']);
    expect((await t.rest('GET', `/api/v1/workflows/${id}`, { as: key })).status).toBe(200);
    expect((await t.rest('PATCH', `/api/v1/workflows/${id}`, { as: key, body: { active: false } })).status).toBe(403);
    expect((await t.rest('DELETE', `/api/v1/workflows/${id}`, { as: key })).status).toBe(403);
  });
});

describe('GET /api/v1/workflows/{id}/runs?status=', { timeout: 60_000 }, () => {
  it('lists the runs in that status only; a value that is no run status is a 400 naming status', async () => {
    const made = await t.rest('POST', '/api/v1/workflows', { as: acc.member, body: { account_id: acc.id, name: 'statuses', trigger: { event: 'deal.created' }, actions: [{ type: 'add_note', params: { body: 'x' } }] } });
    const id = made.body.data.id as string;
    // Runs as the runner leaves them (no worker runs here: they stay as written).
    await t.db.workflowRun.createMany({
      data: ['succeeded', 'failed', 'failed', 'skipped'].map((status) => ({ accountId: acc.id, workflowId: id, eventId: randomUUID(), status, finishedAt: new Date() })),
    });
    const failed = await t.rest('GET', `/api/v1/workflows/${id}/runs?status=failed`, { as: acc.member });
    expect([failed.status, failed.body.total, failed.body.data.map((r: { status: string }) => r.status)]).toEqual([200, 2, ['failed', 'failed']]);
    expect((await t.rest('GET', `/api/v1/workflows/${id}/runs`, { as: acc.member })).body.total).toBe(4);
    const bad = await t.rest('GET', `/api/v1/workflows/${id}/runs?status=done`, { as: acc.member });
    expect(bad.status, bad.text).toBe(400);
    expect(Object.keys(bad.body.details)).toEqual(['status']);
    const gql = await t.gql('query ($id: ID!) { workflowRuns(workflowId: $id, status: skipped) { total nodes { status } } }', { id }, { as: acc.member });
    expect(gql.data.workflowRuns).toEqual({ total: 1, nodes: [{ status: 'skipped' }] });
  });

  it('the OpenAPI document declares status on the runs route, with the run statuses', async () => {
    const doc = (await t.rest('GET', '/api/v1/openapi.json')).body;
    const status = doc.paths['/api/v1/workflows/{id}/runs'].get.parameters.find((p: { name: string }) => p.name === 'status');
    const schema = status.schema.$ref ? doc.components.schemas[status.schema.$ref.split('/').pop()] : status.schema;
    expect([status.in, [...(schema.enum ?? schema.anyOf?.find((s: { enum?: string[] }) => s.enum)?.enum ?? [])].sort()]).toEqual(['query', ['failed', 'pending', 'running', 'skipped', 'succeeded', 'waiting']]);
  });
});
