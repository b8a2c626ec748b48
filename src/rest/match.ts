import { getOperationAST, validate, type DocumentNode, type OperationDefinitionNode } from 'graphql/index.js';
import { rootRules, type FieldRules } from '../graphql/rules.js';
import { schema } from '../schema.js';
import { decodeComponent } from '../http/hostile-bytes.js';
import { snakeCase } from '../names.js';
import type { Route } from './routes.js';
import { CF, CUSTOM_VARIABLES, takesCustomFields } from './custom-field-params.js';

export type Operation = { document: DocumentNode; operation: OperationDefinitionNode; field: string; responseKey: string };
export type Compiled = Operation & {
  route: Route;
  rules: FieldRules;
  target?: Operation;
  segments: string[];
  variants?: Record<string, Compiled>;
  /** The query parameters the route reads (its operation's variables, by their REST names): the only ones judged for hostile bytes, with `queryPrefixes`. */
  query: ReadonlySet<string>;
  /** Query parameters it reads by their prefix: a list's `cf.*` (custom-field-params.ts). */
  queryPrefixes: readonly string[];
  /** Headers the route reads as text beyond those every route reads (an upload's X-File-Name): judged for hostile bytes too. */
  headers: readonly string[];
};

/** Checked once at start: every REST operation is valid, names one root field, and that field declares rules. */
export function compileRoute(route: Route): Compiled {
  const compiled = operationOf(route, route.operation);
  const rules = rootRules(schema, compiled.operation.operation === 'mutation' ? 'mutation' : 'query', compiled.field);
  if (!rules) throw new Error(`REST operation for ${route.method} ${route.path}: ${compiled.field} declares no rules`);
  const target = route.target && operationOf(route, route.target);
  const variants = route.variants && Object.fromEntries(
    Object.entries(route.variants.operations).map(([value, operation]) => [value, compileRoute({ ...route, operation, variants: undefined })]),
  );
  if (variants && Object.values(variants).some((v) => v.responseKey !== compiled.responseKey || v.rules.limit?.name !== rules.limit?.name)) {
    throw new Error(`REST ${route.method} ${route.path}: its variants must answer under one key and share one limit`);
  }
  const segments = route.path.split('/');
  return { route, ...compiled, rules, target, segments, variants, query: queryParametersOf(route, compiled.operation, segments), queryPrefixes: takesCustomFields(compiled.operation) ? [CF] : [], headers: route.answer.kind === 'upload' ? ['x-file-name'] : [] };
}

/**
 * The query string's names a route reads: its operation's variables, snake_case, less its path
 * parameters and those filled from cf.* (custom-field-params.ts); none for a body route.
 */
function queryParametersOf(route: Route, operation: OperationDefinitionNode, segments: string[]): ReadonlySet<string> {
  if (route.input !== 'query' && route.input !== 'query-with-file') return new Set();
  const skipped = new Set([...segments.filter((s) => s.startsWith(':')).map((s) => s.slice(1)), ...CUSTOM_VARIABLES.map(snakeCase)]);
  return new Set((operation.variableDefinitions ?? []).map((d) => snakeCase(d.variable.name.value)).filter((name) => !skipped.has(name)));
}

/** Every document a route runs (its operation, target and variants): the ones executed compiled. */
const restDocuments = new WeakSet<DocumentNode>();
export const isRestDocument = (document: DocumentNode) => restDocuments.has(document);

function operationOf(route: Route, document: DocumentNode): Operation {
  restDocuments.add(document);
  const errors = validate(schema, document);
  const operation = getOperationAST(document);
  const root = operation?.selectionSet.selections[0];
  if (errors.length > 0 || !operation || root?.kind !== 'Field') {
    throw new Error(`REST operation for ${route.method} ${route.path} is invalid: ${errors.map((e) => e.message).join('; ')}`);
  }
  return { document, operation, field: root.name.value, responseKey: root.alias?.value ?? root.name.value };
}

/** The route a request names and its path parameters, or the methods its path has (none: no such path). */
export function match(table: Compiled[], method: string, pathname: string): { entry: Compiled; params: Record<string, string> } | { allow: string[] } {
  try {
    return matchDecoded(table, method, pathname);
  } catch {
    return { allow: [] }; // a path that does not even decode
  }
}

function matchDecoded(table: Compiled[], method: string, pathname: string) {
  const parts = pathname.replace(/\/+$/, '').split('/');
  const found: { entry: Compiled; params: Record<string, string>; wildcards: number }[] = [];
  for (const entry of table) {
    if (entry.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const same = entry.segments.every((segment, i) => {
      // A parameter with hostile bytes (a NUL, a bad escape, not UTF-8: src/http/hostile-bytes.ts) names nothing: 404.
      if (segment.startsWith(':')) {
        const value = decodeComponent(parts[i]!);
        params[segment.slice(1)] = value ?? '';
        return value !== null && value !== '';
      }
      return segment === parts[i];
    });
    if (same) found.push({ entry, params, wildcards: Object.keys(params).length });
  }
  // A literal path wins over a parameter (/contacts/export is never the contact "export").
  const fewest = Math.min(...found.map((f) => f.wildcards));
  const paths = found.filter((f) => f.wildcards === fewest);
  const hit = paths.find((f) => f.entry.route.method === method);
  if (hit) return { entry: hit.entry, params: hit.params };
  return { allow: [...new Set(paths.map((f) => f.entry.route.method))] };
}
