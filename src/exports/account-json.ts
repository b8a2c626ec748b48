import type pg from 'pg';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { columnsOf, recordPages, type ExportSource } from './account-pages.js';

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
  // docs/imports.md: the account's imports (not which instance held them) and the rows they refused.
  { key: 'imports', table: 'imports', orderBy: ['created_at', 'id'], omit: ['lease_owner', 'lease_until'] },
  { key: 'import_errors', table: 'import_errors', orderBy: ['import_id', 'line'] },
  // docs/decisions.md §15: the account's API keys, never the hash of their secrets.
  { key: 'api_keys', table: 'api_keys', orderBy: ['created_at', 'id'], omit: ['secret_hash'] },
];

/** Account-scoped tables left out on purpose, and why: nothing in them is the account's own data. */
export const NOT_EXPORTED: Readonly<Record<string, string>> = {
  record_counts: 'derived: how many contacts, deals and invoices of each type or status the export holds (docs/scaling.md#exact-totals)',
  report_sums: 'derived: the sums the dashboard reports read (docs/decisions.md#reports), recomputable from the exported records',
  import_rows: "staging: an import's rows until its worker writes them, deleted when the import ends; what they became is exported",
};

export const EXPORT_CHUNK_SIZE = 1000;
export const FORMAT_VERSION = '1.0';

/**
 * Characters per chunk handed to the response: short collections and separators go out together,
 * not a write each; with a page (PAGE_CHARS) a chunk stays under V8's large-object size too.
 */
export const EXPORT_CHUNK_CHARS = 32 * 1024;

/** The whole document as text pieces: a collection's records come a keyset page at a time. */
export async function* accountExportParts(source: ExportSource, accountId: string, exportedAt: Date, chunkSize = EXPORT_CHUNK_SIZE) {
  const columns = await columnsOf(source, ['accounts', ...COLLECTIONS.map((c) => c.table)]);
  const cols = (table: string, omit: readonly string[] = []) =>
    (columns.get(table) ?? []).filter((c) => !omit.includes(c.name));
  const metadata = { exported_at: exportedAt.toISOString(), account_id: accountId, format_version: FORMAT_VERSION, gdpr_request: true };
  yield `{"export_metadata":${JSON.stringify(metadata)}`;
  let account = 'null';
  for await (const page of recordPages(source, 'accounts', Prisma.sql`id = ${accountId}::uuid`, ['id'], cols('accounts'), 1)) account = page;
  yield `,\n"account":${account}`;
  for (const { key, table, orderBy, omit } of COLLECTIONS) {
    yield `,\n${JSON.stringify(key)}:[`;
    let first = true;
    for await (const page of recordPages(source, table, Prisma.sql`account_id = ${accountId}::uuid`, orderBy, cols(table, omit), chunkSize)) {
      yield (first ? '\n' : ',\n') + page;
      first = false;
    }
    yield first ? ']' : '\n]';
  }
  yield '}\n';
}

/**
 * The account export document (docs/decisions.md §6) as a web stream of UTF-8 bytes, for
 * `new Response(...)`: one JSON object written as the client reads it, never held whole. A page is
 * read only when the client asks for bytes (highWaterMark 0: nothing is read ahead of the socket)
 * and turned into bytes at once, so memory holds about one page whatever the account's size.
 * `pool`: where the pages are read (see ExportSource); null reads them through `db`.
 */
export function accountExportStream(
  db: PrismaClient,
  accountId: string,
  exportedAt: Date,
  options: { chunkSize?: number; chunkChars?: number; pool?: pg.Pool | null } = {},
): ReadableStream<Uint8Array> {
  const chunkChars = options.chunkChars ?? EXPORT_CHUNK_CHARS;
  const parts = accountExportParts({ db, pool: options.pool ?? null }, accountId, exportedAt, options.chunkSize);
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let text = '';
        let finished = false;
        while (text.length < chunkChars) {
          const next = await parts.next();
          if ((finished = Boolean(next.done))) break;
          text += next.value;
        }
        if (text) controller.enqueue(encoder.encode(text));
        if (finished) controller.close();
      },
      async cancel() {
        await parts.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}
