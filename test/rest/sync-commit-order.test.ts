import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { restResource } from '../helpers/rest.js';

// Sync never skips a change (docs/decisions.md §24, docs/rest.md#following-changes): a write is
// stamped when its transaction starts and seen when it commits. Here one waits on a row lock held
// elsewhere while a later write commits; a follower reading meanwhile must not be handed a position
// past the waiting write, or it never sees it.
//
// PostgreSQL only: the scenario needs two connections at once. PGlite is one connection that runs
// one statement or transaction at a time, so no write is ever open while a list is read there: a
// reader's horizon is simply now (src/graphql/horizon.ts), and a write that waited for the connection
// is stamped when it runs (the stamps_from_transaction_start triggers).

let t: TestApp;
let acc: TestAccount;
const contacts = restResource(() => t, '/api/v1/contacts');
const SKIP = skipIfMissing(unsetVariables('DATABASE_URL'));

beforeAll(async () => {
  if (SKIP) return;
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

type Item = { id: string; updated_at: string };

/** A follower's read of every contact changed at or after `since`, oldest change first, by cursor to the end. */
async function changedSince(since: string): Promise<Item[]> {
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

/** A feed follower's read from `cursor` to the end: the events and where to poll from next. */
async function eventsAfter(cursor: string | null): Promise<{ ids: string[]; cursor: string | null }> {
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

/** Sessions of this database waiting for a lock. */
const waitingForLocks = async () =>
  (await t.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)[0]!.n;

describe.skipIf(SKIP)('a write that commits long after it began (PostgreSQL)', () => {
  test('a follower of updated_since and of the events feed sees a change that waited on a row lock while a later one committed', async () => {
    const [slow, quick] = await Promise.all(['slow', 'quick'].map(async (name) => (await contacts.create(acc.owner, { account_id: acc.id, first_name: name, email: `${name}@example.com` })).body.data.id as string));
    const start = await changedSince('2000-01-01T00:00:00Z');
    const since = start.at(-1)!.updated_at; // where the follower stands: it has seen both
    const feedStart = await eventsAfter(null);

    // Another transaction holds the slow contact's row; an upsert batch begins (and stamps), then waits for it.
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT 1 FROM contacts WHERE id = ${slow}::uuid FOR UPDATE`;
      locked();
      await holding;
    }, { timeout: 60_000 });
    await isLocked;
    const slowBatch = t.rest('POST', '/api/v1/contacts/batch', {
      as: acc.owner,
      body: { account_id: acc.id, mode: 'upsert', match_on: 'email', records: [{ email: 'slow@example.com', company: 'Slow Ltd' }] },
    });
    await expect.poll(waitingForLocks, { timeout: 10_000 }).toBeGreaterThan(0);
    // A later change commits meanwhile.
    expect((await t.rest('PATCH', `/api/v1/contacts/${quick}`, { as: acc.owner, body: { company: 'Quick Ltd' } })).status).toBe(200);

    // The follower reads while the slow write is still open, and moves on to what it saw last.
    const during = await changedSince(since);
    const feedDuring = await eventsAfter(feedStart.cursor);
    const next = during.at(-1)?.updated_at ?? since;

    release();
    await holder;
    expect((await slowBatch).status).toBe(200);

    // After the commit, reading on from where it stood, it sees the slow change (and the quick one, once or twice).
    const after = await changedSince(next);
    const seen = [...during, ...after].map((c) => c.id);
    expect(seen).toContain(slow);
    expect(seen).toContain(quick);
    const feedAfter = await eventsAfter(feedDuring.cursor);
    expect([...feedDuring.ids, ...feedAfter.ids].sort()).toEqual([slow, quick].sort());
  });
});
