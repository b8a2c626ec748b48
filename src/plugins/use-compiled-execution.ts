import { useGraphQlJit } from '@envelop/graphql-jit';
import { getOperationAST, Kind, type DocumentNode } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';

/** A query that may run compiled: its document's one operation, with any fragments it spreads (as Apollo's clients send them). */
export const compilable = (document: DocumentNode): boolean =>
  document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION).length === 1 && getOperationAST(document)?.operation === 'query';

/**
 * Which documents run compiled (graphql-jit, through envelop's own plugin for it): the same
 * resolvers, rules and execute hooks, without the standard executor building a resolve info,
 * arguments and path objects field by field in a generic walk (BENCHMARKS.md "The fixed cost of a
 * REST request"). `fixed` (REST's operations) from their first run. A client's query from its second:
 * Yoga's parser cache hands the same document back for the same text (at most 1,000 of them, the
 * oldest dropped first), so the compiled ones are as bounded as it is, and one sent once is never
 * compiled. Only a document of one operation: the plugin keeps one compiled operation per document.
 * (Variables that do not coerce never reach either executor: src/plugins/use-variable-errors.ts refuses them.)
 */

export function useCompiledExecution(fixed: (document: DocumentNode) => boolean): Plugin {
  const runs = new WeakMap<DocumentNode, number>();
  const repeated = (document: DocumentNode) => {
    const seen = (runs.get(document) ?? 0) + 1;
    runs.set(document, seen);
    return seen > 1;
  };
  return useGraphQlJit({}, {
    enableIf: ({ document }) => fixed(document) || (compilable(document) && repeated(document)),
  }) as Plugin;
}
