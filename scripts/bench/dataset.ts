// The bench dataset: one large realistic account (contacts, deals, invoices, a lead form with
// submissions, a few team members) plus many small accounts beside it, so the large one's queries
// run on a table shared with other tenants. Bulk-loaded with one multi-row INSERT ... unnest() per
// chunk: ~15x faster than Prisma createMany here, which matters at 1,000,000 contacts.
import pg from 'pg';
import { benchDefaults, seedBench, type BenchPhase } from '../../src/cli/seed-bench.js';
import { DAY, rng, uuidv7 } from '../../src/cli/seed-bench-data.js';
import { openDatabase } from '../../src/db/client.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { dropDatabase, ensureMigrated } from './common.js';

export type DatasetSize = { contacts: number; deals: number; invoices: number; submissions: number; companies: number; notes: number; tasks: number; smallAccounts: number };
export type Dataset = DatasetSize & {
  url: string;
  accountId: string;
  ownerId: string;
  memberIds: string[];
  formId: string;
  /** The contact with TIMELINE_ITEMS notes and tasks and their events (src/cli/seed-bench-activities.ts). */
  timelineContactId: string;
  /** When generation finished: rows created later are the bench's own writes. */
  completedAt: Date;
};
export type Phase = BenchPhase | 'small accounts' | 'vacuum';
export type Progress = { phase: Phase; done: number; total: number };

/** 20% deals, 20% invoices, 10% submissions, companies, notes and tasks of the contacts; 50 small accounts. */
export const sizeFor = (contacts: number, overrides: Partial<DatasetSize> = {}): DatasetSize => ({
  contacts,
  ...benchDefaults(contacts),
  smallAccounts: 50,
  ...overrides,
});

export const totalRows = (s: DatasetSize) => s.contacts + s.deals + s.invoices + s.submissions + s.companies + s.notes + s.tasks;

const SMALL_MIN = 100;
const SMALL_MAX = 1000;

const marker = (s: DatasetSize) => `bench:main:${s.contacts}:${s.deals}:${s.invoices}:${s.submissions}:${s.companies}:${s.notes}:${s.tasks}:${s.smallAccounts}`;

/** The contact seeded with a timeline of notes and tasks: the one with the most notes. */
const TIMELINE_CONTACT = 'SELECT contact_id::text AS id FROM notes WHERE account_id = $1 GROUP BY contact_id ORDER BY count(*) DESC LIMIT 1';

/** The finished dataset of this size in the database at `url`, or null. */
export async function findDataset(url: string, size: DatasetSize): Promise<Dataset | null> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ id: string; owner_id: string; updated_at: Date }>(
      'SELECT id, owner_id, updated_at FROM accounts WHERE name = $1',
      [marker(size)],
    );
    const account = rows[0];
    if (!account) return null;
    const members = await client.query<{ user_id: string }>('SELECT user_id FROM team_members WHERE account_id = $1 ORDER BY user_id', [account.id]);
    const form = await client.query<{ id: string }>('SELECT id FROM lead_forms WHERE account_id = $1 ORDER BY created_at LIMIT 1', [account.id]);
    const timeline = await client.query<{ id: string }>(TIMELINE_CONTACT, [account.id]);
    return {
      ...size,
      url,
      accountId: account.id,
      ownerId: account.owner_id,
      memberIds: members.rows.map((r) => r.user_id),
      formId: form.rows[0]!.id,
      timelineContactId: timeline.rows[0]!.id,
      completedAt: account.updated_at,
    };
  });
}

/**
 * The dataset, generated when the database does not hold a finished one of this size. A partial or
 * different one is thrown away first: only in a database whose name starts with `crm_bench`.
 */
export async function ensureDataset(
  url: string,
  size: DatasetSize,
  opts: { force?: boolean; onProgress?: (p: Progress) => void; log?: (line: string) => void } = {},
): Promise<Dataset> {
  const log = opts.log ?? (() => {});
  const { applied } = await ensureMigrated(url);
  if (!opts.force) {
    const found = await findDataset(url, size);
    if (found) {
      log(`dataset: found ${describe(size)} in ${new URL(url).pathname.slice(1)}`);
      if (applied.length > 0) {
        // New indexes need statistics before the planner will choose them.
        log(`dataset: migrations applied (${applied.join(', ')}); analyzing`);
        await withClient(url, (c) => c.query('ANALYZE'));
      }
      return found;
    }
  }
  const empty = await withClient(url, async (c) => (await c.query('SELECT 1 FROM accounts LIMIT 1')).rowCount === 0);
  if (!empty) {
    const name = new URL(url).pathname.slice(1);
    if (!name.startsWith('crm_bench')) throw new Error(`database "${name}" holds other data; the bench only replaces data in a crm_bench* database`);
    log(`dataset: replacing the data in ${name}`);
    await dropDatabase(url);
    await ensureMigrated(url);
  }
  log(`dataset: generating ${describe(size)}`);
  return generateDataset(url, size, opts.onProgress);
}

export const describe = (s: DatasetSize) =>
  `${s.contacts} contacts, ${s.deals} deals, ${s.invoices} invoices, ${s.submissions} submissions, ${s.companies} companies, ${s.notes} notes, ${s.tasks} tasks + ${s.smallAccounts} small accounts`;

/**
 * What bench runs write, by the column that dates it: imports (their stored rows and errors go with
 * them, ON DELETE CASCADE) and the events every write records, besides the records themselves.
 */
const BENCH_WRITES: [table: string, dated: string][] = [
  // event_queue: the events the relay had not taken yet when the service stopped.
  ['imports', 'created_at'], ['events', 'occurred_at'], ['event_queue', 'occurred_at'], ['form_submissions', 'created_at'], ['idempotency_keys', 'created_at'],
  ['export_logs', 'created_at'],
  // Before what they point to (no cascade): notes and tasks, then payments, then invoices (their
  // lines go with them; docs/decisions.md §20), deals and contacts, which a bench:overdue account's
  // invoices and tasks refer to.
  ['tasks', 'created_at'], ['notes', 'created_at'], ['payments', 'created_at'], ['invoices', 'created_at'],
  ['deals', 'created_at'], ['contacts', 'created_at'], ['companies', 'created_at'],
];

/** Deletes what bench runs wrote into the dataset (rows newer than the dataset), so runs stay comparable. */
export async function removeBenchWrites(dataset: Dataset): Promise<number> {
  return withClient(dataset.url, async (client) => {
    let removed = 0;
    for (const [table, dated] of BENCH_WRITES) {
      const result = await client.query(`DELETE FROM ${table} WHERE ${dated} > $1`, [dataset.completedAt]);
      removed += result.rowCount ?? 0;
    }
    // With autovacuum off (as on the bench machine) dead rows slow each later run: every table that
    // has them is vacuumed, the written ones and those their triggers keep (custom_field_numbers held
    // 300,000 dead rows of earlier runs, and each custom-value write met them in its index).
    const { rows } = await client.query<{ name: string }>('SELECT quote_ident(relname) AS name FROM pg_stat_user_tables WHERE n_dead_tup > 0');
    if (rows.length) await client.query(`VACUUM ANALYZE ${rows.map((r) => r.name).join(', ')}`);
    return removed;
  });
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  // Unbounded: the service gives its role a default statement_timeout in this database at start
  // (docs/scaling.md#pgbouncer), and filling or cleaning a million rows may take longer.
  const client = new pg.Client({ connectionString: url, options: '-c statement_timeout=0' });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function generateDataset(url: string, size: DatasetSize, onProgress: (p: Progress) => void = () => {}): Promise<Dataset> {
  const random = rng(42);
  const now = Date.now();
  // One connection, so the session setting below holds for every insert.
  const db = await openDatabase({ databaseUrl: url, dataDir: '', poolMax: 1, onConnectionError: () => {} });
  const prisma = db.prisma;
  try {
    // Bulk load: losing the last commits on a crash only means generating again.
    await prisma.$executeRawUnsafe('SET synchronous_commit = off');
    const owner = await insertUser(prisma, now, 'Bench Owner');
    const accountId = uuidv7(now);
    await prisma.account.create({ data: { id: accountId, name: 'bench:main', ownerId: owner, createdAt: new Date(now - 730 * DAY) } });
    const memberIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = await insertUser(prisma, now + i + 1, `Bench Member ${i + 1}`);
      await prisma.teamMember.create({ data: { accountId, userId: id, role: 'member', email: `member${i + 1}@example.com` } });
      memberIds.push(id);
    }
    const main = await seedBench(prisma, { accountId, ...size, seed: 42, onProgress });

    // Small accounts: same shape, 100-1000 contacts each, progress counted per account.
    onProgress({ phase: 'small accounts', done: 0, total: size.smallAccounts });
    for (let a = 0; a < size.smallAccounts; a++) {
      const smallOwner = await insertUser(prisma, now + 100 + a, `Small Owner ${a + 1}`);
      const small = await prisma.account.create({ data: { id: uuidv7(now + 100 + a), name: `Small account ${a + 1}`, ownerId: smallOwner } });
      const contacts = SMALL_MIN + Math.floor(random() * (SMALL_MAX - SMALL_MIN + 1));
      await seedBench(prisma, { accountId: small.id, contacts, seed: a + 1, historyDays: 365 });
      onProgress({ phase: 'small accounts', done: a + 1, total: size.smallAccounts });
    }

    onProgress({ phase: 'vacuum', done: 0, total: 1 });
    // Statistics and the visibility map, as a long-running database would have them (index-only counts).
    await prisma.$executeRawUnsafe('VACUUM ANALYZE');
    onProgress({ phase: 'vacuum', done: 1, total: 1 });
    const { updatedAt } = await prisma.account.update({ where: { id: accountId }, data: { name: marker(size), updatedAt: new Date() } });
    const [timeline] = await prisma.$queryRawUnsafe<{ id: string }[]>(TIMELINE_CONTACT.replace('$1', '$1::uuid'), accountId);
    return { ...size, url, accountId, ownerId: owner, memberIds, formId: main.formId, timelineContactId: timeline!.id, completedAt: updatedAt };
  } finally {
    await db.close();
  }
}

async function insertUser(prisma: PrismaClient, ms: number, name: string): Promise<string> {
  const id = uuidv7(ms);
  await prisma.user.create({ data: { id, email: `${name.toLowerCase().replace(/[^a-z0-9]+/g, '')}-${id.slice(-6)}@example.com`, name } });
  return id;
}
