/** Account.customFields · Query.customFields · Mutation.createCustomField · updateCustomField (docs/custom-fields.md) */
import { CustomFieldObject, CustomFieldType } from '../generated/prisma/client.js';
import { builder } from '../graphql/builder.js';
import { checked } from '../graphql/rules.js';
import { READS_BEYOND_CONTRACT, SETTINGS } from '../graphql/limits.js';
import { MESSAGES } from '../errors.js';
import type { ApiScope } from '../scopes.js';
import { AccountRef } from '../accounts/account.schema.js';
import {
  createCustomField,
  createCustomFieldArgs,
  customFieldsArgs,
  customFieldTarget,
  definitionsChanged,
  FIELD_ORDER,
  updateCustomField,
  updateCustomFieldArgs,
  type CreateCustomFieldArgs,
  type UpdateCustomFieldArgs,
} from './custom-field.service.js';

export const CustomFieldObjectEnum = builder.enumType(CustomFieldObject, { name: 'CustomFieldObject' });
export const CustomFieldTypeEnum = builder.enumType(CustomFieldType, { name: 'CustomFieldType' });

const WITH_OPTIONS: readonly CustomFieldType[] = [CustomFieldType.SELECT, CustomFieldType.MULTI_SELECT];

builder.prismaObject('CustomField', {
  keyScope: false,
  description: "A field an account defined for its contacts, deals, companies or invoices; records hold its values under `key` in `customFields`",
  fields: (t) => ({
    id: t.exposeID('id'),
    object: t.expose('object', { type: CustomFieldObjectEnum }),
    key: t.exposeString('key', { description: 'Its name in `customFields` and in filters (`cf.<key>`); fixed' }),
    label: t.exposeString('label', { description: "As people read it: the CSV column's header, an import column's other name" }),
    type: t.expose('type', { type: CustomFieldTypeEnum, description: 'Fixed at creation' }),
    options: t.stringList({ nullable: true, description: 'SELECT and MULTI_SELECT: the values allowed; null for other types', resolve: (field) => (WITH_OPTIONS.includes(field.type) ? field.options : null) }),
    required: t.exposeBoolean('required', { description: 'A create must give it; an update cannot clear it' }),
    archived: t.exposeBoolean('archived', { description: 'Hidden from reads, writes, filters and exports; values kept until unarchived' }),
    position: t.exposeInt('position', { description: 'Order among the fields (ties: oldest first)' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const OBJECT = 'Only the fields of this record; all four when left out';
/** A key reads an object's definitions with that object's read scope; all of them with contacts:read. */
const READ_SCOPE: Record<CustomFieldObject, ApiScope> = { CONTACT: 'CONTACTS_READ', DEAL: 'DEALS_READ', COMPANY: 'COMPANIES_READ', INVOICE: 'INVOICES_READ' };

builder.prismaObjectFields(AccountRef, (t) => ({
  customFields: t.relation('customFields', {
    description: 'The fields the account defined, archived ones too, by object then position',
    args: { object: t.arg({ type: CustomFieldObjectEnum, description: OBJECT }) },
    maxItems: 400,
    query: (args) => ({ where: args.object ? { object: args.object } : {}, orderBy: FIELD_ORDER }),
  }),
}));

builder.queryField('customFields', (t) =>
  t.prismaField({
    type: ['CustomField'],
    description: 'Account.customFields by account id (REST GET /api/v1/custom_fields). API keys: the read scope of `object` (contacts:read without one).',
    maxItems: 400,
    args: { accountId: t.arg.id({ required: true }), object: t.arg({ type: CustomFieldObjectEnum, description: OBJECT }) },
    rules: {
      access: 'member',
      scope: 'CONTACTS_READ',
      inputScope: { of: (input: { object?: CustomFieldObject | null }) => READ_SCOPE[input.object ?? CustomFieldObject.CONTACT], may: Object.values(READ_SCOPE) },
      input: customFieldsArgs,
      limit: READS_BEYOND_CONTRACT,
    },
    resolve: (query, _root, _args, ctx, info) => {
      const { input } = checked<{ accountId: string; object?: CustomFieldObject | null }>(info);
      return ctx.db.customField.findMany({ ...query, where: { accountId: input.accountId, ...(input.object ? { object: input.object } : {}) }, orderBy: FIELD_ORDER });
    },
  }),
);

const CreateCustomFieldInput = builder.inputType('CreateCustomFieldInput', {
  fields: (t) => ({
    object: t.field({ type: CustomFieldObjectEnum, required: true }),
    key: t.string({ required: true, description: '^[a-z][a-z0-9_]{0,49}$; unique per object; not a built-in field' }),
    label: t.string({ required: true }),
    type: t.field({ type: CustomFieldTypeEnum, required: true }),
    options: t.stringList({ description: 'SELECT and MULTI_SELECT only, and required for them' }),
    required: t.boolean(),
    position: t.int({ description: 'Default: after the last' }),
  }),
});

const UpdateCustomFieldInput = builder.inputType('UpdateCustomFieldInput', {
  description: 'Absent = unchanged. The key and the type are fixed. Removing an option records hold is CONFLICT.',
  fields: (t) => ({ label: t.string(), options: t.stringList(), required: t.boolean(), position: t.int(), archived: t.boolean() }),
});

builder.mutationField('createCustomField', (t) =>
  t.prismaField({
    type: 'CustomField',
    description: `Owner only; never an API key. At most 100 active fields per object (BAD_USER_INPUT on key).`,
    args: { accountId: t.arg.id({ required: true }), input: t.arg({ type: CreateCustomFieldInput, required: true }) },
    rules: { access: 'owner', forbidden: MESSAGES.ownerOnly, input: createCustomFieldArgs, limit: SETTINGS, idempotent: true },
    resolve: async (query, _root, _args, _ctx, info) => {
      const { input, write } = checked<CreateCustomFieldArgs>(info);
      const field = await write((tx) => createCustomField(tx, input, query));
      definitionsChanged(input.accountId);
      return field;
    },
  }),
);

builder.mutationField('updateCustomField', (t) =>
  t.prismaField({
    type: 'CustomField',
    nullable: true,
    description: 'Owner only; never an API key.',
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateCustomFieldInput, required: true }), expectedUpdatedAt: t.arg({ type: 'DateTime', description: 'CONFLICT when the field changed since (REST: If-Match)' }) },
    rules: { access: 'owner', forbidden: MESSAGES.ownerOnly, input: updateCustomFieldArgs, target: (args: { id: string }, ctx) => customFieldTarget(args, ctx.db), hidden: 'not-found', limit: SETTINGS, idempotent: true },
    resolve: async (query, _root, _args, _ctx, info) => {
      const { input, target, write } = checked<UpdateCustomFieldArgs, { id: string; accountId: string }>(info);
      const field = await write((tx) => updateCustomField(tx, input, query));
      definitionsChanged(target.accountId);
      return field;
    },
  }),
);
