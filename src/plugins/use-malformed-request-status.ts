import { GraphQLError, type ExecutionResult } from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import { isAsyncIterable } from '../graphql/mask.js';

/**
 * A request that is not a well-formed GraphQL-over-HTTP request (no `query`, `params` not an
 * object) is a 400 whatever media type it accepts, as GraphQL over HTTP says for `application/json`
 * too ("Invalid parameters": SHOULD be 400) and as Yoga already answers a misspelt `qeury`. Yoga
 * marks these two `http.spec`, which would make them 200 for `application/json` (legacy) only; the
 * mark goes, so docs/graphql.md#error-codes holds: `BAD_REQUEST` is never a 200.
 */
export function useMalformedRequestStatus(): Plugin {
  const fix = (result: ExecutionResult): ExecutionResult =>
    result.errors?.some(isSpecMarkedBadRequest) ? { ...result, errors: result.errors.map((e) => (isSpecMarkedBadRequest(e) ? withoutSpecMark(e) : e)) } : result;
  return {
    onResultProcess: ({ result, setResult }) => {
      if (Array.isArray(result)) setResult(result.map(fix));
      else if (!isAsyncIterable(result)) setResult(fix(result as ExecutionResult));
    },
  };
}

type HttpExtension = { status?: number; spec?: boolean; headers?: Record<string, string> };

const isSpecMarkedBadRequest = (error: GraphQLError) =>
  error.extensions?.code === 'BAD_REQUEST' && Boolean((error.extensions.http as HttpExtension | undefined)?.spec);

function withoutSpecMark(error: GraphQLError): GraphQLError {
  const { spec: _spec, ...http } = error.extensions.http as HttpExtension;
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, http: { ...http, status: http.status ?? 400 } },
  });
}
