// A workflow's trigger and actions (docs/workflows.md): their shape, judged when a workflow is saved
// (every failing part named), and the two readings a run makes of an event: whether the conditions
// hold, and a text param with its placeholders filled. Pure: no database.
import { z } from 'zod';
import type { ErrorDetails } from '../errors.js';
import { eventObjectFields, type EventFieldType } from '../events/serialize.js';
import { isEventType } from '../events/types.js';
import { email, isStorableJson, isStorableText, isUuid, UNSTORABLE_TEXT } from '../validation.js';

export const CONDITION_OPS = ['eq', 'ne', 'in', 'gt', 'gte', 'lt', 'lte', 'contains', 'is_set', 'changed'] as const;
export const ACTION_TYPES = ['create_task', 'add_note', 'update_record', 'send_email', 'send_webhook', 'wait'] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];
export type ActionType = (typeof ACTION_TYPES)[number];
export type Condition = { path: string; op: ConditionOp; value?: unknown };
export type Trigger = { event: string; conditions: Condition[] };
export type Action = { type: ActionType; params: Record<string, unknown> };

/** At most this many actions a workflow; a wait at most 90 days; a chain of runs at most 5 deep; 50 workflows an account. */
export const MAX_ACTIONS = 20;
export const MAX_WAIT_MINUTES = 90 * 24 * 60;
export const MAX_DEPTH = 5;
export const MAX_WORKFLOWS = 50;

/** The shapes GraphQL and REST take (the judging of what they name is judgeWorkflow's). */
export const triggerRule = z
  .object({
    event: z.string().max(64),
    conditions: z
      .array(z.object({ path: z.string().max(200), op: z.enum(CONDITION_OPS), value: z.unknown().optional() }))
      .max(20)
      .nullish()
      .transform((c) => c ?? []),
  })
  .nullish();
export const actionsRule = z
  .array(z.object({ type: z.enum(ACTION_TYPES), params: z.record(z.string(), z.unknown()).nullish().transform((p) => p ?? {}) }))
  .max(MAX_ACTIONS)
  .nullish()
  .transform((a) => a ?? []);

const CUSTOM = 'custom_fields.';
/** The kind of value `path` reads in an event of `type`; null when no record of that event has it. */
export function pathType(type: string, path: string): EventFieldType | 'any' | null {
  const [root, ...rest] = path.split('.');
  if ((root !== 'object' && root !== 'previous') || rest.length === 0) return null;
  const field = rest.join('.');
  if (field.startsWith(CUSTOM)) return /^[a-z][a-z0-9_]{0,49}$/.test(field.slice(CUSTOM.length)) && eventObjectFields(type).has('custom_fields') ? 'any' : null;
  return rest.length === 1 ? (eventObjectFields(type).get(field) ?? null) : null;
}

const isDate = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v));
/** Whether `value` is of the kind a field holds (a date as an ISO 8601 text). */
function fits(kind: EventFieldType | 'any', value: unknown): boolean {
  if (value === null || kind === 'any' || kind === 'json') return true;
  if (kind === 'number') return typeof value === 'number' && Number.isFinite(value);
  if (kind === 'boolean') return typeof value === 'boolean';
  if (kind === 'date') return isDate(value);
  return typeof value === 'string';
}

const PLACEHOLDER = /\{\{\s*([^}]*?)\s*\}\}/g;
/** The placeholders of a text param a save refuses: those no event of `type` can fill. */
function unknownPlaceholders(type: string | null, text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)]
    .map((m) => m[1]!)
    .filter((name) => name !== 'account.name' && name !== 'record_owner.name' && !(type && name.startsWith('object.') && pathType(type, name) !== null));
}

/** Text params each action takes, which may hold placeholders; the rest of its params, per type. */
const TEXTS: Record<ActionType, string[]> = {
  create_task: ['title', 'notes'],
  add_note: ['body'],
  update_record: [],
  send_email: ['subject', 'body'],
  send_webhook: [],
  wait: [],
};
const LIMITS: Record<string, number> = { title: 200, notes: 10_000, body: 10_000, subject: 500 };

/** The records a step acts on, by an event's kind; the others' steps act on the record the event names (docs/workflows.md#steps). */
export const UPDATABLE = ['contact', 'deal', 'company', 'invoice'] as const;

/**
 * Every failing part of a workflow, by its path in the input (`trigger.event`,
 * `trigger.conditions.<i>.<field>`, `actions.<i>.params.<name>`); empty when it may be saved.
 */
export function judgeWorkflow(trigger: Trigger | null, actions: Action[]): ErrorDetails {
  const details: ErrorDetails = {};
  const fail = (key: string, message: string) => (details[key] ??= []).push(message);
  const type = trigger && isEventType(trigger.event) ? trigger.event : null;
  if (trigger && !type) fail('trigger.event', 'Unknown event type');
  trigger?.conditions.forEach((c, i) => {
    const at = `trigger.conditions.${i}`;
    if (!type) return;
    // Saved as JSON: text PostgreSQL cannot keep is refused here rather than failing the write.
    if (!isStorableJson(c.value)) return fail(`${at}.value`, UNSTORABLE_TEXT);
    const kind = pathType(type, c.path);
    if (!kind) return fail(`${at}.path`, `No record of ${type} has this path`);
    if (c.op === 'changed') {
      if (!c.path.startsWith('object.')) fail(`${at}.path`, 'changed reads an object.<field> path');
      if (c.value !== undefined && c.value !== null) fail(`${at}.value`, 'changed takes no value');
    } else if (c.op === 'is_set') {
      if (typeof c.value !== 'boolean') fail(`${at}.value`, 'Expected true or false');
    } else if (c.op === 'in') {
      if (!Array.isArray(c.value) || !c.value.every((v) => fits(kind, v))) fail(`${at}.value`, `Expected a list of ${kind} values`);
    } else if (c.op === 'contains') {
      if (typeof c.value !== 'string') fail(`${at}.value`, 'Expected a string');
    } else if (['gt', 'gte', 'lt', 'lte'].includes(c.op)) {
      if (kind !== 'number' && kind !== 'date' && kind !== 'any') fail(`${at}.op`, `${c.op} compares numbers or dates`);
      else if (c.value === null || c.value === undefined || !fits(kind, c.value) || (kind === 'any' && typeof c.value !== 'number' && !isDate(c.value))) {
        fail(`${at}.value`, `Expected a ${kind === 'any' ? 'number or date' : kind}`);
      }
    } else if (c.value === undefined || !fits(kind, c.value)) {
      fail(`${at}.value`, `Expected a ${kind} value`);
    }
  });
  actions.forEach((a, i) => {
    const at = (name: string) => `actions.${i}.params.${name}`;
    const p = a.params;
    for (const [name, value] of Object.entries(p)) if (!isStorableText(name) || !isStorableJson(value)) fail(at(name), UNSTORABLE_TEXT);
    for (const name of TEXTS[a.type]) {
      const v = p[name];
      const required = !(name === 'notes');
      if (v === undefined || v === null) {
        if (required) fail(at(name), 'Required');
        continue;
      }
      if (typeof v !== 'string' || v.trim() === '') {
        fail(at(name), 'Expected a non-empty string');
        continue;
      }
      if (v.length > LIMITS[name]!) fail(at(name), `At most ${LIMITS[name]} characters`);
      const unknown = unknownPlaceholders(type, v);
      if (unknown.length) fail(at(name), `Unknown placeholder: ${unknown.map((u) => `{{${u}}}`).join(', ')}`);
    }
    const known = new Set([...TEXTS[a.type], ...{ create_task: ['due_in_days', 'assignee_id'], update_record: ['fields', 'record'], send_email: ['to'], send_webhook: ['endpoint_id'], wait: ['minutes', 'days'], add_note: [] }[a.type]]);
    for (const name of Object.keys(p)) if (!known.has(name)) fail(at(name), 'Unknown parameter');
    if (a.type === 'create_task') {
      const due = p.due_in_days;
      if (due !== undefined && due !== null && !(Number.isInteger(due) && (due as number) >= 0 && (due as number) <= 3650)) fail(at('due_in_days'), 'Expected a whole number of days, 0 to 3650');
      const who = p.assignee_id;
      if (who !== undefined && who !== null && who !== 'record_owner' && !(typeof who === 'string' && isUuid(who))) fail(at('assignee_id'), 'Expected a member id or "record_owner"');
    }
    if (a.type === 'send_email') {
      const to = p.to;
      if (to !== 'contact' && to !== 'record_owner' && !(typeof to === 'string' && email.safeParse(to).success)) fail(at('to'), 'Expected "contact", "record_owner" or an e-mail address');
    }
    if (a.type === 'send_webhook' && !(typeof p.endpoint_id === 'string' && isUuid(p.endpoint_id))) fail(at('endpoint_id'), 'Expected an endpoint id');
    if (a.type === 'wait') {
      const minutes = waitMinutes(p);
      if (minutes === null) fail(at(p.days !== undefined ? 'days' : 'minutes'), 'Expected minutes or days, more than 0 and at most 90 days');
    }
    if (a.type === 'update_record') {
      const kind = type?.slice(0, type.indexOf('.'));
      const fields = p.fields;
      const toContact = p.record === 'contact';
      if (p.record !== undefined && p.record !== null && !toContact) fail(at('record'), 'Expected "contact" (the record\'s contact) or none');
      if (type && !toContact && !(UPDATABLE as readonly string[]).includes(kind!)) fail(at('fields'), `A ${kind} event names no record update_record can change`);
      else if (!fields || typeof fields !== 'object' || Array.isArray(fields) || Object.keys(fields).length === 0) fail(at('fields'), 'Expected an object of at least one field');
      else if (type) {
        const writable = eventObjectFields(toContact ? 'contact.updated' : type);
        for (const name of Object.keys(fields)) {
          if (!writable.has(name) || ['id', 'created_at', 'updated_at', 'deleted_at'].includes(name)) fail(`${at('fields')}.${name}`, 'Not a field update_record can change');
        }
      }
    }
  });
  return details;
}

/**
 * The custom fields a workflow reads, each with where it names it (`trigger.conditions.<i>.path`,
 * `actions.<i>.params.<name>`): the save judges them against the account's definitions of the
 * event's record (src/studio/workflow.service.ts). Only those judgeWorkflow let through the format.
 */
export function customFieldRefs(trigger: Trigger | null, actions: Action[]): { object: string; refs: { at: string; key: string }[] } | null {
  const type = trigger && isEventType(trigger.event) ? trigger.event : null;
  if (!type || !eventObjectFields(type).has('custom_fields')) return null;
  const keyOf = (path: string) => {
    const [root, field] = [path.slice(0, path.indexOf('.')), path.slice(path.indexOf('.') + 1)];
    return (root === 'object' || root === 'previous') && field.startsWith(CUSTOM) && pathType(type, path) ? field.slice(CUSTOM.length) : null;
  };
  const refs: { at: string; key: string }[] = [];
  trigger!.conditions.forEach((c, i) => {
    const key = keyOf(c.path);
    if (key) refs.push({ at: `trigger.conditions.${i}.path`, key });
  });
  actions.forEach((a, i) => {
    for (const name of TEXTS[a.type]) {
      const v = a.params[name];
      if (typeof v !== 'string') continue;
      for (const m of v.matchAll(PLACEHOLDER)) {
        const key = keyOf(m[1]!);
        if (key) refs.push({ at: `actions.${i}.params.${name}`, key });
      }
    }
  });
  return { object: type.slice(0, type.indexOf('.')).toUpperCase(), refs };
}

/** A wait's length in minutes; null when it is not one (none, both, ≤ 0 or past 90 days). */
export function waitMinutes(p: Record<string, unknown>): number | null {
  const has = (k: string) => p[k] !== undefined && p[k] !== null;
  if (has('minutes') === has('days')) return null;
  const n = has('days') ? (p.days as number) * 24 * 60 : (p.minutes as number);
  return typeof n === 'number' && Number.isFinite(n) && n > 0 && n <= MAX_WAIT_MINUTES ? n : null;
}

// --- Reading an event ------------------------------------------------------------------------------

type Data = { object?: Record<string, unknown>; previous?: Record<string, unknown> };

/** The value at `path` of the event's data (`object.x`, `previous.x`, `object.custom_fields.k`); undefined when absent. */
export function valueAt(data: Data, path: string): unknown {
  let at: unknown = data;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, part)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** A comparable reading: numbers as numbers, dates (ISO texts) as their time. */
function comparable(a: unknown, b: unknown): [number, number] | [string, string] | null {
  if (typeof a === 'number' && typeof b === 'number') return [a, b];
  if (typeof a === 'string' && typeof b === 'number' && a.trim() !== '' && Number.isFinite(Number(a))) return [Number(a), b];
  if (isDate(a) && isDate(b)) return [Date.parse(a as string), Date.parse(b as string)];
  return null;
}

const same = (a: unknown, b: unknown): boolean => {
  if (typeof a === 'string' && typeof b === 'string' && isDate(a) && isDate(b) && /^\d{4}-\d\d-\d\d/.test(a) && /^\d{4}-\d\d-\d\d/.test(b)) return Date.parse(a) === Date.parse(b);
  return JSON.stringify(a) === JSON.stringify(b);
};

/** Whether one condition holds for the event's data (docs/workflows.md#conditions). */
export function holds(c: Condition, data: Data): boolean {
  const actual = valueAt(data, c.path);
  switch (c.op) {
    case 'eq': return same(actual ?? null, c.value ?? null);
    case 'ne': return !same(actual ?? null, c.value ?? null);
    case 'in': return Array.isArray(c.value) && c.value.some((v) => same(actual ?? null, v));
    case 'contains': {
      const needle = String(c.value).toLowerCase();
      if (Array.isArray(actual)) return actual.some((v) => String(v).toLowerCase().includes(needle));
      return typeof actual === 'string' && actual.toLowerCase().includes(needle);
    }
    case 'is_set': return (actual !== undefined && actual !== null && actual !== '') === c.value;
    case 'changed': return data.previous !== undefined && Object.hasOwn(data.previous, c.path.slice('object.'.length).split('.')[0]!);
    default: {
      const pair = comparable(actual, c.value);
      if (!pair) return false;
      const [a, b] = pair;
      return c.op === 'gt' ? a > b : c.op === 'gte' ? a >= b : c.op === 'lt' ? a < b : a <= b;
    }
  }
}

/** Every condition holds (ANDed). */
export const matches = (trigger: Trigger, data: Data): boolean => trigger.conditions.every((c) => holds(c, data));

/** What fills a placeholder besides the event's record. */
export type PlaceholderValues = { accountName: string; ownerName: string | null };

/** A text param with its placeholders filled from the event (`escape`: a mail's HTML part escapes every value). */
export function render(text: string, data: Data, values: PlaceholderValues, escape: (s: string) => string = (s) => s): string {
  return text.replace(PLACEHOLDER, (_m, name: string) => {
    const value = name === 'account.name' ? values.accountName : name === 'record_owner.name' ? values.ownerName : valueAt(data, name);
    if (value === undefined || value === null) return '';
    return escape(typeof value === 'object' ? JSON.stringify(value) : String(value));
  });
}
