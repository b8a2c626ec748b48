/** Mutation.createTask · updateTask · completeTask · reopenTask · deleteTask (docs/decisions.md §21) */
import { builder } from '../graphql/builder.js';
import { recordObject } from '../graphql/record-object.js';
import { exposedFieldsOf, inputFieldsOf } from '../graphql/spec-fields.js';
import { TASK_FIELDS, TASK_MODEL } from './task.model.js';
import { ACTIVITY_WRITES } from '../graphql/limits.js';
import { checked } from '../graphql/rules.js';
import { changeById, deleteById, staleConflict, updateById, type ById } from '../writes/by-id.js';
import type { Prisma } from '../generated/prisma/client.js';
import { userActor } from '../events/types.js';
import { activityLinks } from './note.service.js';
import { targetRelations } from './note.schema.js';
import {
  createTask,
  createTaskInput,
  deleteTask,
  setTaskDone,
  taskTarget,
  updateTask,
  updateTaskArgs,
  type CreateTaskInput,
} from './task.service.js';
import type { RecordKey } from '../db/client.js';

export const TaskStatusEnum = builder.enumType('TaskStatus', { values: ['open', 'done'] as const });

export const TaskRef = recordObject('Task', 'ACTIVITIES_READ', (t) => ({
  // Every field of the model, as stored (docs/fields.md#a-records-model).
  ...exposedFieldsOf(TASK_MODEL)(t as never),
  // A key reads the assignee's id only: people are never a key's to read (docs/decisions.md §15).
  assignee: t.relation('assignee', { nullable: true, embedded: ['id'] }),
  ...targetRelations(t),
}));

const CreateTaskInputType = builder.inputType('CreateTaskInput', {
  description: 'contactId, dealId and companyId may all be left out: a to-do of its assignee.',
  fields: (t) => ({ accountId: t.id({ required: true }), ...inputFieldsOf(TASK_FIELDS, 'create')(t) }),
});
const UpdateTaskInputType = builder.inputType('UpdateTaskInput', {
  description: 'Absent = unchanged; null = cleared (Required for title). At least one field; every target may be cleared. The status moves by completeTask and reopenTask.',
  fields: inputFieldsOf(TASK_FIELDS, 'update'),
});

const task: ById<RecordKey> = { type: 'Task', scope: 'ACTIVITIES_WRITE', limit: ACTIVITY_WRITES, target: taskTarget };

builder.mutationField('createTask', (t) =>
  t.prismaField({
    type: 'Task',
    args: { input: t.arg({ type: CreateTaskInputType, required: true }) },
    rules: { access: 'member', scope: 'ACTIVITIES_WRITE', input: createTaskInput, from: 'input', linked: activityLinks, limit: ACTIVITY_WRITES, idempotent: true },
    resolve: (query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateTaskInput>(info);
      return write((tx) => createTask(tx, input, userActor(viewer), query));
    },
  }),
);
updateById(task, {
  input: UpdateTaskInputType,
  args: updateTaskArgs,
  linked: activityLinks,
  update: updateTask,
  description: `${staleConflict('task')} A new dueAt may fall due (task.overdue) again.`,
});
const delegate = (db: Prisma.TransactionClient) => db.task;
changeById(task, 'completeTask', {
  change: (tx, key, actor) => setTaskDone(tx, key, true, actor),
  delegate,
  description: 'open -> done (task.completed; completedAt now). A done task is answered as it is.',
});
changeById(task, 'reopenTask', {
  change: (tx, key, actor) => setTaskDone(tx, key, false, actor),
  delegate,
  description: 'done -> open (task.reopened; completedAt cleared). An open task is answered as it is.',
});
deleteById(task, { remove: deleteTask });
