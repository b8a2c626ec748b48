// Statements prepared once per connection (src/db/prepared.ts, docs/scaling.md#prepared-statements):
// only where the connection reaches PostgreSQL's backend itself; behind PgBouncer in transaction mode
// every statement goes unnamed; a migration that changes what a prepared statement answers costs no
// request outside a transaction.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BoundedPool } from '../../src/db/bounds.js';
import { DEFAULT_BOUNDS } from '../../src/db/client.js';
import { MAX_PREPARED, PLAN_EACH_TIME, PREPARE_AFTER, statementName } from '../../src/db/prepared.js';
import { contactMatches, ownOrContactNameMatches } from '../../src/contacts/contact-search.js';
import { Prisma } from '../../src/generated/prisma/client.js';
import { searchSql, SEARCH_TYPES } from '../../src/search/search-sql.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { createDatabase, dropDatabase, freePort, Pgbouncer, PGBOUNCER_BIN, withDatabase } from '../scale/support.js';

const serverUrl = process.env.DATABASE_URL ?? '';
/** The statements each connection has prepared, by name (asked on the pool's one connection). */
const prepared = async (pool: BoundedPool) => (await pool.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements')).rows;

describe('which statements are prepared', () => {
  it(`a statement is named once it has been sent ${PREPARE_AFTER} times, the same name for the same text`, () => {
    const text = 'SELECT $1::int /* named from its third sending */';
    const names = Array.from({ length: PREPARE_AFTER + 1 }, () => statementName(text));
    expect(names.slice(0, PREPARE_AFTER - 1)).toEqual(Array(PREPARE_AFTER - 1).fill(undefined));
    expect(new Set(names.slice(PREPARE_AFTER - 1)).size).toBe(1);
    expect(names[PREPARE_AFTER - 1]).toMatch(/^crm_/);
  });

  it('a statement marked to be planned each time is never named, however often it is sent', () => {
    const text = `SELECT $1::text ILIKE $2 ${PLAN_EACH_TIME}`;
    expect(Array.from({ length: PREPARE_AFTER * 3 }, () => statementName(text)).every((n) => n === undefined)).toBe(true);
  });

  it('every search pattern carries the mark: a contacts filter, deals and invoices by name, and Query.search of every type', () => {
    const account = Prisma.sql`${'00000000-0000-0000-0000-000000000000'}::uuid`;
    const statements = [contactMatches('t', 'ada'), ownOrContactNameMatches('deals', 'title', 'ada'), ...SEARCH_TYPES.map((type) => searchSql([type], account, 'ada', 5)), searchSql(SEARCH_TYPES, account, 'ada', 5)];
    for (const sql of statements) expect(sql.text).toContain(PLAN_EACH_TIME);
  });
});

describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('prepared statements on PostgreSQL', () => {
  let database: string;
  let pool: BoundedPool;
  beforeAll(async () => {
    database = await createDatabase(serverUrl, 'crm_prepared');
    pool = new BoundedPool({ connectionString: withDatabase(serverUrl, database), max: 1 }, DEFAULT_BOUNDS);
    await pool.query('CREATE TABLE probe (n int)');
  });
  afterAll(async () => {
    await pool?.end();
    if (database) await dropDatabase(serverUrl, database);
  });

  it(`a parameterised statement sent ${PREPARE_AFTER} times is prepared on the connection, under a name made of its text, and keeps answering`, async () => {
    const text = 'SELECT $1::int + 1 AS n /* sent often */';
    for (let i = 0; i < PREPARE_AFTER + 3; i++) expect((await pool.query(text, [i])).rows).toEqual([{ n: i + 1 }]);
    expect(await prepared(pool)).toContainEqual({ name: statementName(text), statement: text });
  });

  it(`a connection holds at most ${MAX_PREPARED} prepared statements: a new one deallocates the one used least recently`, async () => {
    const text = (i: number) => `SELECT $1::int + ${i} AS n /* one of many */`;
    const count = MAX_PREPARED + 10;
    for (let i = 0; i < count; i++) {
      for (let k = 0; k < PREPARE_AFTER + 1; k++) expect((await pool.query(text(i), [k])).rows).toEqual([{ n: k + i }]);
      if (i === 0) await pool.query(text(0), [0]); // keeps the first one recently used for a while
    }
    const held = (await prepared(pool)).map((p) => p.statement);
    expect(held.length).toBeLessThanOrEqual(MAX_PREPARED);
    expect(held).toContain(text(count - 1));
    expect(held).not.toContain(text(1));
    // An evicted one is prepared again when it comes back, and answers.
    expect((await pool.query(text(1), [5])).rows).toEqual([{ n: 6 }]);
    expect((await prepared(pool)).map((p) => p.statement)).toContain(text(1));
  });

  it('a statement without parameters, and one sent fewer times, stay unnamed', async () => {
    const rare = 'SELECT $1::int * 2 AS n /* sent rarely */';
    for (let i = 0; i < PREPARE_AFTER - 1; i++) await pool.query(rare, [i]);
    for (let i = 0; i < PREPARE_AFTER + 1; i++) await pool.query('SELECT 1 AS one /* no parameters */');
    const texts = (await prepared(pool)).map((p) => p.statement);
    expect(texts).not.toContain(rare);
    expect(texts.some((t) => t.includes('no parameters'))).toBe(false);
  });

  it('a migration that changes what a prepared statement answers: outside a transaction it is sent again and answers the new columns; in one it fails once, and the next is prepared afresh', async () => {
    const insert = 'INSERT INTO probe (n) VALUES ($1) RETURNING *';
    for (let i = 0; i < PREPARE_AFTER + 1; i++) await pool.query(insert, [i]);
    expect((await prepared(pool)).map((p) => p.statement)).toContain(insert);

    await pool.query('ALTER TABLE probe ADD COLUMN label text');
    expect((await pool.query(insert, [10])).rows).toEqual([{ n: 10, label: null }]);
    await pool.query(insert, [20]); // prepared again, now answering `label` too
    expect((await prepared(pool)).map((p) => p.statement)).toContain(insert);

    await pool.query('ALTER TABLE probe ADD COLUMN note text');
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const failed = await client.query(insert, [11]).catch((e: { code?: string }) => e);
      expect((failed as { code?: string }).code).toBe('0A000'); // "cached plan must not change result type"
      await client.query('ROLLBACK');
      expect((await client.query(insert, [12])).rows).toEqual([{ n: 12, label: null, note: null }]);
    } finally {
      client.release();
    }
    expect((await pool.query('SELECT n FROM probe WHERE n >= 10 ORDER BY n')).rows).toEqual([{ n: 10 }, { n: 12 }, { n: 20 }]);
  });
});

const MISSING = unsetVariables('DATABASE_URL') ?? (PGBOUNCER_BIN ? null : 'pgbouncer (apt-get install pgbouncer)');

describe.skipIf(skipIfMissing(MISSING))('prepared statements behind PgBouncer in transaction mode', () => {
  let dir: string;
  let database: string;
  let bouncer: Pgbouncer;
  const pools: BoundedPool[] = [];
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'crm-prepared-'));
    database = await createDatabase(serverUrl, 'crm_prepared');
    bouncer = new Pgbouncer(dir, await freePort());
    // Fewer server connections than clients: each transaction lands on whichever one is free.
    await bouncer.start({ crm: withDatabase(serverUrl, database) }, { default_pool_size: 2 });
    for (let i = 0; i < 2; i++) pools.push(new BoundedPool({ connectionString: bouncer.url('crm'), max: 6 }, DEFAULT_BOUNDS));
    await pools[0]!.query('CREATE TABLE probe (n int)');
  }, 60_000);
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    bouncer?.stop();
    if (database) await dropDatabase(serverUrl, database);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('two pools sending the same statements at once through the pooler get every answer: none is named where the server connection changes under it', async () => {
    const texts = ['SELECT $1::int AS n /* pooled read */', 'INSERT INTO probe (n) VALUES ($1) RETURNING n /* pooled write */'];
    const sent = Array.from({ length: 40 }, (_, i) => pools[i % 2]!.query(texts[i % 2]!, [i]).then((r) => r.rows[0].n as number));
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => pools[i % 2]!.query(texts[i % 2]!, [i]).then((r) => r.rows[0].n as number)));
      expect(answers).toEqual(Array.from({ length: 40 }, (_, i) => i));
    }
    expect(await Promise.all(sent)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect((await pools[0]!.query('SELECT count(*)::int AS n FROM probe')).rows).toEqual([{ n: 20 * 6 }]);
  });
});
