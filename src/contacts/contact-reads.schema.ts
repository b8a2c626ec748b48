/** The contacts collection (docs/fields.md#adding-a-filter) · Query.contacts · Account.contacts (docs/decisions.md §3, §11) */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { anyOf, col as c, filtersOf, timeRanges, TIME_ORDERS, type Collection } from '../graphql/collection.js';
import { defineCollection, orderInputOf } from '../graphql/connection.js';
import { builder } from '../graphql/builder.js';
import { pageField } from '../graphql/page.js';
import { ContactSource, ContactType, Prisma } from '../generated/prisma/client.js';
import { externalIdFilter, searchText, text } from '../validation.js';
import { contactMatches } from './contact-search.js';
import { ContactRef, ContactSourceEnum, ContactTypeEnum } from './contact.schema.js';
import { listContactsArgs, type ListContactsArgs } from './contact.service.js';

const ORDERS = {
  ...TIME_ORDERS,
  FIRST_NAME: { column: 'first_name', type: 'text' },
  LAST_NAME: { column: 'last_name', type: 'text', nullable: true },
  EMAIL: { column: 'email', type: 'text', nullable: true },
} as const;

export const contacts = {
  name: 'Contact',
  model: 'Contact',
  table: 'contacts',
  json: true,
  orders: ORDERS,
  orderInput: orderInputOf('Contact', Object.keys(ORDERS)),
  filter: filtersOf('ContactFilter', 'All given conditions hold (AND); a list matches any of its values. `...After` is inclusive, `...Before` exclusive.', {
    search: {
      field: (t) => t.string({ description: 'Case-insensitive substring of first name, last name, e-mail or "first last" (as the REST search)' }),
      schema: searchText,
      sql: (v: string) => contactMatches('t', v),
    },
    types: { field: (t) => t.field({ type: [ContactTypeEnum] }), schema: z.array(z.enum(ContactType)).nullish(), sql: anyOf('contact_type', 'contact_type') },
    sources: { field: (t) => t.field({ type: [ContactSourceEnum] }), schema: z.array(z.enum(ContactSource)).nullish(), sql: anyOf('source', 'contact_source') },
    email: {
      field: (t) => t.string({ description: 'The whole address, case-insensitive' }),
      schema: text().trim().max(254, 'Must be at most 254 characters').nullish(),
      sql: (v: string) => (v ? [Prisma.sql`lower(${c('email')}) = lower(${v})`] : []),
    },
    externalId: { field: (t) => t.string({ description: 'The exact external id' }), schema: externalIdFilter, sql: (v: string) => Prisma.sql`${c('external_id')} = ${v}` },
    ...timeRanges(),
  }),
  counter: 'types',
} satisfies Collection;

/** The page's arguments as the collection's filter (REST's GET /contacts). */
export const contactsPageFilter = (a: ListContactsArgs) => ({ search: a.search, types: a.type ? [a.type] : null, externalId: a.externalId, email: a.email });

pageField(
  'contacts',
  contacts,
  (a) => ({ search: a.string(), type: a({ type: ContactTypeEnum }), externalId: a.string(), email: a.string({ description: 'The whole address, case-insensitive' }) }),
  listContactsArgs,
  contactsPageFilter,
  'CONTACTS_READ',
);

const contactConnection = defineCollection(contacts, ContactRef);
builder.prismaObjectField(AccountRef, 'contacts', contactConnection(null, (a: { id: string }) => ({ accountId: a.id, id: a.id })));
