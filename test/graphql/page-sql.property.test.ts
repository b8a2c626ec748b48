/**
 * A list page is one SQL statement built from its collection's declaration (src/graphql/page.ts,
 * src/graphql/collection.ts). Prisma's findMany + count over the same filter written as a Prisma
 * `where` (below, independently) must answer the same page: the same rows in the same order
 * (created_at desc, then id desc), the same total. Checked for random
 * filters (contacts: search with spaces, %, _ and \, and type; deals and invoices: status), page
 * sizes, page positions (past the end too) and selections of relations, over a few hundred rows
 * whose created_at values are deliberately tied. On the run's database and, when that is
 * PostgreSQL, on the embedded one as well (CI runs on PostgreSQL only).
 *
 * Runs are seeded and bounded, so a failure reproduces; PAGE_SQL_RUNS and PAGE_SQL_SEED override them.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { contacts, contactsPage } from '../../src/contacts/contact-reads.schema.js';
import { openDatabase, type Database } from '../../src/db/client.js';
import { applyMigrations } from '../../src/db/migrate.js';
import { deals, dealsPage } from '../../src/deals/deal-reads.schema.js';
import { ContactType, DealStatus, InvoiceStatus, Prisma, type PrismaClient } from '../../src/generated/prisma/client.js';
import type { Collection } from '../../src/graphql/collection.js';
import { NEWEST_FIRST } from '../../src/graphql/page.js';
import { planOf, readSlices } from '../../src/graphql/list.js';
import { moneyOf } from '../../src/graphql/scalars.js';
import { invoices, invoicesPage } from '../../src/invoices/invoice-reads.schema.js';
import { getDatamodel } from '../../src/generated/pothos-types.js';
import { cloneDatabase } from '../helpers/database.js';

const SEED = Number(process.env.PAGE_SQL_SEED ?? 20240611);
const RUNS = Number(process.env.PAGE_SQL_RUNS ?? 80);
const property = { seed: SEED, numRuns: RUNS };
/** A longer hunt (PAGE_SQL_RUNS) gets the time it needs. */
const TIMEOUT = 30_000 + RUNS * 100;

const ROWS = 300; // per model in the account listed; a few of each in a second account
/** Twelve instants for hundreds of rows: most page boundaries fall inside a tie. */
const INSTANTS = Array.from({ length: 12 }, (_, i) => new Date(Date.UTC(2024, 0, 1) + i * 60_000));
/** Pieces of names, e-mails and searches: the wildcards and the space are the interesting ones. */
const PIECES = ['Ada', 'ada', 'Lo', 've', 'lace', ' ', '%', '_', '\\', 'a', 'B', 'é', 'É', '50', 'x', '.'];

const text = (min: number) => fc.array(fc.constantFrom(...PIECES), { minLength: min, maxLength: 4 }).map((p) => p.join(''));
const sample = <T>(arb: fc.Arbitrary<T>, n: number, offset: number) => fc.sample(arb, { seed: SEED + offset, numRuns: n });
/** n distinct random (v4) ids: unlike the default uuid(7), their order has nothing to do with insertion order. */
const uuids = (n: number, offset: number) => sample(fc.uniqueArray(fc.uuid({ version: 4 }), { minLength: n, maxLength: n }), 1, offset)[0]!;

type Seeded = { accountId: string };

/** Two accounts; the first gets ROWS contacts, deals and invoices, the second a few of each. */
async function seed(db: PrismaClient): Promise<Seeded> {
  const owners = uuids(2, 100);
  const [listed, other] = await Promise.all(
    ['Listed', 'Other'].map(async (name, i) => {
      const owner = await db.user.create({ data: { id: owners[i]! } });
      return db.account.create({ data: { name, ownerId: owner.id } });
    }),
  );
  for (const [n, account, offset] of [[ROWS, listed!, 0], [20, other!, 50]] as const) {
    const accountId = account.id;
    const at = fc.constantFrom(...INSTANTS);
    const [contactIdsFor, dealIds, invoiceIds] = [1, 2, 3].map((k) => uuids(n, offset + 10 + k));
    const contacts = sample(
      fc.record({
        firstName: text(1),
        lastName: fc.option(text(1), { nil: null }),
        email: fc.option(fc.tuple(text(1), text(1)).map(([a, b]) => `${a}@${b}.example`), { nil: null }),
        contactType: fc.constantFrom(...Object.values(ContactType)),
        createdAt: at,
      }),
      n,
      offset + 1,
    ).map((c, i) => ({ ...c, accountId, id: contactIdsFor![i]! }));
    await db.contact.createMany({ data: contacts });
    const contactIds = (await db.contact.findMany({ where: { accountId }, select: { id: true } })).map((c) => c.id);
    const stageIds = [];
    for (let i = 0; i < 4; i++) stageIds.push((await db.pipelineStage.create({ data: { accountId, name: `S${i}`, position: i } })).id);
    const linked = (ids: string[]) => fc.option(fc.constantFrom(...ids), { nil: null });
    const money = fc.integer({ min: 0, max: 99_999_999 }).map((cents) => new Prisma.Decimal(cents).div(100));
    await db.deal.createMany({
      data: sample(
        fc.record({
          title: text(1),
          status: fc.constantFrom(...Object.values(DealStatus)),
          contactId: linked(contactIds),
          stageId: linked(stageIds),
          value: money,
          probability: fc.double({ min: 0, max: 100, noNaN: true }),
          expectedCloseDate: fc.option(fc.constantFrom(new Date('2027-02-28'), new Date('2024-02-29')), { nil: null }),
          createdAt: at,
        }),
        n,
        offset + 2,
      ).map((d, i) => ({ ...d, accountId, id: dealIds![i]! })),
    });
    await db.invoice.createMany({
      data: sample(
        fc.record({
          status: fc.constantFrom(...Object.values(InvoiceStatus)),
          contactId: linked(contactIds),
          amount: money,
          dueDate: fc.constantFrom(new Date('2027-01-31'), new Date('2024-02-29')),
          createdAt: at,
        }),
        n,
        offset + 3,
      ).map((inv, i) => ({ ...inv, accountId, id: invoiceIds![i]!, invoiceNumber: `P-${i}` })),
    });
  }
  return { accountId: listed!.id };
}

/** A page size, a spot among the pages (the first to one past the last), and whether the total is asked for. */
const position = fc.record({ pageSize: fc.integer({ min: 1, max: 100 }), spot: fc.nat(), withTotal: fc.boolean() });
type Position = { pageSize: number; spot: number; withTotal: boolean };

/** What the Prisma plugin hands a page for a selection: `{}`, or `include` of the to-one relations selected. */
const selection = (relations: string[]) =>
  fc.subarray(relations).map((picked) => (picked.length ? { include: Object.fromEntries(picked.map((r) => [r, true])) } : {}));

type Model = 'Contact' | 'Deal' | 'Invoice';
type Case = { where: object; filter: object; page: number; pageSize: number; withTotal: boolean; query: Record<string, unknown> };
const collections: Record<Model, Collection> = { Contact: contacts, Deal: deals, Invoice: invoices };

/**
 * The contacts search as Prisma `where`, the reference the declaration's SQL is checked against:
 * a case-insensitive substring of first name, last name or e-mail, or across a space the end of
 * the first name and the beginning of the last name; `%`, `_` and `\` match themselves.
 */
function contactsWhere(args: { accountId: string; type?: ContactType | null; search?: string | null }): Prisma.ContactWhereInput {
  const where: Prisma.ContactWhereInput = { accountId: args.accountId };
  if (args.type) where.contactType = args.type;
  const search = args.search?.replace(/[\\%_]/g, '\\$&');
  if (search) {
    const contains = { contains: search, mode: 'insensitive' as const };
    const acrossTheSpace = [...search.matchAll(/ /g)].map(({ index }) => ({
      firstName: { endsWith: search.slice(0, index), mode: 'insensitive' as const },
      lastName: { startsWith: search.slice(index + 1), mode: 'insensitive' as const },
    }));
    where.OR = [{ firstName: contains }, { lastName: contains }, { email: contains }, ...acrossTheSpace];
  }
  return where;
}
type Stats = { full: number; partial: number; pastTheEnd: number };

const delegateOf = (db: PrismaClient, model: Model) => ({ Contact: db.contact, Deal: db.deal, Invoice: db.invoice })[model] as never;
const ids = (nodes: unknown[]) => nodes.map((n) => (n as { id: string }).id);
/**
 * Rows as the API answers them: money through `moneyOf`, as its fields read it (the page keeps
 * the exact text PostgreSQL sent, Prisma a Decimal); every other value as it is.
 */
const answered = (nodes: unknown[]): unknown[] =>
  nodes.map((node) => Object.fromEntries(Object.entries(node as Record<string, unknown>).map(([key, value]) => [
    key,
    Prisma.Decimal.isDecimal(value) || (typeof value === 'string' && MONEY_FIELDS.has(key)) ? moneyOf(value as string)
    : value && typeof value === 'object' && !(value instanceof Date) ? answered([value])[0]
    : value,
  ])));
/** Every Decimal column of the data model: the page reads money as PostgreSQL's text. */
const MONEY_FIELDS = new Set(
  Object.values(getDatamodel().datamodel.models).flatMap((model) => model.fields.filter((f) => f.type === 'Decimal').map((f) => f.name)),
);

/** Prisma's own paging of `where`: the reference. */
async function findPage(delegate: { findMany(args: object): Promise<unknown[]>; count(args: object): Promise<number> }, c: Case) {
  const [nodes, total] = await Promise.all([
    delegate.findMany({ ...c.query, where: c.where, orderBy: NEWEST_FIRST, skip: (c.page - 1) * c.pageSize, take: c.pageSize }),
    c.withTotal ? delegate.count({ where: c.where }) : 0,
  ]);
  return { nodes, total };
}

/**
 * Both on one page: the declaration's `filter` and the Prisma `where` that says the same.
 * Returns Prisma's page.
 */
async function expectSamePage(db: PrismaClient, model: Model, where: object, filter: object, p: Position, query: Record<string, unknown>, stats: Stats) {
  const matching = await (delegateOf(db, model) as { count(args: object): Promise<number> }).count({ where });
  const page = 1 + (p.spot % (Math.ceil(matching / p.pageSize) + 1));
  const c: Case = { where, filter, page, pageSize: p.pageSize, withTotal: p.withTotal, query };
  const label = `${model} ${JSON.stringify(c)}`; // the exact case, for a counterexample's report
  const accountId = (where as { accountId: string }).accountId;
  const account = { accountId, id: accountId };
  const newestFirst = { field: 'CREATED_AT', direction: 'DESC' as const };
  const plan = planOf(collections[model], null, account, { filter, order: newestFirst, size: c.pageSize, offset: (c.page - 1) * c.pageSize, cursorKey: Buffer.alloc(32) });
  const [slice] = await readSlices(db, plan, [account], { total: c.withTotal, rows: true, nodes: c.query });
  const fast = slice && { nodes: slice.rows.map((r) => r.node), total: slice.total };
  expect(fast, `the page's statement takes ${label}`).not.toBeNull();
  const prisma = await findPage(delegateOf(db, model), c);
  expect(ids(fast!.nodes), `the same rows in the same order: ${label}`).toEqual(ids(prisma.nodes));
  expect(fast!.total, `the same total: ${label}`).toBe(prisma.total);
  expect(answered(fast!.nodes), `the same values, relations included: ${label}`).toEqual(answered(prisma.nodes));
  if (prisma.nodes.length === 0) stats.pastTheEnd++;
  else if (prisma.nodes.length < c.pageSize) stats.partial++;
  else stats.full++;
  return prisma;
}

/** Not vacuous: full pages, partial last pages and pages past the end were all compared. */
function expectVaried(stats: Stats) {
  expect(stats.full).toBeGreaterThan(RUNS / 10);
  expect(stats.partial).toBeGreaterThan(0);
  expect(stats.pastTheEnd).toBeGreaterThan(0);
}

type Target = { name: string; open(): Promise<{ db: PrismaClient; close(): Promise<void> }> };

/** An in-memory embedded database, migrated (the template is PostgreSQL in such a run). */
async function embedded() {
  const database: Database = await openDatabase({ dataDir: 'memory://' });
  await applyMigrations(database);
  return { db: database.prisma, close: () => database.close() };
}

const template = inject('template');
const targets: Target[] = [
  {
    name: template.kind === 'postgres' ? 'PostgreSQL' : 'the embedded database',
    open: async () => {
      const { db, drop } = await cloneDatabase(template);
      return { db: db.prisma, close: drop };
    },
  },
  ...(template.kind === 'postgres' ? [{ name: 'the embedded database', open: embedded }] : []),
];

describe.each(targets)('a collection\'s page statement and Prisma answer the same pages, on $name', (target) => {
  let db: PrismaClient;
  let close: () => Promise<void>;
  let accountId: string;

  beforeAll(async () => {
    ({ db, close } = await target.open());
    ({ accountId } = await seed(db));
  });
  afterAll(() => close?.());

  it('the seeded rows tie on created_at, so the id decides the order inside every tie', async () => {
    for (const table of ['contacts', 'deals', 'invoices']) {
      const [row] = await db.$queryRawUnsafe<{ rows: number; instants: number }[]>(
        `SELECT count(*)::int AS rows, count(DISTINCT created_at)::int AS instants FROM ${table} WHERE account_id = $1::uuid`,
        accountId,
      );
      expect(row!.rows).toBe(ROWS);
      expect(row!.instants).toBeLessThanOrEqual(INSTANTS.length);
    }
  });

  it('contacts: any search (spaces, %, _, \\) and type, page and page size', async () => {
    const stats: Stats = { full: 0, partial: 0, pastTheEnd: 0 };
    let searchesFound = 0;
    const names = await db.contact.findMany({ where: { accountId }, select: { firstName: true, lastName: true } });
    const padded = fc.tuple(fc.constantFrom('', ' ', '  '), text(0), fc.constantFrom('', ' ')).map((p) => p.join(''));
    // "first last" across the space: the end of a first name, a space, then a piece of the last name
    // (its beginning, which matches, or its middle, which must not match through this clause).
    const acrossTheSpace = fc.tuple(fc.nat(), fc.nat(), fc.nat(), fc.nat()).map(([i, a, b, c]) => {
      const { firstName, lastName } = names[i % names.length]!;
      const last = lastName ?? '';
      const from = b % (last.length + 1);
      return `${firstName.slice(a % (firstName.length + 1))} ${last.slice(from, from + 1 + (c % (last.length + 1)))}`;
    });
    const search = fc.oneof(padded, acrossTheSpace);
    const filter = fc.record({
      search: fc.option(search, { nil: undefined }),
      type: fc.option(fc.constantFrom(...Object.values(ContactType)), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(filter, position, selection([]), async (f, p, query) => {
        const args = contactsPage.input.parse({ accountId, ...f });
        const page = await expectSamePage(db, 'Contact', contactsWhere(args as never), contactsPage.filter(args), p, query, stats);
        if (args.search && page.nodes.length > 0) searchesFound++;
      }),
      property,
    );
    expectVaried(stats);
    expect(searchesFound).toBeGreaterThan(0);
  }, TIMEOUT);

  it('deals: any status, page and page size, with or without contact and stage', async () => {
    const stats: Stats = { full: 0, partial: 0, pastTheEnd: 0 };
    const status = fc.option(fc.constantFrom(...Object.values(DealStatus)), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(status, position, selection(['contact', 'stage']), async (s, p, query) => {
        const args = dealsPage.input.parse({ accountId, status: s });
        await expectSamePage(db, 'Deal', { accountId, status: args.status ?? undefined }, dealsPage.filter(args), p, query, stats);
      }),
      property,
    );
    expectVaried(stats);
  }, TIMEOUT);

  it('invoices: any status, page and page size, with or without contact', async () => {
    const stats: Stats = { full: 0, partial: 0, pastTheEnd: 0 };
    const status = fc.option(fc.constantFrom(...Object.values(InvoiceStatus)), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(status, position, selection(['contact']), async (s, p, query) => {
        const args = invoicesPage.input.parse({ accountId, status: s });
        await expectSamePage(db, 'Invoice', { accountId, status: args.status ?? undefined }, invoicesPage.filter(args), p, query, stats);
      }),
      property,
    );
    expectVaried(stats);
  }, TIMEOUT);
});
