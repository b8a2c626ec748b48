/**
 * docs/scaling.md#exact-totals: list totals (REST `total`, GraphQL `total` and `totalCount`) of an
 * account, or of one contact type or status, and of its companies, notes and tasks, are read from
 * record_counts, which triggers keep in the transaction of every write. They must stay exactly
 * count(*), however the writes interleave.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createContact as createContactRow, createContactInput } from '../../src/contacts/contact.service.js';
import { userActor } from '../../src/events/types.js';
import { ContactType, DealStatus, InvoiceStatus, Prisma } from '../../src/generated/prisma/client.js';
import { contacts, contactsPage } from '../../src/contacts/contact-reads.schema.js';
import { deals } from '../../src/deals/deal-reads.schema.js';
import { countedKeys } from '../../src/graphql/collection.js';
import { invoices } from '../../src/invoices/invoice-reads.schema.js';
import { DEAL_TRANSITIONS, INVOICE_TRANSITIONS } from '../../src/state-machines.js';
import { createAccount, createContact, createMember, unique, type TestAccount } from '../factories/index.js';
import { createTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { skipIfMissing, unsetVariables } from '../helpers/prerequisites.js';
import { countersAndRows } from '../helpers/record-counts.js';

let t: TestApp;
// The service's waits for a pool connection (2 s) and a statement (10 s) are fault bounds (docs/faults.md):
// on a busy machine 15 concurrent callers over 10 connections can outwait them and get 503s, which
// says nothing about totals. Here they are as long as the service allows.
const PATIENT = { DATABASE_POOL_TIMEOUT_MS: '60000', DATABASE_STATEMENT_TIMEOUT_MS: '600000' };
beforeAll(async () => void (t = await createTestApp({ env: PATIENT })));
afterAll(() => t?.close());

const KEYS = { contacts: Object.values(ContactType), deals: Object.values(DealStatus), invoices: Object.values(InvoiceStatus) };
type Table = keyof typeof KEYS;
/** Per table: the total of the account (`all`) and of each contact type or status. */
type Totals = Record<Table, Record<string, number>>;

/** count(*) of the account's real rows, per table and key. */
async function rowCounts(accountId: string): Promise<Totals> {
  const rows = await t.db.$queryRaw<{ table: Table; key: string; n: number }[]>`
    SELECT 'contacts' AS table, contact_type::text AS key, count(*)::int AS n FROM contacts WHERE account_id = ${accountId}::uuid GROUP BY 2
    UNION ALL SELECT 'deals', status::text, count(*)::int FROM deals WHERE account_id = ${accountId}::uuid GROUP BY 2
    UNION ALL SELECT 'invoices', status::text, count(*)::int FROM invoices WHERE account_id = ${accountId}::uuid GROUP BY 2`;
  const totals = Object.fromEntries(
    Object.entries(KEYS).map(([table, keys]) => [table, Object.fromEntries([['all', 0], ...keys.map((k) => [k, 0])])]),
  ) as Totals;
  for (const { table, key, n } of rows) {
    totals[table][key] = n;
    totals[table].all! += n;
  }
  return totals;
}

const REST_FILTER: Record<Table, string> = { contacts: 'type', deals: 'status', invoices: 'status' };
const GQL_FILTER: Record<Table, string> = { contacts: 'types', deals: 'statuses', invoices: 'statuses' };

/** What the API answers for the totals `rowCounts` gives: REST lists, GraphQL pages and connections. */
async function apiTotals(acc: TestAccount): Promise<{ rest: Totals; page: Totals; connection: Totals }> {
  const totals = () => ({ contacts: {}, deals: {}, invoices: {} }) as Totals;
  const [rest, page, connection] = [totals(), totals(), totals()];
  for (const [table, keys] of Object.entries(KEYS) as [Table, string[]][]) {
    // GraphQL: the table's totals in one document, one alias per key (`all`: no filter).
    const fields = ['all', ...keys].flatMap((key) => [
      `${key}: ${table}(accountId: $id${key === 'all' ? '' : `, ${REST_FILTER[table]}: ${key}`}) { total }`,
      `account_${key}: account(id: $id) { ${table}(first: 1${key === 'all' ? '' : `, filter: { ${GQL_FILTER[table]}: [${key}] }`}) { totalCount } }`,
    ]);
    const r = await t.gql(`query ($id: ID!) { ${fields.join(' ')} }`, { id: acc.id }, { as: acc.member });
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    for (const key of ['all', ...keys]) {
      page[table][key] = r.data[key].total;
      connection[table][key] = r.data[`account_${key}`][table].totalCount;
      const query = key === 'all' ? {} : { [REST_FILTER[table]]: key };
      const list = await t.rest('GET', `/api/v1/${table}?${new URLSearchParams({ account_id: acc.id, page_size: '1', ...query })}`, { as: acc.member });
      expect(list.status, list.text).toBe(200);
      rest[table][key] = list.body.total;
    }
  }
  return { rest, page, connection };
}

/** REST, GraphQL pages and GraphQL connections all answer count(*) for the account, each key and none. */
async function expectApiTotalsExact(acc: TestAccount) {
  const expected = await rowCounts(acc.id);
  expect(await apiTotals(acc)).toEqual({ rest: expected, page: expected, connection: expected });
}

const gqlOk = async (as: TestUser, doc: string, vars: Record<string, unknown>) => {
  const r = await t.gql(doc, vars, { as });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return Object.values(r.data)[0] as { id: string };
};

describe('totals from the counters', () => {
  test('after creates, type and status changes and deletes, REST and GraphQL totals equal count(*) for no filter, each type and each status', async () => {
    const acc = await createAccount(t);
    const contacts = [];
    for (const contactType of ['lead', 'client', 'client', 'vendor'] as const) contacts.push(await createContact(t, acc, { contactType }));
    expect((await t.rest('PATCH', `/api/v1/contacts/${contacts[0]!.id}`, { as: acc.member, body: { contact_type: 'client' } })).status).toBe(200);
    expect((await t.rest('DELETE', `/api/v1/contacts/${contacts[3]!.id}`, { as: acc.member })).status).toBe(204);
    const deal = await gqlOk(acc.member, 'mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId: acc.id, title: 'D' } });
    await gqlOk(acc.member, 'mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId: acc.id, title: 'E' } });
    await gqlOk(acc.member, 'mutation ($id: ID!) { setDealStatus(id: $id, status: won) { id } }', { id: deal.id });
    const invoice = await gqlOk(acc.member, 'mutation ($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }', { i: { accountId: acc.id, amount: 5, dueDate: '2031-01-01' } });
    await gqlOk(acc.member, 'mutation ($id: ID!) { setInvoiceStatus(id: $id, status: sent) { id } }', { id: invoice.id });

    const rows = await rowCounts(acc.id);
    expect(rows.contacts).toMatchObject({ all: 3, lead: 0, client: 3 });
    expect(rows.deals).toMatchObject({ all: 2, open: 1, won: 1 });
    const r = await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&type=client`, { as: acc.member });
    expect(r.body.total).toBe(3);
    await expectApiTotalsExact(acc);
  });

  test('totals of the account alone, or of one type or status, are read from the counters; a search or any other filter is counted', async () => {
    const acc = await createAccount(t);
    await createContact(t, acc, { contactType: 'client', firstName: 'Adalind' });
    await createContact(t, acc, { contactType: 'lead', firstName: 'Bob' });
    // Counters made wrong on purpose (in a slot of their own): a total that reads them shows it.
    await t.db.$executeRaw`INSERT INTO record_counts (account_id, table_name, key, slot, n) VALUES (${acc.id}::uuid, 'contacts', 'client', 99, 1000)`;
    const total = async (query: string) => (await t.rest('GET', `/api/v1/contacts?account_id=${acc.id}&${query}`, { as: acc.member })).body.total;
    expect(await total('')).toBe(1002);
    expect(await total('type=client')).toBe(1001);
    expect(await total('type=lead')).toBe(1);
    expect(await total('search=adal')).toBe(1); // 'l' is in no generated e-mail (hex)
    const connection = async (filter: object) =>
      (await gqlOk(acc.member, 'query ($id: ID!, $f: ContactFilter) { account(id: $id) { contacts(first: 1, filter: $f) { totalCount } } }', { id: acc.id, f: filter }) as any)
        .contacts.totalCount;
    expect(await connection({})).toBe(1002);
    expect(await connection({ types: ['client', 'lead'] })).toBe(1002);
    expect(await connection({ types: [] })).toBe(0);
    expect(await connection({ types: ['client'], search: 'adal' })).toBe(1);
    expect(await connection({ sources: ['other'] })).toBe(2);
    await t.db.$executeRaw`DELETE FROM record_counts WHERE account_id = ${acc.id}::uuid AND slot = 99`;
    expect(await total('')).toBe(2);
  });

  test("companies, notes and tasks: after creates, a batch, deletes and updates, the account's REST and GraphQL totals are read from the counters and equal count(*)", async () => {
    const acc = await createAccount(t);
    const contact = await createContact(t, acc);
    const post = async (path: string, body: object) => {
      const r = await t.rest('POST', `/api/v1/${path}`, { as: acc.member, body: { account_id: acc.id, ...body } });
      expect(r.status, JSON.stringify(r.body)).toBe(path.endsWith('batch') ? 200 : 201);
      return r.body.data;
    };
    const company = await post('companies', { name: 'Acme', domain: `acme-${unique()}.example` });
    // Names no generated (hex) domain can contain, so the search below matches one company alone.
    await post('companies/batch', { match_on: 'domain', records: ['Zephyr', 'Quill', 'Mango'].map((name) => ({ name, domain: `${name.toLowerCase()}-${unique()}.example` })) });
    const note = await post('notes', { body: 'called', contact_id: contact.id });
    await post('notes', { body: 'again', contact_id: contact.id });
    const task = await post('tasks', { title: 'call back', contact_id: contact.id });
    await post('tasks', { title: 'send the offer', contact_id: contact.id });
    for (const path of [`companies/${company.id}`, `notes/${note.id}`, `tasks/${task.id}`]) {
      expect((await t.rest('DELETE', `/api/v1/${path}`, { as: acc.member })).status).toBe(204);
    }
    expect((await t.rest('PATCH', `/api/v1/tasks/${task.id}`, { as: acc.member, body: { title: 'gone' } })).status).toBe(404);

    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
    for (const [path, n] of [['companies', 3], ['notes', 1], ['tasks', 1]] as const) {
      const page = await t.rest('GET', `/api/v1/${path}?account_id=${acc.id}`, { as: acc.member });
      expect(page.body.total, `${path}: ${JSON.stringify(page.body)}`).toBe(n);
    }
    // Read from the counters: one made wrong on purpose shows in the total, and a filtered total is counted.
    await t.db.$executeRaw`INSERT INTO record_counts (account_id, table_name, key, slot, n) VALUES (${acc.id}::uuid, 'companies', '', 99, 1000)`;
    try {
      expect((await t.rest('GET', `/api/v1/companies?account_id=${acc.id}`, { as: acc.member })).body.total).toBe(1003);
      expect((await t.rest('GET', `/api/v1/companies?account_id=${acc.id}&search=zephyr`, { as: acc.member })).body.total).toBe(1);
      const connection = await gqlOk(acc.member, 'query ($id: ID!) { account(id: $id) { companies(first: 1) { totalCount } } }', { id: acc.id }) as any;
      expect(connection.companies.totalCount).toBe(1003);
    } finally {
      await t.db.$executeRaw`DELETE FROM record_counts WHERE account_id = ${acc.id}::uuid AND slot = 99`;
    }
  });

  test('the counters serve exactly the filters {} and {type or status}', () => {
    const page = (args: object) => contactsPage.filter({ accountId: '', page: 1, pageSize: 25, sort: 'CREATED_AT', order: 'DESC', search: null, type: null, externalId: null, ...args });
    expect(countedKeys(contacts, page({}))).toEqual({ keys: null });
    expect(countedKeys(contacts, page({ type: 'client' }))).toEqual({ keys: ['client'] });
    expect(countedKeys(deals, { statuses: ['won'] })).toEqual({ keys: ['won'] });
    expect(countedKeys(invoices, { statuses: ['paid'] })).toEqual({ keys: ['paid'] });
    expect(countedKeys(contacts, page({ search: 'a' }))).toBeUndefined();
    expect(countedKeys(contacts, page({ externalId: 'x' }))).toBeUndefined();
    expect(countedKeys(contacts, { types: ['client'], sources: ['website'] })).toBeUndefined();
    expect(countedKeys(deals, { statuses: ['won'], contactId: '00000000-0000-4000-8000-000000000001' })).toBeUndefined();
    expect(countedKeys({ name: 'PipelineStage', table: 'pipeline_stages', orders: {} }, {})).toBeUndefined();
  });

  test('a write whose transaction fails leaves the counters unchanged', async () => {
    const acc = await createAccount(t);
    const deal = await t.db.deal.create({ data: { accountId: acc.id, title: 'Kept' } });
    await createContact(t, acc, { contactType: 'client' });
    const before = await countersAndRows(t.db);
    await expect(
      t.db.$transaction(async (tx) => {
        await createContactRow(tx, createContactInput.parse({ accountId: acc.id, firstName: 'Rolled', contactType: 'vendor' }), userActor(acc.owner));
        await tx.deal.update({ where: { id: deal.id }, data: { status: 'lost' } });
        await tx.contact.deleteMany({ where: { accountId: acc.id, contactType: 'client' } });
        // Inside, the counters moved with the rows.
        expect((await tx.recordCount.aggregate({ _sum: { n: true }, where: { accountId: acc.id, key: 'vendor' } }))._sum.n).toBe(1n);
        throw new Error('the rest of the change failed');
      }),
    ).rejects.toThrow('the rest of the change failed');
    expect(await countersAndRows(t.db)).toEqual(before);
  });

  test("deleting an account (its records go by cascade) leaves none of its counters, and other accounts' counters as they were", async () => {
    const [gone, kept] = [await createAccount(t), await createAccount(t)];
    for (const acc of [gone, kept]) {
      await createContact(t, acc, { contactType: 'client' });
      await t.db.deal.create({ data: { accountId: acc.id, title: 'D', status: 'won' } });
      await t.db.invoice.create({ data: { accountId: acc.id, invoiceNumber: unique('INV'), amount: 1, dueDate: new Date('2031-01-01') } });
    }
    await t.db.account.delete({ where: { id: gone.id } });
    expect(await t.db.recordCount.count({ where: { accountId: gone.id } })).toBe(0);
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
    expect(counters.filter((c) => c.startsWith(kept.id))).toHaveLength(3);
  });

  test("TRUNCATE empties the truncated tables' counters", async () => {
    const acc = await createAccount(t);
    await createContact(t, acc);
    await expect(
      t.db.$transaction(async (tx) => {
        expect(await tx.recordCount.count()).toBeGreaterThan(0);
        await tx.$executeRaw`TRUNCATE contacts, companies CASCADE`; // cascades to deals, invoices, notes and tasks
        expect(await tx.recordCount.count()).toBe(0);
        throw new Error('undo'); // the other tests' rows stay
      }),
    ).rejects.toThrow('undo');
  });
});

// ---- under concurrency ------------------------------------------------------------------------

const OPS = [
  'createContactRest', 'createContactGql', 'submitForm', 'changeType', 'changeType', 'deleteContact', 'eraseContact',
  'createDeal', 'createDeal', 'setDealStatus', 'setDealStatus', 'deleteDeal',
  'createInvoice', 'createInvoice', 'setInvoiceStatus', 'setInvoiceStatus', 'deleteInvoice',
] as const;
type Op = (typeof OPS)[number];

const ACCOUNTS = 3;
const CALLERS_PER_ACCOUNT = 5; // the owner and four members
const OPS_PER_CALLER = 140; // 3 × 5 × 140 = 2,100 operations

/**
 * One caller and the records it made: each works on its own records only, so every operation must
 * succeed (two callers deleting one record is another matter), while all of an account's callers
 * write the same counters at once.
 */
type Caller = {
  acc: TestAccount;
  as: TestUser;
  formId: string;
  contacts: string[];
  deals: Map<string, DealStatus>;
  invoices: Map<string, InvoiceStatus>;
};

let visitors = 0;
const pick = <T>(list: readonly T[], r: number): T | undefined => list[r % Math.max(1, list.length)];

async function run(caller: Caller, op: Op, r: number): Promise<void> {
  const { acc, as } = caller;
  const accountId = acc.id;
  const gql = (doc: string, vars: Record<string, unknown>, who = as) => gqlOk(who, doc, vars) as Promise<any>;
  const rest = async (method: string, path: string, body?: unknown) => {
    const result = await t.rest(method, path, { as, body });
    expect(result.status, `${op}: ${result.text}`).toBeLessThan(300);
    return result.body;
  };
  const contactType = KEYS.contacts[r % KEYS.contacts.length];
  switch (op) {
    case 'createContactRest':
      caller.contacts.push((await rest('POST', '/api/v1/contacts', { account_id: accountId, first_name: unique('R'), contact_type: contactType })).data.id);
      return;
    case 'createContactGql':
      caller.contacts.push((await gql('mutation ($i: CreateContactInput!) { createContact(input: $i) { id } }', { i: { accountId, firstName: unique('G'), contactType } })).id);
      return;
    case 'submitForm': {
      // Each visitor from an address of its own: the per-address limit is not what this test is about.
      const clientIp = `10.${++visitors >> 16}.${(visitors >> 8) & 255}.${visitors & 255}`;
      const result = await t.rest('POST', `/api/v1/forms/${caller.formId}/submit`, { body: { data: { email: `${unique('v')}@example.com` } }, clientIp });
      expect(result.status, result.text).toBe(200);
      caller.contacts.push(result.body.contact_id);
      return;
    }
    case 'changeType': {
      const id = pick(caller.contacts, r);
      if (!id) return;
      if (r % 2) await rest('PATCH', `/api/v1/contacts/${id}`, { contact_type: contactType });
      else await gql('mutation ($id: ID!, $i: UpdateContactInput!) { updateContact(id: $id, input: $i) { id } }', { id, i: { contactType } });
      return;
    }
    case 'deleteContact':
    case 'eraseContact': {
      const id = pick(caller.contacts, r);
      if (!id) return;
      caller.contacts.splice(caller.contacts.indexOf(id), 1);
      if (op === 'eraseContact') await gql('mutation ($id: ID!) { eraseContact(id: $id) { contactId } }', { id }, acc.owner);
      else await rest('DELETE', `/api/v1/contacts/${id}`);
      return;
    }
    case 'createDeal': {
      const created = r % 2
        ? (await rest('POST', '/api/v1/deals', { account_id: accountId, title: unique('D'), contact_id: pick(caller.contacts, r) ?? null })).data
        : await gql('mutation ($i: CreateDealInput!) { createDeal(input: $i) { id } }', { i: { accountId, title: unique('D') } });
      caller.deals.set(created.id, 'open');
      return;
    }
    case 'setDealStatus': {
      const [id, from] = pick([...caller.deals], r) ?? [];
      if (!id || !from) return;
      const to = pick(DEAL_TRANSITIONS[from], r)!;
      await gql('mutation ($id: ID!, $s: DealStatus!) { setDealStatus(id: $id, status: $s) { id } }', { id, s: to });
      caller.deals.set(id, to);
      return;
    }
    case 'deleteDeal': {
      const [id] = pick([...caller.deals], r) ?? [];
      if (!id) return;
      caller.deals.delete(id);
      await rest('DELETE', `/api/v1/deals/${id}`);
      return;
    }
    case 'createInvoice':
      caller.invoices.set((await gql('mutation ($i: CreateInvoiceInput!) { createInvoice(input: $i) { id } }', { i: { accountId, amount: 10, dueDate: '2031-01-01' } })).id, 'draft');
      return;
    case 'setInvoiceStatus': {
      const [id, from] = pick([...caller.invoices].filter(([, s]) => INVOICE_TRANSITIONS[s].length), r) ?? [];
      if (!id || !from) return;
      const to = pick(INVOICE_TRANSITIONS[from], r)!;
      await gql('mutation ($id: ID!, $s: InvoiceStatus!) { setInvoiceStatus(id: $id, status: $s) { id } }', { id, s: to });
      caller.invoices.set(id, to);
      return;
    }
    case 'deleteInvoice': {
      const [id] = pick([...caller.invoices].filter(([, s]) => s === 'draft'), r) ?? [];
      if (!id) return;
      caller.invoices.delete(id);
      await gql('mutation ($id: ID!) { deleteInvoice(id: $id) { id } }', { id });
    }
  }
}

/** An account, its callers (owner, member and three more members) and a form for its visitors. */
async function callersOfNewAccount(): Promise<Caller[]> {
  const acc = await createAccount(t);
  const members = await Promise.all(Array.from({ length: CALLERS_PER_ACCOUNT - 2 }, () => createMember(t, acc.id)));
  const form = await gqlOk(acc.owner, 'mutation ($i: CreateLeadFormInput!) { createLeadForm(input: $i) { id } }', {
    i: { accountId: acc.id, name: 'Contact us', fields: [{ key: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' }] },
  });
  return [acc.owner, acc.member, ...members].map((as) => ({ acc, as, formId: form.id, contacts: [], deals: new Map(), invoices: new Map() }));
}

// Real concurrency needs PostgreSQL: the embedded database runs one statement at a time.
describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('totals under concurrent writes', () => {
  test('after 2,100 concurrent writes through REST and GraphQL from 15 callers over 3 accounts, every counter equals count(*) and every API total is exact', async () => {
    const callers = (await Promise.all(Array.from({ length: ACCOUNTS }, callersOfNewAccount))).flat();
    // A plan drawn from a seed (the interleaving is the machine's): per caller, operations and a number choosing target and value.
    const plans = fc.sample(fc.array(fc.tuple(fc.constantFrom(...OPS), fc.nat()), { minLength: OPS_PER_CALLER, maxLength: OPS_PER_CALLER }), {
      seed: 20261122,
      numRuns: callers.length,
    });
    await Promise.all(callers.map(async (caller, i) => {
      for (const [op, r] of plans[i]!) await run(caller, op, r);
    }));

    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
    // Every key of every table has records somewhere: the totals checked below are not all zeros.
    const keyed = rows.filter((row) => row.split(' ')[1]! in KEYS);
    expect(new Set(keyed.map((row) => row.split(' ').slice(1, 3).join(' '))).size).toBe(Object.values(KEYS).flat().length);
    for (const acc of new Set(callers.map((c) => c.acc))) await expectApiTotalsExact(acc);
  }, 600_000); // a ceiling against a hang, not a speed the machine must reach
});

describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('counter slots', () => {
  test('writers of one account open at once each take a counter slot of their own, so none waits on another\'s counter rows', async () => {
    const acc = await createAccount(t);
    const WRITERS = 9; // one more than the 8 slots txid % 8 gave out, so two of them always shared one
    // Connections of their own: the app's pool is smaller than the writers held open at once.
    const writers = Array.from({ length: WRITERS }, () => new pg.Client({ connectionString: t.deps.db.pool!.options.connectionString }));
    try {
      await Promise.all(writers.map((w) => w.connect()));
      const slots: string[] = [];
      for (const w of writers) {
        // A writer that waited on an open one's counter rows would wait until lock_timeout and fail.
        await w.query("BEGIN; SET LOCAL lock_timeout = '5s'");
        await w.query("INSERT INTO contacts (id, account_id, first_name, updated_at) VALUES (gen_random_uuid(), $1, 'Writer', now())", [acc.id]);
        slots.push((await w.query<{ slot: string }>("SELECT current_setting('crm.counter_slot') AS slot")).rows[0]!.slot);
      }
      await Promise.all(writers.map((w) => w.query('COMMIT')));

      expect(new Set(slots).size).toBe(WRITERS);
      const { counters, rows } = await countersAndRows(t.db);
      expect(counters).toEqual(rows);
    } finally {
      await Promise.all(writers.map((w) => w.end()));
    }
  });
});

// docs/decisions.md §16: batches and upserts write through src/writes/ (one statement of CTEs); the
// statement-level triggers count their rows like any other.
const UPSERT_CONTACTS = `mutation ($a: ID!, $m: ContactMatch!, $i: [BatchContactInput!]!) {
  upsertContacts(accountId: $a, matchOn: $m, inputs: $i) { created updated unchanged failed items { status details } } }`;
const UPSERT_DEALS = 'mutation ($a: ID!, $i: [BatchDealInput!]!) { upsertDeals(accountId: $a, inputs: $i) { created updated unchanged failed } }';

describe('totals after batches and upserts', () => {
  test('after batch creates, upserts that create and change types, and batch deletes, every total equals count(*)', async () => {
    const acc = await createAccount(t);
    const emails = Array.from({ length: 6 }, () => `${unique('b')}@example.com`);
    const first = await gqlOk(acc.member, UPSERT_CONTACTS, { a: acc.id, m: 'EMAIL', i: emails.map((email) => ({ email, firstName: 'B', contactType: 'lead' })) });
    expect(first).toMatchObject({ created: 6 });
    const second = await gqlOk(acc.member, UPSERT_CONTACTS, { a: acc.id, m: 'EMAIL', i: emails.map((email, i) => ({ email, contactType: KEYS.contacts[i % KEYS.contacts.length] })) });
    expect(second).toMatchObject({ failed: 0 });
    const exts = Array.from({ length: 4 }, () => unique('deal'));
    await gqlOk(acc.member, UPSERT_DEALS, { a: acc.id, i: exts.map((externalId) => ({ externalId, title: 'D' })) });
    const ids = (await t.db.contact.findMany({ where: { accountId: acc.id }, take: 3, select: { id: true } })).map((c) => c.id);
    await gqlOk(acc.member, 'mutation ($a: ID!, $ids: [ID!]!) { deleteContacts(accountId: $a, ids: $ids) { deleted } }', { a: acc.id, ids });
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
    await expectApiTotalsExact(acc);
  });
});

describe.skipIf(skipIfMissing(unsetVariables('DATABASE_URL')))('upserts under concurrent batches', () => {
  test('50 concurrent upsert batches over overlapping keys (e-mails in any case, external ids, deals) create exactly one record per key; counters equal count(*)', async () => {
    const acc = await createAccount(t);
    // 30 batches a minute per user: five callers of ten batches each.
    const callers = await Promise.all(Array.from({ length: 5 }, () => createMember(t, acc.id)));
    const emails = Array.from({ length: 25 }, () => `${unique('race')}@example.com`);
    const exts = Array.from({ length: 25 }, () => unique('race'));
    const pick = <T>(all: T[], i: number) => all.filter((_, k) => (k * 7 + i) % 3 !== 0); // two thirds of the keys, differing per batch
    const results = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
      const as = callers[i % callers.length]!;
      const contactType = KEYS.contacts[i % KEYS.contacts.length];
      if (i % 5 === 4) return gqlOk(as, UPSERT_DEALS, { a: acc.id, i: pick(exts, i).map((externalId) => ({ externalId, title: `D${i}`, probability: i })) });
      if (i % 2 === 0) {
        return gqlOk(as, UPSERT_CONTACTS, { a: acc.id, m: 'EMAIL', i: pick(emails, i).map((email) => ({ email: i % 4 === 0 ? email.toUpperCase() : email, firstName: `E${i}`, contactType })) });
      }
      return gqlOk(as, UPSERT_CONTACTS, { a: acc.id, m: 'EXTERNAL_ID', i: pick(exts, i).map((externalId) => ({ externalId, firstName: `X${i}`, contactType })) });
    }));
    for (const r of results as unknown as { failed: number }[]) expect(r.failed).toBe(0);
    const perEmail = await t.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM contacts WHERE account_id = ${acc.id}::uuid AND email IS NOT NULL GROUP BY lower(email)`;
    expect(perEmail).toHaveLength(emails.length);
    expect(perEmail.every((row) => row.n === 1)).toBe(true);
    expect(await t.db.contact.count({ where: { accountId: acc.id, externalId: { in: exts } } })).toBe(exts.length);
    expect(await t.db.deal.count({ where: { accountId: acc.id, externalId: { in: exts } } })).toBe(exts.length);
    const created = (results as unknown as { created: number }[]).reduce((sum, r) => sum + r.created, 0);
    expect(created).toBe(emails.length + 2 * exts.length);
    expect(await t.db.event.count({ where: { accountId: acc.id, type: { in: ['contact.created', 'deal.created'] } } })).toBe(created);
    const { counters, rows } = await countersAndRows(t.db);
    expect(counters).toEqual(rows);
    await expectApiTotalsExact(acc);
  }, 600_000);
});
