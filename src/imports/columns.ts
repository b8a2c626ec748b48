// Which field each CSV column feeds (docs/imports.md#columns): field names, the CSV export's own
// labels and the headers other systems write for a field (its `import.aliases` in the record's field
// list), case-, space- and underscore-insensitively, unless `mapping` says otherwise; and how a cell
// is read into the batch input (enum values by any case and their synonyms, days and times as the
// other systems write them).
import { parseCalendarDate, inStorableYears } from '../dates.js';
import type { ErrorDetails } from '../errors.js';
import { ContactSource, ContactType } from '../generated/prisma/client.js';
import { snakeCase } from '../names.js';
import { importColumnsOf } from '../model/field-spec.js';
import { CONTACT_FIELDS } from '../contacts/contact.model.js';
import { DEAL_FIELDS } from '../deals/deal.model.js';
import { COMPANY_FIELDS } from '../companies/company.model.js';
import { CUSTOM_VALUES, valueOfText, type CustomFieldDefinition, type RecordShapes, type TextReaders } from '../model/shapes.js';

export type ImportObjectName = 'contacts' | 'deals' | 'companies';

/**
 * Each object's fields (as the batch input names them), their REST names, what creating one needs,
 * and other headers that name a field (REST name), as other systems' exports spell them: all of it
 * from the record's field list (importColumnsOf), the aliases its fields' `import` declares.
 */
export type ImportColumns = { fields: Record<string, string>; required: string[]; aliases?: Record<string, string> };

/**
 * Columns an import reads that are no field of the batch input: the worker takes them out of a row
 * before its rules judge it. `createdAt` is kept from the file when it is a real time not in the
 * future (else the record's is now); the references name the record a deal links to by a key other
 * systems' files carry (an e-mail, an external id, a stage's name), found in bulk for each chunk
 * (src/imports/references.ts).
 */
export const REFERENCES = {
  contactEmail: { fills: 'contactId', by: 'email', aliases: true, missing: 'No contact of the account has this e-mail' },
  contactExternalId: { fills: 'contactId', by: 'externalId', aliases: false, missing: 'No contact of the account has this external id' },
  stageName: { fills: 'stageId', by: 'name', aliases: true, missing: 'No pipeline stage of the account has this name' },
} as const;
export type ReferenceField = keyof typeof REFERENCES;

/**
 * An object's columns with the references that fill its fields. Other systems write a contact's
 * e-mail and a stage's name, never this service's ids: the aliases of a field a reference with
 * `aliases` fills (`Deal Stage` on `stageId`) are that reference's column (`stage_name`).
 */
function withReferences(columns: ImportColumns): ImportColumns {
  const fields = { ...columns.fields };
  const aliases = { ...columns.aliases };
  for (const [reference, { fills, aliases: takesAliases }] of Object.entries(REFERENCES)) {
    if (!Object.values(columns.fields).includes(fills)) continue;
    fields[snakeCase(reference)] = reference;
    if (!takesAliases) continue;
    for (const [header, rest] of Object.entries(aliases)) if (columns.fields[rest] === fills) aliases[header] = snakeCase(reference);
  }
  return { ...columns, fields, aliases };
}

export const FIELDS: Record<ImportObjectName, ImportColumns> = {
  contacts: importColumnsOf(CONTACT_FIELDS),
  deals: withReferences(importColumnsOf(DEAL_FIELDS)),
  companies: importColumnsOf(COMPANY_FIELDS),
};

/**
 * The columns of an import into one account: the object's, and a column for each of the account's
 * active fields of it (`custom_fields.<key>`, found by its key or label: docs/imports.md#columns).
 */
export const accountColumns = (shapes: RecordShapes): ImportColumns => withReferences(shapes.importColumns);

/** Where a custom field's values go in a row's input: `customFields.<key>` (the plan's column) is `customFields: {key: value}`. */
const CUSTOM_PREFIX = `${CUSTOM_VALUES.name}.`;

/** Each active custom field by key, as the cells of its column are read (CellReading.custom). */
export const customTypesOf = (shapes: RecordShapes): Record<string, CustomFieldDefinition> => Object.fromEntries(shapes.custom.map((field) => [field.name, field.custom]));

/**
 * How a cell is read, by the type the field's model gives it (one name, one type across the
 * objects an import writes, checked here): a number, a calendar day, a creation time, else text.
 */
const CELL_TYPES: Record<string, string> = {};
for (const field of [...CONTACT_FIELDS, ...DEAL_FIELDS, ...COMPANY_FIELDS]) {
  if (CELL_TYPES[field.name] && CELL_TYPES[field.name] !== field.type) throw new Error(`imports/columns.ts: ${field.name} is a ${CELL_TYPES[field.name]} and a ${field.type}`);
  CELL_TYPES[field.name] = field.type;
}

/**
 * Enum values as other systems write them (docs/imports.md#values): the field's own values in any
 * case and spacing (`Past Client`, `PAST_CLIENT`), and these synonyms, compared the same way. A
 * `value_mapping` of the import is applied first.
 */
const SYNONYMS: Record<string, { values: readonly string[]; synonyms: Record<string, readonly string[]> }> = {
  contactType: {
    values: Object.values(ContactType),
    synonyms: {
      lead: ['prospect', 'subscriber', 'marketing qualified lead', 'sales qualified lead', 'mql', 'sql', 'opportunity', 'hot lead', 'warm lead', 'cold lead'],
      client: ['customer', 'evangelist', 'active customer'],
      past_client: ['former customer', 'former client', 'past customer', 'churned'],
      vendor: ['supplier'],
    },
  },
  source: {
    values: Object.values(ContactSource),
    synonyms: {
      website: ['web', 'organic search', 'direct traffic', 'organic', 'seo'],
      referral: ['referrals', 'partner referral', 'employee referral', 'external referral', 'word of mouth'],
      social_media: ['social', 'organic social', 'paid social'],
      advertising: ['advertisement', 'paid search', 'ads', 'ppc'],
      cold_outreach: ['purchased list', 'cold call', 'cold email', 'outbound'],
    },
  },
};

/** How values compare: letters and digits alone, lower-cased (`Marketing Qualified Lead` is `marketingqualifiedlead`). */
const valueKey = (value: string) => value.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** field -> (a value's key -> the value imported), for the enum fields of every object. */
const ENUM_VALUES: Record<string, Map<string, string>> = Object.fromEntries(
  Object.entries(SYNONYMS).map(([field, { values, synonyms }]) => [
    field,
    new Map([
      ...Object.entries(synonyms).flatMap(([value, words]) => words.map((word) => [valueKey(word), value] as const)),
      ...values.map((value) => [valueKey(value), value] as const),
    ]),
  ]),
);
/** The synonyms as docs/imports.md lists them: field -> value -> words. */
export const VALUE_SYNONYMS = Object.fromEntries(Object.entries(SYNONYMS).map(([field, { synonyms }]) => [field, synonyms]));

/** A `mapping` value that skips its column, even one whose header names a field. */
export const SKIP = '-';

const norm = (header: string) => header.toLowerCase().replace(/[\s_]+/g, '');
const restName = (fields: Record<string, string>, field: string) => Object.entries(fields).find(([, f]) => f === field)![0];

/** `value_mapping` as the worker applies it: field -> (the file's value, trimmed and lower-cased) -> the value imported. */
export type ValueMapping = Record<string, Record<string, string>>;
export type ColumnPlan = { columns: (string | null)[]; unknown: string[]; values: ValueMapping };

/**
 * The field of each column (null: ignored), the ignored headers (every one that feeds no field,
 * but those `mapping` skips), the value mapping by field, or the 400 naming what is wrong: a
 * `mapping` naming a column the file lacks or no field (`mapping.<column>`, the column as the file
 * spells it), or no column for a required field (or for the `match_on` field). `object`: a collection's
 * name, or columns derived from a field list (importColumnsOf), such as one with an account's own fields.
 */
export function planColumns(
  object: ImportObjectName | ImportColumns,
  headers: string[],
  mapping: Record<string, string>,
  matchOn: string | null,
  valueMapping: Record<string, Record<string, string>> = {},
): ColumnPlan | { details: ErrorDetails } {
  const { fields, required, aliases = {} } = typeof object === 'string' ? FIELDS[object] : object;
  const details: ErrorDetails = {};
  // A header -> its field, and how surely: 0 its REST name or the export's label (they normalise
  // alike), then each alias in the order its field lists them. The export's labels (CSV_COLUMNS)
  // normalise to the field names.
  const byNorm = new Map<string, { field: string; rank: number }>();
  for (const [i, [header, rest]] of Object.entries(aliases).entries()) if (!byNorm.has(norm(header))) byNorm.set(norm(header), { field: fields[rest]!, rank: 1 + i });
  for (const [rest, field] of Object.entries(fields)) byNorm.set(norm(rest), { field, rank: 0 });
  const mapped = new Map(Object.entries(mapping).map(([header, rest]) => [norm(header), rest]));
  const spelled = (header: string) => headers.find((h) => norm(h) === norm(header)) ?? header;
  const present = new Set(headers.map(norm));
  for (const [header, rest] of Object.entries(mapping)) {
    const problems = [
      ...(present.has(norm(header)) ? [] : ['No such column in the file']),
      ...(rest === SKIP || Object.hasOwn(fields, rest) ? [] : [`Must be one of: ${Object.keys(fields).join(', ')}, or ${SKIP} to skip the column`]),
    ];
    if (problems.length) details[`mapping.${spelled(header)}`] = problems;
  }
  // Its fields were judged with the query (startImportArgs): only known ones reach here.
  const values: ValueMapping = {};
  for (const [rest, pairs] of Object.entries(valueMapping)) {
    if (Object.hasOwn(fields, rest)) values[fields[rest]!] = Object.fromEntries(Object.entries(pairs).map(([from, to]) => [from.trim().toLowerCase(), to]));
  }
  // A column `mapping` names ranks with those naming the field: two columns of that rank for one field are a 400.
  const found = headers.map((header) => {
    const to = mapped.get(norm(header));
    if (to === SKIP) return { field: null, rank: 0, skipped: true };
    if (to !== undefined) return { field: fields[to] ?? null, rank: 0 };
    return byNorm.get(norm(header)) ?? { field: null, rank: 0 };
  });
  // Other columns for a field that a surer one feeds are ignored: an Outlook file's Mobile Phone beside its Business Phone.
  const best = new Map<string, number>();
  for (const { field, rank } of found) if (field) best.set(field, Math.min(best.get(field) ?? Infinity, rank));
  const unknown: string[] = [];
  const columns = found.map(({ field, rank, skipped }, i) => {
    const used = field && best.get(field) === rank ? field : null;
    if (!used && !skipped) unknown.push(headers[i]!);
    return used;
  });
  for (const field of [...required, ...(matchOn ? [matchOn] : [])]) {
    if (!columns.includes(field)) details[restName(fields, field)] ??= [field === matchOn && !required.includes(field) ? 'No column for the match_on field' : 'No column for this required field'];
  }
  for (const [i, field] of columns.entries()) {
    if (field && columns.indexOf(field) !== i) details[restName(fields, field)] ??= ['More than one column'];
  }
  return Object.keys(details).length ? { details } : { columns, unknown, values };
}

/** The export's formula guard undone (docs/decisions.md §6): `'` before `=`, `+`, `-`, `@`, tab or CR, per `;`-part as the export guards. */
const GUARDED = /^'[=+\-@\t\r]/;
const unguardPart = (part: string) => (GUARDED.test(part) ? part.slice(1) : part);
export const unguard = (cell: string): string => (cell.includes(';') ? cell.split(';').map(unguardPart).join(';') : unguardPart(cell));

const NUMBER = /^-?\d+(\.\d+)?$/;
/** A number as a `;`-separated (European) file writes it: a decimal comma, dots between groups of three (`1.234,50`). */
const DECIMAL_COMMA = /^-?\d{1,3}(\.\d{3})*,\d+$|^-?\d+,\d+$/;

/**
 * How a row's cells are read: the import's value mapping, and whether the file is a European
 * spreadsheet's (`;`): a comma may be a decimal mark, and a day written with `/` is day first.
 */
export type CellReading = { values: ValueMapping; decimalComma: boolean; custom?: Readonly<Record<string, CustomFieldDefinition>> };

const numberOf = (text: string, decimalComma: boolean): number | null => {
  if (NUMBER.test(text)) return Number(text);
  return decimalComma && DECIMAL_COMMA.test(text) ? Number(text.replaceAll('.', '').replace(',', '.')) : null;
};

/** ISO 8601 and what exports write of it: `2024-01-15`, `2024-01-15 09:32`, `2024-01-15T09:32:10.000Z`, `…+01:00`. */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})?$/i;
/** A day with `/` or `.` (`1/15/2024`, `15.01.2024`), and perhaps a time (`1/15/2024, 9:32 AM`, `15.01.2024 09:32`). */
const SLASHED_TIME = /^(\d{1,2})([/.])(\d{1,2})\2(\d{4})(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AP]M)?)?$/i;

type TimeParts = { year: number; month: number; day: number; hour: number; minute: number; second: number; ms: number; offset: number | null; timed: boolean };

/**
 * A day and time as other systems' exports write them, in UTC unless the text gives its offset, or
 * null. A day written with `/` is month first (`1/15/2024`, as Salesforce and a US spreadsheet
 * write it) unless `dayFirst` (a `;` file's European spreadsheet); one with `.` is day first.
 */
function timeParts(text: string, dayFirst: boolean): TimeParts | null {
  const iso = ISO_TIME.exec(text);
  if (iso) {
    const zone = iso[8]?.toUpperCase();
    const offset = !zone || zone === 'Z' || zone === 'UTC' ? (zone ? 0 : null) : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
    return {
      year: Number(iso[1]), month: Number(iso[2]), day: Number(iso[3]), hour: Number(iso[4] ?? 0), minute: Number(iso[5] ?? 0),
      second: Number(iso[6] ?? 0), ms: Number((iso[7] ?? '0').padEnd(3, '0').slice(0, 3)), offset, timed: iso[4] !== undefined,
    };
  }
  const slashed = SLASHED_TIME.exec(text);
  if (!slashed) return null;
  const monthFirst = slashed[2] === '/' && !dayFirst;
  let hour = Number(slashed[5] ?? 0);
  const meridiem = slashed[8]?.toUpperCase();
  if (meridiem && (hour < 1 || hour > 12)) return null;
  if (meridiem) hour = (hour % 12) + (meridiem === 'PM' ? 12 : 0);
  return {
    year: Number(slashed[4]), month: Number(monthFirst ? slashed[1] : slashed[3]), day: Number(monthFirst ? slashed[3] : slashed[1]),
    hour, minute: Number(slashed[6] ?? 0), second: Number(slashed[7] ?? 0), ms: 0, offset: null, timed: slashed[5] !== undefined,
  };
}

/** The parts as a real instant (no 2025-02-30, no 25:00), or null. */
function instantOf(p: TimeParts): Date | null {
  const date = new Date(Date.UTC(2000, p.month - 1, p.day, p.hour, p.minute, p.second, p.ms));
  date.setUTCFullYear(p.year);
  const real = date.getUTCFullYear() === p.year && date.getUTCMonth() === p.month - 1 && date.getUTCDate() === p.day && date.getUTCHours() === p.hour && date.getUTCMinutes() === p.minute && p.second < 60;
  if (!real) return null;
  return new Date(date.getTime() - (p.offset ?? 0) * 60_000);
}

/** A record's creation time from the file: a real time, not in the future (a minute's clock skew aside), the database can store; else null. */
export function pastTimeOf(text: string, dayFirst = false, now = Date.now()): Date | null {
  const parts = timeParts(text.trim(), dayFirst);
  const time = parts && instantOf(parts);
  return time && inStorableYears(time) && time.getTime() <= now ? time : null;
}

/** A calendar day as other systems write it (`2024-03-31`, `2024-03-31 00:00`, `3/31/2024`), or null. */
export function dayOf(text: string, dayFirst = false): Date | null {
  const exact = parseCalendarDate(text);
  if (exact) return exact;
  const parts = timeParts(text, dayFirst);
  if (!parts || parts.offset !== null && parts.offset !== 0) return null;
  const day = instantOf({ ...parts, hour: 0, minute: 0, second: 0, ms: 0, offset: 0 });
  return day && inStorableYears(day) ? day : null;
}

/** Numbers and days as this file writes them, for a custom field's cell (docs/imports.md#values). */
const readersOf = (reading: CellReading): TextReaders => ({
  number: (text) => numberOf(text, reading.decimalComma),
  day: (text) => dayOf(text, reading.decimalComma)?.toISOString().slice(0, 10) ?? null,
});

/** An enum field's value as the file writes it, read as the field's own value where a case or a synonym makes it one. */
const enumValue = (field: string, value: string): string => ENUM_VALUES[field]?.get(valueKey(value)) ?? value;

/**
 * A row's cells as a batch input: each mapped, non-empty cell unguarded and its value mapped;
 * enum values matched whatever their case or through a synonym; numbers and days as the deal rules
 * take them (anything else is left as text for the rules to refuse by name); a creation time only
 * when it is a real time not in the future (else left out: the record's own is now).
 */
export function inputOf(columns: (string | null)[], cells: string[], reading: CellReading = { values: {}, decimalComma: false }): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [i, field] of columns.entries()) {
    const cell = cells[i];
    if (!field || cell === undefined || cell.trim() === '') continue;
    const given = unguard(cell);
    const value = reading.values[field]?.[given.trim().toLowerCase()] ?? given;
    if (value.trim() === '') continue; // mapped to nothing
    if (field.startsWith(CUSTOM_PREFIX)) {
      const key = field.slice(CUSTOM_PREFIX.length);
      const values = (input[CUSTOM_VALUES.name] ??= {}) as Record<string, unknown>;
      // A field archived since the import began has no definition here: its text is refused as an unknown field.
      const definition = reading.custom?.[key];
      values[key] = definition ? valueOfText(definition, value, readersOf(reading)) : value;
      continue;
    }
    const type = CELL_TYPES[field];
    if (type === 'DateTime') {
      const time = pastTimeOf(value, reading.decimalComma);
      if (time) input[field] = time;
      continue;
    }
    input[field] =
      type === 'Float' ? (numberOf(value.trim(), reading.decimalComma) ?? value)
      : type === 'Date' ? (dayOf(value.trim(), reading.decimalComma) ?? value)
      : Object.hasOwn(ENUM_VALUES, field) ? enumValue(field, value.trim())
      : value;
  }
  return input;
}
