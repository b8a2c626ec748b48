import { getNamedType, type GraphQLResolveInfo } from 'graphql/index.js';
import type { Viewer } from '../auth/viewer.js';
import type { Context } from '../context.js';
import { WRITE_TRANSACTION } from '../db/client.js';
import { committedEvent, isInDoubt, type CommittedEvent } from '../db/in-doubt.js';
import { inWrite, newFlight } from '../db/in-flight.js';
import type { Prisma } from '../generated/prisma/client.js';
import { once, readIdempotencyKey, storedAnswer } from '../idempotency/idempotency.service.js';
import { refundAdmission } from './admission.js';
import type { FieldRules, Write } from './field-rules.js';
import { markReplayed } from './replayed.js';
import { delegateOf } from '../db/datamodel.js';

/**
 * Fields that answered without reading Prisma's selection, by design: the record is unknown or
 * hidden (null: nothing to read), the write was one statement (its row comes back from that
 * statement), or a retry got the key's stored answer. Their selected relations are loaded by the
 * Prisma plugin's fallback, so its unused-query warning (builder.ts) says nothing worth fixing there.
 */
const withoutSelection = new WeakSet<GraphQLResolveInfo>();
export const answeredWithoutSelection = (info: GraphQLResolveInfo) => withoutSelection.has(info);
export const answersWithoutSelection = (info: GraphQLResolveInfo) => void withoutSelection.add(info);

/** An answer stored for the Idempotency-Key, given again: said so, and its call not charged again (docs/rest.md#idempotency). */
async function replayed(ctx: Context, info: GraphQLResolveInfo): Promise<void> {
  withoutSelection.add(info);
  markReplayed(ctx, info.path.key as string);
  await refundAdmission(ctx, info.path.key as string);
}

/** What a checked call writes with: who calls, what the key's stored answer must repeat, and whose account it writes. */
export type Writing = { rules: FieldRules; ctx: Context; info: GraphQLResolveInfo; viewer: Viewer | null; input: unknown; raw: unknown; target: { accountId: string } | null; accountId: string | undefined };

/**
 * How a checked field's write runs: in the line of its lock (FieldRules.line), in one transaction,
 * once per Idempotency-Key when the field is idempotent (the transaction also stores the answer,
 * which is what a retry gets back).
 */
export function writeOf({ rules, ctx, info, viewer, input, raw, target, accountId }: Writing): Write {
  const field = info.fieldName;
  const transaction: Write = async (work, claim = {}) => {
    const key = rules.idempotent ? readIdempotencyKey(ctx.request.headers) : null;
    if (claim.oneStatement) withoutSelection.add(info);
    // One transaction either way: the answer is what the write's own statements returned.
    // A write that is one statement is atomic by itself: BEGIN and COMMIT would be two more round trips.
    if (key === null && claim.oneStatement) return work(ctx.db as unknown as Prisma.TransactionClient);
    if (key === null) return ctx.db.$transaction(work, WRITE_TRANSACTION);
    const who = whoOf(viewer, ctx);
    const owner = claim.accountId ?? accountId ?? target?.accountId;
    if (!owner) throw new Error(`${field}: an idempotent write needs the account it writes to`);
    let wrote = false;
    const answer = await once(ctx.db, { operation: field, accountId: owner, scope: claim.scope ? `${who}:${claim.scope}` : who, key, request: claim.request ?? raw }, (tx) => {
      wrote = true;
      return work(tx);
    });
    if (!wrote) await replayed(ctx, info);
    return answer;
  };
  return (work, claim) => ctx.queue.run(rules.line?.(input, target) ?? null, () => answeredOnceKnown(ctx, info, () => transaction(work, claim)));
}

/** How long a write in doubt waits for the database to answer whether it committed. */
const IN_DOUBT_WAIT_MS = 10_000;

/**
 * `write`, answered by what it committed when its connection broke in flight and the database,
 * asked again, holds its events (src/db/in-doubt.ts): a record type is read back by id, a
 * delete answers its event's time. Otherwise (nothing committed, no answer in time, another answer
 * type) the error stands, and with it the 503.
 */
async function answeredOnceKnown<T>(ctx: Context, info: GraphQLResolveInfo, write: () => Promise<T>): Promise<T> {
  const flight = newFlight();
  try {
    return await inWrite(flight, write);
  } catch (err) {
    if (flight.eventIds.length === 0 || !isInDoubt(err)) throw err;
    const committed = await committedEvent(ctx.db, flight, new Date(), IN_DOUBT_WAIT_MS);
    const answer = committed ? await answerOfCommitted(ctx, info, committed) : undefined;
    if (answer === undefined) throw err;
    return answer as T;
  }
}

async function answerOfCommitted(ctx: Context, info: GraphQLResolveInfo, event: CommittedEvent): Promise<unknown> {
  const type = getNamedType(info.returnType);
  if (!event.subjectId) return undefined;
  if (type.name === 'DeletedRecord' && event.type.endsWith('.deleted')) return { id: event.subjectId, deletedAt: event.occurredAt };
  const model = type.extensions?.pothosPrismaModel;
  if (typeof model !== 'string') return undefined;
  return (await delegateOf<{ findUnique(args: object): Promise<unknown> }>(ctx.db, model).findUnique({ where: { id: event.subjectId } })) ?? undefined;
}

/**
 * A retry of a write whose record it removed (a delete): the first answer, as the key promises;
 * null when this caller stored none under the request's Idempotency-Key for this input.
 */
export async function replayOfRemoved(ctx: Context, info: GraphQLResolveInfo, viewer: Viewer | null, raw: unknown): Promise<Write | null> {
  const key = readIdempotencyKey(ctx.request.headers);
  const replay = key === null ? null : await storedAnswer(ctx.db, { operation: info.fieldName, scope: whoOf(viewer, ctx), key, request: raw });
  if (!replay) return null;
  return async () => {
    await replayed(ctx, info);
    return replay.answer as never;
  };
}

/** Who may reuse an Idempotency-Key: the user, the API key, or a visitor's address. */
const whoOf = (viewer: Viewer | null, ctx: Context) => (viewer ? `${viewer.apiKey ? 'key' : 'user'}:${viewer.id}` : `ip:${ctx.clientIp}`);

/** The write of a field whose target is hidden: there is nothing to write. */
export const noWrite: Write = () => {
  throw new Error('a field whose target is hidden writes nothing');
};
