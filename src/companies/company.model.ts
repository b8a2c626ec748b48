// A company, declared once (docs/fields.md#a-records-model): its fields in order, and what each
// door takes and shows of it (docs/decisions.md §21).
import type { FieldSpec, RecordModel } from '../model/field-spec.js';
import { CUSTOM_VALUES } from '../model/shapes.js';
import { externalId, optionalText, optionalUuid, requiredText } from '../validation.js';
import { optionalDomain } from '../links/domain.js';

const EXTERNAL_ID = 'At most 255 characters; unique in the account.';
const DOMAIN = 'A host name; `https://www.Acme.com/` is stored as `acme.com`. Unique in the account.';
const OWNER = "The account's owner or one of its members; none: unowned.";

export const COMPANY_FIELDS = [
  { name: 'name', type: 'String', rule: requiredText(200), required: true, max: 200, import: { aliases: ['Company name'] } },
  {
    name: 'domain', type: 'String', rule: optionalDomain, import: { aliases: ['Company Domain Name'] },
    description: { create: DOMAIN, update: DOMAIN, batch: DOMAIN, read: 'A lower-case host name (acme.com); unique in the account where present.' },
  },
  { name: 'phone', type: 'String', rule: optionalText(50), max: 50, import: { aliases: ['Phone Number'] } },
  { name: 'industry', type: 'String', rule: optionalText(100), max: 100, import: true },
  { name: 'website', type: 'String', rule: optionalText(2048), max: 2048, import: { aliases: ['Website URL'] } },
  {
    name: 'externalId', type: 'String', rule: externalId, import: { aliases: ['Record ID'] },
    description: { create: EXTERNAL_ID, update: EXTERNAL_ID, batch: EXTERNAL_ID, read: 'Its id in the integrating system; unique in the account where present.' },
  },
  { name: 'ownerId', type: 'ID', rule: optionalUuid, import: true, description: { create: OWNER, update: OWNER, batch: OWNER } },
  // The account's own fields (docs/custom-fields.md): one JSON object of values, judged by the account's definitions.
  CUSTOM_VALUES,
  { name: 'createdAt', type: 'DateTime', import: { aliases: ['Create Date'] } },
  { name: 'updatedAt', type: 'DateTime' },
] as const satisfies readonly FieldSpec[];

export const COMPANY_MODEL = { model: 'Company', table: 'companies', kind: 'company', collection: 'companies', fields: COMPANY_FIELDS } as const satisfies RecordModel;
