// What an import may write (docs/decisions.md §17, §21): each object's batch kind, whose rules judge
// the rows and whose keys are what `match_on` may name, and the write scope a key needs for it.
import type { ApiScope } from '../scopes.js';
import type { BatchKind, MatchOn } from '../writes/batch.service.js';
import { companyBatch } from '../companies/company.service.js';
import { contactBatch } from '../contacts/contact.service.js';
import { dealBatch } from '../deals/deal.service.js';
import { snakeCase } from '../names.js';
import type { ImportObjectName } from './columns.js';

/**
 * The kind as an import writes it: a new record keeps the creation time its row gave
 * (`createdAt`, put on its create data by the worker: src/imports/references.ts), else now.
 * The kind itself is the prototype, so its lazy parts (a deal's `update` rule) stay lazy.
 */
const keepingCreatedAt = (kind: BatchKind): BatchKind =>
  Object.assign(Object.create(kind) as BatchKind, {
    newRow: (input: Record<string, unknown>, id: string, now: Date) => {
      const row = kind.newRow(input, id, now);
      return input.createdAt instanceof Date ? { ...row, createdAt: input.createdAt } : row;
    },
  });

export const IMPORT_OBJECTS: Record<ImportObjectName, { kind: BatchKind; scope: ApiScope }> = {
  contacts: { kind: keepingCreatedAt(contactBatch), scope: 'CONTACTS_WRITE' },
  deals: { kind: keepingCreatedAt(dealBatch), scope: 'DEALS_WRITE' },
  companies: { kind: keepingCreatedAt(companyBatch), scope: 'COMPANIES_WRITE' },
};

/** The keys an import of `object` may match on: its kind's (contacts: email, external_id; deals: external_id; companies: domain, external_id). */
export const matchKeysOf = (object: ImportObjectName): MatchOn[] => Object.keys(IMPORT_OBJECTS[object].kind.keys) as MatchOn[];

/** `Deals match on external_id or none`: the 400 of a `match_on` the object has no such key for. */
export const matchOnProblem = (object: ImportObjectName): string =>
  `${object[0]!.toUpperCase()}${object.slice(1)} match on ${matchKeysOf(object).map(snakeCase).join(', ')} or none`;
