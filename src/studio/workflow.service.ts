// Saving a workflow (docs/workflows.md): its trigger and actions judged whole, whatever the input
// changes, against the account's own records (its webhook endpoints, its members), at most 50 a account.
import { Prisma } from '../generated/prisma/client.js';
import { badInput, type ErrorDetails } from '../errors.js';
import { customFieldRefs, judgeWorkflow, MAX_WORKFLOWS, type Action, type Trigger } from './workflow-rules.js';

type Given = { trigger?: Trigger | null; actions?: Action[] };

/**
 * The columns a create or update writes for `input`'s trigger and actions (`current`: the stored
 * ones, for an update that gives one of them), or BAD_USER_INPUT naming every failing part.
 */
export async function workflowColumns(tx: Prisma.TransactionClient, accountId: string, input: Given, current?: { trigger: unknown; actions: unknown }) {
  if (input.trigger === undefined && input.actions === undefined) return {};
  const trigger = input.trigger !== undefined ? input.trigger : ((current?.trigger ?? null) as Trigger | null);
  const actions = input.actions ?? ((current?.actions ?? []) as Action[]);
  const details: ErrorDetails = judgeWorkflow(trigger, actions);
  await ownRecords(tx, accountId, actions, details);
  await customFields(tx, accountId, trigger, actions, details);
  if (Object.keys(details).length) throw badInput(details);
  return {
    ...(input.trigger !== undefined ? { trigger: trigger ?? Prisma.DbNull, triggerEvent: trigger?.event ?? null } : {}),
    ...(input.actions !== undefined ? { actions: actions as Prisma.InputJsonValue } : {}),
  };
}

/** An endpoint or assignee a step names must be the account's: else a bad param, never a hint about another account. */
async function ownRecords(tx: Prisma.TransactionClient, accountId: string, actions: Action[], details: ErrorDetails) {
  const uuid = /^[0-9a-f-]{36}$/i;
  const endpoints = actions.map((a) => (a.type === 'send_webhook' ? a.params.endpoint_id : null)).filter((v): v is string => typeof v === 'string' && uuid.test(v));
  const assignees = actions.map((a) => (a.type === 'create_task' ? a.params.assignee_id : null)).filter((v): v is string => typeof v === 'string' && uuid.test(v));
  const [foundEndpoints, account, members] = await Promise.all([
    endpoints.length ? tx.webhookEndpoint.findMany({ where: { accountId, id: { in: endpoints } }, select: { id: true } }) : [],
    assignees.length ? tx.account.findUnique({ where: { id: accountId }, select: { ownerId: true } }) : null,
    assignees.length ? tx.teamMember.findMany({ where: { accountId, userId: { in: assignees } }, select: { userId: true } }) : [],
  ]);
  const endpointIds = new Set(foundEndpoints.map((e) => e.id));
  const memberIds = new Set([...members.map((m) => m.userId), ...(account ? [account.ownerId] : [])]);
  actions.forEach((a, i) => {
    const id = a.type === 'send_webhook' ? a.params.endpoint_id : a.type === 'create_task' ? a.params.assignee_id : null;
    if (typeof id !== 'string' || !uuid.test(id)) return;
    const known = a.type === 'send_webhook' ? endpointIds.has(id) : memberIds.has(id);
    if (!known) (details[`actions.${i}.params.${a.type === 'send_webhook' ? 'endpoint_id' : 'assignee_id'}`] ??= []).push('Not found in this account');
  });
}

/**
 * A custom field a condition or placeholder reads must be one of the account's active fields of the
 * event's record (docs/workflows.md#custom-fields): an unknown key would never match, an archived
 * one reads as absent (its values are hidden from events).
 */
async function customFields(tx: Prisma.TransactionClient, accountId: string, trigger: Trigger | null, actions: Action[], details: ErrorDetails) {
  const read = customFieldRefs(trigger, actions);
  if (!read?.refs.length) return;
  const defined = await tx.customField.findMany({ where: { accountId, object: read.object as never, key: { in: [...new Set(read.refs.map((r) => r.key))] } }, select: { key: true, archived: true } });
  const byKey = new Map(defined.map((d) => [d.key, d]));
  const noun = read.object.toLowerCase();
  for (const { at, key } of read.refs) {
    const field = byKey.get(key);
    const problem = !field ? `Unknown custom field "${key}" of a ${noun}` : field.archived ? `The custom field "${key}" is archived` : null;
    if (problem && !details[at]?.includes(problem)) (details[at] ??= []).push(problem);
  }
}

/** The 51st workflow of an account is refused; the account's row lock makes concurrent creates count one after another. */
export async function assertRoom(tx: Prisma.TransactionClient, accountId: string) {
  await tx.$queryRaw`SELECT 1 FROM accounts WHERE id = ${accountId}::uuid FOR UPDATE`;
  const count = await tx.workflow.count({ where: { accountId } });
  if (count >= MAX_WORKFLOWS) throw badInput({ accountId: [`An account has at most ${MAX_WORKFLOWS} workflows`] });
}
