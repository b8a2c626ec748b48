import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, badInput } from '../errors.js';
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';

export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/** A key still in flight this long after it was taken is treated as abandoned (its writer died). */
const ABANDONED_MS = 60_000;
const WAIT_STEP_MS = 50;
const WAIT_MAX_MS = 15_000;

export type IdempotencyClaim = { accountId: string; scope: string; operation: string; key: string; request: unknown };

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key header, checked: printable ASCII, 1 to 255 characters. */
export function readIdempotencyKey(headers: Headers): string | null {
  const key = headers.get('idempotency-key');
  if (key === null) return null;
  if (!KEY_PATTERN.test(key)) throw badInput({ idempotency_key: ['Must be 1 to 255 printable ASCII characters'] });
  return key;
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
 * input is a conflict; a racing twin waits for the first to finish. A failed write frees the key.
 */
export async function once<T>(db: PrismaClient, claim: IdempotencyClaim, write: () => Promise<T>): Promise<T> {
  const hash = requestHash(claim.request);
  const where = { accountId_scope_operation_key: { accountId: claim.accountId, scope: claim.scope, operation: claim.operation, key: claim.key } };
  const deadline = Date.now() + WAIT_MAX_MS;
  for (;;) {
    if (await take(db, claim, hash)) break;
    const existing = await db.idempotencyKey.findUnique({ where });
    if (!existing) continue; // freed between our insert and read: try to take it again
    if (existing.requestHash !== hash) {
      throw new AppError('IDEMPOTENCY_CONFLICT', 'Idempotency key reused with a different payload');
    }
    if (existing.result !== null) return existing.result as T;
    if (Date.now() - existing.createdAt.getTime() > ABANDONED_MS) {
      await db.idempotencyKey.deleteMany({ where: { id: existing.id, completedAt: null } });
      continue;
    }
    if (Date.now() > deadline) {
      throw new AppError('IDEMPOTENCY_IN_PROGRESS', 'A request with this idempotency key is still in progress');
    }
    await sleep(WAIT_STEP_MS);
  }
  try {
    const result = await write();
    await db.idempotencyKey.update({ where, data: { result: result as Prisma.InputJsonValue, completedAt: new Date() } });
    return result;
  } catch (error) {
    await db.idempotencyKey.delete({ where }).catch(() => undefined);
    throw error;
  }
}

/** Inserts the key unless a live one exists; an expired one (older than 24 h) is replaced. */
async function take(db: PrismaClient, claim: IdempotencyClaim, hash: string): Promise<boolean> {
  await db.idempotencyKey.deleteMany({
    where: { ...claimWhere(claim), createdAt: { lt: new Date(Date.now() - KEY_TTL_MS) } },
  });
  const inserted = await db.idempotencyKey.createMany({
    data: [{ ...claimWhere(claim), requestHash: hash }],
    skipDuplicates: true,
  });
  return inserted.count === 1;
}

const claimWhere = ({ accountId, scope, operation, key }: IdempotencyClaim) => ({ accountId, scope, operation, key });
