// Invoice numbers (docs/decisions.md §4): an account's next free `INV-000001`-style number.
import { Prisma } from '../generated/prisma/client.js';

/**
 * Which of `numbers` the account already uses: one probe of the unique (account_id, invoice_number)
 * key per number. A plain `invoice_number IN (...)` of 100 numbers was planned on the search's
 * trigram index (docs/decisions.md §19) and took 1.3 s at 2,000 invoices (BENCHMARKS.md, invoices
 * and payments); the LATERAL ... LIMIT 1 keeps each probe on the btree (0.2 ms).
 */
const usedNumbers = (db: Prisma.TransactionClient, accountId: string, numbers: string[]) => db.$queryRaw<{ invoice_number: string }[]>`
  SELECT n.v AS invoice_number FROM unnest(${numbers}::text[]) AS n (v)
  CROSS JOIN LATERAL (SELECT 1 FROM invoices i WHERE i.account_id = ${accountId}::uuid AND i.invoice_number = n.v LIMIT 1) AS found`;

export const formatInvoiceNumber = (n: number): string => `INV-${String(n).padStart(6, '0')}`;

/** formatInvoiceNumber in SQL, of an integer expression: the create's statement numbers in the database. */
export const invoiceNumberSql = (n: Prisma.Sql): Prisma.Sql => Prisma.sql`'INV-' || lpad((${n})::text, greatest(6, length((${n})::text)), '0')`;

/**
 * The create's statement (invoice-create.ts) takes the account's next number as it inserts; the
 * counter moves only with a number used, so numbers follow on without gaps.
 */
export const takeNumberSql = (accountId: string): Prisma.Sql => Prisma.sql`
  UPDATE accounts SET next_invoice_number = next_invoice_number + 1 WHERE id = ${accountId}::uuid
  RETURNING ${invoiceNumberSql(Prisma.sql`next_invoice_number - 1`)} AS invoice_number`;

const BATCH = 100;

/**
 * How many of one account's numbered creates an instance sends at once. One runs; the next waits on
 * the account's row in PostgreSQL, which hands the row over at the COMMIT, so the statements follow
 * each other back to back instead of each waiting for the instance to hear of the last one's end and
 * send its own (BENCHMARKS.md, "Invoices and payments"). Each costs one pooled connection at most.
 */
const LINES_PER_ACCOUNT = 2;
let turn = 0;

/**
 * The line a create waits in before its statement (src/db/queue-by-key.ts) when it takes the
 * account's next number: the account row it locks would otherwise keep each waiting create on a
 * connection, and one account creating many at once would spend the pool every account shares. The
 * creates take the account's LINES_PER_ACCOUNT lines in turn. Only the write waits in one (one
 * statement; with an Idempotency-Key, its transaction): the checks before it run side by side.
 */
export const numberingKey = (input: { accountId: string; invoiceNumber?: string | null }): string | null =>
  input.invoiceNumber ? null : `${input.accountId}:invoices:next-number:${(turn = (turn + 1) % LINES_PER_ACCOUNT)}`;

/**
 * After the account's next number turned out taken by hand: moves its counter to the first number
 * not taken from there, so the next attempt takes that one. GREATEST keeps a counter that concurrent
 * creates moved further meanwhile; every number stepped over is in use, so no gap is made.
 */
export async function skipNumbersTaken(db: Prisma.TransactionClient, accountId: string): Promise<void> {
  const [account] = await db.$queryRaw<{ next: number }[]>`SELECT next_invoice_number AS next FROM accounts WHERE id = ${accountId}::uuid`;
  if (!account) return;
  let candidate = account.next;
  for (;;) {
    const batch = Array.from({ length: BATCH }, (_, i) => formatInvoiceNumber(candidate + i));
    const taken = new Set((await usedNumbers(db, accountId, batch)).map((row) => row.invoice_number));
    const free = batch.findIndex((number) => !taken.has(number));
    if (free >= 0) {
      candidate += free;
      break;
    }
    candidate += BATCH;
  }
  await db.$executeRaw`UPDATE accounts SET next_invoice_number = greatest(next_invoice_number, ${candidate}::int) WHERE id = ${accountId}::uuid`;
}
