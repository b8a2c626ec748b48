/** Query.search: one box for internal tools over contacts, deals and invoices (docs/decisions.md §19). */
import { z } from 'zod';
import type { Context } from '../context.js';
import { rawRead } from '../db/raw.js';
import { anyFieldMatches, anyFieldMayBe, anyFieldMayStartWith, containing, field, nameSql, searchedFields, startingWith } from '../contacts/contact-search.js';
import { likeEscape } from '../graphql/collection.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { DealRef } from '../deals/deal.schema.js';
import { InvoiceRef } from '../invoices/invoice.schema.js';
import { builder } from '../graphql/builder.js';
import { READS_BEYOND_CONTRACT } from '../graphql/reads.js';
import { checked } from '../graphql/rules.js';
import { Prisma } from '../generated/prisma/client.js';
import { text, uuid } from '../validation.js';

const TYPES = ['CONTACT', 'DEAL', 'INVOICE'] as const;
type SearchType = (typeof TYPES)[number];
const SearchTypeEnum = builder.enumType('SearchType', { values: TYPES });

const searchArgs = z.object({
  accountId: uuid,
  query: text().trim().min(1, 'Must not be blank').max(200, 'Must be at most 200 characters'),
  types: z.array(z.enum(TYPES)).nullish().transform((types) => (types?.length ? [...new Set(types)] : [...TYPES])),
  first: z.number().int().min(1, 'Must be at least 1').max(50, 'Must be at most 50'),
});
type SearchArgs = z.output<typeof searchArgs>;

type Hit = { type: SearchType; id: string; title: string; subtitle: string | null; record: object };

/** A record of a hit: the union's member is told by the fields only its model has. */
const SearchRecord = builder.unionType('SearchRecord', {
  types: [ContactRef, DealRef, InvoiceRef],
  resolveType: (record) => ('invoiceNumber' in record ? InvoiceRef : 'title' in record ? DealRef : ContactRef),
});

const SearchHitRef = builder.objectRef<Hit>('SearchHit').implement({
  description: 'A record matching the search: best matches first (exact, then prefix, then substring), newest breaking ties',
  fields: (t) => ({
    type: t.field({ type: SearchTypeEnum, resolve: (hit) => hit.type }),
    id: t.exposeID('id'),
    title: t.exposeString('title', { description: 'Contact: "first last"; deal: its title; invoice: its number' }),
    subtitle: t.exposeString('subtitle', { nullable: true, description: "Contact: e-mail, else company, else phone; deal and invoice: the contact's name" }),
    record: t.field({ type: SearchRecord, resolve: (hit) => hit.record as never }),
  }),
});

/**
 * 0 when the query is one of `fields` whole (case-insensitive), 1 when one begins with it, else 2:
 * the rank of §19 (exact, prefix, substring).
 */
function rankSql(fields: Prisma.Sql[], query: string): Prisma.Sql {
  return Prisma.sql`CASE WHEN lower(CAST(${query} AS text)) IN (${Prisma.join(fields.map((f) => Prisma.sql`lower(${f})`))}) THEN 0
    WHEN ${Prisma.join(fields.map((f) => Prisma.sql`${f} ILIKE ${startingWith(query)}`), ' OR ')} THEN 1 ELSE 2 END`;
}

const contactName = (alias: string) => Prisma.sql`(SELECT btrim(${nameSql('k')}) FROM contacts k WHERE k.account_id = ${field(alias, 'account_id')} AND k.id = ${field(alias, 'contact_id')})`;

/**
 * Each type's best `first` matches (rank, newest first), from three bounded reads rather than a rank
 * for every match (a common fragment matches a tenth of an account; BENCHMARKS.md, "Query.search in
 * bounded reads"): the newest `first` exact matches, the newest `first` exact or prefix ones, and
 * the newest `first` of all. The first two find their candidates through the trigram index by the
 * words a field may be or begin; every read stops at `first` rows, so a walk of the account's
 * newest rows serves a common fragment. Together they hold the answer: with e exact matches in it,
 * it needs the newest `first` - e prefix ones, and the newest `first` exact or prefix matches hold
 * at least that many (likewise for substring matches). Deals and invoices match their own title or
 * number here, not their contact's name: the contact is a hit of its own.
 */
function hitsSql(type: SearchType, account: Prisma.Sql, query: string, first: number): Prisma.Sql {
  const own = (column: string) => ({
    is: Prisma.sql`${field('r', column)} ILIKE ${likeEscape(query)}`,
    startsWith: Prisma.sql`${field('r', column)} ILIKE ${startingWith(query)}`,
    contains: Prisma.sql`${field('r', column)} ILIKE ${containing(query)}`,
    rank: rankSql([field('r', column)], query),
    title: field('r', column),
    subtitle: contactName('r'),
  });
  const candidates = {
    CONTACT: {
      table: 'contacts',
      is: anyFieldMayBe('r', query),
      startsWith: anyFieldMayStartWith('r', query),
      contains: anyFieldMatches('r', query),
      rank: rankSql([...searchedFields('r'), field('r', 'first_name'), field('r', 'last_name')], query),
      title: Prisma.sql`btrim(${nameSql('r')})`,
      subtitle: Prisma.sql`coalesce(r.email, r.company, r.phone)`,
    },
    DEAL: { table: 'deals', ...own('title') },
    INVOICE: { table: 'invoices', ...own('invoice_number') },
  }[type];
  const table = Prisma.raw(candidates.table);
  const newest = (where: Prisma.Sql) =>
    Prisma.sql`(SELECT r.id, r.created_at, ${candidates.rank} AS rank FROM ${table} r
      WHERE r.account_id = ${account} AND ${where} ORDER BY r.created_at DESC, r.id DESC LIMIT ${first})`;
  // UNION, not UNION ALL: a row can be read by more than one. The subtitle (a contact's name) is
  // read for the rows kept, not for every match.
  return Prisma.sql`SELECT CAST(${type} AS text) AS type, h.id, h.rank, h.created_at, ${candidates.title} AS title, ${candidates.subtitle} AS subtitle
    FROM (${newest(Prisma.sql`${candidates.is} AND ${candidates.rank} = 0`)}
          UNION ${newest(Prisma.sql`${candidates.startsWith} AND ${candidates.rank} < 2`)}
          UNION ${newest(candidates.contains)}) h
    JOIN ${table} r ON r.account_id = ${account} AND r.id = h.id`;
}

async function search(ctx: Context, { accountId, query, types, first }: SearchArgs): Promise<Hit[]> {
  const db = ctx.reader.$replica();
  const account = Prisma.sql`CAST(${accountId} AS uuid)`;
  const union = Prisma.join(
    types.map((type) => Prisma.sql`(${hitsSql(type, account, query, first)})`),
    ' UNION ALL ',
  );
  const found = await rawRead<{ type: SearchType; id: string; title: string; subtitle: string | null }>(db, Prisma.sql`
    SELECT type, id::text, title, subtitle FROM (${union}) hits ORDER BY rank, created_at DESC, id DESC LIMIT ${first}`);
  const ids = (type: SearchType) => found.filter((h) => h.type === type).map((h) => h.id);
  const where = (type: SearchType) => ({ where: { accountId, id: { in: ids(type) } } });
  const [contacts, deals, invoices] = await Promise.all([
    ids('CONTACT').length ? db.contact.findMany(where('CONTACT')) : [],
    ids('DEAL').length ? db.deal.findMany(where('DEAL')) : [],
    ids('INVOICE').length ? db.invoice.findMany(where('INVOICE')) : [],
  ]);
  const records = new Map<string, object>([...contacts, ...deals, ...invoices].map((r) => [r.id, r]));
  // A record deleted between the two reads is left out.
  return found.flatMap((h) => (records.has(h.id) ? [{ ...h, record: records.get(h.id)! }] : []));
}

builder.queryField('search', (t) =>
  t.field({
    type: [SearchHitRef],
    description:
      'Contacts (name, e-mail, company, phone), deals (title) and invoices (number) containing `query`, case-insensitive. For people: an API key searches each list with its `search` argument.',
    args: {
      accountId: t.arg.id({ required: true }),
      query: t.arg.string({ required: true }),
      types: t.arg({ type: [SearchTypeEnum], description: 'All three when left out' }),
      first: t.arg.int({ defaultValue: 10, description: '1 to 50' }),
    },
    rules: { access: 'member', input: searchArgs, limit: READS_BEYOND_CONTRACT },
    resolve: (_root, _args, ctx, info) => search(ctx, checked<SearchArgs>(info).input),
  }),
);
