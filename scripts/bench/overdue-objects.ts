// What bench:overdue needs of each overdue job (scripts/bench/overdue.ts): the job itself, one
// statement making `n` records of an account due over the last month, and its defaults. Due records
// are not the newest rows the lists show first: each was created 30 days before it fell due.
import { announceOverdueTasks } from '../../src/activities/overdue.js';
import { Prisma, type PrismaClient } from '../../src/generated/prisma/client.js';
import { markOverdueInvoices } from '../../src/invoices/overdue.js';

export type OverdueObject = 'invoices' | 'tasks';

type OverdueSpec = {
  run: (db: PrismaClient, batchSize: number) => Promise<{ moved: number; batches: number }>;
  insertDue: (accountId: string, n: number, tag: string) => Prisma.Sql;
  /** invoices: issue #26's 10,000 at once, 3 rounds; tasks: issue #53's 100,000, one round. */
  defaults: { due: number; rounds: number };
};

export const OVERDUE_OBJECTS: Record<OverdueObject, OverdueSpec> = {
  invoices: {
    run: async (db, batchSize) => markOverdueInvoices(db, { batchSize }),
    insertDue: (accountId, n, tag) => Prisma.sql`
      INSERT INTO invoices (id, account_id, invoice_number, amount, status, due_date, created_at, updated_at)
      SELECT gen_random_uuid(), ${accountId}::uuid, 'OVD-' || ${tag} || '-' || g, 100 + g % 900,
             (ARRAY['sent', 'viewed', 'partial'])[1 + g % 3]::invoice_status, due, issued, issued
      FROM generate_series(1, ${n}) g,
           LATERAL (SELECT current_date - 1 - g % 30 AS due) d,
           LATERAL (SELECT (due - 30)::timestamptz + make_interval(secs => g % 86400) AS issued) i`,
    defaults: { due: 10_000, rounds: 3 },
  },
  tasks: {
    run: async (db, batchSize) => {
      const run = await announceOverdueTasks(db, { batchSize });
      return { moved: run.announced, batches: run.batches };
    },
    // Each on one of the account's contacts in turn, as tasks are.
    insertDue: (accountId, n, tag) => Prisma.sql`
      WITH people AS (SELECT id, row_number() OVER () - 1 AS k FROM (SELECT id FROM contacts WHERE account_id = ${accountId}::uuid LIMIT 10000) c),
           many AS (SELECT count(*) AS n FROM people)
      INSERT INTO tasks (id, account_id, title, due_at, status, contact_id, created_at, updated_at)
      SELECT gen_random_uuid(), ${accountId}::uuid, 'Overdue ' || ${tag} || ' #' || g, due, 'open', p.id, due - interval '30 days', due - interval '30 days'
      FROM generate_series(1, ${n}) g
      CROSS JOIN many
      LEFT JOIN people p ON p.k = g % greatest(many.n, 1)
      CROSS JOIN LATERAL (SELECT now() - interval '1 minute' - make_interval(secs => g % (30 * 86400)) AS due) d`,
    defaults: { due: 100_000, rounds: 1 },
  },
};

export const runOverdueJob = (db: PrismaClient, object: OverdueObject, batchSize: number) => OVERDUE_OBJECTS[object].run(db, batchSize);
