/** Query.search: one box for internal tools over contacts, deals, invoices, companies, notes and tasks (docs/decisions.md §19, §21). */
import { z } from 'zod';
import type { Context } from '../context.js';
import { rawRead } from '../db/raw.js';
import { NoteRef } from '../activities/note.schema.js';
import { TaskRef } from '../activities/task.schema.js';
import { CompanyRef } from '../companies/company.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { DealRef } from '../deals/deal.schema.js';
import { InvoiceRef } from '../invoices/invoice.schema.js';
import { builder } from '../graphql/builder.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { checked } from '../graphql/rules.js';
import { selects } from '../graphql/selection.js';
import { Prisma } from '../generated/prisma/client.js';
import { text, uuid } from '../validation.js';
import { searchSql, SEARCH_TYPES as TYPES, type SearchType } from './search-sql.js';

const SearchTypeEnum = builder.enumType('SearchType', { values: TYPES });

const searchArgs = z.object({
  accountId: uuid,
  query: text().trim().min(1, 'Must not be blank').max(200, 'Must be at most 200 characters'),
  types: z.array(z.enum(TYPES)).nullish().transform((types) => (types?.length ? [...new Set(types)] : [...TYPES])),
  first: z.number().int().min(1, 'Must be at least 1').max(50, 'Must be at most 50'),
});
type SearchArgs = z.output<typeof searchArgs>;

/** A hit; `record` is read only when the query selects it. */
type Hit = { type: SearchType; id: string; title: string; subtitle: string | null; record?: object };

/** Each type's GraphQL type and how its records are read by id. */
const RECORDS = {
  CONTACT: { ref: ContactRef, read: (db: Reader) => db.contact },
  DEAL: { ref: DealRef, read: (db: Reader) => db.deal },
  INVOICE: { ref: InvoiceRef, read: (db: Reader) => db.invoice },
  COMPANY: { ref: CompanyRef, read: (db: Reader) => db.company },
  NOTE: { ref: NoteRef, read: (db: Reader) => db.note },
  TASK: { ref: TaskRef, read: (db: Reader) => db.task },
} as const;
type Reader = ReturnType<Context['reader']['$replica']>;

// Which type a hit's record is, told when it is read: models share field names (a deal's and a
// task's `title`), so the record's fields cannot tell it.
const typeOfRecord = new WeakMap<object, SearchType>();

const SearchRecord = builder.unionType('SearchRecord', {
  types: TYPES.map((type) => RECORDS[type].ref),
  resolveType: (record) => RECORDS[typeOfRecord.get(record)!].ref,
});

const SearchHitRef = builder.objectRef<Hit>('SearchHit').implement({
  description: 'A record matching the search: best matches first (exact, then prefix, then substring), newest breaking ties',
  fields: (t) => ({
    type: t.field({ type: SearchTypeEnum, resolve: (hit) => hit.type }),
    id: t.exposeID('id'),
    title: t.exposeString('title', {
      description: 'Contact: "first last"; deal and task: its title; invoice: its number; company: its name; note: its first line that is not blank, at most 100 characters',
    }),
    subtitle: t.exposeString('subtitle', {
      nullable: true,
      description: "Contact: e-mail, else company, else phone; deal and invoice: the contact's name; company: its domain; note and task: its contact's name, else its deal's title, else its company's name",
    }),
    record: t.field({ type: SearchRecord, resolve: (hit) => hit.record as never }),
  }),
});

/**
 * The hits, best first, from one statement; when `withRecords` (the query selects `record`), each
 * hit's record too, read by id per type: a search box that shows titles alone reads no rows twice.
 */
async function search(ctx: Context, { accountId, query, types, first }: SearchArgs, withRecords: boolean): Promise<Hit[]> {
  const db = ctx.reader.$replica();
  const found = await rawRead<{ type: SearchType; id: string; title: string; subtitle: string | null }>(
    db,
    searchSql(types, Prisma.sql`CAST(${accountId} AS uuid)`, query, first),
  );
  if (!withRecords) return found;
  const records = new Map<string, object>();
  await Promise.all(
    types.map(async (type) => {
      const ids = found.filter((h) => h.type === type).map((h) => h.id);
      if (!ids.length) return;
      const rows: object[] = await (RECORDS[type].read(db) as { findMany(args: object): Promise<object[]> }).findMany({ where: { accountId, id: { in: ids } } });
      for (const row of rows) {
        typeOfRecord.set(row, type);
        records.set((row as { id: string }).id, row);
      }
    }),
  );
  // A record deleted between the two reads is left out.
  return found.flatMap((h) => (records.has(h.id) ? [{ ...h, record: records.get(h.id)! }] : []));
}

builder.queryField('search', (t) =>
  t.field({
    type: [SearchHitRef],
    description:
      'Contacts (name, e-mail, company, phone), deals (title), invoices (number), companies (name, domain), notes (body) and tasks (title) containing `query`, case-insensitive. For people: an API key searches each list with its `search` argument.',
    args: {
      accountId: t.arg.id({ required: true }),
      query: t.arg.string({ required: true }),
      types: t.arg({ type: [SearchTypeEnum], description: 'All six when left out' }),
      first: t.arg.int({ defaultValue: 10, description: '1 to 50' }),
    },
    rules: { access: 'member', input: searchArgs, limit: READS_BEYOND_CONTRACT },
    resolve: (_root, _args, ctx, info) => search(ctx, checked<SearchArgs>(info).input, selects(info, 'record')),
  }),
);
