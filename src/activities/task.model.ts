// A task, declared once (docs/fields.md#a-records-model): its fields in order, and what each door
// takes and shows of it (docs/decisions.md §21, §26). The GraphQL type and inputs, the create rule
// (and the update rule derived from it) and the REST fragment follow from here.
import { z } from 'zod';
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { optionalText, optionalUuid, requiredText } from '../validation.js';
import { ACTIVITY_TARGETS } from './note.model.js';

const NOTES = 'At most 10,000 characters';
const ASSIGNEE = "The account's owner or one of its members; none: unassigned.";

export const TASK_FIELDS = [
  { name: 'title', type: 'String', rule: requiredText(200), required: true, max: 200 },
  { name: 'notes', type: 'String', rule: optionalText(10_000), max: 10_000, description: { create: NOTES, update: NOTES } },
  { name: 'dueAt', type: 'DateTime', rule: z.date().nullish().transform((value) => value ?? null) },
  // Moved by completeTask and reopenTask alone.
  { name: 'status', type: 'TaskStatus' },
  { name: 'completedAt', type: 'DateTime' },
  { name: 'assigneeId', type: 'ID', rule: optionalUuid, description: { create: ASSIGNEE, update: ASSIGNEE } },
  // A task may have none: a to-do of its assignee (docs/decisions.md §26).
  ...ACTIVITY_TARGETS,
  { name: 'createdAt', type: 'DateTime' },
  { name: 'updatedAt', type: 'DateTime' },
] as const satisfies readonly FieldSpec[];

export const TASK_MODEL = { model: 'Task', table: 'tasks', kind: 'task', collection: 'tasks', fields: TASK_FIELDS } as const satisfies RecordModel;
