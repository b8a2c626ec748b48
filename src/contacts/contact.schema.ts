/** Query.contacts · Mutation.createContact */
import { builder } from '../graphql/builder.js';
import { definePage } from '../graphql/page.js';
import { checked } from '../graphql/rules.js';
import { userActor } from '../events/types.js';
import { ContactSource, ContactType, type Prisma } from '../generated/prisma/client.js';
import {
  contactsWhere,
  createContact,
  createContactInput,
  listContactsArgs,
  type CreateContactInput,
  type ListContactsArgs,
} from './contact.service.js';

export const ContactTypeEnum = builder.enumType(ContactType, { name: 'ContactType' });
export const ContactSourceEnum = builder.enumType(ContactSource, { name: 'ContactSource' });

builder.prismaObject('Contact', {
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    firstName: t.exposeString('firstName'),
    lastName: t.exposeString('lastName', { nullable: true }),
    email: t.exposeString('email', { nullable: true }),
    phone: t.exposeString('phone', { nullable: true }),
    company: t.exposeString('company', { nullable: true }),
    contactType: t.expose('contactType', { type: ContactTypeEnum }),
    source: t.expose('source', { type: ContactSourceEnum }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const ContactPage = definePage<Prisma.ContactWhereInput>('Contact', (ctx) => ctx.db.contact);

builder.queryField('contacts', (t) =>
  t.field({
    type: ContactPage,
    args: {
      accountId: t.arg.id({ required: true }),
      page: t.arg.int({ defaultValue: 1 }),
      pageSize: t.arg.int({ defaultValue: 25 }),
      search: t.arg.string(),
      type: t.arg({ type: ContactTypeEnum }),
    },
    rules: { access: 'member', input: listContactsArgs, limit: { max: 60, window: '1m', per: 'user' } },
    resolve: (_root, _args, _ctx, info) => {
      const { input } = checked<ListContactsArgs>(info);
      return { where: contactsWhere(input), page: input.page, pageSize: input.pageSize };
    },
  }),
);

const CreateContactInputType = builder.inputType('CreateContactInput', {
  fields: (t) => ({
    accountId: t.id({ required: true }),
    firstName: t.string({ required: true }),
    lastName: t.string(),
    email: t.string(),
    phone: t.string(),
    company: t.string(),
    contactType: t.field({ type: ContactTypeEnum }),
    source: t.field({ type: ContactSourceEnum }),
  }),
});

builder.mutationField('createContact', (t) =>
  t.prismaField({
    type: 'Contact',
    args: { input: t.arg({ type: CreateContactInputType, required: true }) },
    rules: { access: 'member', input: createContactInput, from: 'input', limit: { max: 30, window: '1m', per: 'user' }, idempotent: true },
    resolve: async (query, _root, _args, ctx, info) => {
      const { viewer, input, write } = checked<CreateContactInput>(info);
      const { id } = await write(async (tx) => ({ id: (await createContact(tx, input, userActor(viewer))).id }));
      return ctx.db.contact.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);
