import { z } from 'zod';
import { badInput, type ErrorDetails } from './errors.js';

// A missing required value reads exactly "Required" (docs/decisions.md §2); other type errors name
// what was expected instead of echoing the input back.
z.config({
  customError: (issue) => {
    if (issue.code === 'invalid_type') {
      return issue.input === undefined || issue.input === null ? 'Required' : `Expected ${issue.expected}`;
    }
    return undefined;
  },
});

/** Parses `value` with `schema`, or throws BAD_USER_INPUT with messages keyed by field path. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw badInput(toDetails(result.error));
}

export function toDetails(error: z.ZodError): ErrorDetails {
  const details: ErrorDetails = Object.create(null) as ErrorDetails; // keys come from input paths
  for (const issue of error.issues) {
    const key = issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
    (details[key] ??= []).push(issue.message);
  }
  return details;
}

// PostgreSQL text and jsonb cannot hold U+0000, and an unpaired surrogate cannot be encoded as UTF-8.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const isStorableText = (value: string): boolean => !UNSTORABLE.test(value);
export const UNSTORABLE_TEXT = 'Must not contain NUL characters or unpaired surrogates';
/** A JSON value whose every string and key isStorableText: what a jsonb column can keep (the JSON scalar bounds its depth). */
export const isStorableJson = (value: unknown): boolean =>
  typeof value === 'string'
    ? isStorableText(value)
    : Array.isArray(value)
      ? value.every(isStorableJson)
      : typeof value !== 'object' || value === null || Object.entries(value).every(([key, item]) => isStorableText(key) && isStorableJson(item));

/** A string the database can store as it is (refused, not silently altered, when it cannot). */
export const text = () => z.string().refine(isStorableText, UNSTORABLE_TEXT);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string): boolean => UUID.test(value);

export const uuid = z.string().regex(UUID, 'Must be a UUID');
/** An id that may be left out: absent and null are both none (null). */
export const optionalUuid = uuid.nullish().transform((value) => value ?? null);

/** The arguments of a field that takes a record's `id` alone (a read, a delete, a cancel). */
export const byIdArgs = z.object({ id: uuid });
export type ByIdArgs = z.output<typeof byIdArgs>;

/** A search (docs/decisions.md §3, §19): trimmed, at most 200 characters; blank is no search. */
export const searchText = text().trim().max(200, 'Must be at most 200 characters').nullish().transform((v) => v || null);

/** Trimmed text; a blank optional value becomes null (docs/decisions.md §4). */
export const optionalText = (max: number) =>
  text()
    .trim()
    .max(max, `Must be at most ${max} characters`)
    .nullish()
    .transform((value) => (value ? value : null));

export const requiredText = (max: number) =>
  text().trim().min(1, 'Required').max(max, `Must be at most ${max} characters`);

/** docs/decisions.md §16: the record's id in the integrating system, at most 255 characters. */
export const externalId = optionalText(255);

/** ISO 4217 codes in use, from the ICU data Node ships (kept current with Node, no table to maintain). */
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
/** Whether `code` is an ISO 4217 currency code (upper case). */
export const isCurrencyCode = (code: string): boolean => CURRENCIES.has(code);
/** ISO 4217: lower case is upper-cased; an unknown code is refused by name (an invoice's, an account's default). */
export const currencyCode = text()
  .trim()
  .transform((code) => code.toUpperCase())
  .superRefine((code, ctx) => {
    if (!isCurrencyCode(code)) ctx.addIssue({ code: 'custom', message: `Unknown ISO 4217 currency code: ${code}` });
  });

/**
 * The value of a key-lookup filter (`external_id=`, contacts' `email=`): trimmed as a write stores
 * the key; blank is refused, since a lookup by an empty key would answer "no such record" (or,
 * ignored, every record) to a caller whose key went missing (docs/rest.md#paging-by-cursor).
 */
export const lookupKey = (max: number) => text().trim().min(1, 'Must not be blank').max(max, `Must be at most ${max} characters`).nullish();

/** The value of a list's `external_id=` filter: the exact id. */
export const externalIdFilter = lookupKey(255);

export const email = text()
  .trim()
  .max(254, 'Must be at most 254 characters')
  .pipe(z.email('Must be a valid e-mail address'));

export const optionalEmail = text()
  .trim()
  .nullish()
  .transform((value) => (value ? value : null))
  .pipe(email.nullable());

/**
 * What the transports' type check says of a value of the wrong type (REST's reader, the GraphQL
 * scalars), for the rules to say the same where a door has no such check (an import's cells).
 */
export const TYPE_MESSAGES = { number: 'Expected a number', day: 'Must be a real date in the form YYYY-MM-DD' } as const;

/** An enum of the rules, refused in the type check's words: `Must be one of: <values>`. */
export const oneOf = <T extends Record<string, string>>(values: T) => z.enum(values, { error: `Must be one of: ${Object.values(values).sort().join(', ')}` });

/** A calendar day: the Date scalar parses it (src/graphql/scalars.ts); anything else is refused in its words. */
export const day = z.date({ error: TYPE_MESSAGES.day });

/** Money in numeric(12,2): finite, 0 to 9,999,999,999.99, at most two decimals. */
// Built from zod's own checks (not refinements) so the OpenAPI document shows the bounds too.
// multipleOf compares with a float-safe remainder: 0.29 and 1200.51 pass, 1.005 does not.
export const money = z
  .number({ error: TYPE_MESSAGES.number })
  .min(0, 'Must be from 0 to 9999999999.99')
  .max(9_999_999_999.99, 'Must be from 0 to 9999999999.99')
  .multipleOf(0.01, 'Must have at most two decimals');

export const page = z.number().int('Must be an integer').min(1, 'Must be at least 1').default(1);
export const pageSize = z
  .number()
  .int('Must be an integer')
  .min(1, 'Must be from 1 to 100')
  .max(100, 'Must be from 1 to 100')
  .default(25);

/**
 * A list page's arguments (docs/decisions.md §3, §18): a numbered `page` or a `cursor`, never both
 * (src/graphql/page.ts); `sort` and `order` (newest first unless asked); what changed since when.
 */
export const listArgs = z.object({
  accountId: uuid,
  page,
  pageSize,
  cursor: z.string().max(1000, 'Not a cursor of this list').nullish(),
  sort: z.enum(['CREATED_AT', 'UPDATED_AT']).default('CREATED_AT'),
  order: z.enum(['ASC', 'DESC']).default('DESC'),
  /** Inclusive: a system that saw everything up to T asks again from T. */
  updatedSince: z.date().nullish(),
  createdSince: z.date().nullish(),
});
