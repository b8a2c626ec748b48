/** The contacts collection (docs/fields.md#adding-a-filter) · Query.contacts · Query.contact · Account.contacts (docs/decisions.md §3, §11) */
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { anyOf, col as c, EXTERNAL_ID, filtersOf, idIn, oneOrMore, ownerMe, OWNER_ID, timeRanges, TIME_ORDERS, type Collection } from '../graphql/collection.js';
import { defineCollection, orderInputOf } from '../graphql/connection.js';
import { CUSTOM_FIELDS } from '../graphql/custom-field-filter.js';
import { CONTACT_MODEL } from './contact.model.js';
import { builder } from '../graphql/builder.js';
import { pageField } from '../graphql/page.js';
import { readById } from '../graphql/reads.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { ContactSource, ContactType, Prisma } from '../generated/prisma/client.js';
import { lookupKey, searchText } from '../validation.js';
import { contactMatches } from './contact-search.js';
import { ContactRef, ContactSourceEnum, ContactTypeEnum } from './contact.schema.js';

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
  orderInput: orderInputOf('Contact', Object.keys(ORDERS), { custom: true }),
  custom: CONTACT_MODEL,
  filter: filtersOf('ContactFilter', {
    search: {
      field: (t) => t.string({ description: 'Case-insensitive substring of first name, last name, e-mail or "first last"' }),
      schema: searchText,
      sql: (v: string) => contactMatches('t', v),
      page: 'search',
    },
    types: oneOrMore(ContactTypeEnum, z.enum(ContactType), anyOf('contact_type', 'contact_type'), { page: 'type' }),
    sources: oneOrMore(ContactSourceEnum, z.enum(ContactSource), anyOf('source', 'contact_source'), { page: 'source' }),
    externalId: EXTERNAL_ID,
    email: {
      field: (t) => t.string({ description: 'The whole address, case-insensitive' }),
      schema: lookupKey(254),
      sql: (v: string) => Prisma.sql`lower(${c('email')}) = lower(${v})`,
      page: 'email',
    },
    ownerId: OWNER_ID,
    companyId: idIn('company_id', 'companyId'),
    customFields: CUSTOM_FIELDS,
    ...timeRanges(),
  }),
  counter: 'types',
  narrow: (filter, ctx) => ownerMe(filter, ctx),
} satisfies Collection;

/** Query.contacts: REST's GET /contacts. */
export const contactsPage = pageField('contacts', contacts, 'CONTACTS_READ');

export const contactConnection = defineCollection(contacts, ContactRef);
builder.prismaObjectField(AccountRef, 'contacts', contactConnection(null));

/** Query.contact: REST's GET /contacts/{id}. */
readById('contact', 'Contact', (db) => db.contact, 'CONTACTS_READ', READS_BEYOND_CONTRACT, contacts);
