// What each step of a workflow does (docs/workflows.md#steps), through the mutation it stands for:
// its rules, state machine and event, in the run's transaction. `plan` says what a step would do
// (testWorkflow's dry run stops there); `apply` does it.
import { z } from 'zod';
import type { Prisma } from '../generated/prisma/client.js';
import { isAppError } from '../errors.js';
import { parseInput } from '../validation.js';
import { camelCase } from '../names.js';
import { wakeSource } from '../events/emit.js';
import { eventId } from '../events/ids.js';
import type { Actor } from '../events/types.js';
import type { Envelope } from '../events/envelope.js';
import { escapeHtml } from '../forms/form-page.js';
import { createTask, createTaskInput, createTasks, type CreateTaskInput } from '../activities/task.service.js';
import { createNote, createNoteInput, createNotes, type CreateNoteInput } from '../activities/note.service.js';
import { updateContact, updateContactInput } from '../contacts/contact.service.js';
import { setDealStatus, updateDeal, updateDealInput } from '../deals/deal.service.js';
import { updateCompany, updateCompanyInput } from '../companies/company.service.js';
import { setInvoiceStatus, updateInvoice, updateInvoiceInput } from '../invoices/invoice.service.js';
import { render, waitMinutes, type Action, type PlaceholderValues } from '../studio/workflow-rules.js';
import { DealStatus, InvoiceStatus } from '../generated/prisma/enums.js';

type Tx = Prisma.TransactionClient;
type Data = { object?: Record<string, unknown>; previous?: Record<string, unknown> };

/** The record a run acts on: the event's own (a contact, deal, company or invoice), a submission's contact, a task's or note's first linked record. */
export type Subject = {
  kind: 'contact' | 'deal' | 'company' | 'invoice' | null;
  id: string | null;
  /** Still there (not deleted meanwhile). */
  exists: boolean;
  links: { contactId: string | null; dealId: string | null; companyId: string | null };
  ownerId: string | null;
  /** The record's contact (a contact's own id; a deal's or invoice's contact). */
  contactId: string | null;
  contactEmail: string | null;
};

/** Why a step did nothing: it is `skipped` with this as its error, and the run goes on. */
export class Skip extends Error {}
/** A step that can never succeed (its params no longer fit the record): no retry. */
export class Permanent extends Error {}

export type StepContext = {
  accountId: string;
  workflowId: string;
  runId: string;
  event: Envelope;
  subject: Subject;
  values: PlaceholderValues;
  actor: Actor;
  /** Mail can be sent (SMTP_URL and MAIL_FROM set). */
  mail: boolean;
  now: number;
};

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

type Target = { kind: Subject['kind']; id: string | null };

/** The record an event's run acts on, by its type and object. */
function targetOf(event: Envelope): Target {
  const type = event.type;
  const kind = type.slice(0, type.indexOf('.'));
  const object = ((event.data as Data).object ?? {}) as Record<string, unknown>;
  if (kind === 'contact' || kind === 'deal' || kind === 'company' || kind === 'invoice') return { kind, id: str(object.id) };
  if (type === 'form.submitted') return { kind: 'contact', id: str(object.contact_id) };
  if (kind === 'task' || kind === 'note') {
    const first = (['contact', 'deal', 'company'] as const).find((k) => str(object[`${k}_id`]));
    if (first) return { kind: first, id: str(object[`${first}_id`]) };
  }
  return { kind: null, id: null };
}

/** The run's subject as it stands now. */
export async function loadSubject(tx: Tx, accountId: string, event: Envelope): Promise<Subject> {
  return (await loadSubjects(tx, [{ accountId, event }]))[0]!;
}

type SubjectRow = { id: string; accountId: string; ownerId?: string | null; contactId?: string | null; email?: string | null };

/**
 * The subjects of many runs as they stand now (a claimed batch's steps, worked together): one read
 * per kind of record among them, and one for the e-mails of deals' and invoices' contacts.
 */
export async function loadSubjects(tx: Tx, items: { accountId: string; event: Envelope }[]): Promise<Subject[]> {
  const targets = items.map(({ event }) => targetOf(event));
  const ids = (kind: Subject['kind']) => [...new Set(targets.flatMap((t) => (t.kind === kind && t.id ? [t.id] : [])))];
  const read = async (kind: Subject['kind'], find: (ids: string[]) => Promise<SubjectRow[]>) => {
    const wanted = ids(kind);
    return wanted.length ? find(wanted) : [];
  };
  const rows = [
    ...(await read('contact', (id) => tx.contact.findMany({ where: { id: { in: id } }, select: { id: true, accountId: true, ownerId: true, email: true } }))).map((r) => ['contact', r] as const),
    ...(await read('deal', (id) => tx.deal.findMany({ where: { id: { in: id } }, select: { id: true, accountId: true, ownerId: true, contactId: true } }))).map((r) => ['deal', r] as const),
    ...(await read('company', (id) => tx.company.findMany({ where: { id: { in: id } }, select: { id: true, accountId: true, ownerId: true } }))).map((r) => ['company', r] as const),
    ...(await read('invoice', (id) => tx.invoice.findMany({ where: { id: { in: id } }, select: { id: true, accountId: true, contactId: true } }))).map((r) => ['invoice', r] as const),
  ];
  const found = new Map(rows.map(([kind, row]) => [`${kind}:${row.accountId}:${row.id}`, row]));
  const rowOf = (accountId: string, t: Target) => (t.kind && t.id ? found.get(`${t.kind}:${accountId}:${t.id}`) : undefined);
  // The e-mails of the deals' and invoices' contacts, read once for all.
  const others = [...new Set(items.flatMap(({ accountId }, i) => {
    const row = rowOf(accountId, targets[i]!);
    return targets[i]!.kind !== 'contact' && row?.contactId ? [row.contactId] : [];
  }))];
  const emails = new Map(
    others.length ? (await tx.contact.findMany({ where: { id: { in: others } }, select: { id: true, accountId: true, email: true } })).map((c) => [`${c.accountId}:${c.id}`, c.email]) : [],
  );
  const empty = { contactId: null, dealId: null, companyId: null };
  return items.map(({ accountId }, i) => {
    const target = targets[i]!;
    const row = rowOf(accountId, target);
    if (!target.kind || !target.id || !row) return { ...target, exists: false, links: empty, ownerId: null, contactId: null, contactEmail: null };
    const contactId = target.kind === 'contact' ? target.id : (row.contactId ?? null);
    const links = {
      contactId: target.kind === 'invoice' ? contactId : target.kind === 'contact' ? target.id : null,
      dealId: target.kind === 'deal' ? target.id : null,
      companyId: target.kind === 'company' ? target.id : null,
    };
    const contactEmail = target.kind === 'contact' ? (row.email ?? null) : contactId ? (emails.get(`${accountId}:${contactId}`) ?? null) : null;
    return { ...target, exists: true, links, ownerId: row.ownerId ?? null, contactId, contactEmail };
  });
}

/** The owner, while still the account's owner or member (a member removed owns nothing a workflow acts on). */
async function currentOwner(tx: Tx, accountId: string, ownerId: string | null) {
  if (!ownerId) return null;
  const [account, member, user] = await Promise.all([
    tx.account.findUnique({ where: { id: accountId }, select: { ownerId: true } }),
    tx.teamMember.findFirst({ where: { accountId, userId: ownerId }, select: { userId: true } }),
    tx.user.findUnique({ where: { id: ownerId }, select: { id: true, name: true, email: true } }),
  ]);
  return account?.ownerId === ownerId || member ? user : null;
}

/** What fills `{{account.name}}` and `{{record_owner.name}}`. */
export async function placeholderValues(tx: Tx, accountId: string, subject: Subject): Promise<PlaceholderValues> {
  const [account, owner] = await Promise.all([tx.account.findUnique({ where: { id: accountId }, select: { name: true } }), currentOwner(tx, accountId, subject.ownerId)]);
  return { accountName: account?.name ?? '', ownerName: owner?.name ?? null };
}

const NO_RECORD = 'Nothing to act on: the record is gone or the event names none';

/**
 * One step: what it would do (`result`), and `apply` to do it in `tx`, which answers what it did.
 * Throws Skip when the step has nothing to act on.
 */
export type Planned = {
  result: Record<string, unknown>;
  apply?: () => Promise<Record<string, unknown>>;
  /** A note or task to create: applyAll makes those of many steps with one createNotes / createTasks. */
  create?: { kind: 'note'; input: () => CreateNoteInput } | { kind: 'task'; input: () => CreateTaskInput };
};

export async function plan(tx: Tx, action: Action, ctx: StepContext): Promise<Planned> {
  const p = action.params;
  const data = ctx.event.data as Data;
  const text = (name: string) => (typeof p[name] === 'string' ? render(p[name] as string, data, ctx.values) : null);
  const { subject } = ctx;
  switch (action.type) {
    case 'create_task': {
      let assigneeId = str(p.assignee_id);
      if (assigneeId === 'record_owner') {
        const owner = await currentOwner(tx, ctx.accountId, subject.ownerId);
        if (!owner) throw new Skip('The record has no owner');
        assigneeId = owner.id;
      }
      const due = typeof p.due_in_days === 'number' ? new Date(ctx.now + p.due_in_days * 86_400_000) : null;
      const links = subject.exists ? subject.links : { contactId: null, dealId: null, companyId: null };
      const input = { accountId: ctx.accountId, title: text('title'), notes: text('notes'), dueAt: due, assigneeId, ...links };
      const result = { title: input.title, notes: input.notes, due_at: due?.toISOString() ?? null, assignee_id: assigneeId, contact_id: links.contactId, deal_id: links.dealId, company_id: links.companyId };
      return { result, apply: async () => ({ ...result, task_id: (await createTask(tx, checked(createTaskInput, input), ctx.actor)).id }), create: { kind: 'task', input: () => checked(createTaskInput, input) } };
    }
    case 'add_note': {
      if (!subject.exists || !(subject.links.contactId || subject.links.dealId || subject.links.companyId)) throw new Skip(NO_RECORD);
      const input = { accountId: ctx.accountId, body: text('body'), ...subject.links };
      const result = { body: input.body, contact_id: input.contactId, deal_id: input.dealId, company_id: input.companyId };
      return { result, apply: async () => ({ ...result, note_id: (await createNote(tx, checked(createNoteInput, input), null, ctx.actor)).id }), create: { kind: 'note', input: () => checked(createNoteInput, input) } };
    }
    case 'update_record': {
      // `record: "contact"`: the record's contact instead (a won deal makes its contact a client).
      const [kind, id] = p.record === 'contact' ? (['contact', subject.contactId] as const) : [subject.kind, subject.id];
      if (!subject.exists || !kind || !id) throw new Skip(p.record === 'contact' ? 'The record has no contact' : NO_RECORD);
      if (kind === 'contact' && id !== subject.id && !(await tx.contact.findFirst({ where: { accountId: ctx.accountId, id }, select: { id: true } }))) throw new Skip('The contact is gone');
      const fields = p.fields as Record<string, unknown>;
      const result = { record: kind, id, fields };
      return { result, apply: async () => (await updateSubject(tx, kind, { id, accountId: ctx.accountId }, fields, ctx.actor), result) };
    }
    case 'send_email': {
      if (!ctx.mail) throw new Skip('Mail is not configured (SMTP_URL)');
      const to =
        p.to === 'contact' ? (subject.exists ? subject.contactEmail : null)
        : p.to === 'record_owner' ? ((await currentOwner(tx, ctx.accountId, subject.ownerId))?.email ?? null)
        : str(p.to);
      if (!to) throw new Skip(p.to === 'contact' ? 'The record has no contact e-mail' : 'The record has no owner with an e-mail');
      const body = p.body as string;
      const mail = {
        to,
        subject: text('subject')!.replace(/[\r\n]+/g, ' ').slice(0, 500),
        text: render(body, data, ctx.values),
        // The body is the author's; every value put in it is escaped (a contact's name is whatever a visitor typed).
        html: `<!doctype html><html><body>${render(body, data, ctx.values, escapeHtml).replace(/\n/g, '<br>\n')}</body></html>`,
      };
      const result = { to: mail.to, subject: mail.subject, text: mail.text };
      return {
        result,
        apply: async () => {
          const row = await tx.invoiceMail.create({ data: { accountId: ctx.accountId, to: mail.to, subject: mail.subject, textBody: mail.text, htmlBody: mail.html }, select: { id: true } });
          return { ...result, mail_id: row.id };
        },
      };
    }
    case 'send_webhook': {
      const endpoint = await tx.webhookEndpoint.findFirst({ where: { accountId: ctx.accountId, id: str(p.endpoint_id) ?? undefined }, select: { id: true, enabled: true } });
      if (!endpoint) throw new Skip('The webhook endpoint is gone');
      if (!endpoint.enabled) throw new Skip('The webhook endpoint is disabled');
      const result = { endpoint_id: endpoint.id };
      return { result, apply: async () => ({ ...result, event_id: await queueWebhook(tx, endpoint.id, ctx) }) };
    }
    case 'wait': {
      const minutes = waitMinutes(p)!;
      return { result: { resume_at: new Date(ctx.now + minutes * 60_000).toISOString() } };
    }
  }
}

/**
 * Many runs' planned steps done in `tx` (docs/workflows.md#runs): their notes with one createNotes,
 * their tasks with one createTasks (each the record's own create: its rules and events), any other
 * step by its own apply, one after another. Answers each step's result, in order.
 */
export async function applyAll(tx: Tx, steps: { planned: Planned; actor: Actor }[]): Promise<Record<string, unknown>[]> {
  const results: Record<string, unknown>[] = steps.map((s) => s.planned.result);
  const notes: number[] = [];
  const tasks: number[] = [];
  for (const [i, { planned }] of steps.entries()) {
    if (planned.create?.kind === 'note') notes.push(i);
    else if (planned.create?.kind === 'task') tasks.push(i);
    else if (planned.apply) results[i] = await planned.apply();
  }
  const made = await createNotes(tx, notes.map((i) => ({ input: (steps[i]!.planned.create as { input: () => CreateNoteInput }).input(), actor: steps[i]!.actor })));
  notes.forEach((i, k) => (results[i] = { ...results[i], note_id: made[k]!.id }));
  const assigned = await createTasks(tx, tasks.map((i) => ({ input: (steps[i]!.planned.create as { input: () => CreateTaskInput }).input(), actor: steps[i]!.actor })));
  tasks.forEach((i, k) => (results[i] = { ...results[i], task_id: assigned[k]!.id }));
  return results;
}

/** A rule's refusal of a step's values is the step's error, never retried into success. */
function checked<S extends Parameters<typeof parseInput>[0]>(schema: S, value: unknown) {
  try {
    return parseInput(schema, value);
  } catch (err) {
    throw new Permanent(describe(err));
  }
}

/** An error as a step records it: a refusal's fields and messages, else its message. */
export function describe(err: unknown): string {
  if (isAppError(err)) {
    const details = err.details ? ` (${Object.entries(err.details).map(([k, v]) => `${k}: ${(v as string[]).join(', ')}`).join('; ')})` : '';
    return `${err.message}${details}`.slice(0, 1000);
  }
  return String((err as Error)?.message ?? err).slice(0, 1000);
}

/** update_record: the record's own update (and its state machine for `status`), as updateX / setXStatus. */
async function updateSubject(tx: Tx, kind: NonNullable<Subject['kind']>, key: { id: string; accountId: string }, fields: Record<string, unknown>, actor: Actor) {
  const { status, ...rest } = fields;
  const input = Object.fromEntries(Object.entries(rest).map(([k, v]) => [camelCase(k), v]));
  const run = async <T>(work: () => Promise<T>) => {
    try {
      return await work();
    } catch (err) {
      // A refusal (bad value, an illegal move) fails the same way again: the run fails now with the rule's words.
      if (isAppError(err) && err.code !== 'CONFLICT') throw new Permanent(describe(err));
      throw err;
    }
  };
  if (Object.keys(input).length) {
    const args = { id: key.id, input, expectedUpdatedAt: null };
    if (kind === 'contact') await run(() => updateContact(tx, key, { ...args, input: parseInput(updateContactInput, input) }, {}, actor));
    if (kind === 'deal') await run(() => updateDeal(tx, key, { ...args, input: parseInput(updateDealInput, input) }, {}, actor));
    if (kind === 'company') await run(() => updateCompany(tx, key, { ...args, input: parseInput(updateCompanyInput, input) }, {}, actor));
    if (kind === 'invoice') {
      const now = await tx.invoice.findUniqueOrThrow({ where: { id: key.id }, select: { status: true } });
      await run(() => updateInvoice(tx, { ...key, status: now.status }, { ...args, input: parseInput(updateInvoiceInput, input) }, {}, actor));
    }
  }
  if (status !== undefined) {
    if (kind === 'deal') {
      const now = await tx.deal.findUniqueOrThrow({ where: { id: key.id }, select: { status: true } });
      if (now.status !== status) await run(() => setDealStatus(tx, { id: key.id, status: now.status }, parseInput(statusOf(DealStatus), status), actor));
    } else if (kind === 'invoice') {
      const now = await tx.invoice.findUniqueOrThrow({ where: { id: key.id }, select: { status: true } });
      if (now.status !== status) await run(() => setInvoiceStatus(tx, { id: key.id, status: now.status }, parseInput(statusOf(InvoiceStatus), status), actor));
    } else {
      const input2 = { status };
      if (kind === 'contact') await run(() => updateContact(tx, key, { id: key.id, input: parseInput(updateContactInput, input2), expectedUpdatedAt: null }, {}, actor));
      if (kind === 'company') await run(() => updateCompany(tx, key, { id: key.id, input: parseInput(updateCompanyInput, input2), expectedUpdatedAt: null }, {}, actor));
    }
  }
}

const statusOf = <E extends Record<string, string>>(values: E) => z.enum(values as never).transform((v) => v as E[keyof E]);

/**
 * send_webhook: a `workflow.webhook` event for this endpoint alone (whatever its eventTypes), whose
 * data is `{workflow_id, run_id, event}`; §13's delivery signs, retries and guards it.
 */
async function queueWebhook(tx: Tx, endpointId: string, ctx: StepContext): Promise<string> {
  const id = eventId();
  const data = JSON.stringify({ workflow_id: ctx.workflowId, run_id: ctx.runId, event: ctx.event });
  const wake = wakeSource(tx);
  await tx.$executeRaw`
    WITH e AS (
      INSERT INTO events (id, account_id, type, occurred_at, actor_type, actor_id, subject_id, contact_id, data)
      SELECT ${id}::uuid, ${ctx.accountId}::uuid, 'workflow.webhook', ${new Date()}::timestamptz, ${ctx.actor.type}, ${ctx.actor.id}, ${ctx.workflowId}::uuid, NULL, ${data}::jsonb
      FROM (VALUES (1)) AS one ${wake.from}
      RETURNING account_id, id)
    INSERT INTO webhook_messages (id, account_id, endpoint_id, event_id) SELECT gen_random_uuid(), e.account_id, ${endpointId}::uuid, e.id FROM e`;
  wake.then();
  return id;
}
