import type { ExecutionResult } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
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

/** `extensions.idempotentReplayed: ["createContact", ...]` on an operation that replayed any. */
export function useReplayedExtension(): Plugin {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        const keys = replays.get(args.contextValue as unknown as Context);
        if (keys && isResult(result)) setResult({ ...result, extensions: { ...result.extensions, idempotentReplayed: keys } });
      },
    }),
  };
}

const isResult = (value: unknown): value is ExecutionResult => typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
