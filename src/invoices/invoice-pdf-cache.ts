// An invoice's PDF kept per version (docs/decisions.md §26): a repeated download of the same
// invoice as it stands draws nothing. The version is content-addressed, the SHA-256 of the document
// the PDF shows and of the code that draws it, so any change to what it shows (a line, a payment,
// the contact's name, the account's name) or to the drawing is a new version, drawn once. Kept in
// the database (invoice_pdfs), so every instance, and PGlite, shares it; one row per invoice, which
// the next version replaces. The row goes with its invoice and with the contact whose name it shows
// (foreign keys, ON DELETE CASCADE): an erasure leaves no PDF of the person behind (§24).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Prisma } from '../generated/prisma/client.js';
import type { PdfPool } from '../deps.js';
import type { Logger } from '../logger.js';
import type { InvoiceDocument } from './invoice-document.js';

/** Which invoice: by its id in its account (REST, the mail) or by its page token (the client's page). */
export type InvoicePdfKey = { accountId: string; id: string } | { pageToken: string };

/** The drawing code itself (this folder's invoice-pdf and invoice-document, .ts or built .js): a change to it is a new version of every PDF. */
const DRAWING = (() => {
  const here = fileURLToPath(import.meta.url);
  const hash = createHash('sha256');
  for (const name of ['invoice-pdf', 'invoice-document']) hash.update(readFileSync(path.join(path.dirname(here), `${name}${path.extname(here)}`)));
  return hash.digest('hex');
})();

/** The same JSON whatever order the keys came in (a GraphQL answer's, or the document's own). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** The version of the PDF of `document`: hex SHA-256 of the drawing code and the document. */
export const pdfVersionOf = (document: InvoiceDocument): string => createHash('sha256').update(DRAWING).update(canonical(document)).digest('hex');

/** Drawings under way in this process, by invoice and version: concurrent downloads of one version wait for one drawing. */
const drawing = new Map<string, Promise<Buffer>>();

type Found = { account_id: string; id: string; contact_id: string | null; bytes: Uint8Array | null };

/**
 * The PDF of `document`, the invoice `key` names as the operation answered it: the stored bytes of
 * this version, else drawn by `pool` (off the event loop; SERVICE_UNAVAILABLE when its queue is
 * full) and stored in place of the previous version. Without a pool (a context built without an
 * app) it is drawn here.
 */
export async function invoicePdfFor(
  db: Prisma.TransactionClient,
  key: InvoicePdfKey,
  document: InvoiceDocument,
  pool: PdfPool | undefined,
  log: Pick<Logger, 'warn'>,
): Promise<Buffer> {
  const version = pdfVersionOf(document);
  const [found] = 'pageToken' in key
    ? await db.$queryRaw<Found[]>`
        SELECT i.account_id::text, i.id::text, i.contact_id::text, p.bytes FROM invoices i
          LEFT JOIN invoice_pdfs p ON p.account_id = i.account_id AND p.invoice_id = i.id AND p.hash = ${version}
         WHERE i.page_token = ${key.pageToken}`
    : await db.$queryRaw<Found[]>`
        SELECT i.account_id::text, i.id::text, i.contact_id::text, p.bytes FROM invoices i
          LEFT JOIN invoice_pdfs p ON p.account_id = i.account_id AND p.invoice_id = i.id AND p.hash = ${version}
         WHERE i.account_id = ${key.accountId}::uuid AND i.id = ${key.id}::uuid`;
  if (found?.bytes) return Buffer.from(found.bytes);
  // Without a pool (tests, scripts) it draws here; pdfkit, fontkit and the parsed fonts are loaded
  // then, not with the service: its PDFs are drawn in the pool's threads (BENCHMARKS.md, "Memory").
  const draw = async () => (pool ? pool.draw(document) : (await import('./invoice-pdf.js')).invoicePdfBytes(document));
  if (!found) return draw(); // gone since the operation read it: drawn, not kept
  const flight = `${found.account_id}/${found.id}/${version}`;
  let bytes = drawing.get(flight);
  if (!bytes) {
    bytes = (async () => {
      const pdf = await draw();
      // Kept once drawn, for the contact it was read with: FOR SHARE waits for an erasure under way
      // (it unlinks the invoice) and then finds the link changed, so nothing of the person is stored
      // after it; an erasure that comes later removes the row with the contact (ON DELETE CASCADE).
      // A name in the document with no contact linked any more is not stored either.
      await store(db, found, version, document.contactName !== null, pdf).catch((err: unknown) => log.warn({ err }, 'invoice PDF drawn but not kept'));
      return pdf;
    })().finally(() => drawing.delete(flight));
    drawing.set(flight, bytes);
  }
  return bytes;
}

async function store(db: Prisma.TransactionClient, invoice: Found, version: string, named: boolean, pdf: Buffer): Promise<void> {
  await db.$executeRaw`
    INSERT INTO invoice_pdfs (account_id, invoice_id, hash, contact_id, bytes)
    SELECT i.account_id, i.id, ${version}, i.contact_id, ${pdf} FROM invoices i
     WHERE i.account_id = ${invoice.account_id}::uuid AND i.id = ${invoice.id}::uuid
       AND i.contact_id IS NOT DISTINCT FROM ${invoice.contact_id}::uuid
       AND (NOT ${named}::boolean OR i.contact_id IS NOT NULL)
       FOR SHARE OF i
    ON CONFLICT (account_id, invoice_id) DO UPDATE SET hash = EXCLUDED.hash, contact_id = EXCLUDED.contact_id, bytes = EXCLUDED.bytes, created_at = now()`;
}
