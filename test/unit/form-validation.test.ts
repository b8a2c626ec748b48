import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { EMAIL_PATTERN } from '../../src/forms/form-page.js';
import { createLeadFormInput } from '../../src/forms/form.service.js';
import { validateSubmission } from '../../src/forms/submission.service.js';

const ACCOUNT = '0193a1b2-0000-7000-8000-000000000001';
type Field = Parameters<typeof validateSubmission>[0][number];
const field = (over: Partial<Field> & { key: string }): Field => ({
  type: 'text',
  required: false,
  mapsTo: null,
  customField: null,
  options: [],
  maxLength: 1000,
  ...over,
});
const FIELDS: Field[] = [
  field({ key: 'first_name', mapsTo: 'first_name' }),
  field({ key: 'Email', type: 'email', required: true, mapsTo: 'email' }),
  field({ key: 'plan', type: 'select', options: ['basic', 'pro'] }),
  field({ key: 'note', type: 'textarea', maxLength: 5 }),
  field({ key: 'agree', type: 'checkbox' }),
];

function detailsOf(run: () => unknown): Record<string, string[]> {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('BAD_USER_INPUT');
    return (error as AppError).details ?? {};
  }
  throw new Error('expected a validation failure');
}

describe('validateSubmission', () => {
  it('keeps only defined keys, trimmed, and maps them to contact fields', () => {
    const s = validateSubmission(FIELDS, { first_name: ' Ann ', Email: 'ann@example.com', extra: 'x', agree: 'yes' });
    expect(s.values).toEqual({ first_name: 'Ann', Email: 'ann@example.com', agree: 'yes' });
    expect(s.contact).toEqual({ first_name: 'Ann', email: 'ann@example.com' });
  });

  it('data that is not an object is refused on data', () => {
    for (const data of [null, 'x', 1, ['a']]) {
      expect(detailsOf(() => validateSubmission(FIELDS, data))).toEqual({ data: ['Expected an object of string values'] });
    }
  });

  it('a non-string value of a defined key is refused on that key; of an unknown key, ignored', () => {
    expect(detailsOf(() => validateSubmission(FIELDS, { Email: 'a@b.co', agree: true, other: 5 }))).toEqual({
      agree: ['Expected a string'],
    });
  });

  it('a required field that is missing or blank is Required, keyed by the field key', () => {
    expect(detailsOf(() => validateSubmission(FIELDS, { first_name: 'A' }))).toEqual({ Email: ['Required'] });
    expect(detailsOf(() => validateSubmission(FIELDS, { first_name: 'A', Email: '   ' }))).toEqual({ Email: ['Required'] });
  });

  it('email, select and length rules each name their field', () => {
    const details = detailsOf(() => validateSubmission(FIELDS, { Email: 'nope', plan: 'gold', note: '123456' }));
    expect(details).toEqual({
      Email: ['Must be a valid e-mail address'],
      plan: ['Must be one of the options'],
      note: ['Must be at most 5 characters'],
    });
  });

  it('a mapped value must also fit its contact column', () => {
    const details = detailsOf(() => validateSubmission(FIELDS, { Email: 'a@b.co', first_name: 'x'.repeat(101) }));
    expect(details).toEqual({ first_name: ['Must be at most 100 characters'] });
  });

  it('without a first name or an e-mail the first_name field is Required', () => {
    const fields = [field({ key: 'name', mapsTo: 'first_name' }), field({ key: 'mail', type: 'email', mapsTo: 'email' })];
    expect(detailsOf(() => validateSubmission(fields, {}))).toEqual({ name: ['Required'] });
    expect(validateSubmission(fields, { mail: 'a@b.co' }).contact).toEqual({ email: 'a@b.co' });
  });

  it('metadata strings longer than 2048 are refused on metadata.referrer / metadata.page', () => {
    const long = 'x'.repeat(2049);
    const details = detailsOf(() => validateSubmission(FIELDS, { Email: 'a@b.co' }, { referrer: long, page: long }));
    expect(details).toEqual({
      'metadata.referrer': ['Must be at most 2048 characters'],
      'metadata.page': ['Must be at most 2048 characters'],
    });
  });
});

describe('the form page\'s own checks', () => {
  it('the page refuses exactly the e-mail addresses the service refuses (EMAIL_PATTERN, trimmed as the page does)', () => {
    const page = new RegExp(EMAIL_PATTERN);
    const addresses = [
      'ann@example.com', ' ann@example.com ', 'a.b+c@sub.example.co', "o'neil@example.ie", 'grace@localhost', 'grace',
      'a..b@example.com', '.a@example.com', 'a@-example.com', 'a@example.c', 'a@example.com.', 'zoë@example.com', 'a b@example.com', '@example.com',
    ];
    for (const address of addresses) {
      const server = !('Email' in detailsOrNone({ Email: address }));
      expect(page.test(address.trim()), address).toBe(server);
    }
  });
});

function detailsOrNone(data: Record<string, string>): Record<string, string[]> {
  try {
    validateSubmission(FIELDS, data);
    return {};
  } catch (error) {
    return (error as AppError).details ?? {};
  }
}

describe('createLeadFormInput', () => {
  const base = { accountId: ACCOUNT, name: 'Contact us', fields: [{ key: 'email', label: 'E-mail', type: 'email', mapsTo: 'email' }] };
  const issues = (input: unknown) => {
    const result = createLeadFormInput.safeParse(input);
    expect(result.success).toBe(false);
    return result.error!.issues.map((i) => [i.path.join('.'), i.message]);
  };

  it('applies the defaults', () => {
    const parsed = createLeadFormInput.parse(base);
    expect(parsed).toMatchObject({ successMessage: "Thanks! We'll be in touch.", redirectUrl: null, active: true });
    expect(parsed.fields[0]).toMatchObject({ required: false, options: [], maxLength: 1000 });
  });

  it('a field key must match the key pattern', () => {
    for (const key of ['1a', '_a', 'a-b', 'a b', 'a'.repeat(101)]) {
      expect(issues({ ...base, fields: [{ ...base.fields[0], key }] })[0]?.[0]).toBe('fields.0.key');
    }
    expect(createLeadFormInput.safeParse({ ...base, fields: [{ ...base.fields[0], key: 'a'.repeat(100) }] }).success).toBe(true);
  });

  it('redirectUrl must be an absolute http(s) URL', () => {
    for (const redirectUrl of ['/thanks', 'ftp://x.test/', 'javascript:alert(1)', `https://x.test/${'a'.repeat(2048)}`]) {
      expect(issues({ ...base, redirectUrl })[0]?.[0]).toBe('redirectUrl');
    }
  });
});
