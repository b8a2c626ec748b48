import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { GraphQLError } from 'graphql/index.js';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { HTTP_STATUS, isAppError, notAJsonObject, withCode } from '../errors.js';
import { readJson } from '../http/body.js';

/**
 * Limits on what one /graphql document may ask for (OWASP API4: resource consumption). The REST
 * layer runs its own fixed, pre-validated operations and is not affected. Rate limits still count
 * every aliased call of a limited field; these bounds only keep one document cheap to parse and plan.
 * `maxCost` is the §11 ceiling, computed by src/graphql/cost.ts (graphql-armor's cost-limit weighs
 * depth, not the `first`/`last` a connection asks for, so it is not used).
 */
export const GRAPHQL_LIMITS = {
  maxTokens: 2_000,
  maxDepth: 8,
  maxAliases: 30,
  maxDirectives: 20,
  maxCost: 5_000,
  /** Operations in one batched request (a JSON array), docs/decisions.md §11. */
  maxBatch: 10,
} as const;

// Each refusal carries QUERY_TOO_COMPLEX (docs/decisions.md §9 amended), set before Yoga labels it a parse error.
const tooComplex = { onReject: [(_: unknown, error: GraphQLError) => void withCode(error, 'QUERY_TOO_COMPLEX')] };

export function graphqlArmor(production: boolean): Plugin[] {
  const plugins: Plugin[] = [
    maxTokensPlugin({ n: GRAPHQL_LIMITS.maxTokens, ...tooComplex }) as Plugin,
    maxDepthPlugin({ n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: true, flattenFragments: true, ...tooComplex }) as Plugin,
    maxAliasesPlugin({ n: GRAPHQL_LIMITS.maxAliases, ...tooComplex }) as Plugin,
    maxDirectivesPlugin({ n: GRAPHQL_LIMITS.maxDirectives, ...tooComplex }) as Plugin,
  ];
  if (production) plugins.push(hideSuggestions());
  return plugins;
}

// graphql-js words its hints `Did you mean "x"?`, `Did you mean "x" or "y"?`, `Did you mean the enum value "x"?`.
const SUGGESTION = /\s*Did you mean [^?]*\?/g;
/** A message without graphql-js's "Did you mean" hints. */
export const withoutSuggestions = (message: string) => message.replace(SUGGESTION, '');

/**
 * "Did you mean ...?" hints reveal the schema when introspection is off. They come from validation
 * and from variable values (checked only when the operation executes); graphql-armor's
 * block-field-suggestions plugin covers the first and only the `Did you mean "x"?` wording.
 */
export function hideSuggestions(): Plugin {
  const scrub = (errors: readonly unknown[] | undefined) => {
    for (const error of errors ?? []) if (error instanceof GraphQLError) error.message = withoutSuggestions(error.message);
  };
  return {
    onValidate: () => ({ valid, result }) => {
      if (!valid) scrub(result);
    },
    onExecute: () => ({
      // Execution errors are answered anew rather than changed: graphql-jit's, which compiled
      // operations raise (src/plugins/use-compiled-execution.ts), have a read-only message.
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors?.some((e) => withoutSuggestions(e.message) !== e.message)) return;
        setResult({ ...result, errors: result.errors.map(withoutHints) });
      },
    }),
  };
}

/** The error with its message's "Did you mean" hints taken out (the same error when it has none). */
function withoutHints(error: GraphQLError): GraphQLError {
  const message = withoutSuggestions(error.message);
  if (message === error.message) return error;
  const { nodes, source, positions, path, originalError, extensions } = error;
  return new GraphQLError(message, { nodes, source, positions, path, originalError, extensions });
}

/**
 * /graphql takes POSTed JSON only (no form encodings a cross-site form could send), within the same
 * 1 MiB as REST: one operation (an object) or a batch (an array of objects, at most `maxBatch`, which
 * Yoga's `batching` option enforces). GET stays for queries (Yoga refuses mutations over GET).
 * Every POST Yoga parses comes here (`/graphql` and `/graphql/` alike), so Yoga's own body limit is
 * off (src/app.ts `maxRequestBodySize`).
 */
export function graphqlBodyLimit(): Plugin {
  return {
    onRequestParse: ({ request, setRequestParser }) => {
      if (request.method !== 'POST') return;
      setRequestParser(async (req) => {
        try {
          const body = await readJson(req);
          const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
          if (Array.isArray(body) ? body.length === 0 || !body.every(isObject) : !isObject(body)) throw notAJsonObject();
          return body as GraphQLParams | GraphQLParams[];
        } catch (error) {
          // A request-level refusal: its status is the answer's (400 for a body that is not an object).
          if (isAppError(error)) error.extensions.http = { status: HTTP_STATUS[error.code] };
          throw error;
        }
      });
    },
  };
}
