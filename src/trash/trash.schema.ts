/** Account.trash (docs/trash.md): what the trash holds, newest first; restore<Type> is declared beside each record's delete (src/writes/by-id.ts). */
import { z } from 'zod';
import { builder } from '../graphql/builder.js';
import { anyOf, filtersOf, type Collection } from '../graphql/collection.js';
import { defineCollection } from '../graphql/connection.js';
import type { TrashItem } from '../generated/prisma/client.js';
import { TRASH_KINDS } from '../writes/trash.js';
import { expiresAt } from './purge.js';

const TrashType = builder.enumType('TrashType', { values: Object.keys(TRASH_KINDS) as (keyof typeof TRASH_KINDS)[], description: 'The kind of a record in the trash' });

type Row = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/** What a person reads a trashed record by: a contact's name, a deal's title, a company's name. */
const NAMES: Record<string, (row: Row) => string> = {
  contact: (row) => [text(row.first_name), text(row.last_name)].filter(Boolean).join(' '),
  deal: (row) => text(row.title),
  company: (row) => text(row.name),
};

const TrashItemRef = builder.prismaObject('TrashItem', {
  // Reached through Account only, which an API key does not read (docs/decisions.md §15).
  keyScope: false,
  description: 'A deleted contact, deal or company, restorable until expiresAt (docs/trash.md)',
  fields: (t) => ({
    id: t.exposeID('recordId', { description: "The record's id: what restoreContact, restoreDeal or restoreCompany takes" }),
    type: t.field({ type: TrashType, resolve: (item) => item.recordType as keyof typeof TRASH_KINDS }),
    name: t.string({ description: "The contact's name, the deal's title or the company's name, as it was", resolve: (item) => NAMES[item.recordType]?.(item.row as Row) ?? '' }),
    deletedAt: t.expose('deletedAt', { type: 'DateTime' }),
    expiresAt: t.field({
      type: 'DateTime',
      description: 'When the purge removes it for good (TRASH_RETENTION_DAYS after deletedAt)',
      resolve: (item, _args, ctx) => expiresAt(item.deletedAt, ctx.trashRetentionDays),
    }),
  }),
});

/** The trash as a collection (docs/fields.md#adding-a-filter): newest deletion first, keyset cursors, like every other. */
const trash = {
  name: 'TrashItem',
  model: 'TrashItem',
  table: 'trash_items',
  orders: { CREATED_AT: { column: 'deleted_at', type: 'timestamptz' } },
  filter: filtersOf('TrashFilter', {
    types: {
      field: (t) => t.field({ type: [TrashType], description: 'Only these kinds of record' }),
      schema: z.array(z.enum(Object.keys(TRASH_KINDS) as [string, ...string[]])).max(3).nullish(),
      sql: anyOf('record_type', 'text'),
      page: 'types',
    },
  }),
} satisfies Collection<TrashItem & { id: string }, { types?: string[] | null }>;

builder.prismaObjectField('Account', 'trash', defineCollection(trash, TrashItemRef)(null, 'Deleted contacts, deals and companies, newest first, each restorable until it expires (docs/trash.md).', { pageArgs: true }));
