import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, type TestAccount } from '../factories/index.js';
import { createTestApp, errorOf, type TestApp } from '../helpers/app.js';

// docs/decisions.md §11: Account connections: keyset cursors that survive inserts and deletes,
// backward paging, refused foreign or edited cursors, the filters and the orders.

let t: TestApp;
beforeAll(async () => void (t = await createTestApp()));
afterAll(() => t?.close());

// The embedded database runs in this process: a long seed keeps the event loop busy past the
// server's keep-alive timeout, and the next request may meet a socket the server just closed
// (ECONNRESET). One throwaway request after a seed lets the client drop that socket.
const settle = () => t.gql('{ __typename }').catch(() => undefined);

const CONTACTS = /* GraphQL */ `
  query ($id: ID!, $first: Int, $after: String, $last: Int, $before: String, $orderBy: ContactOrder, $filter: ContactFilter) {
    account(id: $id) {
      contacts(first: $first, after: $after, last: $last, before: $before, orderBy: $orderBy, filter: $filter) {
        totalCount
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        edges { cursor node { id } }
        nodes { id }
      }
    }
  }
`;

type Page = { ids: string[]; hasNext: boolean; hasPrevious: boolean; start: string | null; end: string | null; total: number };

async function page(acc: TestAccount, vars: Record<string, unknown>): Promise<Page> {
  const r = await t.gql(CONTACTS, { id: acc.id, ...vars }, { as: acc.member });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  const c = r.data.account.contacts;
  expect(c.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual(c.nodes.map((n: { id: string }) => n.id));
  return {
    ids: c.nodes.map((n: { id: string }) => n.id),
    hasNext: c.pageInfo.hasNextPage,
    hasPrevious: c.pageInfo.hasPreviousPage,
    start: c.pageInfo.startCursor,
    end: c.pageInfo.endCursor,
    total: c.totalCount,
  };
}

/** Every id, paging forward by `size`; `between` runs after each page (another client's writes). */
async function forward(acc: TestAccount, vars: Record<string, unknown>, size: number, between?: (seen: string[]) => Promise<void>) {
  const seen: string[] = [];
  let after: string | null = null;
  for (;;) {
    const p = await page(acc, { ...vars, first: size, after });
    seen.push(...p.ids);
    if (!p.hasNext) return seen;
    after = p.end;
    await between?.(seen);
  }
}

async function backward(acc: TestAccount, vars: Record<string, unknown>, size: number) {
  const seen: string[] = [];
  let before: string | null = null;
  for (;;) {
    const p = await page(acc, { ...vars, last: size, before });
    seen.unshift(...p.ids);
    if (!p.hasPrevious) return seen;
    before = p.start;
  }
}

/** `n` contacts, three to a millisecond (ties are broken by id), some without last name or e-mail. */
async function seedContacts(acc: TestAccount, n: number, from = Date.UTC(2024, 0, 1)) {
  const letters = 'abcdefghij';
  const data = Array.from({ length: n }, (_, i) => ({
    id: randomUUID(),
    accountId: acc.id,
    firstName: `f${letters[i % 10]}${letters[Math.floor(i / 10) % 10]}`,
    lastName: i % 7 === 0 ? null : `l${letters[(i * 3) % 10]}`,
    email: i % 5 === 0 ? null : `e${i % 13}@example.com`,
    createdAt: new Date(from + Math.floor(i / 3)),
    updatedAt: new Date(from + 10_000 + ((i * 7) % n)),
  }));
  await t.db.contact.createMany({ data });
  await settle();
  return data;
}

describe('paging while another client writes', () => {
  test('1,000 contacts by 50 while 100 are inserted and 50 unvisited deleted: every surviving contact exactly once', async () => {
    const acc = await createAccount(t);
    const before = await seedContacts(acc, 1000);
    const deleted = new Set<string>();
    let inserted = 0;
    const seen = await forward(acc, {}, 50, async (visited) => {
      const visitedSet = new Set(visited);
      // 5 new contacts spread over the whole time range (some land ahead of the cursor, some behind).
      const fresh = Array.from({ length: Math.min(6, 100 - inserted) }, (_, i) => ({
        accountId: acc.id,
        firstName: 'New',
        createdAt: new Date(Date.UTC(2024, 0, 1) + ((inserted + i) * 37) % 400),
      }));
      await t.db.contact.createMany({ data: fresh });
      inserted += fresh.length;
      // ...and 3 contacts that no page has shown yet are deleted.
      const victims = before.filter((c) => !visitedSet.has(c.id) && !deleted.has(c.id)).slice(0, Math.min(3, 50 - deleted.size)).map((c) => c.id);
      await t.db.contact.deleteMany({ where: { id: { in: victims } } });
      victims.forEach((id) => deleted.add(id));
    });
    expect(inserted).toBe(100);
    expect(deleted.size).toBe(50);
    expect(new Set(seen).size).toBe(seen.length); // nothing twice
    const survivors = before.map((c) => c.id).filter((id) => !deleted.has(id));
    const seenSet = new Set(seen);
    expect(survivors.filter((id) => !seenSet.has(id))).toEqual([]); // nothing skipped
    expect(seen.filter((id) => deleted.has(id))).toEqual([]);
  });

  test('a cursor whose own record was deleted still pages on from where it was', async () => {
    const acc = await createAccount(t);
    await seedContacts(acc, 30);
    const full = await forward(acc, {}, 30);
    const first = await page(acc, { first: 10 });
    await t.db.contact.delete({ where: { id: first.ids[9]! } });
    const next = await page(acc, { first: 10, after: first.end });
    expect(next.ids).toEqual(full.slice(10, 20));
  });
});

describe('backward paging', () => {
  let acc: TestAccount;
  beforeAll(async () => {
    acc = await createAccount(t);
    await seedContacts(acc, 230);
  });

  const orders = [
    undefined,
    { field: 'CREATED_AT', direction: 'ASC' },
    { field: 'UPDATED_AT', direction: 'DESC' },
    { field: 'FIRST_NAME', direction: 'ASC' },
    { field: 'LAST_NAME', direction: 'ASC' },
    { field: 'LAST_NAME', direction: 'DESC' },
    { field: 'EMAIL', direction: 'DESC' },
  ];
  test.each(orders.map((o) => [o ? `${o.field} ${o.direction}` : 'the default order', o] as const))(
    'last/before returns the same records in the same order as first/after (%s)',
    async (_name, orderBy) => {
      const forwardIds = await forward(acc, { orderBy }, 50);
      expect(forwardIds).toHaveLength(230);
      expect(await backward(acc, { orderBy }, 50)).toEqual(forwardIds);
      expect(await forward(acc, { orderBy }, 7)).toEqual(forwardIds);
    },
  );

  test('pageInfo: hasNextPage on every page but the last; totalCount is the whole filter', async () => {
    const p = await page(acc, { first: 100 });
    expect(p).toMatchObject({ hasNext: true, hasPrevious: false, total: 230 });
    const last = await page(acc, { first: 100, after: (await page(acc, { first: 100, after: p.end })).end });
    expect(last).toMatchObject({ hasNext: false, hasPrevious: true, total: 230 });
    expect(last.ids).toHaveLength(30);
  });

  test('the default is the first 25, newest first', async () => {
    const p = await page(acc, {});
    expect(p.ids).toEqual((await forward(acc, {}, 50)).slice(0, 25));
  });
});

describe('cursors and page sizes that are refused', () => {
  let acc: TestAccount;
  let cursor: string;
  beforeAll(async () => {
    acc = await createAccount(t);
    await seedContacts(acc, 5);
    cursor = (await page(acc, { first: 2 })).end!;
  });
  const refused = async (vars: Record<string, unknown>) => {
    const error = errorOf(await t.gql(CONTACTS, { id: acc.id, ...vars }, { as: acc.member }));
    expect(error.extensions?.code).toBe('BAD_USER_INPUT');
    return error.extensions?.details;
  };

  test('a cursor from another ordering is BAD_USER_INPUT', async () => {
    expect(await refused({ after: cursor, orderBy: { field: 'EMAIL', direction: 'ASC' } })).toEqual({
      after: ['The cursor belongs to another ordering, filter or account'],
    });
    expect(await refused({ after: cursor, orderBy: { field: 'CREATED_AT', direction: 'ASC' } })).toBeTruthy();
  });

  test('a cursor from another filter is BAD_USER_INPUT', async () => {
    expect(await refused({ before: cursor, filter: { types: ['lead'] } })).toEqual({
      before: ['The cursor belongs to another ordering, filter or account'],
    });
  });

  test('a cursor of another connection (deals) is BAD_USER_INPUT on contacts', async () => {
    await t.db.deal.create({ data: { accountId: acc.id, title: 'd' } });
    const r = await t.gql('query ($id: ID!) { account(id: $id) { deals(first: 1) { pageInfo { endCursor } } } }', { id: acc.id }, { as: acc.member });
    expect(await refused({ after: r.data.account.deals.pageInfo.endCursor })).toEqual({ after: ['The cursor belongs to another ordering, filter or account'] });
  });

  test('an edited, truncated or made-up cursor is BAD_USER_INPUT', async () => {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    const edited = Buffer.from(JSON.stringify([decoded[0], '2099-01-01 00:00:00+00', decoded[2], decoded[3]])).toString('base64url');
    for (const after of [edited, cursor.slice(0, -3), 'bm90IGEgY3Vyc29y', '', randomUUID()]) {
      expect(await refused({ after })).toEqual({ after: ['Not a cursor of this list'] });
    }
  });

  test('first and last must be 1 to 100, and not both', async () => {
    expect(await refused({ first: 0 })).toEqual({ first: ['Must be from 1 to 100'] });
    expect(await refused({ first: 101 })).toEqual({ first: ['Must be from 1 to 100'] });
    expect(await refused({ last: -1 })).toEqual({ last: ['Must be from 1 to 100'] });
    expect(await refused({ first: 1, last: 1 })).toEqual({ last: ['Give first or last, not both'] });
  });
});

describe('filters and orders', () => {
  let acc: TestAccount;
  const at = (m: number) => new Date(Date.UTC(2024, 0, 1, 0, m));
  let c: Record<string, string>;
  beforeAll(async () => {
    acc = await createAccount(t);
    const make = async (key: string, data: Record<string, unknown>) => [key, (await t.db.contact.create({ data: { accountId: acc.id, ...data } as never })).id] as const;
    c = Object.fromEntries(
      await Promise.all([
        make('ada', { firstName: 'ada', lastName: 'lovelace', email: 'Ada@Example.com', contactType: 'client', source: 'referral', createdAt: at(1), updatedAt: at(50) }),
        make('bob', { firstName: 'bob', lastName: 'stone', email: 'bob@example.com', contactType: 'lead', source: 'website', createdAt: at(2), updatedAt: at(40) }),
        make('cid', { firstName: 'cid', lastName: null, email: null, contactType: 'vendor', source: 'website', createdAt: at(3), updatedAt: at(30) }),
        make('dan', { firstName: 'dan', lastName: 'ada%_', email: 'dan@studio.test', contactType: 'lead', source: 'other', createdAt: at(4), updatedAt: at(20) }),
      ]),
    );
  });
  const ids = async (vars: Record<string, unknown>) => (await page(acc, { first: 100, ...vars })).ids;
  const names = (list: string[]) => list.map((id) => Object.keys(c).find((k) => c[k] === id));

  test.each([
    ['search: first, last, e-mail, "first last"; % and _ match themselves', { search: ' ADA ' }, ['dan', 'ada']],
    ['search across the space', { search: 'a lov' }, ['ada']],
    ['search with a literal %', { search: 'ada%_' }, ['dan']],
    ['types match any of the values', { types: ['client', 'vendor'] }, ['cid', 'ada']],
    ['sources', { sources: ['website'] }, ['cid', 'bob']],
    ['email: the whole address, case-insensitive', { email: 'ada@example.COM' }, ['ada']],
    ['createdAfter is inclusive, createdBefore exclusive', { createdAfter: at(2).toISOString(), createdBefore: at(4).toISOString() }, ['cid', 'bob']],
    ['updatedAfter / updatedBefore', { updatedAfter: at(30).toISOString(), updatedBefore: at(50).toISOString() }, ['cid', 'bob']],
    ['filters combine with AND', { types: ['lead'], sources: ['website'] }, ['bob']],
    ['an empty list matches nothing', { types: [] }, []],
  ])('ContactFilter %s', async (_name, filter, expected) => {
    expect(names(await ids({ filter }))).toEqual(expected);
  });

  test.each([
    [{ field: 'FIRST_NAME', direction: 'ASC' }, ['ada', 'bob', 'cid', 'dan']],
    [{ field: 'FIRST_NAME', direction: 'DESC' }, ['dan', 'cid', 'bob', 'ada']],
    [{ field: 'LAST_NAME', direction: 'ASC' }, ['dan', 'ada', 'bob', 'cid']], // no last name sorts last ascending
    [{ field: 'LAST_NAME', direction: 'DESC' }, ['cid', 'bob', 'ada', 'dan']], // ...and first descending
    [{ field: 'EMAIL', direction: 'ASC' }, ['ada', 'bob', 'dan', 'cid']],
    [{ field: 'UPDATED_AT', direction: 'ASC' }, ['dan', 'cid', 'bob', 'ada']],
    [{ field: 'CREATED_AT', direction: 'ASC' }, ['ada', 'bob', 'cid', 'dan']],
    [{ field: 'CREATED_AT', direction: 'DESC' }, ['dan', 'cid', 'bob', 'ada']],
  ])('ContactOrder %j', async (orderBy, expected) => {
    expect(names(await ids({ orderBy }))).toEqual(expected);
    // One record a page gives the same order through the cursors.
    expect(names(await forward(acc, { orderBy }, 1))).toEqual(expected);
  });

  test('a search longer than 200 characters is BAD_USER_INPUT', async () => {
    const error = errorOf(await t.gql(CONTACTS, { id: acc.id, filter: { search: 'x'.repeat(201) } }, { as: acc.member }));
    expect(error.extensions?.details).toEqual({ search: ['Must be at most 200 characters'] });
  });
});

describe('deal, invoice and submission filters and orders', () => {
  let acc: TestAccount;
  const q = (conn: string, args: string, vars: Record<string, unknown>) =>
    t.gql(`query ($id: ID!, $f: ${args}) { account(id: $id) { ${conn}(first: 100, filter: $f${'orderBy' in vars ? ', orderBy: $o' : ''}) { totalCount nodes { id } } } }`
      .replace('$f: ', '$f: ').replace(') {', `${'orderBy' in vars ? `, $o: ${conn === 'deals' ? 'DealOrder' : 'InvoiceOrder'}` : ''}) {`), { id: acc.id, f: vars.filter, o: vars.orderBy }, { as: acc.member });
  let d: Record<string, string>;
  let i: Record<string, string>;
  let s: Record<string, string>;
  let contact: string;
  let stage: string;
  let form: string;
  beforeAll(async () => {
    acc = await createAccount(t);
    contact = (await t.db.contact.create({ data: { accountId: acc.id, firstName: 'x' } })).id;
    stage = (await t.db.pipelineStage.create({ data: { accountId: acc.id, name: 's' } })).id;
    const deal = async (title: string, data: Record<string, unknown>) => [title, (await t.db.deal.create({ data: { accountId: acc.id, title, ...data } as never })).id] as const;
    d = Object.fromEntries([
      await deal('alpha', { value: 100, status: 'open', contactId: contact, stageId: stage, expectedCloseDate: new Date('2030-01-10') }),
      await deal('beta', { value: 50.5, status: 'won', expectedCloseDate: new Date('2030-01-20') }),
      await deal('gamma', { value: 999, status: 'lost', stageId: stage }),
    ]);
    const inv = async (n: string, data: Record<string, unknown>) =>
      [n, (await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: n, ...data } as never })).id] as const;
    i = Object.fromEntries([
      await inv('INV-2', { amount: 20, status: 'paid', dueDate: new Date('2030-02-01'), contactId: contact }),
      await inv('INV-1', { amount: 30, status: 'draft', dueDate: new Date('2030-01-01') }),
      await inv('INV-3', { amount: 10, status: 'sent', dueDate: new Date('2030-03-01') }),
    ]);
    form = (await t.db.leadForm.create({ data: { accountId: acc.id, name: 'f' } })).id;
    const other = (await t.db.leadForm.create({ data: { accountId: acc.id, name: 'g' } })).id;
    const sub = async (k: string, data: Record<string, unknown>) => [k, (await t.db.formSubmission.create({ data: { accountId: acc.id, data: {}, ...data } as never })).id] as const;
    s = Object.fromEntries([
      await sub('spam', { formId: form, isSpam: true }),
      await sub('lead', { formId: form, contactId: contact }),
      await sub('other', { formId: other }),
    ]);
  });
  const keysOf = (map: Record<string, string>, nodes: { id: string }[]) => nodes.map((n) => Object.keys(map).find((k) => map[k] === n.id));

  test.each([
    [{ search: 'AL' }, ['alpha']],
    [{ statuses: ['won', 'lost'] }, ['gamma', 'beta']],
    [{ stageIds: [] as string[] }, []],
    [{ minValue: 50.5, maxValue: 100 }, ['beta', 'alpha']],
    [{ expectedCloseAfter: '2030-01-10', expectedCloseBefore: '2030-01-20' }, ['alpha']],
  ])('DealFilter %j', async (filter, expected) => {
    const r = await q('deals', 'DealFilter', { filter });
    expect(keysOf(d, r.data.account.deals.nodes)).toEqual(expected);
  });

  test('DealFilter stageIds and contactId', async () => {
    expect(keysOf(d, (await q('deals', 'DealFilter', { filter: { stageIds: [stage] } })).data.account.deals.nodes)).toEqual(['gamma', 'alpha']);
    expect(keysOf(d, (await q('deals', 'DealFilter', { filter: { contactId: contact } })).data.account.deals.nodes)).toEqual(['alpha']);
  });

  test.each([
    [{ field: 'VALUE', direction: 'ASC' }, ['beta', 'alpha', 'gamma']],
    [{ field: 'EXPECTED_CLOSE_DATE', direction: 'ASC' }, ['alpha', 'beta', 'gamma']],
    [{ field: 'TITLE', direction: 'DESC' }, ['gamma', 'beta', 'alpha']],
  ])('DealOrder %j', async (orderBy, expected) => {
    const r = await q('deals', 'DealFilter', { filter: null, orderBy });
    expect(keysOf(d, r.data.account.deals.nodes)).toEqual(expected);
  });

  test('InvoiceFilter statuses, contactId, due range', async () => {
    const run = async (filter: object) => keysOf(i, (await q('invoices', 'InvoiceFilter', { filter })).data.account.invoices.nodes);
    expect(await run({ statuses: ['paid', 'sent'] })).toEqual(['INV-3', 'INV-2']);
    expect(await run({ contactId: contact })).toEqual(['INV-2']);
    expect(await run({ dueAfter: '2030-01-01', dueBefore: '2030-03-01' })).toEqual(['INV-1', 'INV-2']);
  });

  test.each([
    [{ field: 'DUE_DATE', direction: 'ASC' }, ['INV-1', 'INV-2', 'INV-3']],
    [{ field: 'AMOUNT', direction: 'DESC' }, ['INV-1', 'INV-2', 'INV-3']],
    [{ field: 'INVOICE_NUMBER', direction: 'ASC' }, ['INV-1', 'INV-2', 'INV-3']],
  ])('InvoiceOrder %j', async (orderBy, expected) => {
    const r = await q('invoices', 'InvoiceFilter', { filter: null, orderBy });
    expect(keysOf(i, r.data.account.invoices.nodes)).toEqual(expected);
  });

  test('FormSubmissionFilter formId, contactId, isSpam', async () => {
    const run = async (filter: object) => keysOf(s, (await q('formSubmissions', 'FormSubmissionFilter', { filter })).data.account.formSubmissions.nodes);
    expect(await run({ formId: form })).toEqual(['lead', 'spam']);
    expect(await run({ contactId: contact })).toEqual(['lead']);
    expect(await run({ isSpam: false })).toEqual(['other', 'lead']);
  });

  test('an id in a filter that is not a UUID is BAD_USER_INPUT', async () => {
    const error = errorOf(await q('deals', 'DealFilter', { filter: { contactId: 'nope' } }));
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', details: { contactId: ['Must be a UUID'] } });
  });
});
