/** The notes and tasks collections (docs/fields.md#adding-a-filter) · Query.notes · Query.note · Query.tasks · Query.task · Account.notes · Account.tasks · Contact/Deal/Company.notes · .tasks (docs/decisions.md §21) */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { CompanyRef } from '../companies/company.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { DealRef } from '../deals/deal.schema.js';
import { builder } from '../graphql/builder.js';
import { col as c, eq, filtersOf, from, idIn, timeRanges, TIME_ORDERS, until, type Collection } from '../graphql/collection.js';
import { defineCollection, orderInputOf } from '../graphql/connection.js';
import { pageField } from '../graphql/page.js';
import { readById } from '../graphql/reads.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { Prisma, TaskStatus } from '../generated/prisma/client.js';
import { NoteRef } from './note.schema.js';
import { TaskRef, TaskStatusEnum } from './task.schema.js';

const targets = {
  contactId: idIn('contact_id', 'contactId'),
  dealId: idIn('deal_id', 'dealId'),
  companyId: idIn('company_id', 'companyId'),
};

// Pinned notes first, then newest: listed_at is created_at moved 10,000 years ahead while pinned
// (a trigger keeps it, migration 20261126115238_notes_tasks), so one indexed key orders both.
const NOTE_ORDERS = { ...TIME_ORDERS, PINNED_FIRST: { column: 'listed_at', type: 'timestamptz', follows: false } } as const;

export const notes = {
  name: 'Note',
  model: 'Note',
  table: 'notes',
  json: true,
  orders: NOTE_ORDERS,
  orderInput: orderInputOf('Note', Object.keys(NOTE_ORDERS)),
  defaultOrder: { field: 'PINNED_FIRST', direction: 'DESC' },
  counter: true,
  filter: filtersOf('NoteFilter', { ...targets, ...timeRanges() }),
} satisfies Collection;

/** Open and due before now. */
const OVERDUE = Prisma.sql`(${c('status')} = 'open' AND ${c('due_at')} < now())`;
const dateTime = (t: any) => t.field({ type: 'DateTime' });

const TASK_ORDERS = { ...TIME_ORDERS, DUE_AT: { column: 'due_at', type: 'timestamptz', nullable: true, follows: false } } as const;

export const tasks = {
  name: 'Task',
  model: 'Task',
  table: 'tasks',
  json: true,
  orders: TASK_ORDERS,
  orderInput: orderInputOf('Task', Object.keys(TASK_ORDERS)),
  counter: true,
  filter: filtersOf('TaskFilter', {
    assigneeId: idIn('assignee_id', 'assigneeId'),
    status: { field: (t) => t.field({ type: TaskStatusEnum }), schema: z.enum(TaskStatus).nullish(), sql: eq('status', 'task_status'), page: 'status' },
    dueAfter: { field: dateTime, schema: z.date().nullish(), sql: from('due_at') },
    dueBefore: { field: dateTime, schema: z.date().nullish(), sql: until('due_at') },
    overdue: {
      field: (t) => t.boolean({ description: 'true: open tasks whose dueAt has passed; false: the others' }),
      schema: z.boolean().nullish(),
      sql: (v: boolean) => (v ? OVERDUE : Prisma.sql`NOT (${OVERDUE} AND ${c('due_at')} IS NOT NULL)`),
      page: 'overdue',
    },
    ...targets,
    ...timeRanges(),
  }),
} satisfies Collection;

/** Query.notes and Query.tasks: REST's GET /notes and GET /tasks. */
export const notesPage = pageField('notes', notes, 'ACTIVITIES_READ', { limit: READS_BEYOND_CONTRACT });
export const tasksPage = pageField('tasks', tasks, 'ACTIVITIES_READ', { limit: READS_BEYOND_CONTRACT });

const noteConnection = defineCollection(notes, NoteRef);
const taskConnection = defineCollection(tasks, TaskRef);
builder.prismaObjectField(AccountRef, 'notes', noteConnection(null, 'Pinned first, then newest, unless orderBy says'));
builder.prismaObjectField(AccountRef, 'tasks', taskConnection(null));
for (const [ref, column, noun] of [[ContactRef, 'contact_id', 'contact'], [DealRef, 'deal_id', 'deal'], [CompanyRef, 'company_id', 'company']] as const) {
  builder.prismaObjectField(ref as typeof ContactRef, 'notes', noteConnection(column, `The ${noun}'s notes, pinned first, then newest`));
  builder.prismaObjectField(ref as typeof ContactRef, 'tasks', taskConnection(column, `The ${noun}'s tasks`));
}

/** Query.note and Query.task: REST's GET /notes/{id} and /tasks/{id}. */
readById('note', 'Note', (db) => db.note, 'ACTIVITIES_READ', READS_BEYOND_CONTRACT, notes);
readById('task', 'Task', (db) => db.task, 'ACTIVITIES_READ', READS_BEYOND_CONTRACT, tasks);
