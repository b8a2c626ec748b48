import { Readable } from 'node:stream';
import type { Context } from '../context.js';
import type { Reader } from '../db/replicas.js';
import { accountExportStream, COLLECTIONS, FORMAT_VERSION } from '../exports/account-json.js';
import { contactsCsvStream, CSV_COLUMNS } from '../exports/contacts-csv.js';
import { exportFileName } from '../exports/export.service.js';
import { ExportKind } from '../generated/prisma/client.js';
import { importErrorsCsvStream } from '../imports/errors-csv.js';
import type { InvoiceDocument } from '../invoices/invoice-document.js';
import { invoicePdfFor } from '../invoices/invoice-pdf-cache.js';
import type { Logger } from '../logger.js';
import type { JsonSchema } from './json-schema.js';

/**
 * What the route's operation answers and a download streams from: an export mutation's ticket (its
 * audit row), or a record with what its file shows (an invoice's `document`).
 */
export type Ticket = { accountId: string; fileName?: string; createdAt?: string; id?: string; document?: InvoiceDocument };

/** What else of the request a file's bytes may need: its database client and the PDF pool. */
export type DownloadRequest = Pick<Context, 'db' | 'pdfs'> & { log: Pick<Logger, 'warn'> };

/** A file answer: how its bytes are made, and what the OpenAPI document says of them. */
export type Download = {
  mediaType: string;
  /**
   * Reads from a replica when one is healthy (docs/scaling.md). Rejects before any byte when the
   * file cannot be made now (SERVICE_UNAVAILABLE: a 503 with Retry-After).
   */
  stream(reader: Reader, ticket: Ticket, request: DownloadRequest): Promise<ReadableStream<Uint8Array>>;
  /** The answer's file name: the ticket's own when absent. */
  fileName?(ticket: Ticket): string;
  /** A file name like the real ones, for the reference. */
  sampleFileName: string;
  schema: JsonSchema;
  example?: string;
};

const DAY = new Date(Date.UTC(2025, 0, 31));
const SAMPLE_ACCOUNT = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

/** A contact as the export writes it, by column label (the OpenAPI example's row). */
const SAMPLE_CONTACT: Record<string, string> = {
  'First Name': 'Ada', 'Last Name': 'Lovelace', Email: 'ada@example.com', Company: 'Analytical Engines',
  'Contact Type': 'client', Source: 'referral', 'Created At': '2025-01-31T09:30:00.000Z', 'External Id': 'crm-1815',
};

export const CONTACTS_CSV: Download = {
  mediaType: 'text/csv',
  // Raw SQL (src/exports/contacts-csv.ts): the replica client, as the export read before (docs/scaling.md).
  stream: async (reader, ticket) => contactsCsvStream(reader.$replica(), ticket.accountId, { pool: reader.$replicaPool() }),
  sampleFileName: exportFileName({ kind: ExportKind.contacts_csv, accountId: SAMPLE_ACCOUNT, createdAt: DAY }),
  schema: { type: 'string', description: `RFC 4180 CSV, UTF-8, oldest first. Columns: ${CSV_COLUMNS.join(', ')}.` },
  // One cell per column, by label: a column added to the export gets its (empty) cell here too.
  example: `${CSV_COLUMNS.join(',')}\r\n${CSV_COLUMNS.map((label) => SAMPLE_CONTACT[label] ?? '').join(',')}\r\n`,
};

export const IMPORT_ERRORS_CSV: Download = {
  mediaType: 'text/csv',
  // The primary: errors are written while the import runs, and a replica may trail.
  stream: async (reader, ticket) => importErrorsCsvStream(reader.$primary(), ticket.accountId, ticket.id!),
  sampleFileName: 'import-0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b-errors.csv',
  schema: {
    type: 'string',
    description: 'RFC 4180 CSV, UTF-8, one row per refused row in line order: `line`, the file\'s own columns as sent, `errors` ("field: message; ..."). Formula-looking cells are guarded as in the contacts export.',
  },
  example: 'line,First Name,Email,errors\r\n3,,ada@example,"email: Must be a valid e-mail address; first_name: Required"\r\n',
};

export const INVOICE_PDF: Download = {
  mediaType: 'application/pdf',
  // Drawn from what the operation answered: the core decided what the caller may see, nothing more is
  // read. In the PDF pool's threads, kept per version (src/invoices/invoice-pdf-cache.ts, docs/decisions.md §26).
  stream: async (_reader, ticket, { db, pdfs, log }) =>
    Readable.toWeb(Readable.from([await invoicePdfFor(db, { accountId: ticket.accountId, id: ticket.id! }, ticket.document!, pdfs, log)])) as ReadableStream<Uint8Array>,
  fileName: (ticket) => ticket.document!.fileName,
  sampleFileName: 'invoice-INV-000042.pdf',
  schema: {
    type: 'string',
    format: 'binary',
    description: "The invoice as its client's page shows it (account, number, dates, contact, lines, totals, paid, due, status, memo), as text a reader can select and extract.",
  },
};

export const ACCOUNT_JSON: Download = {
  mediaType: 'application/json',
  // The document must hold its own audit row, written just now: a replica that has caught up, or the primary.
  // Its pages are raw SQL through that server's pool (src/exports/pages.ts).
  stream: async (reader, ticket) => {
    const { client, pool } = await reader.$caughtUpSource();
    return accountExportStream(client, ticket.accountId, new Date(ticket.createdAt!), { pool });
  },
  sampleFileName: exportFileName({ kind: ExportKind.account_json, accountId: SAMPLE_ACCOUNT, createdAt: DAY }),
  schema: accountExportSchema(),
};

function accountExportSchema(): JsonSchema {
  const records = { type: 'array', items: { type: 'object', description: 'One row: every column (snake_case) but secrets' } };
  return {
    type: 'object',
    description: 'Every account-scoped collection; the listing is open-ended (more keys may appear).',
    required: ['export_metadata', 'account', ...COLLECTIONS.map((c) => c.key)],
    properties: {
      export_metadata: {
        type: 'object',
        required: ['exported_at', 'account_id', 'format_version', 'gdpr_request'],
        properties: {
          exported_at: { type: 'string', format: 'date-time' },
          account_id: { type: 'string', format: 'uuid' },
          format_version: { type: 'string', const: FORMAT_VERSION },
          gdpr_request: { type: 'boolean', const: true },
        },
      },
      account: { type: 'object', description: 'The account record' },
      ...Object.fromEntries(COLLECTIONS.map((c) => [c.key, records])),
    },
  };
}
