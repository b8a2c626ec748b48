/** Workflow.trigger/actions/runs · Query.testWorkflow (docs/workflows.md); create/update/delete: src/studio/record.schema.ts */
import { z } from 'zod';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { builder } from '../graphql/builder.js';
import { checked } from '../graphql/rules.js';
import { filtersOf, timeRanges, TIME_ORDERS } from '../graphql/collection.js';
import { defineCollection } from '../graphql/connection.js';
import { pageField, recordPageField } from '../graphql/page.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';

import { badInput } from '../errors.js';
import { uuid } from '../validation.js';
import type { Context } from '../context.js';
import { WorkflowActionTypeEnum, WorkflowConditionOpEnum, WorkflowRef } from '../studio/record.schema.js';
import type { Action, Trigger } from '../studio/workflow-rules.js';
import { dryRun, type StepRecord } from './workflow-runner.js';

export const RUN_STATUSES = ['pending', 'running', 'waiting', 'succeeded', 'failed', 'skipped'] as const;
const WorkflowRunStatusEnum = builder.enumType('WorkflowRunStatus', { values: RUN_STATUSES });

const WorkflowCondition = builder.objectRef<Trigger['conditions'][number]>('WorkflowCondition').implement({
  fields: (t) => ({
    path: t.exposeString('path'),
    op: t.field({ type: WorkflowConditionOpEnum, resolve: (c) => c.op }),
    value: t.field({ type: 'JSON', nullable: true, resolve: (c) => (c.value ?? null) as never }),
  }),
});
const WorkflowTrigger = builder.objectRef<Trigger>('WorkflowTrigger').implement({
  fields: (t) => ({
    event: t.exposeString('event', { description: 'An event type of the catalogue (docs/events.md)' }),
    conditions: t.field({ type: [WorkflowCondition], maxItems: 20, description: 'ANDed', resolve: (tr) => tr.conditions ?? [] }),
  }),
});
const WorkflowAction = builder.objectRef<Action>('WorkflowAction').implement({
  fields: (t) => ({
    type: t.field({ type: WorkflowActionTypeEnum, resolve: (a) => a.type }),
    params: t.field({ type: 'JSON', description: 'snake_case keys, as docs/workflows.md#steps spells them', resolve: (a) => (a.params ?? {}) as never }),
  }),
});
const WorkflowStep = builder.objectRef<StepRecord>('WorkflowStep').implement({
  fields: (t) => ({
    index: t.exposeInt('index'),
    type: t.field({ type: WorkflowActionTypeEnum, resolve: (s) => s.type }),
    status: t.field({ type: WorkflowRunStatusEnum, resolve: (s) => s.status as never }),
    attempts: t.exposeInt('attempts'),
    error: t.exposeString('error', { nullable: true }),
    result: t.field({ type: 'JSON', nullable: true, description: 'What the step did (a dry run: would do)', resolve: (s) => (s.result ?? null) as never }),
  }),
});

type RunShape = { id: string; accountId: string; workflowId: string; eventId: string; status: string; steps: unknown; error: string | null; startedAt: Date; finishedAt: Date | null; resumeAt: Date | null };

/** A run's fields: a stored run, or a dry run's answer (never stored: its workflow is read by id). */
const runFields = (t: any) => ({
  id: t.exposeID('id'),
  workflow: t.field({
    type: WorkflowRef,
    resolve: (run: RunShape, _args: unknown, ctx: Context) => ctx.db.workflow.findUnique({ where: { id: run.workflowId } }),
  }),
  workflowId: t.exposeID('workflowId'),
  eventId: t.exposeID('eventId'),
  status: t.field({ type: WorkflowRunStatusEnum, resolve: (run: RunShape) => run.status as never }),
  steps: t.field({ type: [WorkflowStep], maxItems: 20, description: 'One per step reached, in order', resolve: (run: RunShape) => run.steps as StepRecord[] }),
  error: t.exposeString('error', { nullable: true, description: 'failed: the failing step\'s error; skipped: why ("loop", deactivated)' }),
  startedAt: t.expose('startedAt', { type: 'DateTime' }),
  finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
  resumeAt: t.expose('resumeAt', { type: 'DateTime', nullable: true, description: 'waiting: when the run goes on' }),
});

export const WorkflowRunRef = builder.prismaObject('WorkflowRun', { keyScope: 'WORKFLOWS_READ', fields: (t) => runFields(t) });

/** Runs by id: their key is (account_id, id). */
const runRows = (db: PrismaClient, ids: string[], accountIds: string[]) => db.workflowRun.findMany({ where: { id: { in: ids }, accountId: { in: accountIds } } }) as never;

const runFilter = filtersOf('WorkflowRunFilter', {
  status: { field: (t) => t.field({ type: WorkflowRunStatusEnum }), schema: z.enum(RUN_STATUSES).nullish(), sql: (v: string) => Prisma.sql`t.status = ${v}`, page: 'status' },
});
const runs = defineCollection(
  {
    name: 'WorkflowRun',
    model: 'WorkflowRun',
    table: 'workflow_runs',
    orders: { STARTED_AT: { column: 'started_at', type: 'timestamptz', follows: false } },
    defaultOrder: { field: 'STARTED_AT', direction: 'DESC' },
    filter: runFilter,
    rows: runRows,
  },
  WorkflowRunRef,
);

/** Query.workflows: REST's GET /api/v1/workflows, the account's workflows as every list's page. */
pageField('workflows', { name: 'Workflow', model: 'Workflow', table: 'workflows', orders: TIME_ORDERS, filter: filtersOf('WorkflowListFilter', timeRanges()) }, 'WORKFLOWS_READ', { limit: READS_BEYOND_CONTRACT });

/** Query.workflowRuns: REST's GET /api/v1/workflows/{id}/runs, newest first; NOT_FOUND for a workflow unknown or not the caller's. */
recordPageField('workflowRuns', { name: 'WorkflowRun', model: 'WorkflowRun', table: 'workflow_runs', orders: { CREATED_AT: { column: 'started_at', type: 'timestamptz', follows: false } }, filter: runFilter, rows: runRows }, {
  by: 'workflow_id',
  idArg: 'workflowId',
  scope: 'WORKFLOWS_READ',
  limit: READS_BEYOND_CONTRACT,
  description: "The workflow's runs as a page (REST's list envelope), by start; `status`: those in that status only",
  target: (id, ctx) => ctx.db.workflow.findUnique({ where: { id }, select: { id: true, accountId: true } }),
});

builder.prismaObjectFields(WorkflowRef, (t) => ({
  trigger: t.field({ type: WorkflowTrigger, nullable: true, description: 'When it runs; null: never', select: { trigger: true }, resolve: (w) => (w.trigger ?? null) as Trigger | null }),
  actions: t.field({ type: [WorkflowAction], maxItems: 20, description: 'What it does, in order', select: { actions: true }, resolve: (w) => w.actions as Action[] }),
  runs: runs('workflow_id', 'Its runs, newest first', { pageArgs: true })(t),
}));

const testArgs = z.object({ id: uuid, eventId: uuid });

builder.queryField('testWorkflow', (t) =>
  t.field({
    type: WorkflowRunRef,
    nullable: true,
    description: 'A dry run of the workflow on one of its account\'s events: writes and sends nothing (docs/workflows.md#dry-runs); null when the workflow is not visible',
    args: { id: t.arg.id({ required: true }), eventId: t.arg.id({ required: true }) },
    rules: {
      access: 'member',
      input: testArgs,
      target: ({ id }: { id: string }, ctx: Context) => ctx.db.workflow.findUnique({ where: { id } }),
      hidden: 'null',
      limit: READS_BEYOND_CONTRACT,
    },
    resolve: async (_root, _args, ctx, info) => {
      const { input, target } = checked<z.output<typeof testArgs>, { id: string; accountId: string; trigger: unknown; actions: unknown } | null>(info);
      if (!target) return null;
      const event = await ctx.db.event.findUnique({ where: { accountId_id: { accountId: target.accountId, id: input.eventId } } });
      if (!event) throw badInput({ eventId: ['Not found in this account'] });
      // A run's shape, never stored: nothing was written or sent.
      return dryRun(ctx.db as never, target, event, ctx.mailing) as never;
    },
  }),
);
