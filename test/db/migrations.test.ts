import { randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/client.js';
import { applyMigrations, defaultPaths, migrationStatus } from '../../src/db/migrate.js';
import { countersAndRows } from '../helpers/record-counts.js';

// PGlite always; PostgreSQL whenever DATABASE_URL is set, and then it must work (no skipping).
const kinds = ['pglite', ...(process.env.DATABASE_URL ? ['postgres' as const] : [])] as const;

/** Fresh, empty databases of one kind; PostgreSQL ones are created and dropped on the server. */
function freshDatabases(kind: 'pglite' | 'postgres') {
  const created: { db: Database; name?: string }[] = [];
  const adminUrl = process.env.DATABASE_URL ?? '';
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect(); // DATABASE_URL set but unreachable: fail here, loudly
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    async open(): Promise<Database> {
      if (kind === 'pglite') {
        const db = await openDatabase({ dataDir: 'memory://' });
        created.push({ db });
        return db;
      }
      const name = `crm_dbtest_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      await admin(`CREATE DATABASE ${name}`);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      const db = await openDatabase({ databaseUrl: url.toString(), dataDir: '', poolMax: 2 });
      created.push({ db, name });
      return db;
    },
    /** Another handle on a database opened before (a second deployer). */
    async reopen(db: Database): Promise<Database> {
      const entry = created.find((c) => c.db === db);
      const url = new URL(adminUrl);
      url.pathname = `/${entry?.name}`;
      const other = await openDatabase({ databaseUrl: url.toString(), dataDir: '', poolMax: 2 });
      created.push({ db: other });
      return other;
    },
    async dropAll() {
      for (const { db, name } of created.splice(0)) {
        await db.close();
        if (name) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    },
  };
}

const repoMigrations = async () =>
  (await readdir(defaultPaths().migrationsDir, { withFileTypes: true }))
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

/** report_sums summed over slots, and the same sums from the rows themselves, as sorted lines (docs/decisions.md#reports). */
async function reportSumsAndRows(db: Database): Promise<{ sums: string[]; rows: string[] }> {
  const lines = (rows: { line: string }[]) => rows.map((r) => r.line).sort();
  const sums = await db.prisma.$queryRawUnsafe<{ line: string }[]>(
    `SELECT concat_ws(' ', account_id, report, key, day, sum(n), sum(value), sum(weighted)) AS line FROM report_sums
     GROUP BY account_id, report, key, day HAVING sum(n) <> 0`,
  );
  // Receivables are keyed by currency from 20261129100000_account_currency_receivables on (docs/decisions.md §26), by '' before.
  const [{ keyed }] = await db.prisma.$queryRawUnsafe<{ keyed: boolean }[]>(
    `SELECT EXISTS (SELECT FROM information_schema.columns WHERE table_name = 'accounts' AND column_name = 'default_currency') AS keyed`,
  ) as [{ keyed: boolean }];
  const receivablesKey = keyed ? 'currency' : "''";
  const rows = await db.prisma.$queryRawUnsafe<{ line: string }[]>(
    `SELECT concat_ws(' ', account_id, 'pipeline', coalesce(stage_id::text, ''), '-infinity'::date, count(*), sum(value), sum(value * probability::numeric)) AS line
       FROM deals WHERE status = 'open' GROUP BY account_id, stage_id
     UNION ALL SELECT concat_ws(' ', account_id, 'deals_created', status, (created_at AT TIME ZONE 'UTC')::date, count(*), sum(value), 0)
       FROM deals GROUP BY account_id, status, (created_at AT TIME ZONE 'UTC')::date
     UNION ALL SELECT concat_ws(' ', account_id, 'deals_won', '', (closed_at AT TIME ZONE 'UTC')::date, count(*), sum(value), 0)
       FROM deals WHERE status = 'won' AND closed_at IS NOT NULL GROUP BY account_id, (closed_at AT TIME ZONE 'UTC')::date
     UNION ALL SELECT concat_ws(' ', account_id, 'receivables', ${receivablesKey}, due_date, count(*), sum(amount), 0)
       FROM invoices WHERE status IN ('sent', 'viewed', 'partial', 'overdue') GROUP BY account_id, ${keyed ? 'currency, ' : ''}due_date
     UNION ALL SELECT concat_ws(' ', account_id, 'contact_source', source, '-infinity'::date, count(*), 0, 0)
       FROM contacts GROUP BY account_id, source`,
  );
  return { sums: lines(sums), rows: lines(rows) };
}

/**
 * An account written by SQL: Prisma's client writes every column it knows (default_currency too),
 * which a database migrated only part of the way does not have yet.
 */
async function accountBefore(db: Database, name: string, ownerId: string): Promise<{ id: string }> {
  const [row] = await db.prisma.$queryRawUnsafe<{ id: string }[]>('INSERT INTO accounts (id, name, owner_id) VALUES (gen_random_uuid(), $1, $2::uuid) RETURNING id::text AS id', name, ownerId);
  return row!;
}

/** Every counter and report sum checked against the rows' own; the lines, to compare a later state with. */
async function exactCountersAndReports(db: Database): Promise<string[]> {
  const counts = await countersAndRows(db.prisma);
  const reports = await reportSumsAndRows(db);
  expect(counts.counters).toEqual(counts.rows);
  expect(reports.sums).toEqual(reports.rows);
  return [...counts.rows, ...reports.rows];
}

/**
 * custom_field_counts' sums per account, object, key and value (non-zero), and the same counted from
 * the rows' custom_fields by the definitions' types here, each as sorted "account object key value n".
 */
async function choiceCountsAndRows(db: Database): Promise<{ counts: string[]; rows: string[] }> {
  const counts = await db.prisma.$queryRawUnsafe<{ line: string }[]>(
    `SELECT concat_ws(' ', account_id, object, key, value, sum(n)) AS line FROM custom_field_counts GROUP BY account_id, object, key, value HAVING sum(n) <> 0`,
  );
  const definitions = await db.prisma.$queryRawUnsafe<{ account_id: string; object: string; key: string; type: string }[]>(
    `SELECT account_id::text, object::text, key, type::text FROM custom_field_definitions WHERE type IN ('SELECT', 'MULTI_SELECT', 'BOOLEAN')`,
  );
  const records = await db.prisma.$queryRawUnsafe<{ account_id: string; object: string; fields: Record<string, unknown> }[]>(
    `SELECT account_id::text, 'CONTACT' AS object, custom_fields AS fields FROM contacts UNION ALL SELECT account_id::text, 'COMPANY', custom_fields FROM companies
     UNION ALL SELECT account_id::text, 'DEAL', custom_fields FROM deals UNION ALL SELECT account_id::text, 'INVOICE', custom_fields FROM invoices`,
  );
  const tally = new Map<string, number>();
  for (const r of records) {
    for (const [key, value] of Object.entries(r.fields)) {
      if (!definitions.some((d) => d.account_id === r.account_id && d.object === r.object && d.key === key)) continue;
      for (const one of Array.isArray(value) ? value : [value]) {
        const line = `${r.account_id} ${r.object} ${key} ${String(one)}`;
        tally.set(line, (tally.get(line) ?? 0) + 1);
      }
    }
  }
  return { counts: counts.map((c) => c.line).sort(), rows: [...tally].map(([line, n]) => `${line} ${n}`).sort() };
}

const tableExists = async (db: Database, table: string) =>
  (await db.prisma.$queryRawUnsafe<{ t: string | null }[]>(`SELECT to_regclass('${table}')::text AS t`))[0]?.t !== null;

describe.each(kinds)('migrations on %s', { timeout: 180_000 }, (kind) => {
  const databases = freshDatabases(kind);
  afterAll(() => databases.dropAll());

  it('every migration applies to a fresh database, and applying again applies nothing', async () => {
    const db = await databases.open();
    const all = await repoMigrations();
    expect(all.length).toBeGreaterThan(0);
    expect(await migrationStatus(db)).toMatchObject({ applied: [], pending: all, failed: [] });

    expect(await applyMigrations(db)).toEqual(all);
    expect(await applyMigrations(db)).toEqual([]);
    expect(await migrationStatus(db)).toEqual({ applied: all, pending: [], failed: [], edited: [], unknown: [] });
    expect(await db.prisma.account.count()).toBe(0); // the client agrees with the tables
  });

  describe('a folder with a good and a failing migration', () => {
    let dir: string;
    const paths = () => ({ ...defaultPaths(), migrationsDir: dir });
    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), 'crm-migrations-'));
      await cp(path.join(defaultPaths().migrationsDir, 'migration_lock.toml'), path.join(dir, 'migration_lock.toml'));
      const write = async (name: string, sql: string) => {
        await mkdir(path.join(dir, name));
        await writeFile(path.join(dir, name, 'migration.sql'), sql);
      };
      // Semicolons inside a $$ body: the script must reach the server whole, not split on ';'.
      await write('1_good', `CREATE TABLE good (id int);
CREATE FUNCTION one() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END; $$;`);
      // The first statement succeeds, the second fails at run time.
      await write('2_bad', 'CREATE TABLE half_done (id int);\nSELECT 1 / 0;');
      await write('3_later', 'CREATE TABLE later (id int);');
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    it('a failing migration is never recorded as applied, leaves nothing behind and blocks later ones', async () => {
      const db = await databases.open();
      await expect(applyMigrations(db, paths())).rejects.toThrow(/division by zero/);

      const status = await migrationStatus(db, paths());
      expect(status.applied).toEqual(['1_good']);
      expect(status.failed).toEqual(['2_bad']);
      expect(status.pending).toEqual(['3_later']);
      expect(await tableExists(db, 'good')).toBe(true);
      expect(await db.prisma.$queryRawUnsafe('SELECT one() AS one')).toEqual([{ one: 1 }]);
      expect(await tableExists(db, 'half_done')).toBe(false);

      // Deploying again refuses (P3009) rather than skipping past the failure.
      await expect(applyMigrations(db, paths())).rejects.toThrow(/failed migrations/);
      expect(await tableExists(db, 'later')).toBe(false);
      expect((await migrationStatus(db, paths())).applied).toEqual(['1_good']);
    });
  });

  /**
   * An invoice in a database as an older migration left it: in SQL, since the current client also
   * writes the columns later migrations add (currency, ...: docs/decisions.md §20).
   */
  const oldInvoice = (db: { prisma: { $executeRaw: (q: TemplateStringsArray, ...v: unknown[]) => Promise<number> } }, i: { accountId: string; invoiceNumber: string; amount: number; dueDate: string; status: string }) =>
    db.prisma.$executeRaw`INSERT INTO invoices (id, account_id, invoice_number, amount, due_date, status) VALUES (${randomUUID()}::uuid, ${i.accountId}::uuid, ${i.invoiceNumber}, ${i.amount}, ${i.dueDate}::date, ${i.status}::invoice_status)`;

  /**
   * The columns a later migration adds that the current client writes on every create (a JSON
   * column's default is sent by the client: custom_fields, docs/custom-fields.md), added ahead so
   * the checks can make rows with the client as they did before.
   */
  const columnsTheClientWrites = async (db: Database) => {
    for (const table of ['contacts', 'deals', 'companies', 'invoices']) {
      await db.prisma.$executeRawUnsafe(`ALTER TABLE IF EXISTS "${table}" ADD COLUMN IF NOT EXISTS custom_fields jsonb NOT NULL DEFAULT '{}'`);
    }
  };

  /**
   * `check` on a fresh database migrated up to the migration whose name ends with `suffix`, that one
   * left out; `applyIt()` then applies it alone and answers what it applied.
   */
  async function justBefore(suffix: string, check: (db: Database, applyIt: () => Promise<string[]>, name: string) => Promise<void>) {
    const db = await databases.open();
    const all = await repoMigrations();
    const name = all.find((n) => n.endsWith(suffix))!;
    const dir = await mkdtemp(path.join(tmpdir(), 'crm-migrations-'));
    const copy = (file: string) => cp(path.join(defaultPaths().migrationsDir, file), path.join(dir, file), { recursive: true });
    const paths = { ...defaultPaths(), migrationsDir: dir };
    try {
      for (const file of ['migration_lock.toml', ...all.slice(0, all.indexOf(name))]) await copy(file);
      await applyMigrations(db, paths);
      await columnsTheClientWrites(db);
      await check(db, async () => (await copy(name), applyMigrations(db, paths)), name);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('the record_counts migration counts the rows made before it, and its triggers every row after', async () => {
    await justBefore('_record_counts', async (db, applyIt, counters) => {
      const owner = await db.prisma.user.create({ data: { id: randomUUID() } });
      const accounts = await Promise.all(['A', 'B'].map((name) => accountBefore(db, name, owner.id)));
      for (const [i, { id: accountId }] of accounts.entries()) {
        await db.prisma.contact.createMany({ data: ['lead', 'client', 'client', 'vendor'].slice(i).map((contactType) => ({ accountId, firstName: 'C', contactType: contactType as never })) });
        await db.prisma.deal.createMany({ data: ['open', 'won', 'won'].slice(i).map((status) => ({ accountId, title: 'D', status: status as never })) });
        for (const [n, status] of ['draft', 'paid'].entries()) await oldInvoice(db, { accountId, invoiceNumber: `INV-${n}`, amount: 1, dueDate: '2031-01-01', status });
      }

      expect(await applyIt()).toEqual([counters]);
      const backfilled = await countersAndRows(db.prisma);
      expect(backfilled.rows).toHaveLength(12); // (account, table, key) pairs: 7 in A, 5 in B
      expect(backfilled.counters).toEqual(backfilled.rows);

      await db.prisma.contact.updateMany({ where: { contactType: 'client' }, data: { contactType: 'lead' } });
      await db.prisma.deal.deleteMany({ where: { status: 'won' } });
      const after = await countersAndRows(db.prisma);
      expect(after.rows).not.toEqual(backfilled.rows);
      expect(after.counters).toEqual(after.rows);
    });
  });

  it("the companies, notes and tasks counters' migration counts the rows made before it, and its triggers every row after", async () => {
    await justBefore('_record_counts_companies_notes_tasks', async (db, applyIt, counters) => {
      const owner = await db.prisma.user.create({ data: { id: randomUUID() } });
      const accounts = await Promise.all(['A', 'B'].map((name) => accountBefore(db, name, owner.id)));
      for (const [i, { id: accountId }] of accounts.entries()) {
        await db.prisma.company.createMany({ data: ['One', 'Two', 'Three'].slice(i).map((name) => ({ accountId, name })) });
        const company = await db.prisma.company.findFirstOrThrow({ where: { accountId } });
        await db.prisma.note.createMany({ data: ['a', 'b'].slice(i).map((body) => ({ accountId, body, companyId: company.id })) });
        await db.prisma.task.createMany({ data: ['call', 'write', 'visit'].slice(i).map((title) => ({ accountId, title, companyId: company.id })) });
      }

      expect(await applyIt()).toEqual([counters]);
      const backfilled = await countersAndRows(db.prisma);
      expect(backfilled.rows.filter((row) => / (companies|notes|tasks) /.test(row))).toHaveLength(6); // 3 tables in A and in B
      expect(backfilled.counters).toEqual(backfilled.rows);

      await db.prisma.task.deleteMany({ where: { title: 'visit' } });
      await db.prisma.note.create({ data: { accountId: accounts[1]!.id, body: 'c', companyId: (await db.prisma.company.findFirstOrThrow({ where: { accountId: accounts[1]!.id } })).id } });
      const after = await countersAndRows(db.prisma);
      expect(after.rows).not.toEqual(backfilled.rows);
      expect(after.counters).toEqual(after.rows);
    });
  });

  it('the reports migration sums the rows made before it, and its triggers every change after', async () => {
    await justBefore('_reports', async (db, applyIt, reports) => {
      const owner = await db.prisma.user.create({ data: { id: randomUUID() } });
      const accounts = await Promise.all(['A', 'B'].map((name) => accountBefore(db, name, owner.id)));
      for (const [i, { id: accountId }] of accounts.entries()) {
        const stage = await db.prisma.pipelineStage.create({ data: { accountId, name: 'S' } });
        await db.prisma.contact.createMany({ data: ['website', 'referral', 'referral'].slice(i).map((source) => ({ accountId, firstName: 'C', source: source as never })) });
        await db.prisma.deal.createMany({
          data: [
            { accountId, title: 'D', value: 10.5, probability: 33.3, stageId: stage.id },
            { accountId, title: 'D', value: 2, status: 'won', closedAt: new Date('2026-05-06T07:00:00Z') },
            { accountId, title: 'D', value: 3, createdAt: new Date('2025-12-31T23:00:00Z') },
          ].slice(i) as never,
        });
        for (const [n, status] of ['draft', 'sent', 'overdue'].entries()) await oldInvoice(db, { accountId, invoiceNumber: `INV-${n}`, amount: 1.25 * (n + 1), dueDate: `2026-0${n + 1}-01`, status });
      }

      expect(await applyIt()).toEqual([reports]);
      const backfilled = await reportSumsAndRows(db);
      expect(backfilled.rows).toHaveLength(17); // (account, report, key, day): 10 in A, 7 in B
      expect(backfilled.sums).toEqual(backfilled.rows);

      await db.prisma.deal.updateMany({ where: { status: 'open' }, data: { value: 99.99, stageId: null } });
      await db.prisma.invoice.updateMany({ where: { status: 'sent' }, data: { status: 'paid' } });
      await db.prisma.contact.deleteMany({ where: { source: 'referral' } });
      const after = await reportSumsAndRows(db);
      expect(after.rows).not.toEqual(backfilled.rows);
      expect(after.sums).toEqual(after.rows);
    });
  });

  it('the counter-slot migration keeps every total and report of the rows before it, and its slots count every change after', async () => {
    await justBefore('_counter_slots_free', async (db, applyIt, slots) => {
      const exact = () => exactCountersAndReports(db);
      const owner = await db.prisma.user.create({ data: { id: randomUUID() } });
      const { id: accountId } = await accountBefore(db, 'A', owner.id);
      await db.prisma.contact.createMany({ data: ['website', 'referral', 'referral'].map((source) => ({ accountId, firstName: 'C', source: source as never })) });
      await db.prisma.deal.createMany({ data: [{ accountId, title: 'D', value: 10.5 }, { accountId, title: 'D', value: 2, status: 'won', closedAt: new Date('2026-05-06T07:00:00Z') }] as never });
      const before = await exact();

      expect(await applyIt()).toEqual([slots]);
      expect(await exact()).toEqual(before);

      await db.prisma.contact.updateMany({ where: { source: 'referral' }, data: { contactType: 'client' } });
      await db.prisma.deal.deleteMany({ where: { status: 'won' } });
      await db.prisma.contact.create({ data: { accountId, firstName: 'New' } });
      expect(await exact()).not.toEqual(before);
    });
  });

  it('the counters rebuilt of static statements (planned once) keep every total and report, and count every change after in each counted table', async () => {
    await justBefore('_counters_planned_once', async (db, applyIt, rebuilt) => {
      const exact = () => exactCountersAndReports(db);
      const owner = await db.prisma.user.create({ data: { id: randomUUID() } });
      const { id: accountId } = await accountBefore(db, 'A', owner.id);
      const stage = await db.prisma.pipelineStage.create({ data: { accountId, name: 'S' } });
      const write = async (n: number) => {
        await db.prisma.contact.createMany({ data: ['website', 'referral'].map((source) => ({ accountId, firstName: `C${n}`, source: source as never })) });
        await db.prisma.deal.createMany({ data: [{ accountId, title: `D${n}`, value: 10.5, probability: 40, stageId: stage.id }, { accountId, title: `W${n}`, value: 2, status: 'won', closedAt: new Date('2026-05-06T07:00:00Z') }] as never });
        await db.prisma.invoice.createMany({ data: ['sent', 'draft'].map((status, i) => ({ accountId, invoiceNumber: `INV-${n}-${i}`, amount: 12.5, dueDate: new Date('2031-01-01'), status: status as never })) });
        const company = await db.prisma.company.create({ data: { accountId, name: `Co${n}` } });
        await db.prisma.note.create({ data: { accountId, body: 'n', companyId: company.id } });
        await db.prisma.task.create({ data: { accountId, title: 't', companyId: company.id } });
      };
      await write(1);
      const before = await exact();

      expect(await applyIt()).toEqual([rebuilt]);
      expect(await exact()).toEqual(before);
      // What PL/pgSQL runs with EXECUTE it plans at every call: the point of the migration.
      const bodies = await db.prisma.$queryRawUnsafe<{ body: string }[]>(
        `SELECT prosrc AS body FROM pg_proc WHERE proname IN ('record_counts_apply', 'report_sums_apply')`,
      );
      expect(bodies).toHaveLength(2);
      for (const { body } of bodies) expect(body).not.toMatch(/\bEXECUTE\b/i);

      // Each table, each operation its triggers fire for, the keys and reports changed both ways.
      await write(2);
      await db.prisma.contact.updateMany({ where: { source: 'referral' }, data: { contactType: 'client', source: 'website' } });
      await db.prisma.deal.updateMany({ where: { status: 'open' }, data: { value: 99.99, stageId: null } });
      await db.prisma.invoice.updateMany({ where: { status: 'draft' }, data: { status: 'overdue' } });
      const changed = await exact();
      expect(changed).not.toEqual(before);
      await db.prisma.contact.deleteMany({ where: { firstName: 'C1' } });
      await db.prisma.deal.deleteMany({ where: { status: 'won' } });
      await db.prisma.invoice.deleteMany({ where: { invoiceNumber: { startsWith: 'INV-1-' } } });
      await db.prisma.task.deleteMany({});
      await db.prisma.note.deleteMany({});
      await db.prisma.company.deleteMany({ where: { name: 'Co1' } });
      expect(await exact()).not.toEqual(changed);
    });
  });

  it("the custom-field counts' migration counts the choice values held before it, and its triggers every change after", async () => {
    await justBefore('_custom_field_counts', async (db, applyIt, counts) => {
      const owner = await db.prisma.user.create({ data: { id: randomUUID() } });
      const [a, b] = await Promise.all(['A', 'B'].map((name) => accountBefore(db, name, owner.id)));
      const define = (accountId: string, object: string, key: string, type: string) =>
        db.prisma.$executeRawUnsafe(
          `INSERT INTO custom_field_definitions (id, account_id, object, key, label, type, options) VALUES (gen_random_uuid(), $1::uuid, $2::custom_field_object, $3, $3, $4::custom_field_type, '{}')`,
          accountId, object, key, type,
        );
      for (const [key, type] of [['tier', 'SELECT'], ['tags', 'MULTI_SELECT'], ['vip', 'BOOLEAN'], ['note', 'TEXT']]) await define(a!.id, 'CONTACT', key!, type!);
      await define(b!.id, 'CONTACT', 'tier', 'SELECT');
      await define(a!.id, 'COMPANY', 'size', 'SELECT');
      const contact = (accountId: string, fields: object) =>
        db.prisma.$queryRawUnsafe<{ id: string }[]>(`INSERT INTO contacts (id, account_id, first_name, custom_fields) VALUES (gen_random_uuid(), $1::uuid, 'C', $2::jsonb) RETURNING id::text AS id`, accountId, JSON.stringify(fields));
      const [gold] = await contact(a!.id, { tier: 'gold', tags: ['x', 'y'], vip: true, note: 'hello' });
      await contact(a!.id, { tier: 'gold', vip: false });
      await contact(a!.id, { tags: ['y'] });
      await contact(b!.id, { tier: 'gold' });
      await db.prisma.$executeRawUnsafe(`INSERT INTO companies (id, account_id, name, custom_fields) VALUES (gen_random_uuid(), $1::uuid, 'Co', '{"size": "small"}')`, a!.id);

      expect(await applyIt()).toEqual([counts]);
      const backfilled = await choiceCountsAndRows(db);
      expect(backfilled.rows).toContain(`${a!.id} CONTACT tags y 2`);
      expect(backfilled.rows).not.toContainEqual(expect.stringContaining(' note ')); // a TEXT value is not counted
      expect(backfilled.counts).toEqual(backfilled.rows);

      await db.prisma.$executeRawUnsafe(`UPDATE contacts SET custom_fields = '{"tier": "silver", "tags": ["y"]}' WHERE id = $1::uuid`, gold!.id);
      await db.prisma.$executeRawUnsafe(`DELETE FROM contacts WHERE account_id = $1::uuid AND custom_fields = '{"tags": ["y"]}'::jsonb AND id <> $2::uuid`, a!.id, gold!.id);
      await contact(b!.id, { tier: 'gold' });
      const after = await choiceCountsAndRows(db);
      expect(after.rows).not.toEqual(backfilled.rows);
      expect(after.counts).toEqual(after.rows);
    });
  });

  if (kind === 'postgres') {
    it('two deployers at once apply each migration exactly once (advisory lock)', async () => {
      const first = await databases.open();
      const second = await databases.reopen(first);
      const results = await Promise.all([applyMigrations(first), applyMigrations(second)]);
      expect(results.flat().sort()).toEqual(await repoMigrations());
      expect((await migrationStatus(first)).applied).toEqual(await repoMigrations());
    });
  }
});
