// Invoice numbers (docs/decisions.md §4): an account's next free `INV-000001`-style number.
import type { Prisma } from '../generated/prisma/client.js';

/**
 * Which of `numbers` the account already uses: one probe of the unique (account_id, invoice_number)
 * key per number. A plain `invoice_number IN (...)` of 100 numbers was planned on the search's
 * trigram index (docs/decisions.md §19) and took 1.3 s at 2,000 invoices (BENCHMARKS.md, invoices
 * and payments); the LATERAL ... LIMIT 1 keeps each probe on the btree (0.2 ms).
 */
const usedNumbers = (tx: Prisma.TransactionClient, accountId: string, numbers: string[]) => tx.$queryRaw<{ invoice_number: string }[]>`
  SELECT n.v AS invoice_number FROM unnest(${numbers}::text[]) AS n (v)
  CROSS JOIN LATERAL (SELECT 1 FROM invoices i WHERE i.account_id = ${accountId}::uuid AND i.invoice_number = n.v LIMIT 1) AS found`;

export const formatInvoiceNumber = (n: number): string => `INV-${String(n).padStart(6, '0')}`;

const BATCH = 100;

/**
 * The line a create waits in before its transaction (src/db/queue-by-key.ts) when it takes the
 * account's next number: the account row it locks would otherwise keep each waiting create on a
 * connection, and one account creating many at once would spend the pool every account shares.
 */
export const numberingKey = (input: { accountId: string; invoiceNumber?: string | null }): string | null =>
  input.invoiceNumber ? null : `${input.accountId}:invoices:next-number`;

/**
 * Takes the account's next number, skipping numbers already used by hand. The first update locks
 * the account row until the transaction ends, so concurrent creates in one account (of other
 * instances: this one's wait in line, numberingKey) queue here.
 */
export async function takeNextNumber(tx: Prisma.TransactionClient, accountId: string): Promise<string> {
  const { nextInvoiceNumber } = await tx.account.update({
    where: { id: accountId },
    data: { nextInvoiceNumber: { increment: 1 } },
    select: { nextInvoiceNumber: true },
  });
  let candidate = nextInvoiceNumber - 1;
  for (;;) {
    const batch = Array.from({ length: BATCH }, (_, i) => formatInvoiceNumber(candidate + i));
    const taken = new Set((await usedNumbers(tx, accountId, batch)).map((row) => row.invoice_number));
    const free = batch.findIndex((number) => !taken.has(number));
    if (free >= 0) {
      candidate += free;
      break;
    }
    candidate += BATCH;
  }
  if (candidate !== nextInvoiceNumber - 1) {
    await tx.account.update({ where: { id: accountId }, data: { nextInvoiceNumber: candidate + 1 } });
  }
  return formatInvoiceNumber(candidate);
}
