// node --import tsx scripts/bench/explain-writes.ts [--database crm_bench_10000]
// EXPLAIN (ANALYZE, BUFFERS) of the write statements the bench's write cases send, on the bench
// database, each in a transaction that is rolled back (BENCHMARKS.md, "Writes as fast as reads"):
// the service's single contact and deal create and a batch of 100 contacts, without and with 20 custom values each (src/writes/set-write.ts,
// the statement as the service builds it), an invoice of 10 lines as POST /invoices writes it
// (src/invoices/invoice-create.ts), and the floor's INSERT of one contact. Each plan shows the
// triggers' own times (the counters, the report sums, the event queue and its wake-up).
import pg from 'pg';
import { Prisma } from '../../src/generated/prisma/client.js';
import { contactBatch } from '../../src/contacts/contact.service.js';
import { dealBatch } from '../../src/deals/deal.service.js';
import { writeSet, newId, type Row } from '../../src/writes/set-write.js';
import type { BatchKind } from '../../src/writes/batch.service.js';
import type { Actor } from '../../src/events/types.js';
import { draftRow, insertInvoice } from '../../src/invoices/invoice-create.js';
import { priceInvoice } from '../../src/invoices/invoice-money.js';
import { benchDatabaseUrl, namedBenchDatabaseUrl, parseFlags } from './common.js';
import { benchValues } from './custom-fields.js';

const ACTOR: Actor = { type: 'user', id: '00000000-0000-7000-8000-000000000001' };

/** The statement writeSet would send for `rows` (captured, not run). */
async function setStatement(kind: BatchKind, rows: Row[]): Promise<Prisma.Sql> {
  let captured: Prisma.Sql | null = null;
  const capture = {
    // rawWrite hands over a built Prisma.Sql (src/db/raw.ts), a tagged template its strings and values.
    $queryRaw: (strings: TemplateStringsArray | Prisma.Sql, ...values: unknown[]) => {
      captured = strings instanceof Prisma.Sql ? strings : Prisma.sql(strings, ...values);
      return Promise.resolve([{ rows: '[]' }]);
    },
  };
  await writeSet(capture as unknown as Prisma.TransactionClient, kind.spec, ACTOR, rows, []);
  return captured!;
}

/** The statement POST /invoices sends for the bench's 10 lines (the account's next number; captured, not run). */
async function invoiceStatement(accountId: string): Promise<Prisma.Sql> {
  let captured: Prisma.Sql | null = null;
  const capture = {
    $queryRaw: (strings: TemplateStringsArray, ...values: unknown[]) => {
      captured = Prisma.sql(strings, ...values);
      return Promise.resolve([]);
    },
  };
  const lines = Array.from({ length: 10 }, (_, i) => ({ description: `Work package ${i + 1}`, quantity: i + 1, unitPrice: 19.99 + i, discountPercent: i % 2 ? 10 : 0, taxRate: 7.25 }));
  const { lines: priced, total: _total, ...money } = priceInvoice({ currency: 'USD', lines });
  const decimal = (value: string) => new Prisma.Decimal(value);
  const row = draftRow({ accountId, customFields: {}, currency: 'USD', memo: 'Bench', dueDate: new Date('2030-06-30'), amount: decimal(money.amount), subtotal: decimal(money.subtotal), discountTotal: decimal(money.discountTotal), taxTotal: decimal(money.taxTotal) });
  await insertInvoice(capture as unknown as Prisma.TransactionClient, row, priced, ACTOR);
  return captured!;
}

const rowsOf = (kind: BatchKind, accountId: string, inputs: Record<string, unknown>[]) =>
  inputs.map((input) => kind.newRow(kind.create.parse({ ...input, accountId }) as Record<string, unknown>, newId(), new Date()));

async function main() {
  const flags = parseFlags(process.argv.slice(2), ['database']);
  const url = flags.database ? namedBenchDatabaseUrl(flags.database) : benchDatabaseUrl(10_000);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows: [main] } = await client.query<{ id: string }>("SELECT id FROM accounts WHERE name LIKE 'bench:main%' ORDER BY created_at LIMIT 1");
    const accountId = main!.id;
    const contact = { firstName: 'Bench', lastName: 'Writer', email: 'bench.writer@example.com', company: 'Bench Ltd', contactType: 'lead', source: 'referral' };
    const statements: [string, Prisma.Sql][] = [
      ['service: POST /contacts (one contact, its event and webhook messages)', await setStatement(contactBatch, rowsOf(contactBatch, accountId, [contact]))],
      ['service: POST /deals', await setStatement(dealBatch, rowsOf(dealBatch, accountId, [{ title: 'Bench deal', value: 4800.5, probability: 60 }]))],
      ['service: POST /contacts/batch (100 records)', await setStatement(contactBatch, rowsOf(contactBatch, accountId, Array.from({ length: 100 }, (_, i) => ({ ...contact, lastName: `Batch ${i}` }))))],
      // docs/custom-fields.md: the same batch with 20 values a record (the bench fields, judged as the service stores them).
      ['service: POST /contacts/batch (100 records, 20 custom fields)', await setStatement(contactBatch, rowsOf(contactBatch, accountId, Array.from({ length: 100 }, (_, i) => ({ ...contact, lastName: `Batch ${i}`, customFields: benchValues(i) }))))],
      ['service: POST /invoices (10 lines: the number, invoice, lines, event and webhook messages)', await invoiceStatement(accountId)],
      ['floor: POST /contacts (the row alone)', Prisma.sql`INSERT INTO contacts (id, account_id, first_name, last_name, email, phone, company, contact_type, source)
        VALUES (${newId()}::uuid, ${accountId}::uuid, 'Bench', 'Writer', 'bench.writer@example.com', NULL, 'Bench Ltd', 'lead', 'referral') RETURNING id`],
    ];
    for (const [label, sql] of statements) {
      for (let run = 0; run < 3; run++) {
        // The third run is shown: the first two warm the caches and the plan.
        await client.query('BEGIN');
        try {
          const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS, WAL, COSTS OFF) ${sql.text}`, sql.values as unknown[]);
          if (run === 2) process.stdout.write(`\n### ${label}\n\n${rows.map((r) => r['QUERY PLAN']).join('\n')}\n`);
        } finally {
          await client.query('ROLLBACK');
        }
      }
    }
  } finally {
    await client.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`explain-writes: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
