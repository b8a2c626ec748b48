import { randomUUID } from 'node:crypto';
import { lockKey } from '../writes/batch.service.js';
import { z } from 'zod';
import {
  ContactField,
  ContactSource,
  ContactType,
  FormFieldType,
  type LeadForm,
  type LeadFormField,
  Prisma,
  type PrismaClient,
} from '../generated/prisma/client.js';
import { CONTACT_FIELDS, CONTACT_FORM_TARGETS } from '../contacts/contact.model.js';
import { contactBatch, createContactInput } from '../contacts/contact.service.js';
import { restName } from '../model/field-spec.js';
import { serializeRecord } from '../events/serialize.js';
import { emitMany, inRawTransaction, inTransaction, type EmitInput, type RawTransaction } from '../events/emit.js';
import { uuidv7 } from '../events/ids.js';
import { fromColumns, rowOf } from '../writes/set-write.js';
import { rawRead, rawWrite } from '../db/raw.js';
import { together } from '../db/together.js';
import { VISITOR } from '../events/types.js';
import { linkableDomain } from '../links/domain.js';
import { badInput, type ErrorDetails } from '../errors.js';
import { parseCalendarDate } from '../dates.js';
import { patched } from '../writes/custom-values.js';
import { judgeCustomValues } from './form-custom-fields.js';
import { email as emailSchema, isStorableText, isUuid, optionalText, toDetails, UNSTORABLE_TEXT } from '../validation.js';

/** What a submit reads of its form: who it belongs to, its answer, and the rules of its fields in order. */
export type FormWithFields = Pick<LeadForm, 'id' | 'accountId' | 'active' | 'successMessage' | 'redirectUrl' | 'honeypotField'> & { fields: FieldRule[] };
/** The client, or a transaction already open (an idempotent submit stores its answer in it). */
type Db = PrismaClient | Prisma.TransactionClient;
type FieldRule = Pick<LeadFormField, 'key' | 'type' | 'required' | 'mapsTo' | 'customField' | 'options' | 'maxLength'>;

/** A validated submission: the defined values (trimmed) and what they say about the contact. */
export type Submission = {
  values: Record<string, string>;
  contact: Partial<Record<ContactField, string>>;
  /** The contact custom fields the form fills (docs/custom-fields.md#where-values-go): key -> the form's field and the visitor's text. */
  custom?: Record<string, { formKey: string; text: string }>;
  referrer: string | null;
  page: string | null;
};

export type SubmissionOrigin = { clientIp: string; userAgent: string | null };
export type SubmissionResult = { success: true; contactId: string; successMessage: string; redirectUrl: string | null };

// A mapped value must also fit its contact column (docs/decisions.md §4), whatever the field allows.
const columnMax = (target: ContactField): number => CONTACT_FORM_TARGETS[target].max;

export const metadataSchema = z.object({
  metadata: z.object({ referrer: optionalText(2048), page: optionalText(2048) }).nullish(),
});

/**
 * The form a visitor may submit to; null for an id that is not a UUID, unknown, or inactive (one 404).
 * Every submit reads its form, most of them the same few forms: submits that arrive while a form
 * read runs share the next one (src/db/together.ts; docs/scaling.md "Statements shared by concurrent
 * requests"), so under load the forms cost a statement per group of submits, not per submit.
 */
export async function findActiveForm(db: PrismaClient, formId: string): Promise<FormWithFields | null> {
  if (!isUuid(formId)) return null;
  return together(db, 'form', formId.toLowerCase(), (ids) => activeForms(db, ids));
}

/**
 * Each id's active form, in order, from one statement through the pool (rawRead): the forms with
 * their fields as JSON, where Prisma's read of a form and its fields cost a submit two statements and
 * its ORM's CPU (BENCHMARKS.md, "Writes as fast as reads"). Text and booleans only, which pg and
 * Prisma read alike. Each answer is its own object: requests that shared the read share no state.
 */
async function activeForms(db: PrismaClient, ids: string[]): Promise<(FormWithFields | null)[]> {
  const rows = await rawRead<Omit<FormWithFields, 'fields'> & { fields: string }>(db, Prisma.sql`
    SELECT f.id::text, f.account_id::text AS "accountId", f.active, f.success_message AS "successMessage",
           f.redirect_url AS "redirectUrl", f.honeypot_field AS "honeypotField",
           (SELECT coalesce(json_agg(json_build_object('key', x.key, 'type', x.type, 'required', x.required, 'mapsTo', x.maps_to,
                                                       'customField', x.custom_field, 'options', x.options, 'maxLength', x.max_length) ORDER BY x.position), '[]')
            FROM lead_form_fields x WHERE x.form_id = f.id)::text AS fields
    FROM lead_forms f WHERE f.id = ANY(${[...new Set(ids)]}::uuid[]) AND f.active`);
  const byId = new Map(rows.map((form) => [form.id, form]));
  return ids.map((id) => {
    const form = byId.get(id);
    return form ? { ...form, fields: JSON.parse(form.fields) as FieldRule[] } : null;
  });
}

// The shape of a submission for the REST reference; `data` is judged against the form's own fields.
export const submissionShape = metadataSchema.extend({
  data: z
    .record(z.string(), z.string())
    .describe("The form's field keys (GET /forms/{form_id} lists them) to their values; keys the form does not define are ignored"),
});

/**
 * Public submission (docs/decisions.md §5) to a form found by findActiveForm: a filled honeypot is kept
 * apart as spam with the ordinary answer; otherwise 400 on the values, then the contact and the record.
 */
export async function submitToForm(
  db: Db,
  form: FormWithFields,
  args: { data: unknown; metadata?: unknown },
  origin: SubmissionOrigin,
): Promise<SubmissionResult> {
  const answer = { success: true as const, successMessage: form.successMessage, redirectUrl: form.redirectUrl };
  if (filledHoneypot(form, args.data)) {
    await recordSpam(db, form, args.data as Record<string, unknown>, origin);
    // A bot must not learn it was caught: an ordinary answer with an id that names no contact.
    return { ...answer, contactId: randomUUID() };
  }
  const submission = validateSubmission(form.fields, args.data, args.metadata);
  const custom = await customValuesOf(db, form.accountId, submission);
  const contactId = await recordSubmission(db, form, submission, origin, custom);
  return { ...answer, contactId };
}

function filledHoneypot(form: Pick<LeadForm, 'honeypotField'>, data: unknown): boolean {
  if (!form.honeypotField || typeof data !== 'object' || data === null) return false;
  // Own keys only: a honeypot named `constructor` or `toString` must not find Object.prototype's.
  const value = Object.hasOwn(data, form.honeypotField) ? (data as Record<string, unknown>)[form.honeypotField] : undefined;
  return typeof value === 'string' ? value.trim() !== '' : value !== undefined && value !== null;
}

/** Spam keeps the defined string values and where it came from, and touches no contact. */
async function recordSpam(db: Db, form: FormWithFields, data: Record<string, unknown>, origin: SubmissionOrigin) {
  const values: Record<string, string> = {};
  for (const key of [...form.fields.map((f) => f.key), form.honeypotField!]) {
    const value = Object.hasOwn(data, key) ? data[key] : undefined;
    // Kept as evidence, never refused (a bot must not learn it was caught): made storable instead.
    if (typeof value === 'string') values[key] = storable(value.slice(0, 10_000));
  }
  await db.formSubmission.create({
    data: {
      accountId: form.accountId,
      formId: form.id,
      data: values,
      isSpam: true,
      clientIp: origin.clientIp.slice(0, 64),
      userAgent: origin.userAgent?.slice(0, 1000) ?? null,
    },
  });
}

const storable = (value: string): string =>
  isStorableText(value) ? value : [...value].map((c) => (isStorableText(c) ? c : '\ufffd')).join('');

/**
 * What a submission's values get wrong against its form, keyed by the form's own field keys; none
 * when they pass, or when the honeypot is filled (a bot hears the ordinary answer, whatever it sent).
 * The field's rules judge it with the rest of the input (`targetChecks`); submitToForm, again.
 */
export function submissionProblems(form: FormWithFields, args: { data: unknown; metadata?: unknown }): ErrorDetails {
  return filledHoneypot(form, args.data) ? {} : judgeSubmission(form.fields, args.data, args.metadata).details;
}

/** What the inputs of these types send (as a browser writes them), and the message when a value is not that. */
const TYPED_INPUTS: Partial<Record<FormFieldType, { test(value: string): boolean; message: string }>> = {
  [FormFieldType.number]: { test: (value) => /^-?\d+(\.\d+)?$/.test(value), message: 'Must be a number' },
  [FormFieldType.date]: { test: (value) => parseCalendarDate(value) !== null, message: 'Must be a real date in the form YYYY-MM-DD' },
  [FormFieldType.url]: { test: (value) => z.url({ protocol: /^https?$/ }).safeParse(value).success, message: 'Must be an http(s) URL' },
};

/**
 * The contact custom values a submission gives, judged by the account's definitions before its
 * transaction: as a new contact's (`create`: a required field the form lacks is Required) and as a
 * known one's patch (`update`); which applies is known once the e-mail is looked up. A problem of
 * the values themselves is the submission's 400, named by the form's field key.
 */
async function customValuesOf(db: Db, accountId: string, submission: Submission): Promise<CustomValues> {
  const given = submission.custom ?? {};
  const asUpdate = await judgeCustomValues(db, accountId, given, 'update');
  if (Object.keys(asUpdate.details).length) throw badInput(asUpdate.details);
  return { create: await judgeCustomValues(db, accountId, given, 'create'), update: asUpdate.values };
}

type CustomValues = { create: { values: Record<string, unknown>; details: ErrorDetails }; update: Record<string, unknown> };
const NO_CUSTOM_VALUES: CustomValues = { create: { values: {}, details: {} }, update: {} };

/** Checks `data` against the form's fields; details are keyed by the field key as the form defines it. */
export function validateSubmission(fields: FieldRule[], data: unknown, metadata?: unknown): Submission {
  const { submission, details } = judgeSubmission(fields, data, metadata);
  if (Object.keys(details).length > 0) throw badInput(details);
  return submission;
}

function judgeSubmission(fields: FieldRule[], data: unknown, metadata?: unknown): { submission: Submission; details: ErrorDetails } {
  // No prototype: a form field keyed `constructor` or `toString` is just another key to report.
  const details: ErrorDetails = Object.create(null) as ErrorDetails;
  const fail = (key: string, message: string) => (details[key] ??= []).push(message);
  const submission: Submission = { values: {}, contact: {}, custom: {}, referrer: null, page: null };
  const meta = metadataSchema.safeParse({ metadata });
  if (meta.success) {
    submission.referrer = meta.data.metadata?.referrer ?? null;
    submission.page = meta.data.metadata?.page ?? null;
  } else Object.assign(details, toDetails(meta.error));

  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    fail('data', 'Expected an object of string values');
    return { submission, details };
  }
  const given = data as Record<string, unknown>;
  for (const field of fields) {
    // Only keys the form defines are read: anything else is ignored and never stored.
    const raw = Object.hasOwn(given, field.key) ? given[field.key] : undefined;
    if (raw !== undefined && typeof raw !== 'string') {
      fail(field.key, 'Expected a string');
      continue;
    }
    if (raw !== undefined && !isStorableText(raw)) {
      fail(field.key, UNSTORABLE_TEXT);
      continue;
    }
    const value = (raw ?? '').trim();
    if (raw !== undefined) submission.values[field.key] = value;
    if (value === '') {
      if (field.required) fail(field.key, 'Required');
      continue;
    }
    const max = field.mapsTo ? Math.min(field.maxLength, columnMax(field.mapsTo)) : field.maxLength;
    if (value.length > max) fail(field.key, `Must be at most ${max} characters`);
    else if ((field.type === FormFieldType.email || field.mapsTo === ContactField.email) && !emailSchema.safeParse(value).success) {
      fail(field.key, 'Must be a valid e-mail address');
    } else if (field.type === FormFieldType.select && !field.options.includes(value)) {
      fail(field.key, 'Must be one of the options');
    } else if (Object.hasOwn(TYPED_INPUTS, field.type) && !TYPED_INPUTS[field.type]!.test(value)) {
      fail(field.key, TYPED_INPUTS[field.type]!.message);
    }
    if (field.mapsTo) submission.contact[field.mapsTo] = value;
    if (field.customField) (submission.custom ??= {})[field.customField] = { formKey: field.key, text: value };
  }
  // A new contact needs a first name; the e-mail's local part stands in when none is given.
  if (Object.keys(details).length === 0 && !submission.contact.first_name && !submission.contact.email) {
    const named = fields.find((f) => f.mapsTo === ContactField.first_name) ?? fields.find((f) => f.mapsTo === ContactField.email);
    fail(named?.key ?? 'data', 'Required');
  }
  return { submission, details };
}

/** The same lock as upsertContacts by e-mail (src/writes/): a form and a batch never both create the contact. */
const emailLock = (accountId: string, email: string): string => lockKey(accountId, 'contacts', 'email', email.toLowerCase());

/**
 * The lock a submission of `data` will take, known before its transaction opens, so submissions of
 * one e-mail can queue in this instance rather than each hold a connection (src/db/queue-by-key.ts).
 */
export function submissionLock(form: FormWithFields, data: unknown): string | null {
  const field = form.fields.find((f) => f.mapsTo === ContactField.email);
  const value = field && typeof data === 'object' && data !== null && Object.hasOwn(data, field.key) ? (data as Record<string, unknown>)[field.key] : undefined;
  return typeof value === 'string' && value.trim() !== '' ? emailLock(form.accountId, value.trim()) : null;
}

/**
 * Finds or creates the contact and records the submission in one transaction. A transaction-scoped
 * advisory lock on (account, lower(e-mail)) serialises submissions for the same address, so two at
 * once cannot both miss the lookup and create two contacts; it is released at commit or rollback.
 * The lock, then the lookup (after the lock, so it sees a submission that held it), then for a new
 * contact one statement writing it, the submission and both events; for a known one its update, the
 * submission, and the events. On pg's client the lock and the lookup go with BEGIN in one round
 * trip, so a new visitor's submit is three: BEGIN with both, the write, COMMIT.
 *
 * A new visitor (the usual submit) needs no Prisma model call, so that transaction runs on pg's own
 * client where there is a pool (inRawTransaction); a known address is seen there, written nothing,
 * and taken again in Prisma's transaction, which updates it.
 */
export async function recordSubmission(
  db: Db,
  form: Pick<LeadForm, 'id' | 'accountId'>,
  submission: Submission,
  origin: SubmissionOrigin,
  custom: CustomValues = NO_CUSTOM_VALUES,
): Promise<string> {
  const submitted: Submitted = {
    id: uuidv7(), form: form.id, data: JSON.stringify(submission.values), referrer: submission.referrer, page: submission.page,
    clientIp: origin.clientIp.slice(0, 64), userAgent: origin.userAgent?.slice(0, 1000) ?? null,
  };
  // On pg's client the e-mail's lock and its lookup come with BEGIN, in its round trip; createUnlessKnown takes them otherwise.
  const email = submission.contact.email;
  const first = email ? { lock: emailLock(form.accountId, email), read: lookup(form.accountId, email) } : {};
  const onPg = '$connect' in db
    ? inRawTransaction(db, (tx, read) => createUnlessKnown(tx, form.accountId, submission, submitted, read as Found[], custom.create), first)
    : null;
  const created = onPg ? await onPg : null;
  if (created && 'created' in created) return created.created;
  return inTransaction(db, async (tx) => {
    const found = await createUnlessKnown(tx, form.accountId, submission, submitted, null, custom.create);
    return 'created' in found ? found.created : updateKnown(tx, form.accountId, found.known, submission, submitted, custom.update);
  });
}

/** A known contact as a submission reads it: its id, each field a form may fill, and its custom values. */
type Known = { id: string; customFields: Record<string, unknown> } & Record<string, unknown>;
/** The lookup's one row: the oldest contact of the address (id null when none), and the company of its domain. */
type Found = { id: string | null; companyOfDomain: string | null } & Record<string, unknown>;

/** The fields a form fills, by field name and REST name (the submission's keys), from the contacts' spec. */
const FORM_FIELDS = CONTACT_FIELDS.filter((field) => 'form' in field).map((field) => ({ name: field.name, rest: restName(field) as ContactField }));
const KNOWN_COLUMNS = Prisma.raw([...FORM_FIELDS.map(({ name, rest }) => `"${rest}" AS "${name}"`), `custom_fields AS "customFields"`].join(', '));

/**
 * The oldest contact of `email` in the account with the fields a form fills, and the company a new
 * contact of that address would take (its e-mail's domain, docs/decisions.md §21): one row. Raw:
 * Prisma's case-insensitive `equals` is ILIKE, where `_` and `%` in an address are wildcards. Its
 * values are text only, so it can be sent inlined with BEGIN (rawTransaction's `read`).
 */
function lookup(accountId: string, email: string): Prisma.Sql {
  const domain = linkableDomain(email);
  return Prisma.sql`
    SELECT k.*, ${domain ? Prisma.sql`(SELECT c.id::text FROM companies c WHERE c.account_id = ${accountId}::uuid AND c.domain = ${domain}::text)` : Prisma.sql`NULL`} AS "companyOfDomain"
    FROM (SELECT 1) AS one LEFT JOIN LATERAL (
      SELECT id::text, ${KNOWN_COLUMNS} FROM contacts WHERE account_id = ${accountId}::uuid AND lower(email) = lower(${email}::text)
      ORDER BY created_at ASC, id ASC LIMIT 1) AS k ON true`;
}

/**
 * Takes the address's lock and looks it up (unless `lookedUp`: its transaction did both at BEGIN): a known contact is returned untouched; else the new
 * contact, the submission and both events are written in one statement, the last before COMMIT, so
 * the account's counter rows its INSERT locks (record_counts, report_sums) are held for the COMMIT
 * alone. The new contact is judged and built as every create builds one (the contacts' create rule
 * and contactBatch.newRow), and inserted with every column it gives, so a field the spec gains
 * reaches it and its event unedited. The rows are stamped by the database (the transaction's start), and their events show those stamps.
 */
async function createUnlessKnown(
  tx: Prisma.TransactionClient | RawTransaction,
  accountId: string,
  submission: Submission,
  submitted: Submitted,
  lookedUp: Found[] | null,
  custom: CustomValues['create'] = NO_CUSTOM_VALUES.create,
): Promise<{ created: string } | { known: Known }> {
  const { email } = submission.contact;
  let companyId: string | null = null;
  if (email) {
    if (!lookedUp) await rawWrite(tx, Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended(${emailLock(accountId, email)}::text, 0))::text`);
    const [found] = lookedUp ?? (await rawWrite<Found>(tx, lookup(accountId, email)));
    if (found!.id !== null) {
      const { companyOfDomain: _, ...known } = found!;
      return { known: known as Known };
    }
    companyId = found!.companyOfDomain;
  }
  // The rows take the database's stamps (the transaction's start); the events are made here with
  // the service's clock and show the rows' own times (emitMany's `stamped`).
  const now = new Date();
  const values = Object.fromEntries(FORM_FIELDS.map(({ name, rest }) => [name, submission.contact[rest] ?? null]));
  // A new contact needs a first name; the e-mail's local part stands in when none is given.
  values.firstName ??= email!.slice(0, email!.lastIndexOf('@')).slice(0, columnMax(ContactField.first_name));
  // A new contact: its custom values as a create judges them (a required field the form lacks is Required).
  if (Object.keys(custom.details).length) throw badInput(custom.details);
  const input = createContactInput.parse({ accountId, ...values, customFields: custom.values, contactType: ContactType.lead, source: ContactSource.website, companyId });
  const contact = contactBatch.newRow(input, uuidv7(), now);
  const recorded = rowOf('FormSubmission', {
    id: submitted.id, accountId, formId: submitted.form, contactId: contact.id, data: submission.values, referrer: submitted.referrer, page: submitted.page,
    clientIp: submitted.clientIp, userAgent: submitted.userAgent, createdAt: now, isSpam: false, updatedAt: now,
  });
  // Its stamps are left to the database (the transaction's start), as the submission's.
  const columns: Record<string, unknown> = { account_id: accountId, ...serializeRecord('contact', contact) };
  delete columns.created_at;
  delete columns.updated_at;
  await emitMany(tx, [
    { type: 'contact.created', accountId, actor: VISITOR, object: contact },
    { type: 'form.submitted', accountId, actor: VISITOR, object: recorded },
  ], {
    ctes: Prisma.sql`
      c AS (
        INSERT INTO contacts (${Prisma.raw(Object.keys(columns).map((c) => `"${c}"`).join(', '))})
        SELECT ${Prisma.raw(Object.keys(columns).map((c) => `r."${c}"`).join(', '))} FROM json_populate_record(NULL::contacts, ${JSON.stringify(columns)}::json) AS r
        RETURNING id, created_at, updated_at),
      s AS (${submissionInsert(submitted, Prisma.sql`${accountId}::uuid`, Prisma.sql`${contact.id}::uuid`)}),`,
    stamped: Prisma.sql`(SELECT id, created_at, updated_at FROM c UNION ALL SELECT id, created_at, updated_at FROM s)`,
  });
  return { created: contact.id };
}

/**
 * A known address: only the other non-empty mapped values overwrite, and the custom values given
 * patch the contact's (the others kept); its update's event, if any, and the submission's.
 */
async function updateKnown(tx: Prisma.TransactionClient, accountId: string, known: Known, submission: Submission, submitted: Submitted, custom: Record<string, unknown> = {}): Promise<string> {
  const update: Record<string, unknown> = Object.fromEntries(FORM_FIELDS.filter(({ rest }) => rest !== ContactField.email).map(({ name, rest }) => [name, submission.contact[rest]]));
  const previous = Object.fromEntries(
    Object.entries(update).filter(([key, value]) => value !== undefined && value !== known[key]).map(([key]) => [key, known[key]]),
  );
  if (Object.entries(custom).some(([key, value]) => JSON.stringify(value) !== JSON.stringify(known.customFields[key]))) {
    update.customFields = patched(known.customFields, custom);
    previous.customFields = known.customFields;
  }
  const contact = await tx.contact.update({ where: { id: known.id }, data: update });
  const recorded = await insertSubmission(tx, accountId, known.id, submitted);
  const events: EmitInput[] = Object.keys(previous).length > 0 ? [{ type: 'contact.updated', accountId, actor: VISITOR, object: contact, previous }] : [];
  await emitMany(tx, [...events, { type: 'form.submitted', accountId, actor: VISITOR, object: recorded }]);
  return known.id;
}

type Submitted = { id: string; form: string; data: string; referrer: string | null; page: string | null; clientIp: string; userAgent: string | null };

/** The submission's INSERT, returning the stored row, stamped by the database. */
const submissionInsert = (s: Submitted, account: Prisma.Sql, contact: Prisma.Sql) => Prisma.sql`
  INSERT INTO form_submissions (id, account_id, form_id, contact_id, data, referrer, page, client_ip, user_agent)
  VALUES (${s.id}::uuid, ${account}, ${s.form}::uuid, ${contact}, ${s.data}::jsonb, ${s.referrer}, ${s.page}, ${s.clientIp}, ${s.userAgent})
  RETURNING *`;

async function insertSubmission(tx: Prisma.TransactionClient, accountId: string, contactId: string, s: Submitted): Promise<Record<string, unknown>> {
  const [row] = await tx.$queryRaw<{ row: string }[]>`
    WITH s AS (${submissionInsert(s, Prisma.sql`${accountId}::uuid`, Prisma.sql`${contactId}::uuid`)})
    SELECT to_json(s)::text AS row FROM s`;
  return fromColumns('FormSubmission', JSON.parse(row!.row) as Record<string, unknown>);
}
