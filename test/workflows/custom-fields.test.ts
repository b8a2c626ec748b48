import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createAccount, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';

// docs/workflows.md#custom-fields: a condition's `object.custom_fields.<key>` / `previous.custom_fields.<key>`
// and a `{{object.custom_fields.<key>}}` placeholder name one of the account's active fields of the
// event's record, judged at save; a field archived later leaves the saved workflow running.

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ worker: true, env: { EVENT_POLL_MS: '30', WORKFLOW_RETRY_BASE_MS: '20', WORKFLOW_LEASE_MS: '2000' } });
});
afterAll(() => t?.close());

const CREATE = `mutation ($input: CreateWorkflowInput!) { createWorkflow(input: $input) { id } }`;
const UPDATE = `mutation ($id: ID!, $input: UpdateWorkflowInput!) { updateWorkflow(id: $id, input: $input) { id } }`;
const save = (acc: TestAccount, flow: object) => t.gql(CREATE, { input: { accountId: acc.id, name: unique('Flow'), ...flow } }, { as: acc.member });
const field = (acc: TestAccount, object: 'CONTACT' | 'DEAL', key: string, archived = false) =>
  t.db.customField.create({ data: { accountId: acc.id, object, key, label: key, type: 'TEXT', archived } });

describe('custom fields in a workflow', { timeout: 120_000 }, () => {
  test("an unknown key, or another record's, in a condition or a placeholder is a save error naming where", async () => {
    const acc = await createAccount(t);
    await field(acc, 'DEAL', 'tier'); // a deal's field, not a contact's
    const r = await save(acc, {
      trigger: { event: 'contact.updated', conditions: [{ path: 'object.custom_fields.tier', op: 'eq', value: 'gold' }, { path: 'previous.custom_fields.nope', op: 'is_set', value: true }] },
      actions: [{ type: 'add_note', params: { body: 'Tier {{object.custom_fields.tier}}' } }],
    });
    expect(errorOf(r).extensions!.details).toEqual({
      'trigger.conditions.0.path': ['Unknown custom field "tier" of a contact'],
      'trigger.conditions.1.path': ['Unknown custom field "nope" of a contact'],
      'actions.0.params.body': ['Unknown custom field "tier" of a contact'],
    });
  });

  test('an archived field is a save error naming where; an active one of the record saves', async () => {
    const acc = await createAccount(t);
    await Promise.all([field(acc, 'CONTACT', 'tier'), field(acc, 'CONTACT', 'old', true)]);
    const refused = await save(acc, { trigger: { event: 'contact.created', conditions: [{ path: 'object.custom_fields.old', op: 'eq', value: 'x' }] }, actions: [{ type: 'add_note', params: { body: 'hi' } }] });
    expect(errorOf(refused).extensions!.details).toEqual({ 'trigger.conditions.0.path': ['The custom field "old" is archived'] });
    const saved = await save(acc, { trigger: { event: 'contact.created', conditions: [{ path: 'object.custom_fields.tier', op: 'eq', value: 'gold' }] }, actions: [{ type: 'add_note', params: { body: '{{object.custom_fields.tier}}' } }] });
    expect(saved.errors).toBeUndefined();
  });

  test('a field archived after the save: the workflow keeps running on the value events carry; saving its trigger again is refused', async () => {
    const acc = await createAccount(t);
    const tier = await field(acc, 'CONTACT', 'tier');
    const trigger = { event: 'contact.created', conditions: [{ path: 'object.custom_fields.tier', op: 'eq', value: 'gold' }] };
    const saved = await save(acc, { trigger, actions: [{ type: 'add_note', params: { body: 'Tier {{object.custom_fields.tier}}' } }] });
    const id = (saved.data as { createWorkflow: { id: string } }).createWorkflow.id;
    const contact = await t.db.contact.create({ data: { accountId: acc.id, firstName: 'G', customFields: { tier: 'gold' } } });
    await t.db.customField.update({ where: { id: tier.id }, data: { archived: true } });
    // The event as a write of the contact made it, whatever the field's state since.
    await t.db.event.create({ data: { accountId: acc.id, type: 'contact.created', actorType: 'user', actorId: acc.member.id, subjectId: contact.id, contactId: contact.id, data: { object: { id: contact.id, custom_fields: { tier: 'gold' } } } } });
    await vi.waitFor(async () => expect(await t.db.workflowRun.findMany({ where: { workflowId: id }, select: { status: true } })).toEqual([{ status: 'succeeded' }]), { timeout: 60_000, interval: 25 });
    expect((await t.db.note.findFirstOrThrow({ where: { accountId: acc.id } })).body).toBe('Tier gold');
    const again = await t.gql(UPDATE, { id, input: { trigger } }, { as: acc.member });
    // The whole workflow is judged again, its stored actions with the trigger given.
    expect(errorOf(again).extensions!.details).toEqual({ 'trigger.conditions.0.path': ['The custom field "tier" is archived'], 'actions.0.params.body': ['The custom field "tier" is archived'] });
    expect((await t.gql(UPDATE, { id, input: { active: false } }, { as: acc.member })).errors).toBeUndefined();
  });
});
