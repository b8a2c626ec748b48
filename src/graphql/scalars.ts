import { Kind, type ValueNode } from 'graphql/index.js';
import { invalidValue } from '../errors.js';
import { builder } from './builder.js';
import { calendarDay, formatDate, inStorableYears, parseCalendarDate } from '../dates.js';
import { TYPE_MESSAGES } from '../validation.js';

const stringLiteral = (ast: ValueNode): unknown => (ast.kind === Kind.STRING ? ast.value : undefined);

builder.scalarType('Date', {
  description: 'A calendar date, YYYY-MM-DD',
  serialize: (value) => formatDate(value),
  parseValue: (value) => {
    const date = parseCalendarDate(value);
    if (!date) throw invalidValue(TYPE_MESSAGES.day);
    return date;
  },
  parseLiteral: (ast) => {
    const date = parseCalendarDate(stringLiteral(ast));
    if (!date) throw invalidValue(TYPE_MESSAGES.day);
    return date;
  },
});

const ISO_TIMESTAMP = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A real day (Date would roll 2026-02-30 over to March) at a real time, of an instant PostgreSQL can store. */
function parseTimestamp(value: unknown): Date {
  const match = typeof value === 'string' ? ISO_TIMESTAMP.exec(value) : null;
  const date = match && calendarDay(match[1]) ? new Date(value as string) : null;
  if (!date || Number.isNaN(date.getTime())) {
    throw invalidValue('Must be an ISO 8601 timestamp with a time zone');
  }
  // An offset can carry 0001-01-01 into year 0 (UTC), which the database would refuse.
  if (!inStorableYears(date)) throw invalidValue('Must be from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z');
  return date;
}

builder.scalarType('DateTime', {
  description: 'An ISO 8601 timestamp, always returned in UTC with Z',
  serialize: (value) => value.toISOString(),
  parseValue: parseTimestamp,
  parseLiteral: (ast) => parseTimestamp(stringLiteral(ast)),
});

function literalToJson(ast: ValueNode, variables?: Record<string, unknown> | null): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map((item) => literalToJson(item, variables));
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((field) => [field.name.value, literalToJson(field.value, variables)]));
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
    default:
      return undefined;
  }
}

/**
 * JSON nested deeper than this is refused: nothing the service keeps needs more, and a deeper value
 * (a 1 MiB body holds 500,000 levels) would overflow the stack of whatever walks it (hashing, the driver).
 */
export const JSON_MAX_DEPTH = 32;

/**
 * Recurses at most `max` levels (it answers before going deeper), so the check itself cannot
 * overflow; and allocates nothing per value (a batch's values are walked on every write).
 */
export function jsonDepthWithin(value: unknown, max: number, depth = 1): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth > max) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!jsonDepthWithin(item, max, depth + 1)) return false;
    return true;
  }
  for (const key in value) if (!jsonDepthWithin((value as Record<string, unknown>)[key], max, depth + 1)) return false;
  return true;
}

const boundedJson = (value: unknown): unknown => {
  if (!jsonDepthWithin(value, JSON_MAX_DEPTH)) throw invalidValue(`Must be nested at most ${JSON_MAX_DEPTH} levels deep`);
  return value;
};

builder.scalarType('JSON', {
  description: 'Any JSON value',
  serialize: (value) => value,
  parseValue: boundedJson,
  parseLiteral: (ast, variables) => boundedJson(literalToJson(ast, variables)),
});

/**
 * A money column as the JSON number the API answers (docs/decisions.md: two decimals), from a
 * Prisma Decimal or from the exact text a list page's SQL returns (page-sql.ts).
 */
export const moneyOf = (value: { toString(): string } | string): number => Number(value.toString());
