import { Prisma } from '../generated/prisma/client.js';
import { formatDate } from '../dates.js';
import type { RecordKind } from './types.js';
import { snakeCase } from '../names.js';

type Row = Record<string, unknown>;
type Shape = { omit?: readonly string[]; dates?: readonly string[] };


/** A Prisma row as the REST API shows records: snake_case, money as numbers, days as YYYY-MM-DD, times ISO 8601. */
function restShape(row: Row, { omit = [], dates = [] }: Shape): Row {
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) {
    if (omit.includes(key) || key === 'accountId') continue; // the envelope carries account_id
    let shown = value;
    if (value instanceof Date) shown = dates.includes(key) ? formatDate(value) : value.toISOString();
    else if (Prisma.Decimal.isDecimal(value)) shown = (value as Prisma.Decimal).toNumber();
    else if (value !== null && typeof value === 'object' && !Array.isArray(value) && key !== 'data') continue; // a relation
    out[snakeCase(key)] = shown;
  }
  return out;
}

// One serializer per record type: what is left out of the record as events show it, and which
// columns are days. Submissions never carry the visitor's address or browser (personal data).
const SHAPES: Record<RecordKind, Shape> = {
  account: { omit: ['nextInvoiceNumber'] },
  contact: {},
  deal: { dates: ['expectedCloseDate'] },
  company: {},
  note: { omit: ['listedAt'] },
  task: { omit: ['overdueNotifiedAt'] },
  // The page token opens the client's page: events never carry it (members read hostedUrl).
  invoice: { omit: ['pageToken'], dates: ['dueDate'] },
  payment: {},
  pipeline_stage: {},
  form: {},
  proposal: {},
  contract: {},
  gallery: {},
  booking: {},
  workflow: {},
  export: {},
  import: { omit: ['headers', 'columns', 'doneSeq', 'leaseOwner', 'attempts', 'attemptError'] },
  member: {},
  ownership: {},
  webhook_endpoint: { omit: ['secretCiphertext', 'previousSecretCiphertext', 'previousSecretExpiresAt', 'failingSince'] },
  api_key: { omit: ['secretHash'] },
};

const SUBMISSION: Shape = { omit: ['clientIp', 'userAgent', 'isSpam'] };

/** `data.object` of an event about `kind`. `form.submitted` carries the submission. */
export function serializeRecord(kind: RecordKind | 'submission', row: object): Row {
  return restShape(row as Row, kind === 'submission' ? SUBMISSION : SHAPES[kind]);
}
