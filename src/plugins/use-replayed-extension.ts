import type { ExecutionResult } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { replayedFields } from '../graphql/replayed.js';

/** `extensions.idempotentReplayed: ["createContact", ...]` on an operation that replayed any. */
export function useReplayedExtension(): Plugin {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        const keys = replayedFields(args.contextValue as unknown as Context);
        if (keys && isResult(result)) setResult({ ...result, extensions: { ...result.extensions, idempotentReplayed: keys } });
      },
    }),
  };
}

const isResult = (value: unknown): value is ExecutionResult => typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
