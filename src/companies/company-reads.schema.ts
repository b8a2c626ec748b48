/** The companies collection (docs/fields.md#adding-a-filter) · Query.companies · Query.company · Account.companies · Company.contacts · Company.deals · Contact.linkedCompany · Deal.company (docs/decisions.md §21) */
import { AccountRef } from '../accounts/account.schema.js';
import { contactConnection } from '../contacts/contact-reads.schema.js';
import { ContactRef } from '../contacts/contact.schema.js';
import { dealConnection } from '../deals/deal-reads.schema.js';
import { DealRef } from '../deals/deal.schema.js';
import { builder } from '../graphql/builder.js';
import { col as c, EXTERNAL_ID, filtersOf, idIn, likeEscape, PLANNED_EACH_TIME, timeRanges, TIME_ORDERS, type Collection } from '../graphql/collection.js';
import { defineCollection, orderInputOf } from '../graphql/connection.js';
import { CUSTOM_FIELDS } from '../graphql/custom-field-filter.js';
import { COMPANY_MODEL } from './company.model.js';
import { pageField } from '../graphql/page.js';
import { readById } from '../graphql/reads.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { Prisma } from '../generated/prisma/client.js';
import { lookupKey, searchText } from '../validation.js';
import { NOT_A_HOST, normalizeDomain } from '../links/domain.js';
import { CompanyRef } from './company.schema.js';

const ORDERS = { ...TIME_ORDERS, NAME: { column: 'name', type: 'text' } } as const;

/** A domain to look up, written as a write would store it (`https://www.Acme.com` finds `acme.com`). */
const domainKey = lookupKey(253).transform((value, ctx) => {
  if (value == null) return value;
  const host = normalizeDomain(value);
  if (host === null) ctx.addIssue({ code: 'custom', message: NOT_A_HOST });
  return host ?? value;
});

export const companies = {
  name: 'Company',
  model: 'Company',
  table: 'companies',
  json: true,
  orders: ORDERS,
  orderInput: orderInputOf('Company', Object.keys(ORDERS), { custom: true }),
  custom: COMPANY_MODEL,
  counter: true,
  filter: filtersOf('CompanyFilter', {
    search: {
      field: (t) => t.string({ description: 'Case-insensitive substring of the name or the domain' }),
      schema: searchText,
      sql: (v: string) => Prisma.sql`(${c('name')} ILIKE ${`%${likeEscape(v)}%`} OR ${c('domain')} ILIKE ${`%${likeEscape(v)}%`}) ${PLANNED_EACH_TIME}`,
      page: 'search',
    },
    domain: {
      field: (t) => t.string({ description: 'The domain, as a write would store it' }),
      schema: domainKey,
      sql: (v: string) => Prisma.sql`${c('domain')} = ${v}`,
      page: 'domain',
    },
    ownerId: idIn('owner_id', 'ownerId'),
    externalId: EXTERNAL_ID,
    customFields: CUSTOM_FIELDS,
    ...timeRanges(),
  }),
} satisfies Collection;

/** Query.companies: REST's GET /companies. */
export const companiesPage = pageField('companies', companies, 'COMPANIES_READ');

const companyConnection = defineCollection(companies, CompanyRef);
builder.prismaObjectField(AccountRef, 'companies', companyConnection(null));
builder.prismaObjectField(CompanyRef, 'contacts', contactConnection('company_id', "The company's contacts"));
builder.prismaObjectField(CompanyRef, 'deals', dealConnection('company_id', "The company's deals"));
builder.prismaObjectField(ContactRef, 'linkedCompany', (t) => t.relation('linkedCompany', { nullable: true, description: 'The company record (`company` is free text)' }));
builder.prismaObjectField(DealRef, 'company', (t) => t.relation('company', { nullable: true }));

/** Query.company: REST's GET /companies/{id}. */
readById('company', 'Company', (db) => db.company, 'COMPANIES_READ', READS_BEYOND_CONTRACT);
