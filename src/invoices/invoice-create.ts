// A new invoice in ONE statement (docs/decisions.md §4, §20): its number, the invoice, its lines, the
// invoice.created event and its webhook messages. Without a number given, the account's row is
// locked by taking the next number in that statement, so the lock is held for one statement and the
// COMMIT, never across round trips: creates of one account queue for that long only (BENCHMARKS.md,
// "Invoices and payments").
import { Prisma } from '../generated/prisma/client.js';
import { wakeSource } from '../events/emit.js';
import { outbox } from '../events/outbox.js';
import { eventId } from '../events/ids.js';
import { isoTimeSql, serializeRecord } from '../events/serialize.js';
import type { Actor } from '../events/types.js';
import { fromColumns, newId, rowOf, type Row } from '../writes/set-write.js';
import type { PricedLine } from './money.js';
import { takeNumberSql } from './invoice-numbers.js';
import { inputFields, type FieldSpec } from '../model/field-spec.js';
import { INVOICE_FIELDS } from './invoice.model.js';

export type NewInvoice = Row & { invoiceNumber?: string | null };

/** What the statement wrote: the invoice as Prisma returns it and its lines (money as exact decimal text), or null when its number was taken. */
export type Written = (Row & { lines: Row[] }) | null;

const COLUMNS_OF_LINE = ['id', 'account_id', 'invoice_id', 'position', 'description', 'quantity', 'unit_price', 'discount_percent', 'tax_rate', 'amount', 'tax'];

/**
 * Inserts `invoice` (every column but its number decided by the caller) with `invoiceNumber` or the
 * account's next number, and its lines. A number already in use inserts nothing (null), and leaves
 * the account's counter past it when it was the next one: it is taken, by hand.
 */
export async function insertInvoice(db: Prisma.TransactionClient, invoice: NewInvoice, priced: PricedLine[], actor: Actor): Promise<Written> {
  const { invoiceNumber, ...fields } = invoice;
  // The row as its event shows it (snake_case, money as numbers, the due day as YYYY-MM-DD), which
  // jsonb_populate_record takes as it is; the event's object is this row with the number it got.
  const obj = { account_id: fields.accountId, ...serializeRecord('invoice', fields) };
  const columns = Object.keys(obj);
  const insertColumns = Prisma.raw(columns.map((c) => `"${c}"`).join(', '));
  const fromRecord = Prisma.raw(columns.map((c) => `r."${c}"`).join(', '));
  const lines = priced.map((l) => ({
    id: newId(), account_id: fields.accountId, invoice_id: fields.id, position: l.position, description: l.description,
    // String(number) is the number's shortest decimal text: NUMERIC stores exactly what the client sent.
    quantity: String(l.quantity), unit_price: String(l.unitPrice), discount_percent: String(l.discountPercent), tax_rate: String(l.taxRate), amount: l.amount, tax: l.tax,
  }));
  const lineColumns = Prisma.raw(COLUMNS_OF_LINE.map((c) => `"${c}"`).join(', '));
  const fromLine = Prisma.raw(COLUMNS_OF_LINE.map((c) => `l."${c}"`).join(', '));
  const number = invoiceNumber ? Prisma.sql`SELECT ${invoiceNumber}::text AS invoice_number` : takeNumberSql(fields.accountId);
  const wake = wakeSource(db);
  const [answer] = await db.$queryRaw<{ invoice: string | null }[]>`
    WITH new AS (SELECT ${JSON.stringify(obj)}::jsonb AS obj),
    num AS (${number}),
    ins AS (
      INSERT INTO invoices (${insertColumns}, invoice_number)
      SELECT ${fromRecord}, num.invoice_number FROM num CROSS JOIN new CROSS JOIN LATERAL jsonb_populate_record(NULL::invoices, new.obj) AS r
      ON CONFLICT (account_id, invoice_number) DO NOTHING RETURNING *),
    lns AS (
      INSERT INTO invoice_lines (${lineColumns})
      SELECT ${fromLine} FROM ins CROSS JOIN jsonb_populate_recordset(NULL::invoice_lines, ${JSON.stringify(lines)}::jsonb) AS l),
    ${outbox(Prisma.sql`
      SELECT ${eventId()}::uuid, ins.account_id, 'invoice.created', ${new Date()}::timestamptz, ${actor.type}, ${actor.id}, ins.id, ins.contact_id,
             jsonb_build_object('object', (new.obj - 'account_id') || jsonb_build_object('invoice_number', ins.invoice_number, 'created_at', ${Prisma.raw(isoTimeSql('ins.created_at'))}, 'updated_at', ${Prisma.raw(isoTimeSql('ins.updated_at'))}))
      FROM ins CROSS JOIN new`)}
    SELECT (SELECT to_json(ins)::text FROM ins) AS invoice ${wake.column}`;
  wake.then();
  if (!answer?.invoice) return null;
  const written = fromColumns('Invoice', JSON.parse(answer.invoice) as Record<string, unknown>);
  // The lines have no column the database decides: they are answered as written (NUMERIC keeps the
  // decimal text it was sent exactly), not sent back.
  return { ...written, lines: lines.map(({ id, account_id, invoice_id, position, description, quantity, unit_price, discount_percent, tax_rate, amount, tax }) => ({
    id, accountId: account_id, invoiceId: invoice_id, position, description, quantity, unitPrice: unit_price, discountPercent: discount_percent, taxRate: tax_rate, amount, tax,
  })) };
}

/** What a create leaves out is null: every optional field of the model's create input (invoice.model.ts). */
const ABSENT = Object.fromEntries(inputFields<FieldSpec>(INVOICE_FIELDS, 'create').filter((field) => !field.required).map((field) => [field.name, null]));

/** A new draft's row: the columns the database would otherwise default, decided here as Prisma decides `id`. */
export function draftRow(values: Record<string, unknown> & { accountId: string }): NewInvoice {
  const now = new Date();
  return rowOf('Invoice', {
    ...ABSENT, id: newId(), issuedAt: null, paidAt: null,
    amountPaid: new Prisma.Decimal(0), status: 'draft', createdAt: now, updatedAt: now, ...values,
  }) as NewInvoice;
}
