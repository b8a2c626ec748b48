import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, createApiKey, createContact, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { restResource } from '../helpers/rest.js';
import { createHash } from 'node:crypto';
import { cursorKeyOf, encodeCursor } from '../../src/graphql/keyset.js';

// REST for systems that sync (docs/decisions.md §18, docs/rest.md#paging-by-cursor): cursor pages,
// sort and order, changes since, and the filters beside the contract's. Every answer is checked
// against the OpenAPI document by t.rest().

let t: TestApp;
let acc: TestAccount;
beforeAll(async () => {
  t = await createTestApp();
  acc = await createAccount(t);
});
afterAll(() => t?.close());

const contacts = restResource(() => t, '/api/v1/contacts');
const deals = restResource(() => t, '/api/v1/deals');
const invoices = restResource(() => t, '/api/v1/invoices');
const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((row) => row.id);

/** `n` contacts of `accountId` in one statement, created (and last changed) one second apart from `from`. */
async function seedContacts(db: TestApp['db'], accountId: string, n: number, from = Date.UTC(2025, 0, 1)) {
  const rows = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO contacts (id, account_id, first_name, email, created_at, updated_at)
    SELECT gen_random_uuid(), CAST(${accountId} AS uuid), 'Seed ' || i, 'seed' || i || '@example.com',
           to_timestamp(${from / 1000} + i), to_timestamp(${from / 1000} + i)
    FROM generate_series(1, ${n}) AS i
    RETURNING id::text AS id, created_at`;
  return rows.map((r) => r.id);
}

describe('paging by cursor', () => {
  let mine: TestAccount;
  let seeded: string[];
  beforeAll(async () => {
    mine = await createAccount(t);
    seeded = await seedContacts(t.db, mine.id, 7);
  });

  test('every page carries next_cursor; following it pages to the end, each row once, and the last page says null', async () => {
    const first = await contacts.list(mine.id, mine.member, { page_size: 3 });
    expect(first.body).toMatchObject({ page: 1, page_size: 3, total: 7 });
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await contacts.list(mine.id, mine.member, { page_size: 3, cursor: first.body.next_cursor });
    expect(Object.keys(second.body).sort()).toEqual(['data', 'next_cursor', 'page_size', 'total']);
    const third = await contacts.list(mine.id, mine.member, { page_size: 3, cursor: second.body.next_cursor });
    expect(third.body.next_cursor).toBeNull();
    expect([...ids(first), ...ids(second), ...ids(third)]).toEqual([...seeded].reverse());
  });

  test('a cursor page is stable under inserts and deletes: new rows do not shift it, a deleted cursor row does not end it', async () => {
    const first = await contacts.list(mine.id, mine.member, { page_size: 2, sort: 'created_at', order: 'asc' });
    expect(ids(first)).toEqual(seeded.slice(0, 2));
    // A row created before the cursor's position (an old created_at) and the cursor's own row deleted.
    await createContact(t, mine, { createdAt: new Date(Date.UTC(2020, 0, 1)) });
    await t.db.contact.delete({ where: { id: seeded[1] } });
    const next = await contacts.list(mine.id, mine.member, { page_size: 2, sort: 'created_at', order: 'asc', cursor: first.body.next_cursor });
    expect(ids(next)).toEqual(seeded.slice(2, 4));
  });

  test('sort=updated_at&order=asc&updated_since=T lists what changed at or after T, oldest change first', async () => {
    const acct = await createAccount(t);
    const [a, b, c] = await seedContacts(t.db, acct.id, 3);
    const since = new Date(Date.UTC(2025, 0, 1, 0, 0, 2)); // b's time: inclusive
    await t.db.contact.update({ where: { id: a! }, data: { updatedAt: new Date(Date.UTC(2026, 0, 1)) } });
    const r = await contacts.list(acct.id, acct.member, { sort: 'updated_at', order: 'asc', updated_since: since.toISOString() });
    expect(ids(r)).toEqual([b, c, a]);
    expect(r.body.total).toBe(3);
    const created = await contacts.list(acct.id, acct.member, { created_since: since.toISOString(), order: 'asc' });
    expect(ids(created)).toEqual([b, c]);
  });

  test('a REST cursor continues on GraphQL: Account.contacts(after:) with the same order and filter takes it', async () => {
    const first = await contacts.list(mine.id, mine.member, { page_size: 2 });
    const rest = await contacts.list(mine.id, mine.member, { page_size: 2, cursor: first.body.next_cursor });
    const r = await t.gql(
      'query ($id: ID!, $after: String) { account(id: $id) { contacts(first: 2, after: $after) { nodes { id } } } }',
      { id: mine.id, after: first.body.next_cursor },
      { as: mine.member },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.account.contacts.nodes.map((n: { id: string }) => n.id)).toEqual(ids(rest));
  });
});

describe('the total of a sync page (changes since a time)', () => {
  let mine: TestAccount;
  // More rows than the total's probe counts one by one (src/graphql/collection.ts, totalSql), so
  // both ways of counting answer: the rows since, and the counter less the rows before.
  const n = 1_500;
  const from = Date.UTC(2025, 0, 1);
  beforeAll(async () => {
    mine = await createAccount(t);
    await seedContacts(t.db, mine.id, n, from);
    // A few clients among many leads: the type filter's counter beside the time, on either side of the probe.
    await t.db.$executeRaw`UPDATE contacts SET contact_type = 'client' WHERE account_id = CAST(${mine.id} AS uuid) AND first_name IN ('Seed 2', 'Seed 1400', 'Seed 1499')`;
  });
  const since = (second: number) => new Date(from + second * 1000).toISOString();
  const exact = (second: number, type?: string) =>
    t.db.contact.count({ where: { accountId: mine.id, updatedAt: { gte: new Date(from + second * 1000) }, ...(type ? { contactType: type as never } : {}) } });

  test.each([0, 1, 2, 300, 700, 1_499, 1_500, 1_501, 3_000])('updated_since at second %i of the seeded ones answers the exact total', async (second) => {
    const r = await contacts.list(mine.id, mine.member, { updated_since: since(second), sort: 'updated_at', order: 'asc', page_size: 5 });
    expect(r.status, r.text).toBe(200);
    expect(r.body.total).toBe(await exact(second));
  });

  test('with the type filter too, the total is exact, and a row deleted or changed since moves it', async () => {
    const list = async (second: number, type: string) => (await contacts.list(mine.id, mine.member, { updated_since: since(second), type })).body.total;
    for (const type of ['client', 'lead']) {
      expect([await list(1, type), await list(300, type), await list(1_450, type)]).toEqual([await exact(1, type), await exact(300, type), await exact(1_450, type)]);
    }
    await t.db.$executeRaw`UPDATE contacts SET updated_at = ${new Date(from + 1_600_000)} WHERE account_id = CAST(${mine.id} AS uuid) AND first_name = 'Seed 3'`;
    await t.db.$executeRaw`DELETE FROM contacts WHERE account_id = CAST(${mine.id} AS uuid) AND first_name = 'Seed 4'`;
    for (const second of [1, 1_000]) {
      const r = await contacts.list(mine.id, mine.member, { updated_since: since(second) });
      expect(r.body.total).toBe(await exact(second));
    }
  });
});

describe('what a cursor refuses: 400 on cursor', () => {
  const refused = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body });
  const onCursor = (message: string) => ({ status: 400, body: { error: 'Invalid query', details: { cursor: [message] } } });
  let cursor: string;
  beforeAll(async () => {
    await seedContacts(t.db, acc.id, 3);
    cursor = (await contacts.list(acc.id, acc.member, { page_size: 1 })).body.next_cursor;
  });

  test('cursor with page', async () => {
    expect(refused(await contacts.list(acc.id, acc.member, { cursor, page: 2 }))).toEqual(onCursor('Give cursor or page, not both'));
  });

  test('a malformed or tampered cursor', async () => {
    expect(refused(await contacts.list(acc.id, acc.member, { cursor: 'not-a-cursor' }))).toEqual(onCursor('Not a cursor of this list'));
    const [fingerprint, , id, sum] = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    const edited = Buffer.from(JSON.stringify([fingerprint, '2020-01-01 00:00:00+00', id, sum])).toString('base64url');
    expect(refused(await contacts.list(acc.id, acc.member, { cursor: edited }))).toEqual(onCursor('Not a cursor of this list'));
  });

  test('cursors are signed: one forged with a recomputed checksum around an impossible time, or signed with another key, is a 400 on cursor on every list, REST and GraphQL', async () => {
    const [fingerprint, , id] = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    // What a checksum allowed: edit the value, recompute the sum (a 500 once PostgreSQL read 2026-13-45).
    const parts = [fingerprint, '2026-13-45 25:61:61+00', id];
    const sum = createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 8);
    const forged = Buffer.from(JSON.stringify([...parts, sum])).toString('base64url');
    // A real position, signed by a key that is not the service's.
    const [, value] = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    const otherKey = encodeCursor(cursorKeyOf('not-the-service-key-not-the-service-key'), fingerprint, { value, id });
    for (const bad of [forged, otherKey]) {
      for (const path of ['/api/v1/contacts', '/api/v1/deals', '/api/v1/invoices', '/api/v1/events']) {
        const r = await t.rest('GET', `${path}?account_id=${acc.id}&cursor=${bad}`, { as: acc.owner });
        expect(refused(r), path).toEqual(onCursor('Not a cursor of this list'));
      }
      const q = await t.gql(
        `query ($id: ID!, $c: String) { contacts(accountId: $id, cursor: $c) { total } account(id: $id) {
           contacts(after: $c) { totalCount } deals(after: $c) { totalCount } invoices(after: $c) { totalCount } events(after: $c) { totalCount } } }`,
        { id: acc.id, c: bad },
        { as: acc.owner },
      );
      expect(q.errors?.length).toBeGreaterThan(0);
      for (const error of q.errors!) {
        expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
        expect(Object.values(error.extensions!.details as object)).toEqual([['Not a cursor of this list']]);
      }
    }
  });

  test("another account's, another sort's or order's, another filter's, another collection's", async () => {
    const other = await createAccount(t);
    await seedContacts(t.db, other.id, 2);
    const theirs = (await contacts.list(other.id, other.member, { page_size: 1 })).body.next_cursor;
    const foreign = onCursor('The cursor belongs to another ordering, filter or account');
    expect(refused(await contacts.list(acc.id, acc.member, { cursor: theirs }))).toEqual(foreign);
    expect(refused(await contacts.list(acc.id, acc.member, { cursor, sort: 'updated_at' }))).toEqual(foreign);
    expect(refused(await contacts.list(acc.id, acc.member, { cursor, order: 'asc' }))).toEqual(foreign);
    expect(refused(await contacts.list(acc.id, acc.member, { cursor, type: 'client' }))).toEqual(foreign);
    expect(refused(await deals.list(acc.id, acc.member, { cursor }))).toEqual(foreign);
  });

  test('updated_since that is not a timestamp, an unknown sort or order: 400 naming each', async () => {
    const r = await contacts.list(acc.id, acc.member, { updated_since: 'yesterday', sort: 'name', order: 'up', created_since: '2026-13-01' });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.details).sort()).toEqual(['created_since', 'order', 'sort', 'updated_since']);
    expect(r.body.details.sort).toEqual(['Must be one of: created_at, updated_at']);
    expect(r.body.details.order).toEqual(['Must be one of: asc, desc']);
  });
});

describe('the filters beside the contract (docs/decisions.md §18)', () => {
  let a: TestAccount;
  let ada: { id: string };
  let stage: { id: string };
  beforeAll(async () => {
    a = await createAccount(t);
    ada = await createContact(t, a, { email: 'Ada@Example.com', externalId: 'crm-1' });
    await createContact(t, a, { email: 'ada@example.org' });
    stage = await t.db.pipelineStage.create({ data: { accountId: a.id, name: 'Won', position: 1 } });
    await t.db.deal.create({ data: { accountId: a.id, title: 'With Ada', value: 10, contactId: ada.id, stageId: stage.id } });
    await t.db.deal.create({ data: { accountId: a.id, title: 'Alone', value: 20 } });
    for (const [n, due] of [[1, '2027-01-10'], [2, '2027-01-20'], [3, '2027-01-31']] as const) {
      await t.db.invoice.create({ data: { accountId: a.id, invoiceNumber: `S-${n}`, amount: 1, dueDate: new Date(due), ...(n === 2 ? { contactId: ada.id } : {}) } });
    }
  });
  const titles = (r: { body: { data: { title: string }[] } }) => r.body.data.map((d) => d.title);
  const numbers = (r: { body: { data: { invoice_number: string }[] } }) => r.body.data.map((d) => d.invoice_number).sort();

  test('contacts: email is the exact address, case-insensitive; external_id exact', async () => {
    expect(ids(await contacts.list(a.id, a.member, { email: 'ADA@example.COM' }))).toEqual([ada.id]);
    expect(ids(await contacts.list(a.id, a.member, { email: 'ada@example' }))).toEqual([]);
    expect(ids(await contacts.list(a.id, a.member, { external_id: 'crm-1' }))).toEqual([ada.id]);
  });

  test('a lookup key is trimmed as it is stored, and a blank one is a 400 naming it, not "no such record"', async () => {
    expect(ids(await contacts.list(a.id, a.member, { external_id: '  crm-1 ', email: ' ada@example.com ' }))).toEqual([ada.id]);
    const blank = await contacts.list(a.id, a.member, { external_id: ' ', email: '' });
    expect(blank.status).toBe(400);
    expect(blank.body.details).toEqual({ email: ['Must not be blank'], external_id: ['Must not be blank'] });
    const deal = await deals.list(a.id, a.member, { external_id: '' });
    expect(deal.body.details).toEqual({ external_id: ['Must not be blank'] });
  });

  test('deals: contact_id and stage_id', async () => {
    expect(titles(await deals.list(a.id, a.member, { contact_id: ada.id }))).toEqual(['With Ada']);
    expect(titles(await deals.list(a.id, a.member, { stage_id: stage.id }))).toEqual(['With Ada']);
  });

  test('invoices: contact_id; due_after inclusive, due_before exclusive', async () => {
    expect(numbers(await invoices.list(a.id, a.member, { contact_id: ada.id }))).toEqual(['S-2']);
    expect(numbers(await invoices.list(a.id, a.member, { due_after: '2027-01-20' }))).toEqual(['S-2', 'S-3']);
    expect(numbers(await invoices.list(a.id, a.member, { due_before: '2027-01-20' }))).toEqual(['S-1']);
  });

  test('a malformed id or date is a 400 naming it', async () => {
    const r = await invoices.list(a.id, a.member, { contact_id: 'nope', due_after: 'soon' });
    expect(r.status).toBe(400);
    expect(Object.keys(r.body.details).sort()).toEqual(['contact_id', 'due_after']);
  });
});

describe('a sync loop while another client writes (docs/decisions.md §18)', () => {
  const N = 10_000;
  let s: TestApp;
  afterAll(() => s?.close());

  test(`paging ${N} contacts by updated_at sees every record that existed throughout once; updated_since then sees exactly what changed`, async () => {
    // Rate limits are another test's promise (test/rest/rate-limits.test.ts): this one pages 200 times.
    s = await createTestApp({ env: { RATE_LIMITS: 'off' } });
    const account = await createAccount(s);
    const seeded = await seedContacts(s.db, account.id, N);
    const list = restResource(() => s, '/api/v1/contacts').list;
    const writer: TestUser = account.owner;
    const created = new Set<string>();
    const updated = new Set<string>();
    const deleted = new Set<string>();

    const start = new Date();
    const seen = new Map<string, number>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await list(account.id, account.member, { sort: 'updated_at', order: 'asc', page_size: 100, ...(cursor ? { cursor } : {}) });
      expect(r.status).toBe(200);
      for (const id of ids(r)) seen.set(id, (seen.get(id) ?? 0) + 1);
      cursor = r.body.next_cursor ?? undefined;
      // Between two pages another client writes: a record already passed and one still ahead are
      // changed, one ahead is deleted, one is created.
      if (pages < 90) {
        const passed = seeded[pages * 100 + 50]!;
        const ahead = seeded[pages * 100 + 560]!;
        const gone = seeded[pages * 100 + 575]!;
        for (const id of [passed, ahead]) {
          expect((await s.rest('PATCH', `/api/v1/contacts/${id}`, { as: writer, body: { company: `Changed ${pages}` } })).status).toBe(200);
          updated.add(id);
        }
        expect((await s.rest('DELETE', `/api/v1/contacts/${gone}`, { as: writer })).status).toBe(204);
        deleted.add(gone);
        const made = await s.rest('POST', '/api/v1/contacts', { as: writer, body: { account_id: account.id, first_name: `New ${pages}` } });
        expect(made.status).toBe(201);
        created.add(made.body.data.id);
      }
      pages++;
    } while (cursor);

    const throughout = seeded.filter((id) => !deleted.has(id));
    for (const id of throughout.filter((id) => !updated.has(id))) expect(seen.get(id), id).toBe(1);
    // A changed record moves to the end: seen at its old place if it was passed, and again there.
    for (const id of updated) expect(seen.get(id), id).toBeGreaterThanOrEqual(1);
    expect([...seen.keys()].filter((id) => !seeded.includes(id) && !created.has(id))).toEqual([]);
    expect(updated.size).toBe(180);

    // The second pass: exactly the records changed or created since the first began, each once.
    const again: string[] = [];
    cursor = undefined;
    do {
      const r = await list(account.id, account.member, { sort: 'updated_at', order: 'asc', updated_since: start.toISOString(), page_size: 100, ...(cursor ? { cursor } : {}) });
      again.push(...ids(r));
      cursor = r.body.next_cursor ?? undefined;
    } while (cursor);
    const changed = [...updated, ...created].filter((id) => !deleted.has(id));
    expect(again.length).toBe(new Set(again).size);
    expect(new Set(again)).toEqual(new Set(changed));
  }, 300_000);
});

describe('GET /api/v1/events: the feed for systems without webhooks (docs/decisions.md §18)', () => {
  let e: TestAccount;
  let made: string[];
  beforeAll(async () => {
    e = await createAccount(t);
    made = [];
    for (const name of ['One', 'Two', 'Three']) {
      const r = await contacts.create(e.owner, { account_id: e.id, first_name: name });
      made.push(r.body.data.id);
    }
    await t.rest('PATCH', `/api/v1/contacts/${made[0]}`, { as: e.owner, body: { company: 'Changed' } });
  });
  const feed = (params: Record<string, string | number> = {}, as: TestUser = e.member) =>
    t.rest('GET', `/api/v1/events?${new URLSearchParams({ account_id: e.id, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])) })}`, { as });

  test('oldest first, each the envelope webhooks receive: id, type, account_id, occurred_at, actor, data', async () => {
    const r = await feed({ types: 'contact.created' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'next_cursor', 'page_size']);
    expect(r.body.data.map((ev: { data: { object: { id: string } } }) => ev.data.object.id)).toEqual(made);
    expect(Object.keys(r.body.data[0]).sort()).toEqual(['account_id', 'actor', 'data', 'id', 'occurred_at', 'type']);
    expect(r.body.data[0]).toMatchObject({ type: 'contact.created', account_id: e.id, actor: { type: 'user', id: e.owner.id } });
  });

  test('types is a comma-separated list; since is inclusive; pages follow next_cursor, and the last page gives one to poll from', async () => {
    const all = await feed({ types: 'contact.created,contact.updated' });
    expect(all.body.data.map((ev: { type: string }) => ev.type)).toEqual(['contact.created', 'contact.created', 'contact.created', 'contact.updated']);
    const since = all.body.data[2].occurred_at;
    const later = await feed({ types: 'contact.created,contact.updated', since });
    expect(later.body.data.map((ev: { id: string }) => ev.id)).toEqual(all.body.data.slice(2).map((ev: { id: string }) => ev.id));
    const first = await feed({ types: 'contact.created,contact.updated', page_size: 3 });
    const rest = await feed({ types: 'contact.created,contact.updated', page_size: 3, cursor: first.body.next_cursor });
    expect([...first.body.data, ...rest.body.data].map((ev: { id: string }) => ev.id)).toEqual(all.body.data.map((ev: { id: string }) => ev.id));
    // The last page's next_cursor is its last event's: polling from it answers nothing new, and no event twice.
    expect(rest.body.next_cursor).toEqual(expect.any(String));
    const polled = await feed({ types: 'contact.created,contact.updated', page_size: 3, cursor: rest.body.next_cursor });
    expect(polled.body).toMatchObject({ data: [], next_cursor: rest.body.next_cursor });
  });

  test('GET /api/v1/events/{id}?account_id= answers one; unknown, another account\'s or asked by an outsider: 404', async () => {
    const [event] = (await feed({ types: 'contact.updated' })).body.data;
    const one = await t.rest('GET', `/api/v1/events/${event.id}?account_id=${e.id}`, { as: e.member });
    expect({ status: one.status, body: one.body }).toEqual({ status: 200, body: { data: event } });
    const other = await createAccount(t);
    expect((await t.rest('GET', `/api/v1/events/${event.id}?account_id=${other.id}`, { as: other.member })).status).toBe(404);
    expect((await t.rest('GET', `/api/v1/events/${event.id}?account_id=${e.id}`, { as: e.outsider })).status).toBe(404);
  });

  test('each caller reads the kinds it may: a key those its scopes read, a member all but API keys and webhooks, the owner all', async () => {
    const own = await createAccount(t);
    await contacts.create(own.owner, { account_id: own.id, first_name: 'Seen' });
    await t.rest('POST', '/api/v1/deals', { as: own.owner, body: { account_id: own.id, title: 'Deal' } });
    const key = await createApiKey(t, own, ['EVENTS_READ', 'CONTACTS_READ']); // api_key.created
    const typesFor = async (as: TestUser, params: Record<string, string> = {}) => {
      const r = await t.rest('GET', `/api/v1/events?${new URLSearchParams({ account_id: own.id, ...params })}`, { as });
      expect(r.status).toBe(200);
      return r.body.data.map((ev: { type: string }) => ev.type);
    };
    expect(await typesFor(key)).toEqual(['contact.created']);
    // Asking for a kind it may not read answers none of it, not a refusal: what it may read is the list.
    expect(await typesFor(key, { types: 'deal.created,api_key.created' })).toEqual([]);
    expect(await typesFor(own.member)).toEqual(['contact.created', 'deal.created']);
    expect(await typesFor(own.owner)).toEqual(['contact.created', 'deal.created', 'api_key.created']);
    const [created] = (await t.rest('GET', `/api/v1/events?account_id=${own.id}&types=api_key.created`, { as: own.owner })).body.data;
    expect((await t.rest('GET', `/api/v1/events/${created.id}?account_id=${own.id}`, { as: own.member })).status).toBe(404);
    expect((await t.rest('GET', `/api/v1/events/${created.id}?account_id=${own.id}`, { as: own.owner })).status).toBe(200);
  });

  test('an API key needs EVENTS_READ', async () => {
    const reader = await createApiKey(t, e, ['EVENTS_READ']);
    expect((await feed({}, reader)).status).toBe(200);
    const other = await createApiKey(t, e, ['CONTACTS_READ']);
    const r = await feed({}, other);
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('Forbidden: this API key lacks the scope events:read');
  });
});
