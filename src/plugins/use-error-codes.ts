import type { ExecutionResult } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from '../logger.js';
import { isAsyncIterable, withCodes } from '../graphql/mask.js';

/**
 * The last word on every answer of /graphql: each error carries an `extensions.code`
 * (docs/decisions.md §9 amended). Known failures got theirs where they happen; an error that reaches
 * this point without one is a failure nobody planned for, so it is logged and masked as internal.
 */
export function useErrorCodes(log: Logger): Plugin {
  const fix = (result: ExecutionResult) => withCodes(result, log);
  return {
    onResultProcess: ({ result, setResult }) => {
      if (Array.isArray(result)) setResult(result.map(fix));
      else if (!isAsyncIterable(result)) setResult(fix(result as ExecutionResult));
    },
  };
}
