/** Mutation.createTask · updateTask · completeTask · reopenTask · deleteTask (docs/decisions.md §21) */
import { builder } from '../graphql/builder.js';
import { CONTACT_EMBEDDED } from '../contacts/contact.fields.js';
import { checked, ownRow } from '../graphql/rules.js';
import type { Prisma } from '../generated/prisma/client.js';
import { DeletedRecord } from '../graphql/changes.schema.js';
import { byIdArgs, type ByIdArgs } from '../validation.js';
import { userActor } from '../events/types.js';
import { activityLinks } from './note.service.js';
import { ACTIVITY_WRITES, targetFields } from './note.schema.js';
import {
  createTask,
  createTaskInput,
  deleteTask,
  setTaskDone,
  taskTarget,
  updateTask,
  updateTaskArgs,
  type CreateTaskInput,
  type TaskKey,
  type UpdateTaskArgs,
} from './task.service.js';

export const TaskStatusEnum = builder.enumType('TaskStatus', { values: ['open', 'done'] as const });

export const TaskRef = builder.prismaObject('Task', {
  keyScope: 'ACTIVITIES_READ',
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    title: t.exposeString('title'),
    notes: t.exposeString('notes', { nullable: true }),
    dueAt: t.expose('dueAt', { type: 'DateTime', nullable: true }),
    status: t.expose('status', { type: TaskStatusEnum }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
    assigneeId: t.exposeID('assigneeId', { nullable: true }),
    // A key reads the assignee's id only: people are never a key's to read (docs/decisions.md §15).
    assignee: t.relation('assignee', { nullable: true, embedded: ['id'] }),
    contactId: t.exposeID('contactId', { nullable: true }),
    contact: t.relation('contact', { nullable: true, embedded: CONTACT_EMBEDDED }),
    dealId: t.exposeID('dealId', { nullable: true }),
    deal: t.relation('deal', { nullable: true }),
    companyId: t.exposeID('companyId', { nullable: true }),
    company: t.relation('company', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const fields = (t: any, create: boolean) => ({
  ...(create ? { accountId: t.id({ required: true }), title: t.string({ required: true }) } : { title: t.string() }),
  notes: t.string({ description: 'At most 10,000 characters' }),
  dueAt: t.field({ type: 'DateTime' }),
  assigneeId: t.id({ description: "The account's owner or one of its members; none: unassigned." }),
  ...targetFields(t),
});

const CreateTaskInputType = builder.inputType('CreateTaskInput', { description: 'At least one of contactId, dealId, companyId.', fields: (t) => fields(t, true) });
const UpdateTaskInputType = builder.inputType('UpdateTaskInput', {
  description: 'Absent = unchanged; null = cleared (Required for title). At least one field; a target must remain. The status moves by completeTask and reopenTask.',
  fields: (t) => fields(t, false),
});

const target = (args: ByIdArgs, ctx: { db: Prisma.TransactionClient }) => taskTarget(args, ctx.db);
const byId = { access: 'member', scope: 'ACTIVITIES_WRITE', input: byIdArgs, target, hidden: 'not-found', line: ownRow, limit: ACTIVITY_WRITES, idempotent: true } as const;

const move = (done: boolean) => (t: any) =>
  t.prismaField({
    type: 'Task',
    nullable: true,
    description: done
      ? 'open -> done (task.completed; completedAt now). A done task is answered as it is.'
      : 'done -> open (task.reopened; completedAt cleared). An open task is answered as it is.',
    args: { id: t.arg.id({ required: true }) },
    rules: byId,
    resolve: (query: object, _root: unknown, _args: unknown, _ctx: unknown, info: any) => {
      const { viewer, target: task, write } = checked<ByIdArgs, TaskKey>(info);
      return write(async (tx) => {
        await setTaskDone(tx, task, done, userActor(viewer));
        return tx.task.findUniqueOrThrow({ ...query, where: { id: task.id } });
      });
    },
  });

builder.mutationFields((t) => ({
  createTask: t.prismaField({
    type: 'Task',
    args: { input: t.arg({ type: CreateTaskInputType, required: true }) },
    rules: { access: 'member', scope: 'ACTIVITIES_WRITE', input: createTaskInput, from: 'input', linked: activityLinks, limit: ACTIVITY_WRITES, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateTaskInput>(info);
      return write((tx) => createTask(tx, input, userActor(viewer), query));
    },
  }),
  updateTask: t.prismaField({
    type: 'Task',
    nullable: true,
    description: 'CONFLICT (with currentUpdatedAt) when expectedUpdatedAt is given and the task changed since; nothing is written. A new dueAt may fall due (task.overdue) again.',
    args: {
      id: t.arg.id({ required: true }),
      input: t.arg({ type: UpdateTaskInputType, required: true }),
      expectedUpdatedAt: t.arg({ type: 'DateTime' }),
    },
    rules: { access: 'member', scope: 'ACTIVITIES_WRITE', input: updateTaskArgs, linked: activityLinks, target, hidden: 'not-found', line: ownRow, limit: ACTIVITY_WRITES, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, target: task, write } = checked<UpdateTaskArgs, TaskKey>(info);
      return write((tx) => updateTask(tx, task, input, query, userActor(viewer)));
    },
  }),
  completeTask: move(true)(t),
  reopenTask: move(false)(t),
  deleteTask: t.field({
    type: DeletedRecord,
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    rules: byId,
    resolve: (_root, _args, _ctx, info) => {
      const { viewer, target: task, write } = checked<ByIdArgs, TaskKey>(info);
      return write((tx) => deleteTask(tx, task, userActor(viewer)));
    },
  }),
}));
