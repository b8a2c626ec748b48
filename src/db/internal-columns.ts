import { getDatamodel } from '../generated/pothos-types.js';
import { snakeCase } from '../names.js';

/**
 * The columns the service keeps for itself, per model: sort keys, leases, claims, counters' slots,
 * a job's marks. They reach no answer, no answer kept for an Idempotency-Key (src/idempotency) and
 * no account export (src/exports): docs/decisions.md §26 "No secret leaves in an export". The one
 * list of them; a column added for the service's own bookkeeping is added here.
 */
export const INTERNAL_COLUMNS: readonly { model: string; table: string; fields: readonly string[] }[] = [
  // The lists' order key: created_at, 10,000 years ahead while pinned (beyond what ISO 8601 and a JS Date print).
  { model: 'Note', table: 'notes', fields: ['listedAt'] },
  // When the overdue job wrote task.overdue for the current due date.
  { model: 'Task', table: 'tasks', fields: ['overdueNotifiedAt'] },
  // Which worker holds the import, its claims since a chunk committed, the last claim's error, the rows' position.
  { model: 'Import', table: 'imports', fields: ['leaseOwner', 'attempts', 'attemptError', 'doneSeq'] },
  // The delivery queues' leases.
  { model: 'WebhookMessage', table: 'webhook_messages', fields: ['lockedUntil'] },
  { model: 'InvoiceMail', table: 'invoice_mails', fields: ['lockedUntil'] },
  // A workflow run's claim and cursor (docs/workflows.md#runs); a workflow's copy of trigger.event, for the trigger that starts runs.
  { model: 'WorkflowRun', table: 'workflow_runs', fields: ['dueAt', 'nextStep'] },
  { model: 'Workflow', table: 'workflows', fields: ['triggerEvent'] },
  // The writing transaction's slot of an exact total (never exported: NOT_EXPORTED).
  { model: 'RecordCount', table: 'record_counts', fields: ['slot'] },
  { model: 'ReportSum', table: 'report_sums', fields: ['slot'] },
  // A NUMBER custom value's copy in a btree, written by triggers (docs/custom-fields.md#which-index-serves-what; NOT_EXPORTED).
  { model: 'CustomFieldNumber', table: 'custom_field_numbers', fields: ['value', 'recordId'] },
  { model: 'CustomFieldCount', table: 'custom_field_counts', fields: ['slot'] },
];

/** The internal fields of `model` (Prisma's names, camelCase). */
export const internalFieldsOf = (model: string): string[] => INTERNAL_COLUMNS.filter((m) => m.model === model).flatMap((m) => m.fields);

/** The internal columns of `table`, as stored (snake_case). */
export const internalColumnsOf = (table: string): string[] =>
  INTERNAL_COLUMNS.filter((m) => m.table === table).flatMap((m) => m.fields.map(snakeCase));

type Model = { fields: Set<string>; internal: Set<string> };
let models: Model[] | undefined;
function modelsOf(): Model[] {
  if (models) return models;
  const datamodel = getDatamodel().datamodel.models as unknown as Record<string, { fields: readonly { name: string }[] }>;
  models = Object.entries(datamodel).map(([name, { fields }]) => ({
    fields: new Set(fields.map((f) => f.name)),
    internal: new Set(INTERNAL_COLUMNS.filter((m) => m.model === name).flatMap((m) => m.fields)),
  }));
  return models;
}
const internalNames = new Set(INTERNAL_COLUMNS.flatMap((m) => m.fields));

/**
 * The keys of `row` (a Prisma row, camelCase) that are internal columns of its model. A row does not
 * say which model it is: it is every model whose fields hold all its keys, and a key is dropped only
 * when it is internal in such a model and public in none (an invoice mail's `attempts` stays).
 */
export function internalKeysOf(row: Record<string, unknown>): string[] {
  const keys = Object.keys(row);
  const suspects = keys.filter((k) => internalNames.has(k));
  if (suspects.length === 0) return [];
  const shapes = modelsOf().filter((m) => keys.every((k) => m.fields.has(k)));
  return suspects.filter((k) => shapes.some((m) => m.internal.has(k)) && !shapes.some((m) => !m.internal.has(k)));
}
