import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { formatDate } from '../dates.js';

type Collection = {
  /** The document's key. */
  key: string;
  table: string;
  /** A unique key to page by; the records come out in this order (oldest first). */
  orderBy: readonly string[];
  /** Columns never exported: secrets (a webhook endpoint's) and internal bookkeeping. */
  omit?: readonly string[];
};

/**
 * Every account-scoped table (one with `account_id`) and its key in the account export, in
 * document order. test/graphql/exports.test.ts fails when a table is missing here and from NOT_EXPORTED.
 */
export const COLLECTIONS: readonly Collection[] = [
  { key: 'contacts', table: 'contacts', orderBy: ['created_at', 'id'] },
  { key: 'deals', table: 'deals', orderBy: ['created_at', 'id'] },
  { key: 'invoices', table: 'invoices', orderBy: ['created_at', 'id'] },
  { key: 'proposals', table: 'proposals', orderBy: ['created_at', 'id'] },
  { key: 'contracts', table: 'contracts', orderBy: ['created_at', 'id'] },
  { key: 'galleries', table: 'galleries', orderBy: ['created_at', 'id'] },
  { key: 'bookings', table: 'bookings', orderBy: ['created_at', 'id'] },
  { key: 'workflows', table: 'workflows', orderBy: ['created_at', 'id'] },
  { key: 'pipeline_stages', table: 'pipeline_stages', orderBy: ['created_at', 'id'] },
  { key: 'team_members', table: 'team_members', orderBy: ['created_at', 'user_id'] },
  { key: 'forms', table: 'lead_forms', orderBy: ['created_at', 'id'] },
  { key: 'form_fields', table: 'lead_form_fields', orderBy: ['form_id', 'position', 'id'] },
  { key: 'form_submissions', table: 'form_submissions', orderBy: ['created_at', 'id'] },
  { key: 'exports', table: 'export_logs', orderBy: ['created_at', 'id'] },
  // Kept 24 hours for retries; exported because they hold the answers given to this account.
  { key: 'idempotency_keys', table: 'idempotency_keys', orderBy: ['created_at', 'id'] },
  // GDPR erasures: the contact id and counts only (docs/decisions.md §12).
  { key: 'erasures', table: 'erasure_logs', orderBy: ['created_at', 'id'] },
  // docs/events.md: the account's events, its webhook endpoints (never their secrets) and their deliveries.
  { key: 'events', table: 'events', orderBy: ['occurred_at', 'id'], omit: ['published_at'] },
  { key: 'webhook_endpoints', table: 'webhook_endpoints', orderBy: ['created_at', 'id'], omit: ['secret_ciphertext'] },
  { key: 'webhook_messages', table: 'webhook_messages', orderBy: ['created_at', 'id'], omit: ['locked_until'] },
  { key: 'webhook_deliveries', table: 'webhook_deliveries', orderBy: ['attempted_at', 'id'] },
];

/** Account-scoped tables left out on purpose, and why: nothing in them is the account's own data. */
export const NOT_EXPORTED: Readonly<Record<string, string>> = {
  record_counts: 'derived: how many contacts, deals and invoices of each type or status the export holds (docs/scaling.md#exact-totals)',
};

export const EXPORT_CHUNK_SIZE = 1000;
export const FORMAT_VERSION = '1.0';

type Column = { name: string; dataType: string; udt: string };
type Row = Record<string, unknown>;

const ident = (name: string) => Prisma.raw(`"${name.replaceAll('"', '""')}"`);

/**
 * The live columns of each table, from the catalogue rather than a hand-kept list, so a new
 * column is exported (snake_case, as stored) the day it is added.
 */
async function columnsOf(db: PrismaClient, tables: string[]): Promise<Map<string, Column[]>> {
  const rows = await db.$queryRaw<{ table_name: string; column_name: string; data_type: string; udt_name: string }[]>`
    SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name IN (${Prisma.join(tables)})
    ORDER BY table_name, ordinal_position`;
  const byTable = new Map<string, Column[]>();
  for (const row of rows) {
    const list = byTable.get(row.table_name) ?? [];
    list.push({ name: row.column_name, dataType: row.data_type, udt: row.udt_name });
    byTable.set(row.table_name, list);
  }
  return byTable;
}

/** Money as a JSON number, `date` columns as YYYY-MM-DD, timestamps as ISO 8601 with Z. */
function toJsonValue(value: unknown, column: Column): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return column.dataType === 'date' ? formatDate(value) : value.toISOString();
  if (Prisma.Decimal.isDecimal(value)) return (value as Prisma.Decimal).toNumber();
  if (typeof value === 'bigint') return Number(value);
  return value;
}

function record(row: Row, columns: Column[]): string {
  return JSON.stringify(Object.fromEntries(columns.map((c) => [c.name, toJsonValue(row[c.name], c)])));
}

/** One collection as JSON array text, in chunks of `chunkSize` rows by keyset on `orderBy`. */
async function* collectionJson(db: PrismaClient, accountId: string, table: string, orderBy: readonly string[], columns: Column[], chunkSize: number) {
  const select = Prisma.join(columns.map((c) => ident(c.name)));
  const keys = orderBy.map((name) => {
    const column = columns.find((c) => c.name === name);
    if (!column) throw new Error(`account export: ${table} has no column ${name}`);
    return column;
  });
  const order = Prisma.join(keys.map((k) => ident(k.name)));
  let after: Row | undefined;
  let first = true;
  yield '[';
  for (;;) {
    // A row comparison on the ordering key: each page starts where the last one ended.
    const since = after
      ? Prisma.sql`AND (${order}) > (${Prisma.join(keys.map((k) => Prisma.sql`${after![k.name]}::${ident(k.udt)}`))})`
      : Prisma.empty;
    const rows = await db.$queryRaw<Row[]>`
      SELECT ${select} FROM ${ident(table)} WHERE account_id = ${accountId}::uuid ${since}
      ORDER BY ${order} LIMIT ${chunkSize}`;
    if (rows.length > 0) {
      yield (first ? '\n' : ',\n') + rows.map((row) => record(row, columns)).join(',\n');
      first = false;
    }
    if (rows.length < chunkSize) break;
    after = rows[rows.length - 1];
  }
  yield first ? ']' : '\n]';
}

/** The whole document as text pieces, one collection chunk at a time. */
export async function* accountExportParts(db: PrismaClient, accountId: string, exportedAt: Date, chunkSize = EXPORT_CHUNK_SIZE) {
  const columns = await columnsOf(db, ['accounts', ...COLLECTIONS.map((c) => c.table)]);
  const cols = (table: string, omit: readonly string[] = []) =>
    (columns.get(table) ?? []).filter((c) => !omit.includes(c.name));
  const metadata = { exported_at: exportedAt.toISOString(), account_id: accountId, format_version: FORMAT_VERSION, gdpr_request: true };
  yield `{"export_metadata":${JSON.stringify(metadata)}`;
  const accountColumns = cols('accounts');
  const [account] = await db.$queryRaw<Row[]>`
    SELECT ${Prisma.join(accountColumns.map((c) => ident(c.name)))} FROM accounts WHERE id = ${accountId}::uuid`;
  yield `,\n"account":${account ? record(account, accountColumns) : 'null'}`;
  for (const { key, table, orderBy, omit } of COLLECTIONS) {
    yield `,\n${JSON.stringify(key)}:`;
    yield* collectionJson(db, accountId, table, orderBy, cols(table, omit), chunkSize);
  }
  yield '}\n';
}

/**
 * The account export document (docs/decisions.md §6) as a web stream of UTF-8 bytes, for
 * `new Response(...)`: one JSON object written as the client reads it, never held whole.
 */
export function accountExportStream(
  db: PrismaClient,
  accountId: string,
  exportedAt: Date,
  options: { chunkSize?: number } = {},
): ReadableStream<Uint8Array> {
  const parts = accountExportParts(db, accountId, exportedAt, options.chunkSize);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await parts.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await parts.return(undefined);
    },
  });
}
