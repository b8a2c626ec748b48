import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { badInput, idempotencyConflict, idempotencyInProgress, type ErrorDetails } from '../errors.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { WRITE_TRANSACTION } from '../db/client.js';
import { internalKeysOf } from '../db/internal-columns.js';

export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** A key still in flight this long after it was taken is treated as abandoned (its writer died). */
const ABANDONED_MS = 60_000;
const WAIT_STEP_MS = 50;
const WAIT_MAX_MS = 15_000;

export type IdempotencyClaim = { accountId: string; scope: string; operation: string; key: string; request: unknown };

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * What is wrong with the Idempotency-Key header, named as a payload field (`idempotency_key`):
 * nothing when it is absent or printable ASCII of 1 to 255 characters.
 */
export function idempotencyKeyProblems(headers: Headers): ErrorDetails {
  const key = headers.get('idempotency-key');
  return key === null || KEY_PATTERN.test(key) ? {} : { idempotency_key: ['Must be 1 to 255 printable ASCII characters'] };
}

/** The Idempotency-Key header, checked (idempotencyKeyProblems): null without one. */
export function readIdempotencyKey(headers: Headers): string | null {
  const problems = idempotencyKeyProblems(headers);
  if (Object.keys(problems).length > 0) throw badInput(problems);
  return headers.get('idempotency-key');
}

/** Same input, same hash, whatever the order of object keys. */
export function requestHash(value: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === 'object' && !(v instanceof Date)
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]))
        : v;
  return createHash('sha256').update(JSON.stringify(canonical(value)) ?? 'null').digest('hex');
}

/**
 * Runs `write` at most once per key (as Stripe does): the first caller takes the key, writes, and
 * stores its answer; a retry with the same input gets that answer back; the same key with other
 * input is a conflict; a racing twin waits for the first to finish. `write` gets a transaction and
 * must write through it: the answer is stored in that same transaction, so a write is committed if
 * and only if its answer is, and a failed write (or a failed store) frees the key with nothing kept.
 */
export async function once<T>(db: PrismaClient, claim: IdempotencyClaim, write: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  const hash = requestHash(claim.request);
  const where = { scope_operation_key_accountId: claimWhere(claim) };
  const deadline = Date.now() + WAIT_MAX_MS;
  await sweepExpired(db);
  let taken: string | null;
  while ((taken = await take(db, claim, hash)) === null) {
    const existing = await db.idempotencyKey.findUnique({ where });
    if (!existing) continue; // freed between our insert and read: try to take it again
    if (existing.requestHash !== hash) {
      throw idempotencyConflict();
    }
    // Completed, whatever the answer (a write may answer nothing): the write and the answer committed together.
    if (existing.completedAt !== null) return revive(existing.result) as T;
    // Unfinished: no write was committed (it commits with its answer), so the key is safe to hand on.
    if (Date.now() - existing.createdAt.getTime() > ABANDONED_MS) {
      await db.idempotencyKey.deleteMany({ where: { id: existing.id, completedAt: null } });
      continue;
    }
    if (Date.now() > deadline) {
      throw idempotencyInProgress();
    }
    await sleep(WAIT_STEP_MS);
  }
  const id = taken;
  try {
    return await db.$transaction(async (tx) => {
      const result = await write(tx);
      // By id: should the key have been handed on meanwhile, this fails and the write rolls back.
      await tx.idempotencyKey.update({ where: { id }, data: { result: stored(result), completedAt: new Date() } });
      return result;
    }, WRITE_TRANSACTION); // well under ABANDONED_MS: a key in flight longer is its writer's death
  } catch (error) {
    await db.idempotencyKey.deleteMany({ where: { id, completedAt: null } }).catch(() => undefined);
    throw error;
  }
}

/**
 * The answer a finished write gave this caller for this key and input, when the record it addressed
 * is gone since (a delete's retry): found without the account, which only that record could name.
 * Null when there is none (the caller hears NOT_FOUND as without a key).
 */
export async function storedAnswer(db: PrismaClient, claim: Omit<IdempotencyClaim, 'accountId'>): Promise<{ answer: unknown } | null> {
  const found = await db.idempotencyKey.findFirst({
    where: {
      scope: scopeKey(claim.scope), operation: claim.operation, key: claim.key, requestHash: requestHash(claim.request),
      completedAt: { not: null }, createdAt: { gte: new Date(Date.now() - KEY_TTL_MS) },
    },
    select: { result: true },
  });
  return found && { answer: revive(found.result) };
}

/** Inserts the key unless a live one exists (an expired one, older than 24 h, is replaced); the new row's id, or null. */
async function take(db: PrismaClient, claim: IdempotencyClaim, hash: string): Promise<string | null> {
  await db.idempotencyKey.deleteMany({
    where: { ...claimWhere(claim), createdAt: { lt: new Date(Date.now() - KEY_TTL_MS) } },
  });
  const inserted = await db.idempotencyKey.createManyAndReturn({
    data: [{ ...claimWhere(claim), requestHash: hash }],
    skipDuplicates: true,
    select: { id: true },
  });
  return inserted[0]?.id ?? null;
}

const SWEEP_EVERY_MS = 60_000;
export const SWEEP_BATCH = 500;
/** When this process last swept each database (a WeakMap: a closed client is forgotten with it). */
const lastSweep = new WeakMap<PrismaClient, number>();

/**
 * Expired keys whose scope never comes back (a visitor's IP, a one-off script) would stay forever:
 * at most once a minute per process, taking a key also deletes a bounded batch of expired keys,
 * oldest first (the created_at index), skipping rows another process is deleting.
 */
async function sweepExpired(db: PrismaClient): Promise<void> {
  const now = Date.now();
  if (now - (lastSweep.get(db) ?? 0) < SWEEP_EVERY_MS) return;
  lastSweep.set(db, now);
  const cutoff = new Date(now - KEY_TTL_MS);
  const deleted = await db.$executeRaw`
    DELETE FROM idempotency_keys WHERE id IN (
      SELECT id FROM idempotency_keys WHERE created_at < ${cutoff}::timestamptz
      ORDER BY created_at LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`.catch(() => 0); // housekeeping never fails a write
  // A full batch means more are waiting: the next key taken sweeps again.
  if (deleted === SWEEP_BATCH) lastSweep.delete(db);
}

/** The scope is stored as its SHA-256 (64 hex characters): whatever a client puts in it, it fits the column. */
export const scopeKey = (scope: string): string => createHash('sha256').update(scope).digest('hex');

const claimWhere = ({ accountId, scope, operation, key }: IdempotencyClaim) => ({ accountId, scope: scopeKey(scope), operation, key });

/**
 * The answer as JSON that keeps its types: a replay hands the resolvers the same Dates and Decimals
 * the write's own RETURNING gave them (plain JSON would turn them into strings). A row's internal
 * columns (src/db/internal-columns.ts: sort keys, leases) are not kept: no answer shows them. A date
 * no ISO string holds (an Invalid Date, as a driver reads a year past 9999) is kept as null rather
 * than failing the write; years past 9999 that a Date holds are kept in ISO 8601's expanded form.
 */
export function stored(result: unknown): Prisma.InputJsonValue {
  return JSON.parse(
    JSON.stringify(result ?? null, function (this: Record<string, unknown>, key, value) {
      const raw = this[key];
      if (raw instanceof Date) return { $date: Number.isNaN(raw.getTime()) ? null : raw.toISOString() };
      if (Prisma.Decimal.isDecimal(raw)) return { $decimal: String(raw) };
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        const internal = internalKeysOf(value as Record<string, unknown>);
        if (internal.length) return Object.fromEntries(Object.entries(value).filter(([k]) => !internal.includes(k)));
      }
      return value;
    }),
  ) as Prisma.InputJsonValue;
}

function revive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revive);
  if (!value || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0]![0] === '$date') return entries[0]![1] === null ? null : new Date(entries[0]![1] as string);
  if (entries.length === 1 && entries[0]![0] === '$decimal') return new Prisma.Decimal(entries[0]![1] as string);
  return Object.fromEntries(entries.map(([k, v]) => [k, revive(v)]));
}
