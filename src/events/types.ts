/** The event catalogue (docs/events.md, docs/decisions.md §13): `<record>.<what happened>`. */
export const EVENT_TYPES = [
  'account.created',
  'contact.created', 'contact.updated', 'contact.deleted', 'contact.erased', 'contact.merged', 'contact.restored',
  'deal.created', 'deal.updated', 'deal.status_changed', 'deal.deleted', 'deal.restored',
  'company.created', 'company.updated', 'company.deleted', 'company.merged', 'company.restored',
  'note.created', 'note.updated', 'note.deleted',
  'task.created', 'task.updated', 'task.completed', 'task.reopened', 'task.overdue', 'task.deleted',
  'invoice.created', 'invoice.updated', 'invoice.status_changed', 'invoice.sent', 'invoice.deleted',
  'invoice.viewed',
  'payment.created', 'payment.refunded',
  'pipeline_stage.created', 'pipeline_stage.updated', 'pipeline_stage.deleted',
  'form.created', 'form.updated', 'form.deleted', 'form.submitted',
  'proposal.created', 'proposal.updated', 'proposal.deleted',
  'contract.created', 'contract.updated', 'contract.deleted',
  'gallery.created', 'gallery.updated', 'gallery.deleted',
  'booking.created', 'booking.updated', 'booking.deleted',
  'workflow.created', 'workflow.updated', 'workflow.deleted', 'workflow.run_failed', 'workflow.webhook',
  'export.granted',
  'import.completed', 'import.failed',
  'member.added', 'member.removed', 'ownership.transferred',
  'api_key.created', 'api_key.revoked',
  'webhook_endpoint.created', 'webhook_endpoint.updated', 'webhook_endpoint.deleted', 'webhook_endpoint.disabled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** What a record kind is called in an event type: the part before the dot. */
export type RecordKind = EventType extends `${infer K}.${string}` ? K : never;

export const isEventType = (value: string): value is EventType => (EVENT_TYPES as readonly string[]).includes(value);

/**
 * Who caused a change: a signed-in user, an integration's API key (id = the key's), an anonymous
 * visitor (form submit), the system (CLI, worker), or a workflow's step (id = the workflow's: docs/workflows.md).
 */
export type Actor = { type: 'user' | 'api_key' | 'visitor' | 'system' | 'workflow'; id: string | null };

export const SYSTEM: Actor = { type: 'system', id: null };
export const VISITOR: Actor = { type: 'visitor', id: null };
/** The caller as an event's actor: the key when a key made the change (docs/decisions.md §15). */
export const userActor = (viewer: { id: string; apiKey?: object } | null | undefined): Actor =>
  viewer ? { type: viewer.apiKey ? 'api_key' : 'user', id: viewer.id } : SYSTEM;
