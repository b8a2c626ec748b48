/** Query.publicLeadForm */
import { builder } from '../graphql/builder.js';
import { CONTACT_FORM_TARGETS } from '../contacts/contact.model.js';
import { isUuid } from '../validation.js';
import { FormFieldTypeEnum } from './form.schema.js';
import { MAX_FIELDS } from './form.service.js';

export const PublicLeadFormField = builder.prismaObject('LeadFormField', {
  variant: 'PublicLeadFormField',
  keyScope: 'public',
  description: 'A field as the visitor sees it: how it maps onto a contact stays private.',
  fields: (t) => ({
    key: t.exposeString('key', { description: 'The key of this value in the submission\'s `data`' }),
    label: t.exposeString('label'),
    type: t.expose('type', { type: FormFieldTypeEnum }),
    required: t.exposeBoolean('required'),
    options: t.exposeStringList('options'),
    maxLength: t.exposeInt('maxLength'),
    autocomplete: t.string({
      nullable: true,
      description: 'HTML autocomplete token for the input, when the field fills a contact column',
      // The contact field spec's token, so browsers can fill the form (WCAG 1.3.5).
      resolve: (field) => (field.mapsTo ? CONTACT_FORM_TARGETS[field.mapsTo].autocomplete : null),
    }),
  }),
});

export const PublicLeadForm = builder.prismaObject('LeadForm', {
  variant: 'PublicLeadForm',
  keyScope: 'public',
  description: 'An active lead form as its public page shows it: nothing about the account behind it.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    successMessage: t.exposeString('successMessage'),
    honeypotField: t.exposeString('honeypotField', {
      nullable: true,
      description: 'Render as an input people never see or fill in; the page shows it to bots anyway',
    }),
    fields: t.relation('fields', { type: PublicLeadFormField, maxItems: MAX_FIELDS, query: { orderBy: { position: 'asc' } } }),
    accentColor: t.exposeString('accentColor', { nullable: true, description: 'The page\'s accent colour, #rrggbb; null = the default' }),
    showTitle: t.exposeBoolean('showTitle', { description: 'Whether the page shows `name` as its heading' }),
  }),
});

builder.queryField('publicLeadForm', (t) =>
  t.prismaField({
    type: PublicLeadForm,
    nullable: true,
    description: 'Public: no token needed. Null when the id is not a UUID, unknown or the form is inactive (one answer: no oracle).',
    args: { id: t.arg.id({ required: true }) },
    rules: { access: 'public' },
    resolve: (query, _root, args, ctx) => {
      const id = String(args.id);
      if (isUuid(id)) return ctx.db.leadForm.findFirst({ ...query, where: { id, active: true } });
      void { ...query }; // nothing to load for a malformed id: mark the selection as seen, not forgotten
      return null;
    },
  }),
);
