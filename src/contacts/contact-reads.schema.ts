/** Query.contact · Account.contacts (docs/decisions.md §11) */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { columnSql as c, anyOf, defineCollection, likeEscape, orderInputOf, timeRanges, timeRangeSql, type TimeRanges } from '../graphql/connection.js';
import { builder } from '../graphql/builder.js';
import { readById } from '../graphql/reads.js';
import { ContactSource, ContactType, Prisma } from '../generated/prisma/client.js';
import { externalIdFilter, text } from '../validation.js';
import { ContactRef, ContactSourceEnum, ContactTypeEnum } from './contact.schema.js';

const ContactFilter = builder.inputType('ContactFilter', {
  description: 'All given conditions hold (AND); a list matches any of its values. `...After` is inclusive, `...Before` exclusive.',
  fields: (t) => ({
    search: t.string({ description: 'Case-insensitive substring of first name, last name, e-mail or "first last" (as the REST search)' }),
    types: t.field({ type: [ContactTypeEnum] }),
    sources: t.field({ type: [ContactSourceEnum] }),
    email: t.string({ description: 'The whole address, case-insensitive' }),
    externalId: t.string({ description: 'The exact external id' }),
    createdAfter: t.field({ type: 'DateTime' }),
    createdBefore: t.field({ type: 'DateTime' }),
    updatedAfter: t.field({ type: 'DateTime' }),
    updatedBefore: t.field({ type: 'DateTime' }),
  }),
});

const contactFilter = z.object({
  search: text()
    .trim()
    .max(200, 'Must be at most 200 characters')
    .nullish()
    .transform((v) => v || null),
  types: z.array(z.enum(ContactType)).nullish(),
  sources: z.array(z.enum(ContactSource)).nullish(),
  email: text().trim().max(254, 'Must be at most 254 characters').nullish(),
  externalId: externalIdFilter,
  ...timeRanges,
});
type ContactFilter = z.output<typeof contactFilter>;

/** The REST search (contactsWhere in contact.service.ts) in SQL: each ILIKE has a trigram index. */
function searchSql(search: string): Prisma.Sql {
  const s = likeEscape(search);
  const contains = `%${s}%`;
  const parts = [
    Prisma.sql`${c('first_name')} ILIKE ${contains}`,
    Prisma.sql`${c('last_name')} ILIKE ${contains}`,
    Prisma.sql`${c('email')} ILIKE ${contains}`,
    // "Ada Lov": the part before a space ends the first name, the part after begins the last name.
    ...[...s.matchAll(/ /g)].map(
      ({ index }) => Prisma.sql`(${c('first_name')} ILIKE ${`%${s.slice(0, index)}`} AND ${c('last_name')} ILIKE ${`${s.slice(index + 1)}%`})`,
    ),
  ];
  return Prisma.sql`(${Prisma.join(parts, ' OR ')})`;
}

const contactWhere = (f: ContactFilter): Prisma.Sql[] => [
  ...(f.search ? [searchSql(f.search)] : []),
  ...anyOf('contact_type', f.types, 'contact_type'),
  ...anyOf('source', f.sources, 'contact_source'),
  ...(f.email ? [Prisma.sql`lower(${c('email')}) = lower(${f.email})`] : []),
  ...(f.externalId != null ? [Prisma.sql`${c('external_id')} = ${f.externalId}`] : []),
  ...timeRangeSql(f as TimeRanges),
];

const ORDERS = {
  CREATED_AT: { column: 'created_at', type: 'timestamptz' },
  UPDATED_AT: { column: 'updated_at', type: 'timestamptz' },
  FIRST_NAME: { column: 'first_name', type: 'text' },
  LAST_NAME: { column: 'last_name', type: 'text', nullable: true },
  EMAIL: { column: 'email', type: 'text', nullable: true },
} as const;

export const contactConnection = defineCollection(
  {
    name: 'Contact',
    table: 'contacts',
    orders: ORDERS,
    orderInput: orderInputOf('Contact', Object.keys(ORDERS)),
    filter: { input: ContactFilter, schema: contactFilter, sql: contactWhere },
    counter: 'types',
    rows: (db, ids) => db.contact.findMany({ where: { id: { in: ids } } }),
  },
  ContactRef,
);

builder.prismaObjectField(AccountRef, 'contacts', contactConnection(null, (a: { id: string }) => ({ accountId: a.id, id: a.id })));

