import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ACCOUNT_STAMPED } from '../../src/graphql/horizon.js';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type RestResult, type TestApp } from '../helpers/app.js';
import { holdTable } from '../helpers/held-locks.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { restResource } from '../helpers/rest.js';
import { importCsv } from '../imports/helpers.js';

// One tenant never holds back another's sync (docs/decisions.md §26, docs/rest.md#following-changes):
// the positions a list by updated_at and the events feed hand to account B wait only for B's own
// uncommitted writes. Account A's open write, or A's upload being copied in, is not B's: B's change
// is in B's very next read. B's own open write is still waited for (§24: sync never skips a change).
//
// PostgreSQL for the scenarios: they need two connections at once (PGlite is one connection, one
// statement at a time, where the horizon is simply now). The tables the horizon trusts are checked
// against the database's triggers everywhere.

let t: TestApp;
let a: TestAccount;
let b: TestAccount;
const contacts = restResource(() => t, '/api/v1/contacts');
const SKIP = skipIfMissing(unsetVariables('DATABASE_URL'));

beforeAll(async () => {
  t = await createTestApp();
  [a, b] = await Promise.all([createAccount(t), createAccount(t)]);
});
afterAll(() => t?.close());

type Item = { id: string; updated_at: string };

/** A follower's read of the account's contacts changed at or after `since`, oldest change first, by cursor to the end. */
async function changedSince(acc: TestAccount, since: string): Promise<Item[]> {
  const items: Item[] = [];
  let cursor: string | undefined;
  do {
    const r = await contacts.list(acc.id, acc.member, { sort: 'updated_at', order: 'asc', updated_since: since, page_size: 100, ...(cursor ? { cursor } : {}) });
    expect(r.status).toBe(200);
    items.push(...r.body.data);
    cursor = r.body.next_cursor ?? undefined;
  } while (cursor);
  return items;
}

/** A feed follower's read of the account's contact.updated events from `cursor` to the end: the contacts they name and where to poll from next. */
async function eventsAfter(acc: TestAccount, cursor: string | null): Promise<{ ids: string[]; cursor: string | null }> {
  const ids: string[] = [];
  for (;;) {
    const query = new URLSearchParams({ account_id: acc.id, types: 'contact.updated', page_size: '100', ...(cursor ? { cursor } : {}) });
    const r = await t.rest('GET', `/api/v1/events?${query}`, { as: acc.member });
    expect(r.status).toBe(200);
    ids.push(...r.body.data.map((e: { data: { object: { id: string } } }) => e.data.object.id));
    cursor = r.body.next_cursor;
    if (r.body.data.length < 100) return { ids, cursor };
  }
}

const newContact = async (acc: TestAccount, name: string) =>
  (await contacts.create(acc.owner, { account_id: acc.id, first_name: name, email: `${name}-${Date.now()}@example.com` })).body.data.id as string;
const patch = async (id: string, acc: TestAccount, company: string) =>
  expect((await t.rest('PATCH', `/api/v1/contacts/${id}`, { as: acc.owner, body: { company } })).status).toBe(200);

/** Where a follower of the account stands now: the last change it saw, and the feed's cursor. */
async function standing(acc: TestAccount): Promise<{ since: string; feed: string | null }> {
  const seen = await changedSince(acc, '2000-01-01T00:00:00Z');
  return { since: seen.at(-1)?.updated_at ?? '2000-01-01T00:00:00Z', feed: (await eventsAfter(acc, null)).cursor };
}

/** A transaction of another connection, left open until `end`: `sql` runs in it first. */
async function openTransaction(sql: string, values: unknown[] = []): Promise<{ end: () => Promise<void> }> {
  const client = await (t.deps.db.pool as pg.Pool).connect();
  await client.query('BEGIN');
  await client.query(sql, values);
  return {
    end: async () => {
      await client.query('COMMIT');
      client.release();
    },
  };
}

/** B changes a contact and reads at once: its list by updated_at and its events feed both show the change. */
async function expectBSeesItsChangeAtOnce(): Promise<void> {
  const contact = await newContact(b, 'b-quick');
  const from = await standing(b);
  await patch(contact, b, 'Quick Ltd');
  expect((await changedSince(b, from.since)).map((c) => c.id)).toContain(contact);
  expect((await eventsAfter(b, from.feed)).ids).toContain(contact);
}

describe('the tables the horizon trusts', () => {
  test('every table whose writes take their account lock, and only those, is stamped from it', async () => {
    const stamped = await t.db.$queryRaw<{ table: string }[]>`
      SELECT DISTINCT c.relname::text AS table FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
      WHERE NOT g.tgisinternal AND g.tgname IN ('stamps_from_transaction_start', 'event_stamp_from_transaction_start')`;
    expect(stamped.map((r) => r.table).sort()).toEqual([...ACCOUNT_STAMPED].sort());
  });
});

describe.skipIf(SKIP)('one tenant never holds back another tenant\'s sync (PostgreSQL)', () => {
  test('B\'s change is in B\'s sync list and events feed at once while A holds a write transaction open', async () => {
    const held = await openTransaction(
      `INSERT INTO contacts (id, account_id, first_name, created_at, updated_at) VALUES (gen_random_uuid(), $1::uuid, 'a-held', now(), now())`,
      [a.id],
    );
    try {
      await expectBSeesItsChangeAtOnce();
    } finally {
      await held.end();
    }
  });

  test('B\'s change is in B\'s sync list and events feed at once while A\'s upload is copied in', async () => {
    // A's file is sent whole; its COPY into import_rows then waits on a lock held here, its transaction
    // open as a long copy's is (the 150 MB upload took 20 s).
    const table = await holdTable(t, 'import_rows');
    let answered: Promise<RestResult> | null = null;
    try {
      const rows = Array.from({ length: 2_000 }, (_, i) => `A${i},a${i}-${Date.now()}@example.com`).join('\n');
      answered = importCsv(t, a.owner, a.id, `first_name,email\n${rows}\n`, { match_on: 'email' });
      const copying = async () =>
        (await t.db.$queryRaw<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND query LIKE 'COPY import_rows%' AND xact_start IS NOT NULL AND state = 'active'`)[0]!.n;
      await expect.poll(copying, { timeout: 10_000 }).toBeGreaterThan(0);
      await expectBSeesItsChangeAtOnce();
      expect(await copying()).toBeGreaterThan(0); // still copying as B read
    } finally {
      await table.release();
    }
    expect((await answered!).status).toBe(202);
  });

  test('B\'s change that commits late is never skipped while B holds its write open', async () => {
    const [slow, quick] = [await newContact(b, 'b-slow'), await newContact(b, 'b-late-quick')];
    const from = await standing(b);
    // B's write of the slow contact and its event begin (and are stamped), then stay open...
    const held = await openTransaction(
      `WITH changed AS (UPDATE contacts SET company = 'Slow Ltd', updated_at = now() WHERE id = $1::uuid RETURNING id, account_id)
       INSERT INTO events (id, account_id, type, actor_type, subject_id, contact_id, data)
       SELECT gen_random_uuid(), account_id, 'contact.updated', 'system', id, id, json_build_object('object', json_build_object('id', id)) FROM changed`,
      [slow],
    );
    let during: Item[];
    let feedDuring: { ids: string[]; cursor: string | null };
    try {
      // ...while a later change of B commits, and the follower reads and moves on to what it saw last.
      await patch(quick, b, 'Quick Ltd');
      during = await changedSince(b, from.since);
      feedDuring = await eventsAfter(b, from.feed);
      expect(during.map((c) => c.id)).not.toContain(slow);
    } finally {
      await held.end();
    }
    const after = await changedSince(b, during.at(-1)?.updated_at ?? from.since);
    const seen = [...during, ...after].map((c) => c.id);
    expect(seen).toContain(slow);
    expect(seen).toContain(quick);
    const feedAfter = await eventsAfter(b, feedDuring.cursor);
    expect([...feedDuring.ids, ...feedAfter.ids].sort()).toEqual([slow, quick].sort());
  });
});
