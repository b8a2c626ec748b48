import type { GraphQLError } from 'graphql/index.js';
import type { YogaServerInstance } from 'graphql-yoga';
import type { Context, ServerContext } from '../context.js';
import { isAppError, notFound, type ErrorDetails } from '../errors.js';
import type { FieldRules } from '../graphql/rules.js';
import { jsonObject, readJson } from '../http/body.js';
import { checkCsvMessage } from '../imports/intake.js';
import { schema } from '../schema.js';
import { fromCoreError, invalidInput, type InputSource, type RestError } from './errors.js';
import { restFieldName } from './field-names.js';
import { VariableReader } from './input.js';
import type { Compiled, Operation } from './match.js';
import { readVariables, type Variables } from './read-variables.js';
import type { Route } from './routes.js';

/** Where the route reads its input from, which names its 400 (docs/decisions.md §2). */
export const sourceOf = (route: Route): InputSource => (route.input === 'query' || route.input === 'query-with-file' ? 'query' : 'body');

export type Enveloped = ReturnType<YogaServerInstance<ServerContext, Context>['getEnveloped']>;

/** A request being read: its route, path parameters and the context its operation will run in. */
export type Reading = { compiled: Compiled; params: Record<string, string>; request: Request; url: URL; ctx: Context; enveloped: Enveloped };

/** What the request asks for: the route (a variant's, if the body chose one) and its variables, the version If-Match names. */
export type Input = Variables & { compiled: Compiled; ifMatch: string | null };

/**
 * The request's input, or the 400 (415/413 for a file, 404 for a missing target) that refuses it,
 * in the order of docs/decisions.md §2.
 */
export async function readInput({ compiled, params, request, url, ctx, enveloped }: Reading): Promise<Input | { refused: RestError }> {
  const { route, rules, target } = compiled;
  if (route.answer.kind === 'upload') {
    checkCsvMessage(request); // 415 / 413 before the query is judged (docs/decisions.md §2)
    const input = await readVariables(compiled, undefined, url, params, ctx);
    return 'refused' in input ? input : { ...input, compiled, ifMatch: null };
  }
  const raw = route.input === 'query' ? undefined : await readJson(request);
  const chosen = compiled.variants ? variantOf(compiled, raw) : { compiled, body: raw };
  if ('refused' in chosen) return chosen;
  // A variant key naming none (a batch's `mode`): a 400 with what every variant refuses (batches address no target).
  if (!('compiled' in chosen)) return { refused: await refusedByEveryVariant(chosen, url, params, ctx) };
  const input = await readVariables(chosen.compiled, chosen.body, url, params, ctx);
  const ifMatch = route.ifMatch ? ifMatchVersion(request.headers.get('if-match')) : null;
  if (ifMatch !== null && 'variables' in input) input.variables[route.ifMatch!] = ifMatch;
  if ('refused' in input) {
    // The addressed resource answers before its input (public form: 404 -> 400). Only a refused
    // input needs this look-up: a valid one meets the core's own 404 when it runs.
    const missing = target ? await missingTarget(enveloped, ctx, target, rules, params) : null;
    return { refused: missing ? fromCoreError(missing, sourceOf(route), (key) => restFieldName(route, key)) : input.refused };
  }
  return { ...input, compiled: chosen.compiled, ifMatch };
}

type UnknownVariant = { variants: Compiled[]; body: Record<string, unknown>; key: ErrorDetails };

/**
 * The variant a body's key chooses (absent: the first), and the body without that key; for a key
 * naming none, every variant and the key's problem (refusedByEveryVariant); a body that is no
 * JSON object, its 400.
 */
function variantOf(compiled: Compiled, raw: unknown): { compiled: Compiled; body: unknown } | UnknownVariant | { refused: RestError } {
  const { key } = compiled.route.variants!;
  let body: Record<string, unknown>;
  try {
    body = jsonObject(raw);
  } catch (error) {
    if (isAppError(error)) return { refused: fromCoreError(error, 'body', (k) => restFieldName(compiled.route, k)) };
    throw error;
  }
  const { [key]: value, ...rest } = body;
  const names = Object.keys(compiled.variants!);
  const chosen = value === undefined ? compiled.variants![names[0]!] : typeof value === 'string' && Object.hasOwn(compiled.variants!, value) ? compiled.variants![value] : undefined;
  if (!chosen) return { variants: Object.values(compiled.variants!), body: rest, key: { [key]: [`Must be one of: ${names.join(', ')}`] } };
  return { compiled: chosen, body: rest };
}

/**
 * The 400 of a body whose variant key names no variant: the key, and the rest of the body's
 * problems that every variant finds (so neither a field one variant takes is "Unknown", nor one
 * it requires "Required", whichever the caller meant).
 */
async function refusedByEveryVariant({ variants, body, key }: UnknownVariant, url: URL, pathParams: Record<string, string>, ctx: Context): Promise<RestError> {
  const read = await Promise.all(variants.map((variant) => readVariables(variant, body, url, pathParams, ctx, key)));
  const each = read.map((input) => ('refused' in input ? (input.refused.body.details ?? {}) : {}));
  const shared = Object.entries(each[0]!).filter(([name]) => each.every((details) => Object.hasOwn(details, name)));
  return invalidInput('body', Object.fromEntries(shared));
}

/** The core's own answer to "does the path address something?": its error, the field's 404 for null, else null. */
async function missingTarget(
  enveloped: Enveloped,
  ctx: Context,
  target: Operation,
  rules: FieldRules,
  pathParams: Record<string, string>,
): Promise<GraphQLError | null> {
  const reader = new VariableReader(true);
  const variableValues = reader.variables(schema, target.operation, pathParams);
  if (Object.keys(reader.details).length > 0) return null; // an ill-typed path parameter: the reader's 400 below
  const result = await enveloped.execute({ schema, document: target.document, variableValues, contextValue: ctx });
  if ('errors' in result && result.errors?.length) return result.errors.find((e: GraphQLError) => e.extensions?.code) ?? result.errors[0]!;
  const data = (result as { data?: Record<string, unknown> | null }).data;
  return data?.[target.field] == null ? notFound(rules.missing ?? 'Not found') : null;
}

/**
 * The version an If-Match header asks for, or null without one (or with `*`: any version). A tag
 * that is no version of ours can never match: it becomes a time no record has, so the core's own
 * check refuses it (as 412) after the usual 401/429/400/403.
 */
function ifMatchVersion(header: string | null): string | null {
  if (header === null || header.trim() === '*') return null;
  const tag = /^\s*(?:W\/)?"([^"]*)"\s*$/.exec(header)?.[1];
  const time = tag ? Date.parse(tag) : NaN;
  return Number.isNaN(time) ? new Date(0).toISOString() : new Date(time).toISOString();
}
