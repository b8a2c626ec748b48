/** Mutation.createContacts · upsertContacts · createDeals · upsertDeals · deleteContacts (docs/decisions.md §16) */
import { z } from 'zod';
import { builder } from '../graphql/builder.js';
import { checked } from '../graphql/rules.js';
import { BATCHES } from '../graphql/limits.js';
import { userActor } from '../events/types.js';
import { BatchContactInput, ContactRef } from '../contacts/contact.schema.js';
import { contactBatch } from '../contacts/contact.service.js';
import { BatchDealInput, DealRef } from '../deals/deal.schema.js';
import { dealBatch } from '../deals/deal.service.js';
import { uuid } from '../validation.js';
import { BatchRolledBack, MAX_BATCH, writeBatch, type BatchItem, type BatchKind, type BatchMode, type BatchResult } from '../writes/batch.service.js';
import { deleteContacts, type DeleteResult } from '../writes/delete.service.js';

export const ContactMatchEnum = builder.enumType('ContactMatch', {
  values: { EMAIL: { value: 'email', description: 'Case-insensitive; the oldest contact if several' }, EXTERNAL_ID: { value: 'externalId', description: 'Exact' } } as const,
});
// Deals match on their external id alone; the argument lets one envelope serve both collections (docs/decisions.md §24).
const DealMatchEnum = builder.enumType('DealMatch', { values: { EXTERNAL_ID: { value: 'externalId', description: 'Exact' } } as const });
const BatchItemStatusEnum = builder.enumType('BatchItemStatus', { values: ['CREATED', 'UPDATED', 'UNCHANGED', 'FAILED'] as const });

/** The batch's result type and its item type, whose record field is `recordField` (`contact`, `deal`, `company`). */
export function resultTypes(name: string, recordField: string, ref: unknown) {
  const Item = builder.objectRef<BatchItem>(`${name}BatchItem`).implement({
    fields: (t) => ({
      index: t.exposeInt('index'),
      status: t.field({ type: BatchItemStatusEnum, resolve: (item) => item.status }),
      id: t.id({ nullable: true, description: 'The record written or matched; null when FAILED', resolve: (item) => (item.record as { id?: string } | null)?.id ?? null }),
      [recordField]: t.field({
        type: ref as typeof ContactRef,
        nullable: true,
        // An answer's record: null to a key without its read scope (rules.plugin.ts), which reads ids and statuses only (docs/decisions.md §24).
        description: `The ${recordField} written or matched; null when FAILED, and to an API key without its read scope`,
        resolve: (item) => item.record as never,
      }),
      details: t.field({ type: 'JSON', nullable: true, description: 'Why it failed, by REST field name (as REST answers 400s)', resolve: (item) => item.details }),
    }),
  });
  return builder.objectRef<BatchResult>(`${name}BatchResult`).implement({
    fields: (t) => ({
      created: t.exposeInt('created'),
      updated: t.exposeInt('updated'),
      unchanged: t.exposeInt('unchanged'),
      failed: t.exposeInt('failed'),
      items: t.field({ type: [Item], maxItems: MAX_BATCH, resolve: (result) => result.items }),
    }),
  });
}

const ContactBatchResult = resultTypes('Contact', 'contact', ContactRef);
const DealBatchResult = resultTypes('Deal', 'deal', DealRef);

/** The envelope; each item is judged by the service, by its single create's or update's rules. */
const batchArgs = z.object({
  accountId: uuid,
  inputs: z.array(z.record(z.string(), z.unknown())).min(1, 'Must have 1 to 100 records').max(MAX_BATCH, 'Must have 1 to 100 records'),
  allOrNothing: z.boolean().nullish().transform((value) => value ?? false),
  matchOn: z.enum(['email', 'domain', 'externalId']).optional(),
});
export type BatchArgs = z.output<typeof batchArgs>;

export const batchRules = { access: 'member', input: batchArgs, limit: BATCHES, idempotent: true } as const;
const contactRules = { ...batchRules, scope: 'CONTACTS_WRITE' } as const;
const dealRules = { ...batchRules, scope: 'DEALS_WRITE' } as const;

export function runBatch(kind: BatchKind, mode: (args: BatchArgs) => BatchMode, info: Parameters<typeof checked>[0]) {
  const { viewer, input, write } = checked<BatchArgs>(info);
  const how = { ...mode(input), allOrNothing: input.allOrNothing };
  // allOrNothing found a failure after writing: the transaction rolled back, and the answer says so.
  // New records of a kind that links nothing, each kept or failed on its own: one statement
  // (writeSet), atomic by itself, so no BEGIN and COMMIT around it.
  const oneStatement = how.mode === 'create' && !how.allOrNothing && !kind.refs;
  return write((tx) => writeBatch(tx, kind, input.accountId, input.inputs, how, userActor(viewer)), { oneStatement }).catch((error: unknown) => {
    if (error instanceof BatchRolledBack) return error.result;
    throw error;
  });
}

export const common = (t: Parameters<Parameters<typeof builder.mutationFields>[0]>[0]) => ({
  accountId: t.arg.id({ required: true }),
  allOrNothing: t.arg.boolean({ defaultValue: false, description: 'One failure writes nothing; every item reports.' }),
});

builder.mutationFields((t) => ({
  createContacts: t.field({
    type: ContactBatchResult,
    nullable: true,
    description: 'Up to 100 contacts, each by the rules of createContact.',
    args: { ...common(t), inputs: t.arg({ type: [BatchContactInput], required: true }) },
    rules: contactRules,
    resolve: (_root, _args, _ctx, info) => runBatch(contactBatch, () => ({ mode: 'create' }), info),
  }),
  upsertContacts: t.field({
    type: ContactBatchResult,
    nullable: true,
    description: 'Up to 100 contacts: a match updates only the fields given (UNCHANGED when none differ); no match creates.',
    args: { ...common(t), matchOn: t.arg({ type: ContactMatchEnum, required: true }), inputs: t.arg({ type: [BatchContactInput], required: true }) },
    rules: contactRules,
    resolve: (_root, _args, _ctx, info) => runBatch(contactBatch, (args) => ({ mode: 'upsert', on: args.matchOn ?? 'email' }), info),
  }),
  createDeals: t.field({
    type: DealBatchResult,
    nullable: true,
    description: 'Up to 100 deals, each by the rules of createDeal.',
    args: { ...common(t), inputs: t.arg({ type: [BatchDealInput], required: true }) },
    rules: dealRules,
    resolve: (_root, _args, _ctx, info) => runBatch(dealBatch, () => ({ mode: 'create' }), info),
  }),
  upsertDeals: t.field({
    type: DealBatchResult,
    nullable: true,
    description: 'Up to 100 deals matched on externalId: a match updates only the fields given; no match creates.',
    args: { ...common(t), matchOn: t.arg({ type: DealMatchEnum, description: 'Only EXTERNAL_ID, the default' }), inputs: t.arg({ type: [BatchDealInput], required: true }) },
    rules: dealRules,
    resolve: (_root, _args, _ctx, info) => runBatch(dealBatch, () => ({ mode: 'upsert', on: 'externalId' }), info),
  }),
}));

// --- deleteContacts -------------------------------------------------------------------------------

const BatchDeleteItem = builder.objectRef<DeleteResult['items'][number]>('BatchDeleteItem').implement({
  fields: (t) => ({
    index: t.exposeInt('index'),
    id: t.exposeID('id'),
    deleted: t.exposeBoolean('deleted'),
    details: t.field({ type: 'JSON', nullable: true, resolve: (item) => item.details }),
  }),
});
const BatchDeleteResult = builder.objectRef<DeleteResult>('BatchDeleteResult').implement({
  fields: (t) => ({
    deleted: t.exposeInt('deleted'),
    failed: t.exposeInt('failed'),
    items: t.field({ type: [BatchDeleteItem], maxItems: MAX_BATCH, resolve: (result) => result.items }),
  }),
});

const deleteArgs = z.object({
  accountId: uuid,
  ids: z.array(uuid).min(1, 'Must have 1 to 100 ids').max(MAX_BATCH, 'Must have 1 to 100 ids'),
});

builder.mutationField('deleteContacts', (t) =>
  t.field({
    type: BatchDeleteResult,
    nullable: true,
    description: 'Up to 100 contacts of the account; their deals, invoices and submissions stay, unlinked. An id the account does not hold fails.',
    args: { accountId: t.arg.id({ required: true }), ids: t.arg.idList({ required: true }) },
    rules: { access: 'member', scope: 'CONTACTS_WRITE', input: deleteArgs, limit: BATCHES, idempotent: true },
    resolve: (_root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<z.output<typeof deleteArgs>>(info);
      return write((tx) => deleteContacts(tx, input.accountId, input.ids, userActor(viewer)));
    },
  }),
);
