import type pg from 'pg';
import { Prisma } from '../generated/prisma/client.js';
import { ident } from '../graphql/collection.js';
import { internalColumnsOf } from '../db/internal-columns.js';
import { keysetPages, query, textStream, type ExportSource, type KeyColumn } from './pages.js';

type Collection = {
  /** The document's key. */
  key: string;
  table: string;
  /** A unique key to page by; the records come out in this order (oldest first). */
  orderBy: readonly string[];
  /**
   * Columns never exported: secrets (a webhook endpoint's, an API key's hash) and, added to each
   * below, the table's internal columns (src/db/internal-columns.ts: sort keys, leases, claims).
   */
  omit?: readonly string[];
  /** Enum columns written in lower case, as REST writes them (`contact`, `multi_select`). */
  lowerCase?: readonly string[];
};

/**
 * The collections as declared: test/graphql/exports.test.ts fails when a table is missing here and from NOT_EXPORTED.
 */
const DECLARED: readonly Collection[] = [
  { key: 'contacts', table: 'contacts', orderBy: ['created_at', 'id'] },
  { key: 'deals', table: 'deals', orderBy: ['created_at', 'id'] },
  // The page token is the secret of the client's page: it is given only inside hostedUrl (docs/decisions.md §26).
  { key: 'invoices', table: 'invoices', orderBy: ['created_at', 'id'], omit: ['page_token'] },
  // docs/decisions.md §20: the invoices' lines (by invoice, in position order; the unique
  // (account_id, invoice_id, position) key serves the pages) and the money received for them.
  { key: 'invoice_lines', table: 'invoice_lines', orderBy: ['invoice_id', 'position'] },
  { key: 'payments', table: 'payments', orderBy: ['created_at', 'id'] },
  { key: 'proposals', table: 'proposals', orderBy: ['created_at', 'id'] },
  { key: 'contracts', table: 'contracts', orderBy: ['created_at', 'id'] },
  { key: 'galleries', table: 'galleries', orderBy: ['created_at', 'id'] },
  { key: 'bookings', table: 'bookings', orderBy: ['created_at', 'id'] },
  { key: 'workflows', table: 'workflows', orderBy: ['created_at', 'id'] },
  // docs/workflows.md#runs: what each workflow did, kept as long as events (90 days).
  { key: 'workflow_runs', table: 'workflow_runs', orderBy: ['started_at', 'id'] },
  { key: 'pipeline_stages', table: 'pipeline_stages', orderBy: ['created_at', 'id'] },
  { key: 'team_members', table: 'team_members', orderBy: ['created_at', 'user_id'] },
  { key: 'forms', table: 'lead_forms', orderBy: ['created_at', 'id'] },
  { key: 'form_fields', table: 'lead_form_fields', orderBy: ['form_id', 'position', 'id'] },
  { key: 'form_submissions', table: 'form_submissions', orderBy: ['created_at', 'id'] },
  { key: 'exports', table: 'export_logs', orderBy: ['created_at', 'id'] },
  // docs/decisions.md §21: the organisations contacts and deals link to (after the contract's collections).
  { key: 'companies', table: 'companies', orderBy: ['created_at', 'id'] },
  { key: 'notes', table: 'notes', orderBy: ['created_at', 'id'] },
  { key: 'tasks', table: 'tasks', orderBy: ['created_at', 'id'] },
  // docs/custom-fields.md#where-values-go: the fields the account defined, archived ones too (records
  // carry their values in custom_fields); the enums as REST writes them (`contact`, `multi_select`).
  { key: 'custom_fields', table: 'custom_field_definitions', orderBy: ['object', 'position', 'created_at', 'id'], lowerCase: ['object', 'type'] },
  // Kept 24 hours for retries; exported because they hold the answers given to this account.
  { key: 'idempotency_keys', table: 'idempotency_keys', orderBy: ['created_at', 'id'] },
  // GDPR erasures: the contact id and counts only (docs/decisions.md §12).
  { key: 'erasures', table: 'erasure_logs', orderBy: ['created_at', 'id'] },
  // docs/events.md: the account's events, its webhook endpoints (never their secrets) and their deliveries.
  { key: 'events', table: 'events', orderBy: ['occurred_at', 'id'] },
  { key: 'webhook_endpoints', table: 'webhook_endpoints', orderBy: ['created_at', 'id'], omit: ['secret_ciphertext', 'previous_secret_ciphertext'] },
  { key: 'webhook_messages', table: 'webhook_messages', orderBy: ['created_at', 'id'] },
  { key: 'webhook_deliveries', table: 'webhook_deliveries', orderBy: ['attempted_at', 'id'] },
  // docs/decisions.md §20 "Sending": the invoice mail sent, or to send, and to whom.
  { key: 'invoice_mails', table: 'invoice_mails', orderBy: ['created_at', 'id'] },
  // docs/imports.md: the account's imports (not which instance held them) and the rows they refused.
  { key: 'imports', table: 'imports', orderBy: ['created_at', 'id'] },
  { key: 'import_errors', table: 'import_errors', orderBy: ['import_id', 'line'] },
  // docs/decisions.md §15: the account's API keys, never the hash of their secrets.
  { key: 'api_keys', table: 'api_keys', orderBy: ['created_at', 'id'], omit: ['secret_hash'] },
];

/**
 * Every account-scoped table (one with `account_id`) and its key in the account export, in
 * document order, each without its secrets and internal columns.
 */
export const COLLECTIONS: readonly Collection[] = DECLARED.map((c) => {
  const omit = [...(c.omit ?? []), ...internalColumnsOf(c.table)];
  return omit.length ? { ...c, omit } : c;
});

/** Account-scoped tables left out on purpose, and why: nothing in them is the account's own data. */
export const NOT_EXPORTED: Readonly<Record<string, string>> = {
  record_counts: 'derived: how many contacts, deals and invoices of each type or status the export holds (docs/scaling.md#exact-totals)',
  custom_field_numbers: "derived: the NUMBER custom values in a btree (docs/custom-fields.md#which-index-serves-what), exported in each record's custom_fields",
  custom_field_counts: "derived: how many records hold each choice value (docs/custom-fields.md#which-index-serves-what), recomputable from each record's custom_fields",
  report_sums: 'derived: the sums the dashboard reports read (docs/decisions.md#reports), recomputable from the exported records',
  event_queue: 'transient: copies of the events the relay has yet to hand to live subscribers (docs/events.md), exported under events',
  import_rows: "staging: an import's rows until its worker writes them, deleted when the import ends; what they became is exported",
  import_keys: "staging: digests of the match keys an import's rows took (duplicates in its file), deleted when the import ends",
  trash_items: 'deleted: contacts, deals and companies in the trash (docs/trash.md) are gone from every export until restored',
  duplicate_state: 'derived: whether the duplicate groups of the account are kept between reads (docs/duplicates.md#how-it-stays-fast)',
  duplicate_queue: 'transient: contacts changed since the last duplicates read, emptied by the next (docs/duplicates.md#how-it-stays-fast)',
  duplicate_pairs: "derived: the name rule's pairs of similar names, recomputable from the exported contacts (docs/duplicates.md#how-it-stays-fast)",
  duplicate_members: 'derived: which duplicate group each contact is in, recomputable from the exported contacts (docs/duplicates.md#how-it-stays-fast)',
  duplicate_groups: 'derived: the duplicate groups as answered, recomputable from the exported contacts (docs/duplicates.md#how-it-stays-fast)',
  invoice_pdfs: "derived: each invoice's PDF as last drawn (docs/decisions.md §26), drawn again from the exported invoice and its lines",
};

export const EXPORT_CHUNK_SIZE = 1000;
export const FORMAT_VERSION = '1.0';

/**
 * Characters per chunk handed to the response: short collections and separators go out together,
 * not a write each; with a page (PAGE_CHARS) a chunk stays under V8's large-object size too.
 */
export const EXPORT_CHUNK_CHARS = 32 * 1024;

type Column = KeyColumn & { dataType: string; lowerCase?: true };

/**
 * The live columns of each table, from the catalogue rather than a hand-kept list, so a new
 * column is exported (snake_case, as stored) the day it is added.
 */
async function columnsOf(source: ExportSource, tables: string[]): Promise<Map<string, Column[]>> {
  const rows = await query<{ table_name: string; column_name: string; data_type: string; udt_name: string }>(source, Prisma.sql`
    SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name IN (${Prisma.join(tables)})
    ORDER BY table_name, ordinal_position`);
  const byTable = new Map<string, Column[]>();
  for (const row of rows) byTable.set(row.table_name, [...(byTable.get(row.table_name) ?? []), { name: row.column_name, dataType: row.data_type, udt: row.udt_name }]);
  return byTable;
}

// As a JS Date prints (toISOString): milliseconds truncated, as `MS` truncates.
const ISO_MS = Prisma.raw(`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`);

/**
 * A column as the document shows it, so the page needs no conversion in Node: timestamps ISO 8601
 * in UTC with Z, `date` columns YYYY-MM-DD; money, counts, JSON and arrays are JSON already.
 */
function valueSql(column: Column): Prisma.Sql {
  const name = ident(column.name);
  if (column.lowerCase) return Prisma.sql`lower(${name}::text)`;
  switch (column.dataType) {
    case 'timestamp with time zone':
      return Prisma.sql`to_char(${name} AT TIME ZONE 'UTC', ${ISO_MS})`;
    case 'timestamp without time zone':
      return Prisma.sql`to_char(${name}, ${ISO_MS})`;
    case 'date':
      return Prisma.sql`to_char(${name}, 'YYYY-MM-DD')`;
    default:
      return name;
  }
}

/** Record text from a row's values: `{"column":value,...}`, exactly as JSON.stringify writes the object. */
function recordWriter(columns: Column[]): (values: unknown[]) => string {
  const keys = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`);
  return (values) => {
    let text = '';
    for (let i = 0; i < keys.length; i++) text += keys[i] + JSON.stringify(values[i] ?? null);
    return `${text}}`;
  };
}

/**
 * Characters a page's JSON text aims at. Strings over ~128 KB go to V8's large-object space, which
 * only a full GC frees: pages of 1,000 contacts (~400 KB) piled up there, 75-141 MB of RSS over
 * 1.5 million records; pages this small die young, in scavenges.
 */
const PAGE_CHARS = 48 * 1024;

/** The records of `table` where `filter` holds, in the order of `orderBy`, as text pages: records joined by `,\n`. */
async function* recordPages(source: ExportSource, table: string, filter: Prisma.Sql, orderBy: readonly string[], columns: Column[], pageSize: number) {
  const keys = orderBy.map((name) => {
    const column = columns.find((c) => c.name === name);
    if (!column) throw new Error(`account export: ${table} has no column ${name}`);
    return column;
  });
  const record = recordWriter(columns);
  const values = Prisma.join(columns.map(valueSql));
  for await (const rows of keysetPages(source, { table, filter, keys, values, pageSize, pageChars: PAGE_CHARS })) yield rows.map(record).join(',\n');
}

/** The whole document as text pieces: a collection's records come a keyset page at a time. */
export async function* accountExportParts(source: ExportSource, accountId: string, exportedAt: Date, chunkSize = EXPORT_CHUNK_SIZE) {
  const columns = await columnsOf(source, ['accounts', ...COLLECTIONS.map((c) => c.table)]);
  const cols = (table: string, omit: readonly string[] = []) =>
    (columns.get(table) ?? []).filter((c) => !omit.includes(c.name));
  const metadata = { exported_at: exportedAt.toISOString(), account_id: accountId, format_version: FORMAT_VERSION, gdpr_request: true };
  yield `{"export_metadata":${JSON.stringify(metadata)}`;
  let account = 'null';
  for await (const page of recordPages(source, 'accounts', Prisma.sql`id = ${accountId}::uuid`, ['id'], cols('accounts', internalColumnsOf('accounts')), 1)) account = page;
  yield `,\n"account":${account}`;
  for (const { key, table, orderBy, omit, lowerCase = [] } of COLLECTIONS) {
    yield `,\n${JSON.stringify(key)}:[`;
    let first = true;
    const columnsOfTable = cols(table, omit).map((c) => (lowerCase.includes(c.name) ? { ...c, lowerCase: true as const } : c));
    for await (const page of recordPages(source, table, Prisma.sql`account_id = ${accountId}::uuid`, orderBy, columnsOfTable, chunkSize)) {
      yield (first ? '\n' : ',\n') + page;
      first = false;
    }
    yield first ? ']' : '\n]';
  }
  yield '}\n';
}

/**
 * The account export document (docs/decisions.md §6) as a web stream of UTF-8 bytes
 * (`textStream`): one JSON object written as the client reads it, never held whole.
 * `pool`: where the pages are read (see ExportSource); null reads them through `db`.
 */
export function accountExportStream(
  db: ExportSource['db'],
  accountId: string,
  exportedAt: Date,
  options: { chunkSize?: number; chunkChars?: number; pool?: pg.Pool | null } = {},
): ReadableStream<Uint8Array> {
  return textStream(accountExportParts({ db, pool: options.pool ?? null }, accountId, exportedAt, options.chunkSize), options.chunkChars ?? EXPORT_CHUNK_CHARS);
}
