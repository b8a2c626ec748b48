/** Mutation.createDeal · setDealStatus · updateDeal · deleteDeal */
import { WRITES } from '../graphql/limits.js';
import { builder } from '../graphql/builder.js';
import { recordObject } from '../graphql/record-object.js';
import { CONTACT_EMBEDDED } from '../contacts/contact.model.js';
import { exposedFieldsOf, inputFieldsOf } from '../graphql/spec-fields.js';
import { DEAL_FIELDS, DEAL_MODEL } from './deal.model.js';
import { userActor } from '../events/types.js';
import { checked } from '../graphql/rules.js';
import { deleteById, restoreById, setStatusById, updateById, type ById } from '../writes/by-id.js';
import { TRASH_KINDS } from '../writes/trash.js';
import { DealStatus } from '../generated/prisma/client.js';
import {
  createDeal,
  createDealInput,
  dealTarget,
  deleteDeal,
  updateDeal,
  updateDealArgs,
  dealLinks,
  setDealStatus,
  setDealStatusArgs,
  type CreateDealInput,
} from './deal.service.js';
import type { RecordKey } from '../db/client.js';

export const DealStatusEnum = builder.enumType(DealStatus, { name: 'DealStatus' });

export const DealRef = recordObject('Deal', 'DEALS_READ', (t) => ({
  // Every field of the model the type reads, as stored (docs/fields.md#a-records-model).
  ...exposedFieldsOf(DEAL_MODEL)(t as never),
  // A key reads the owner's id only (docs/decisions.md §15).
  owner: t.relation('owner', { nullable: true, embedded: ['id'] }),
  // As REST embeds it: a key without contacts:read reads no more of the contact (docs/decisions.md §24).
  contact: t.relation('contact', { nullable: true, embedded: CONTACT_EMBEDDED }),
  stage: t.relation('stage', { nullable: true }),
}));

const CreateDealInputType = builder.inputType('CreateDealInput', {
  fields: (t) => ({ accountId: t.id({ required: true }), ...inputFieldsOf(DEAL_FIELDS, 'create')(t) }),
});

/** An item of createDeals and upsertDeals (src/batches/batch.schema.ts). */
export const BatchDealInput = builder.inputType('BatchDealInput', {
  description: 'CreateDealInput less accountId. Creating needs title; an upsert that matches changes only the fields given.',
  fields: inputFieldsOf(DEAL_FIELDS, 'batch'),
});

builder.mutationField('createDeal', (t) =>
  t.prismaField({
    type: 'Deal',
    args: { input: t.arg({ type: CreateDealInputType, required: true }) },
    rules: { access: 'member', scope: 'DEALS_WRITE', input: createDealInput, from: 'input', linked: dealLinks, limit: WRITES, idempotent: true },
    resolve: (_query, _root, _args, _ctx, info) => {
      const { viewer, input, write } = checked<CreateDealInput>(info);
      // The same-account check reads; the write is one statement (the foreign keys hold the links): no transaction needed.
      return write((tx) => createDeal(tx, input, userActor(viewer)), { oneStatement: true });
    },
  }),
);

// --- docs/decisions.md §12: status, update, delete (REST: PATCH/DELETE /api/v1/deals/{id}; the read is in deal-reads.schema.ts) ---

const UpdateDealInputType = builder.inputType('UpdateDealInput', {
  description: 'Absent = unchanged; null = cleared (Required for title, value, probability). At least one field.',
  fields: inputFieldsOf(DEAL_FIELDS, 'update'),
});

const deal: ById<RecordKey> = { type: 'Deal', scope: 'DEALS_WRITE', limit: WRITES, target: dealTarget };

setStatusById(deal, {
  status: DealStatusEnum,
  args: setDealStatusArgs,
  move: setDealStatus,
  delegate: (db) => db.deal,
  description: 'open -> won | lost | abandoned; any of those -> open. Anything else is INVALID_TRANSITION.',
});
updateById(deal, {
  input: UpdateDealInputType,
  args: updateDealArgs,
  linked: dealLinks,
  update: updateDeal,
  description: 'Its status moves only through setDealStatus. CONFLICT (with currentUpdatedAt) when expectedUpdatedAt is stale.',
});
deleteById(deal, { remove: deleteDeal, description: 'Moves the deal to the trash (docs/trash.md); its tasks and the notes also about something else stay, unlinked.' });
restoreById(deal, TRASH_KINDS.deal, 'Brings the deal back from the trash (docs/trash.md) with every link it had; NOT_FOUND when the trash holds no such deal; BAD_USER_INPUT (TAKEN) when a unique value of it was taken since.');
