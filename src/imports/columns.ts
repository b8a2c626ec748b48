// Which field each CSV column feeds (docs/imports.md#columns): field names and the CSV export's own
// labels, case-, space- and underscore-insensitively, unless `mapping` says otherwise.
import { parseCalendarDate } from '../dates.js';
import type { ErrorDetails } from '../errors.js';
import { createCompanyInput } from '../companies/company.service.js';
import { snakeCase } from '../names.js';
import { importColumnsOf } from '../field-spec.js';
import { CONTACT_FIELDS } from '../contacts/contact.fields.js';

export type ImportObjectName = 'contacts' | 'deals' | 'companies';

/** REST name -> field, for every field of a create input but its account: a field the record gains is a column at once. */
const fieldsOf = (input: { shape: object }): Record<string, string> =>
  Object.fromEntries(Object.keys(input.shape).filter((field) => field !== 'accountId').map((field) => [snakeCase(field), field]));

/**
 * Each object's fields (as the batch input names them), their REST names, what creating one needs,
 * and other headers that name a field (REST name), as other systems' exports spell them.
 */
export type ImportColumns = { fields: Record<string, string>; required: string[]; aliases?: Record<string, string> };
export const FIELDS: Record<ImportObjectName, ImportColumns> = {
  contacts: importColumnsOf(CONTACT_FIELDS),
  deals: {
    fields: {
      title: 'title', contact_id: 'contactId', stage_id: 'stageId', value: 'value', probability: 'probability',
      expected_close_date: 'expectedCloseDate', external_id: 'externalId',
    },
    required: ['title'],
  },
  companies: {
    fields: fieldsOf(createCompanyInput),
    required: ['name'],
    // HubSpot's companies export (test/companies/import.test.ts); its `Record ID` is mapped to external_id, as for contacts.
    aliases: { 'Company name': 'name', 'Company Domain Name': 'domain', 'Website URL': 'website', 'Phone Number': 'phone' },
  },
};

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
  const byNorm = new Map([...Object.entries(aliases).map(([header, rest]) => [norm(header), fields[rest]!] as const), ...Object.entries(fields).map(([rest, field]) => [norm(rest), field] as const)]);
  // The export's labels (CSV_COLUMNS) normalise to the field names.
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
  const unknown: string[] = [];
  const columns = headers.map((header) => {
    const key = norm(header);
    const to = mapped.get(key);
    const field = to === undefined ? byNorm.get(key) ?? null : to === SKIP ? null : fields[to] ?? null;
    if (!field && to !== SKIP) unknown.push(header);
    return field;
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

/** How a row's cells are read: the import's value mapping, and whether a comma may be a decimal mark. */
export type CellReading = { values: ValueMapping; decimalComma: boolean };

const numberOf = (text: string, decimalComma: boolean): number | null => {
  if (NUMBER.test(text)) return Number(text);
  return decimalComma && DECIMAL_COMMA.test(text) ? Number(text.replaceAll('.', '').replace(',', '.')) : null;
};

/**
 * A row's cells as a batch input: each mapped, non-empty cell unguarded and its value mapped;
 * numbers and days as the deal rules take them (anything else is left as text for the rules to
 * refuse by name).
 */
export function inputOf(columns: (string | null)[], cells: string[], reading: CellReading = { values: {}, decimalComma: false }): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [i, field] of columns.entries()) {
    const cell = cells[i];
    if (!field || cell === undefined || cell.trim() === '') continue;
    const given = unguard(cell);
    const value = reading.values[field]?.[given.trim().toLowerCase()] ?? given;
    if (value.trim() === '') continue; // mapped to nothing
    input[field] =
      (field === 'value' || field === 'probability') ? (numberOf(value.trim(), reading.decimalComma) ?? value)
      : field === 'expectedCloseDate' ? (parseCalendarDate(value.trim()) ?? value)
      : value;
  }
  return input;
}
