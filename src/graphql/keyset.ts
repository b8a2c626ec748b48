// Keyset cursors (docs/connections.md): one format for the GraphQL connections (connection.ts) and
// REST's cursor pages (page.ts). A cursor carries the row's ordering value and id, so paging
// survives inserts and deletes, and a fingerprint of what it pages (collection, ordering, filter and,
// for an account's own lists, the account), so a cursor of another list is refused, not followed.
// Cursors are signed (HMAC-SHA256 with the service's cursor key, docs/configuration.md): a forged or
// edited one is refused before its values reach SQL (docs/decisions.md §24 "Cursors are signed").
import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { loadOrCreateDevSecret } from '../auth/dev-secret.js';
import type { Config } from '../config.js';
import { badInput } from '../errors.js';
import { Prisma } from '../generated/prisma/client.js';
import { uuid } from '../validation.js';
import { orderValue, type OrderColumn } from './collection.js';

export type Direction = 'ASC' | 'DESC';
export type Order = { field: string; direction: Direction };
export type Cursor = { value: string | null; id: string };

const digest = (text: string, length: number) => createHash('sha256').update(text).digest('base64url').slice(0, length);

/** Drops empty values and sorts keys, so one filter always has one fingerprint. */
const canonical = (value: unknown): unknown => {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined && v !== null)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
};

/** The fingerprint of a list: the same collection, ordering, filter (parsed) and account give the same one. */
export const fingerprintOf = (collection: string, order: Order, filter: object | null, accountId: string | null) =>
  digest(JSON.stringify([collection, order.field, order.direction, canonical(filter ?? {}), accountId]), 12);

/**
 * The key that signs cursors: CURSOR_SECRET, else derived from AUTH_JWT_SECRET (every instance has
 * it), else outside production a development key in DATA_DIR (config.ts refuses production without one).
 * HKDF keeps it apart from the token secret it may come from.
 */
export async function loadCursorKey(config: Config): Promise<Buffer> {
  return cursorKeyOf(config.cursorSecret ?? config.auth.jwtSecret ?? (await loadOrCreateDevSecret(config.dataDir, 'dev-cursor-key')));
}

export const cursorKeyOf = (material: string) => Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), 'list cursors v1', 32));

/** The signature of a cursor's parts: 128 bits of HMAC-SHA256 under the service's cursor key. */
const sign = (key: Buffer, parts: unknown[]) => createHmac('sha256', key).update(JSON.stringify(parts)).digest('base64url').slice(0, 22);

/** A cursor grants nothing (the account is checked on every request); the signature keeps its values the service's own. */
export function encodeCursor(key: Buffer, fingerprint: string, cursor: Cursor): string {
  const parts = [fingerprint, cursor.value, cursor.id];
  return Buffer.from(JSON.stringify([...parts, sign(key, parts)])).toString('base64url');
}

const signedBy = (key: Buffer, parts: unknown[], signature: unknown) => {
  if (typeof signature !== 'string') return false;
  const [given, expected] = [Buffer.from(signature), Buffer.from(sign(key, parts))];
  return given.length === expected.length && timingSafeEqual(given, expected);
};

// A real calendar's ranges (month 01-12, day 01-31, hour 00-23, ...), so a value PostgreSQL cannot
// cast never reaches it: a second line behind the signature.
const DAY = String.raw`\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])`;
const VALUE_SHAPE: Record<OrderColumn['type'], RegExp> = {
  timestamptz: new RegExp(String.raw`^${DAY}[ T]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)$`),
  date: new RegExp(`^${DAY}$`),
  // A custom NUMBER field holds any finite double (docs/custom-fields.md#types): up to 309 digits.
  numeric: /^-?\d{1,309}(\.\d{1,10})?$/,
  text: /^[^\u0000]*$/,
};

/** The cursor `text` given as argument `name`, or BAD_USER_INPUT on `name` when it is not one of this list's. */
export function decodeCursor(name: string, text: string | null | undefined, list: { key: Buffer; fingerprint: string; column: OrderColumn }): Cursor | null {
  if (text == null) return null;
  const refuse = (message: string) => badInput({ [name]: [message] });
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw refuse('Not a cursor of this list');
  }
  if (!Array.isArray(parts) || parts.length !== 4) throw refuse('Not a cursor of this list');
  const [fingerprint, value, id, sum] = parts as unknown[];
  if (!signedBy(list.key, [fingerprint, value, id], sum)) throw refuse('Not a cursor of this list');
  if (fingerprint !== list.fingerprint) throw refuse('The cursor belongs to another ordering, filter or account');
  const valid = (value === null || (typeof value === 'string' && VALUE_SHAPE[list.column.type].test(value))) && uuid.safeParse(id).success;
  if (!valid) throw refuse('Not a cursor of this list');
  return { value: value as string | null, id: id as string };
}

/**
 * Whether NULLs stand as the largest value in an `ascending` read: PostgreSQL's default (last
 * ascending, first descending), unless the column keeps them last either way (`nullsLast`), which a
 * descending read makes the smallest.
 */
const nullsLargest = (column: OrderColumn, ascending: boolean) => !column.nullsLast || ascending;

/**
 * Rows strictly beyond the cursor in `towards` (ascending = greater), in a list whose order is
 * `ascending` (which says where its NULLs stand: nullsLargest).
 */
export function beyond(column: OrderColumn, cursor: Cursor, towards: 'greater' | 'less', ascending: boolean): Prisma.Sql {
  const c = orderValue(column);
  const id = Prisma.sql`CAST(${cursor.id} AS uuid)`;
  // NULL as the smallest value is NULL as the largest seen from the other side.
  const side = nullsLargest(column, ascending) ? towards : towards === 'greater' ? 'less' : 'greater';
  const op = (dir: 'greater' | 'less') => Prisma.raw(dir === 'greater' ? '>' : '<');
  if (cursor.value === null) {
    return side === 'greater' ? Prisma.sql`(${c} IS NULL AND t.id ${op(towards)} ${id})` : Prisma.sql`(${c} IS NOT NULL OR t.id ${op(towards)} ${id})`;
  }
  const value = Prisma.sql`CAST(${cursor.value} AS ${Prisma.raw(column.type)})`;
  const compared = Prisma.sql`((${c}, t.id) ${op(towards)} (${value}, ${id}))`;
  return side === 'greater' && (column.nullable || column.nullsLast) ? Prisma.sql`(${compared} OR ${c} IS NULL)` : compared;
}

/**
 * NULLS LAST/FIRST of a read in `direction` (the list's, or its reverse when read from the end) of a
 * list whose order is `ascending`, for a column keeping its NULLs last; nothing (PostgreSQL's
 * default, which the indexes serve) for any other.
 */
export const nullsSql = (column: OrderColumn, direction: Direction, ascending: boolean) =>
  !column.nullsLast ? Prisma.empty : Prisma.raw(nullsLargest(column, ascending) === (direction === 'ASC') ? 'NULLS LAST' : 'NULLS FIRST');

export const orderSql = (column: OrderColumn, direction: Direction, ascending: boolean) => {
  const dir = Prisma.raw(direction);
  return Prisma.sql`${orderValue(column)} ${dir} ${nullsSql(column, direction, ascending)}, t.id ${dir}`;
};
