import { Kind, type FieldNode, type OperationDefinitionNode } from 'graphql/index.js';
import type { Context } from '../context.js';
import { isAppError, type ErrorDetails } from '../errors.js';
import { inputProblems } from '../graphql/input-rules.js';
import { jsonObject } from '../http/body.js';
import { schema } from '../schema.js';
import { fromCoreError, invalidInput, type RestError } from './errors.js';
import { restFieldName } from './field-names.js';
import { coercedVariables, toCamel, toSnake, VariableReader } from './input.js';
import { CUSTOM_VARIABLES, customFieldVariables, takesCustomFields } from './custom-field-params.js';
import type { Compiled } from './match.js';
import { FILE_VARIABLES } from './routes.js';

/** The variables read for a route, and the batch records the reader refused (by index). */
export type Variables = { variables: Record<string, unknown>; refusedItems: Map<number, ErrorDetails> };

/**
 * The operation's variables from the query string or the JSON body, type-checked against the
 * operation (unknown keys, JSON types, required fields, enums), or the 400 that refuses them. A
 * refusal names every failing field at once: those the types refuse, and what the field's own
 * input rules say of the rest.
 */
export async function readVariables(
  { route, operation, field, rules }: Compiled,
  raw: unknown,
  url: URL,
  pathParams: Record<string, string>,
  ctx: Context,
  given: ErrorDetails = {},
): Promise<Variables | { refused: RestError }> {
  const fromQuery = route.input === 'query' || route.input === 'query-with-file';
  const reader = new VariableReader(fromQuery);
  // What the route refused before reading (the body's variant key): a problem like the reader's own.
  for (const [key, messages] of Object.entries(given)) for (const message of messages) reader.fail(key, message);
  let variables: Record<string, unknown>;
  if (fromQuery) {
    // A file's own variables (its header) are not the query string's: judged once the file is read.
    const skip = route.input === 'query-with-file' ? FILE_VARIABLES : [];
    const query = { ...queryObject(url.searchParams), ...pathParams };
    // A list's custom-field parameters (cf.*, sort=cf.<key>) become its conditions' variables; the core judges them.
    const custom = takesCustomFields(operation) ? customFieldVariables(url.searchParams, (name, message) => reader.fail(name, message)) : {};
    if (custom.sortCustomField !== undefined) delete query.sort;
    variables = { ...reader.variables(schema, operation, query, [...skip, ...CUSTOM_VARIABLES]), ...custom };
  } else {
    let body: Record<string, unknown>;
    try {
      body = jsonObject(raw);
    } catch (error) {
      if (isAppError(error)) return { refused: fromCoreError(error, 'body', (key) => restFieldName(route, key)) };
      throw error;
    }
    if (route.input === 'body-as-input') {
      const inputType = schema.getMutationType()!.getFields()[field]!.args.find((a) => a.name === 'input')!.type;
      // The path's parameters (a record's id) are the operation's other variables, and those the body
      // names beside the input (a create's `account_id` where the account is an argument of its own).
      const beside = besideInput(operation, body, pathParams, route.ifMatch);
      const input = Object.fromEntries(Object.entries(body).filter(([key]) => !Object.hasOwn(beside, key)));
      variables = { ...reader.variables(schema, operation, { ...beside, ...pathParams }, ['input', ...(route.ifMatch ? [route.ifMatch] : [])]), input: reader.read(input, inputType, '') };
    } else {
      rejectUnknownKeys(reader, body, operation, pathParams);
      variables = reader.variables(schema, operation, { ...body, ...pathParams });
    }
  }
  const refusedItems = route.answer.kind === 'batch' ? refusedRecords(reader, variables, route.answer.records) : new Map<number, ErrorDetails>();
  if (Object.keys(reader.details).length === 0) return { variables, refusedItems };
  const details = { ...reader.details };
  // The core's problems with what the type check let through (its form, the Idempotency-Key header,
  // a public field's checks against its target: inputProblems) are merged by the name the client
  // sent, less those about a field, object or body the type check already refused within (the core
  // saw it without them: an update "with no field" was given fields, just ill-typed ones).
  const refused = Object.keys(details);
  const within = (name: string) => refused.some((key) => key === name || name === 'body' || key.startsWith(`${name}.`));
  for (const [key, messages] of Object.entries(await inputProblems(rules, argumentsOf(operation, coercedVariables(schema, operation, variables)), ctx))) {
    const name = restFieldName(route, key);
    if (route.input === 'query-with-file' && FILE_VARIABLES.includes(key)) continue; // not read yet
    if (!within(name)) details[name] = messages;
  }
  return { refused: invalidInput(fromQuery ? 'query' : 'body', details) };
}

/** The body's keys that are variables of the operation besides `input`, the path's and the If-Match one (REST names). */
function besideInput(operation: OperationDefinitionNode, body: Record<string, unknown>, pathParams: Record<string, string>, ifMatch?: string): Record<string, unknown> {
  const names = (operation.variableDefinitions ?? []).map((d) => d.variable.name.value).filter((name) => name !== 'input' && name !== ifMatch && !Object.hasOwn(pathParams, name));
  return Object.fromEntries(names.map((name) => toSnake(name)).filter((key) => Object.hasOwn(body, key)).map((key) => [key, body[key]]));
}

/** The root field's arguments from the operation's variables (an argument may take a variable of another name). */
function argumentsOf(operation: OperationDefinitionNode, variables: Record<string, unknown>): Record<string, unknown> {
  const root = operation.selectionSet.selections[0] as FieldNode;
  const args: Record<string, unknown> = { ...variables };
  for (const arg of root.arguments ?? []) if (arg.value.kind === Kind.VARIABLE) args[arg.name.value] = variables[arg.value.name.value];
  return args;
}

/**
 * The query string as one value per name; a name given more than once (`types=a&types=b`, as
 * generated clients send a list) keeps all its values, as a list.
 */
function queryObject(params: URLSearchParams): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {};
  for (const name of new Set(params.keys())) {
    const values = params.getAll(name);
    query[name] = values.length === 1 ? values[0]! : values;
  }
  return query;
}

/**
 * docs/decisions.md §16: a record the reader refuses (an unknown field, a wrong JSON type) fails as
 * an item, named in its own details, and the others are still judged and written. Its problems move
 * out of the request's details, and the core gets an empty record in its place, which every batch
 * refuses (no record key, no required field), so it counts as FAILED there too (all_or_nothing included).
 * A record that is not an object stays the request's problem (an invalid envelope: 400).
 */
function refusedRecords(reader: VariableReader, variables: Record<string, unknown>, records: string): Map<number, ErrorDetails> {
  const refused = new Map<number, ErrorDetails>();
  const prefix = new RegExp(`^${records}\\.(\\d+)\\.(.+)$`);
  for (const key of Object.keys(reader.details)) {
    const match = prefix.exec(key);
    if (!match) continue;
    const index = Number(match[1]);
    if (!refused.has(index)) refused.set(index, {});
    refused.get(index)![match[2]!] = reader.details[key]!;
    delete reader.details[key];
  }
  const list = variables[toCamel(records)];
  if (Array.isArray(list)) for (const index of refused.keys()) list[index] = {};
  return refused;
}

/** Body keys that name no variable of the operation are refused by name, like unknown input fields. */
function rejectUnknownKeys(
  reader: VariableReader,
  body: Record<string, unknown>,
  operation: OperationDefinitionNode,
  pathParams: Record<string, string>,
) {
  const known = new Set((operation.variableDefinitions ?? []).map((d) => toSnake(d.variable.name.value)));
  for (const key of Object.keys(body)) if (!known.has(key) || key in pathParams) reader.fail(key, 'Unknown field');
}
