/** Query.contacts · Mutation.createContact */
import { builder } from '../graphql/builder.js';
import { idempotent } from '../graphql/idempotent.js';
import { guard } from '../graphql/guard.js';
import { LIMITS } from '../graphql/limits.js';
import { definePage } from '../graphql/page.js';
import { ContactSource, ContactType, type Prisma } from '../generated/prisma/client.js';
import { contactsWhere, createContact, createContactInput, listContactsArgs } from './contact.service.js';

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

const ContactPage = definePage<Prisma.ContactWhereInput>('Contact', (ctx) => ctx.deps.db.reader.contact);

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
    resolve: async (_root, args, ctx) => {
      const { input } = await guard(ctx, { schema: listContactsArgs, args, limit: LIMITS.contacts });
      return { where: contactsWhere(input), page: input.page, pageSize: input.pageSize };
    },
  }),
);

const CreateContactInput = builder.inputType('CreateContactInput', {
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
    args: { input: t.arg({ type: CreateContactInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const { input, viewer } = await guard(ctx, { schema: createContactInput, args: args.input, limit: LIMITS.createContact });
      const { id } = await idempotent(
        ctx,
        { operation: 'createContact', accountId: input.accountId, scope: `user:${viewer.id}`, request: args.input },
        async (tx) => ({ id: (await createContact(tx, input)).id }),
      );
      return ctx.db.contact.findUniqueOrThrow({ ...query, where: { id } });
    },
  }),
);
