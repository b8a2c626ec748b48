// Tasks (docs/decisions.md §21): create, update, complete, reopen, delete, each with its event in
// the write's transaction. A task needs no target: one without is a to-do of its assignee (§26). An assignee is the account's owner or a member, as a record's owner.
import { z } from 'zod';
import { updateGuarded, type Query, type UpdateArgs, writeRulesOf } from '../writes/update.js';
import type { Prisma, Task } from '../generated/prisma/client.js';
import { notFound, MESSAGES } from '../errors.js';
import { changedFields, columnsIn, createdWithEvents, emitRow, updatedWithEvent, withColumns } from '../events/record.js';
import { emit } from '../events/emit.js';
import type { Actor } from '../events/types.js';
import { TASK_MODEL } from './task.model.js';
import { assertLinks, assertLinksOfMany } from './note.service.js';
import type { RecordKey } from '../db/client.js';

/** Its create and update rules, from the model (each field as task.model.ts writes it). */
export const { create: createTaskInput, update: updateTaskInput, updateArgs: updateTaskArgs } = writeRulesOf(TASK_MODEL);
export type CreateTaskInput = z.output<typeof createTaskInput>;
export type UpdateTaskInput = z.output<typeof updateTaskInput>;
export type UpdateTaskArgs = UpdateArgs<UpdateTaskInput>;

export const taskTarget = ({ id }: { id: string }, db: Prisma.TransactionClient) => db.task.findUnique({ where: { id }, select: { id: true, accountId: true } });

/** A task may stand alone, a to-do of its assignee with no contact, deal or company (docs/decisions.md §26). */
export async function createTask(tx: Prisma.TransactionClient, input: CreateTaskInput, actor: Actor, query: Query = {}): Promise<Task> {
  await assertLinks(tx, input.accountId, input);
  const row = await tx.task.create({ ...withColumns('Task', query), data: input });
  await emitRow(tx, 'task.created', 'Task', actor, row);
  return row;
}

/**
 * createTask for many at once (a burst of workflow runs' create_task steps: docs/workflows.md#runs):
 * the same rules and `task.created` events in three statements whatever the count. Any input
 * refused refuses them all.
 */
export async function createTasks(tx: Prisma.TransactionClient, items: { input: CreateTaskInput; actor: Actor }[]): Promise<Task[]> {
  if (!items.length) return [];
  await assertLinksOfMany(tx, items.map((i) => i.input));
  const spec = { type: 'task.created', model: 'Task' } as const;
  return createdWithEvents(tx, spec, items.map(({ input, actor }) => ({ data: input, actor })), (data) => tx.task.createManyAndReturn({ data }));
}

export async function updateTask(tx: Prisma.TransactionClient, task: RecordKey, args: UpdateTaskArgs, query: Query, actor: Actor) {
  await assertLinks(tx, task.accountId, args.input);
  // A new due date may fall due again: the overdue job announces it once more (src/activities/overdue.ts).
  const data = args.input.dueAt !== undefined ? { ...args.input, overdueNotifiedAt: null } : args.input;
  const spec = { type: 'task.updated', model: 'Task', table: 'tasks', actor } as const;
  // Clearing every target leaves a to-do standing alone (docs/decisions.md §26).
  return updatedWithEvent(tx, spec, task, changedFields(args.input), () => updateGuarded<Task>(tx.task, task, data, withColumns('Task', query), args.expectedUpdatedAt));
}

/**
 * open -> done (`task.completed`, completedAt now) or done -> open (`task.reopened`, completedAt
 * cleared). A task already there is answered as it is, with no event: a retried call changes nothing.
 */
export async function setTaskDone(tx: Prisma.TransactionClient, task: RecordKey, done: boolean, actor: Actor): Promise<Task> {
  const [moved] = await tx.task.updateManyAndReturn({
    where: { id: task.id, accountId: task.accountId, status: done ? 'open' : 'done' },
    data: done ? { status: 'done', completedAt: new Date() } : { status: 'open', completedAt: null },
  });
  if (moved) {
    await emit(tx, { type: done ? 'task.completed' : 'task.reopened', accountId: task.accountId, actor, object: columnsIn('Task', moved), previous: { status: done ? 'open' : 'done' } });
    return moved;
  }
  const current = await tx.task.findUnique({ where: { id: task.id } });
  if (!current) throw notFound(MESSAGES.notFound);
  return current;
}

export async function deleteTask(tx: Prisma.TransactionClient, task: RecordKey, actor: Actor) {
  const row = await tx.task.delete({ where: { id: task.id } });
  await emitRow(tx, 'task.deleted', 'Task', actor, row);
  return { id: task.id, deletedAt: new Date() };
}
