import { Prisma } from '../generated/prisma/client.js';
import { dayFieldsOf, fieldsOf } from '../db/datamodel.js';
import { internalFieldsOf } from '../db/internal-columns.js';
import { formatDate } from '../dates.js';
import type { RecordKind } from './types.js';
import { snakeCase } from '../names.js';

type Row = Record<string, unknown>;
/** `model`: the kind's Prisma model (its relations are not the record's fields, its `@db.Date` columns are days); `omit`: columns left out. */
type Shape = { model: string; omit?: readonly string[] };

const relationsCache = new Map<string, ReadonlySet<string>>();
/** The model's relation fields (a row read with `include` carries them): every other key is a column, JSON columns included. */
const relationsOf = (model: string): ReadonlySet<string> => {
  let found = relationsCache.get(model);
  if (!found) relationsCache.set(model, (found = new Set(fieldsOf(model).filter((f) => f.kind === 'object').map((f) => f.name))));
  return found;
};


/** A Prisma row as the REST API shows records: snake_case, money as numbers, days as YYYY-MM-DD, times ISO 8601. */
function restShape(row: Row, { model, omit = [] }: Shape): Row {
  const out: Row = {};
  const relations = relationsOf(model);
  const dates = dayFieldsOf(model);
  for (const [key, value] of Object.entries(row)) {
    if (omit.includes(key) || key === 'accountId' || relations.has(key)) continue; // the envelope carries account_id
    let shown = value;
    if (value instanceof Date) shown = dates.has(key) ? formatDate(value) : value.toISOString();
    else if (Prisma.Decimal.isDecimal(value)) shown = (value as Prisma.Decimal).toNumber();
    out[snakeCase(key)] = shown;
  }
  return out;
}

// One serializer per record type: what is left out of the record as events show it (the service's
// own columns from the one list of them, src/db/internal-columns.ts, besides). Submissions never carry the visitor's address or browser (personal data).
const SHAPES: Record<RecordKind, Shape> = {
  account: { model: 'Account', omit: ['nextInvoiceNumber'] },
  contact: { model: 'Contact' },
  deal: { model: 'Deal' },
  company: { model: 'Company' },
  note: { model: 'Note', omit: internalFieldsOf('Note') },
  task: { model: 'Task', omit: internalFieldsOf('Task') },
  // The page token opens the client's page: events never carry it (members read hostedUrl).
  invoice: { model: 'Invoice', omit: ['pageToken'] },
  payment: { model: 'Payment' },
  pipeline_stage: { model: 'PipelineStage' },
  form: { model: 'LeadForm' },
  proposal: { model: 'Proposal' },
  contract: { model: 'Contract' },
  gallery: { model: 'Gallery' },
  booking: { model: 'Booking' },
  workflow: { model: 'Workflow', omit: internalFieldsOf('Workflow') },
  export: { model: 'ExportLog' },
  import: { model: 'Import', omit: ['headers', 'columns', ...internalFieldsOf('Import')] },
  member: { model: 'TeamMember' },
  ownership: { model: 'Account' },
  webhook_endpoint: { model: 'WebhookEndpoint', omit: ['secretCiphertext', 'previousSecretCiphertext', 'previousSecretExpiresAt', 'failingSince'] },
  api_key: { model: 'ApiKey', omit: ['secretHash'] },
};

const SUBMISSION: Shape = { model: 'FormSubmission', omit: ['clientIp', 'userAgent', 'isSpam'] };

/** `data.object` of an event about `kind`. `form.submitted` carries the submission. */
export function serializeRecord(kind: RecordKind | 'submission', row: object): Row {
  return restShape(row as Row, kind === 'submission' ? SUBMISSION : SHAPES[kind]);
}

const sqlCache = new Map<string, Prisma.Sql>();

/** A time column in SQL as serializeRecord shows it: ISO 8601 in UTC with milliseconds. */
export const isoTimeSql = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * serializeRecord in SQL: the JSON of `kind`'s record from the row `alias` of `model`'s table (a CTE's
 * RETURNING *), with the same keys and values, so a statement that writes a record and its event
 * together shows the record as the service would (times ISO 8601 in UTC with milliseconds, days
 * YYYY-MM-DD, money as a number without trailing zeros).
 */
export function recordJsonSql(kind: RecordKind, model: string, alias: string): Prisma.Sql {
  const cacheKey = `${kind}:${model}:${alias}`;
  let found = sqlCache.get(cacheKey);
  if (found) return found;
  const { omit = [] } = SHAPES[kind];
  const dates = dayFieldsOf(model);
  const pairs = fieldsOf(model)
    .filter((f) => (f.kind === 'scalar' || f.kind === 'enum') && f.name !== 'accountId' && !omit.includes(f.name))
    .map((f) => {
      const column = `${alias}."${snakeCase(f.name)}"`;
      const value =
        f.type === 'DateTime' ? (dates.has(f.name) ? `to_char(${column}, 'YYYY-MM-DD')` : isoTimeSql(column))
        : f.type === 'Decimal' ? `trim_scale(${column})`
        : column;
      return `'${snakeCase(f.name)}', ${value}`;
    });
  found = Prisma.raw(`jsonb_build_object(${pairs.join(', ')})`);
  sqlCache.set(cacheKey, found);
  return found;
}

/** What a value of an event's record field is, for a workflow's conditions (docs/workflows.md#conditions). */
export type EventFieldType = 'string' | 'number' | 'boolean' | 'date' | 'json';

/**
 * The fields `data.object` of an event of `type` carries, by REST name, with their kind of value:
 * what a workflow's condition or placeholder may name. `contact.erased` carries the id only.
 */
export function eventObjectFields(type: string): Map<string, EventFieldType> {
  const kind = type.slice(0, type.indexOf('.')) as RecordKind;
  if (type === 'contact.erased') return new Map([['id', 'string']]);
  const shape = type === 'form.submitted' ? SUBMISSION : SHAPES[kind];
  const fields = new Map<string, EventFieldType>();
  if (!shape) return fields;
  for (const f of fieldsOf(shape.model)) {
    if ((f.kind !== 'scalar' && f.kind !== 'enum') || f.name === 'accountId' || shape.omit?.includes(f.name)) continue;
    const kindOf: EventFieldType =
      f.type === 'DateTime' ? 'date'
      : f.type === 'Int' || f.type === 'Float' || f.type === 'Decimal' || f.type === 'BigInt' ? 'number'
      : f.type === 'Boolean' ? 'boolean'
      : f.type === 'Json' ? 'json'
      : 'string';
    fields.set(snakeCase(f.name), kindOf);
  }
  return fields;
}
