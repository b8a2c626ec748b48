import type { Context } from '../context.js';

// The root fields of each operation answered from an Idempotency-Key's stored answer (by context:
// each operation of a batch has its own).
const replays = new WeakMap<Context, string[]>();

/**
 * Says that `responseKey`'s answer is the one stored for the request's Idempotency-Key: the answer
 * carries `Idempotent-Replayed: true` (src/app.ts, REST and GraphQL alike) and, on GraphQL,
 * `extensions.idempotentReplayed` naming the fields (docs/rest.md#idempotency).
 */
export function markReplayed(ctx: Context, responseKey: string): void {
  ctx.state.replayed = true;
  let keys = replays.get(ctx);
  if (!keys) replays.set(ctx, (keys = []));
  if (!keys.includes(responseKey)) keys.push(responseKey);
}

/** The root fields of the context's operation answered from stored answers; none when it replayed nothing. */
export const replayedFields = (ctx: Context): readonly string[] | undefined => replays.get(ctx);
