// Which field each CSV column feeds (docs/imports.md#columns): field names and the CSV export's own
// labels, case-, space- and underscore-insensitively, unless `mapping` says otherwise.
import { parseCalendarDate } from '../dates.js';
import type { ErrorDetails } from '../errors.js';

export type ImportObjectName = 'contacts' | 'deals';

/** Each object's fields (as the batch input names them), their REST names, and what creating one needs. */
export const FIELDS: Record<ImportObjectName, { fields: Record<string, string>; required: string[] }> = {
  contacts: {
    fields: {
      first_name: 'firstName', last_name: 'lastName', email: 'email', phone: 'phone', company: 'company',
      contact_type: 'contactType', source: 'source', external_id: 'externalId',
    },
    required: ['firstName'],
  },
  deals: {
    fields: {
      title: 'title', contact_id: 'contactId', stage_id: 'stageId', value: 'value', probability: 'probability',
      expected_close_date: 'expectedCloseDate', external_id: 'externalId',
    },
    required: ['title'],
  },
};

/** Columns the service writes itself: recognised (the export has them) but never imported, nor listed as unknown. */
const READ_ONLY = new Set(['createdat', 'updatedat', 'id']);

const norm = (header: string) => header.toLowerCase().replace(/[\s_]+/g, '');
const restName = (object: ImportObjectName, field: string) => Object.entries(FIELDS[object].fields).find(([, f]) => f === field)![0];

export type ColumnPlan = { columns: (string | null)[]; unknown: string[] };

/**
 * The field of each column (null: ignored), the unknown headers, or the 400 naming what is wrong:
 * a `mapping` naming no field, or no column for a required field (or for the `match_on` field).
 */
export function planColumns(object: ImportObjectName, headers: string[], mapping: Record<string, string>, matchOn: string | null): ColumnPlan | { details: ErrorDetails } {
  const { fields, required } = FIELDS[object];
  const details: ErrorDetails = {};
  const byNorm = new Map(Object.entries(fields).map(([rest, field]) => [norm(rest), field]));
  // The export's labels (`First Name`, `Contact Type`: CSV_COLUMNS) normalise to the field names.
  const mapped = new Map(Object.entries(mapping).map(([header, rest]) => [norm(header), rest]));
  for (const [header, rest] of Object.entries(mapping)) {
    if (!Object.hasOwn(fields, rest)) details[`mapping.${header}`] = [`Must be one of: ${Object.keys(fields).join(', ')}`];
  }
  const unknown: string[] = [];
  const columns = headers.map((header) => {
    const key = norm(header);
    const field = mapped.has(key) ? fields[mapped.get(key)!] ?? null : byNorm.get(key) ?? null;
    if (!field && !READ_ONLY.has(key) && !mapped.has(key)) unknown.push(header);
    return field;
  });
  for (const field of [...required, ...(matchOn ? [matchOn] : [])]) {
    if (!columns.includes(field)) details[restName(object, field)] ??= [field === matchOn && !required.includes(field) ? 'No column for the match_on field' : 'No column for this required field'];
  }
  for (const [i, field] of columns.entries()) {
    if (field && columns.indexOf(field) !== i) details[restName(object, field)] ??= ['More than one column'];
  }
  return Object.keys(details).length ? { details } : { columns, unknown };
}

/** The export's formula guard undone (docs/decisions.md §6): `'` before `=`, `+`, `-`, `@`, tab or CR, per `;`-part as the export guards. */
const GUARDED = /^'[=+\-@\t\r]/;
const unguardPart = (part: string) => (GUARDED.test(part) ? part.slice(1) : part);
export const unguard = (cell: string): string => (cell.includes(';') ? cell.split(';').map(unguardPart).join(';') : unguardPart(cell));

const NUMBER = /^-?\d+(\.\d+)?$/;

/**
 * A row's cells as a batch input: each mapped, non-empty cell unguarded; numbers and days as the
 * deal rules take them (anything else is left as text for the rules to refuse by name).
 */
export function inputOf(columns: (string | null)[], cells: string[]): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [i, field] of columns.entries()) {
    const cell = cells[i];
    if (!field || cell === undefined || cell.trim() === '') continue;
    const value = unguard(cell);
    input[field] =
      (field === 'value' || field === 'probability') && NUMBER.test(value.trim()) ? Number(value)
      : field === 'expectedCloseDate' ? (parseCalendarDate(value.trim()) ?? value)
      : value;
  }
  return input;
}
