import {
  getNamedType,
  getNullableType,
  getOperationAST,
  type DocumentNode,
  type FieldNode,
  type GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLEnumType,
  type GraphQLOutputType,
  type GraphQLScalarType,
  type SelectionSetNode,
} from 'graphql/index.js';
import { z } from 'zod';
import { uuid } from '../validation.js';
import { restEnum, toSnake } from './input.js';

/**
 * GraphQL types (and the zod schemas behind them) as JSON Schema 2020-12, the dialect of OpenAPI 3.1.
 * Outputs follow an operation's aliased selection set; inputs use the REST names (snake_case).
 */
export type JsonSchema = { [keyword: string]: unknown };

const INT32 = { minimum: -(2 ** 31), maximum: 2 ** 31 - 1 };

function scalarSchema(type: GraphQLScalarType, direction: 'input' | 'output'): JsonSchema {
  switch (type.name) {
    case 'ID': // every id this service hands out is a UUID; an input id is checked by the core
      return direction === 'output' ? { type: 'string', format: 'uuid' } : { type: 'string' };
    case 'String':
      return { type: 'string' };
    case 'Int': // the REST layer refuses what GraphQL's Int cannot hold
      return direction === 'input' ? { type: 'integer', ...INT32 } : { type: 'integer' };
    case 'Float':
      return { type: 'number' };
    case 'Boolean':
      return { type: 'boolean' };
    case 'DateTime':
      return { type: 'string', format: 'date-time' };
    case 'Date':
      return { type: 'string', format: 'date' };
    default: // JSON and any other custom scalar: any JSON value
      return type.description ? { description: type.description } : {};
  }
}

const enumSchema = (type: GraphQLEnumType): JsonSchema => ({
  type: 'string',
  enum: type.getValues().map((v) => restEnum(v.name)),
});

/**
 * An input enum as its rule takes it: the values the rule refuses left out (a new invoice's `status`
 * is `draft` only), each asked of the rule; all of them where the rule takes none (not an enum's rule).
 */
function takenEnum(type: GraphQLEnumType, rules: z.ZodType | undefined): JsonSchema {
  const all = enumSchema(type);
  if (!rules) return all;
  const taken = type.getValues().filter((v) => !refuses(rules, v.value)).map((v) => restEnum(v.name));
  return taken.length === 0 || taken.length === (all.enum as unknown[]).length ? all : { ...all, enum: taken };
}

/** The same schema, also allowing null (a nullable GraphQL type). */
export function orNull(schema: JsonSchema): JsonSchema {
  const { description, ...rest } = schema;
  if (Object.keys(rest).length === 0) return schema; // {} already allows null
  if (typeof schema.type === 'string') {
    const nullable: JsonSchema = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum)) nullable.enum = [...schema.enum, null];
    return nullable;
  }
  return { ...(description ? { description } : {}), anyOf: [rest, { type: 'null' }] };
}

const describe = (schema: JsonSchema, description: string | null | undefined): JsonSchema =>
  description ? { ...schema, description } : schema;

type Fragments = Record<string, FragmentDefinitionNode>;

/**
 * The OpenAPI document's `components.schemas`, filled as answers are described: a record selected
 * as one fragment (`{ ...ContactRecord }`) is that fragment's schema, named once and referenced, so
 * generated clients have a named type (`<Type>Record` is the record itself: `Contact`).
 */
export type Named = Record<string, JsonSchema>;
const componentName = (fragment: string) => fragment.replace(/Record$/, '');

/** What an operation answers for `type` and its selection set: exactly the selected keys. */
export function outputSchema(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, fragments: Fragments = {}, named?: Named): JsonSchema {
  if (isNonNullType(type)) return nonNullOutput(type.ofType, selectionSet, fragments, named);
  return orNull(nonNullOutput(type, selectionSet, fragments, named));
}

/**
 * What a REST answer holds for a root field: its selection, never null. Root fields are nullable
 * only so that a failing one is null beside its error (docs/decisions.md §9 amended); REST answers
 * that error instead, and a by-id read's null is its 404, so an answer that is sent has a value.
 */
export function answerSchema(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, fragments: Fragments = {}, named?: Named): JsonSchema {
  return nonNullOutput(getNullableType(type), selectionSet, fragments, named);
}

function nonNullOutput(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, fragments: Fragments, named?: Named): JsonSchema {
  if (isListType(type)) return { type: 'array', items: outputSchema(type.ofType, selectionSet, fragments, named) };
  if (isScalarType(type)) return scalarSchema(type, 'output');
  if (isEnumType(type)) return enumSchema(type);
  const [only, ...others] = selectionSet?.selections ?? [];
  // A record (a type with an id) selected as one fragment: its schema once, by name.
  if (named && isObjectType(type) && type.getFields().id && only?.kind === Kind.FRAGMENT_SPREAD && others.length === 0) {
    const name = componentName(only.name.value);
    named[name] ??= nonNullOutput(type, fragments[only.name.value]!.selectionSet, fragments, named);
    return { $ref: `#/components/schemas/${name}` };
  }
  if (isObjectType(type) && selectionSet) {
    const properties: Record<string, JsonSchema> = {};
    const visit = (set: SelectionSetNode) => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
        else if (selection.kind === Kind.FRAGMENT_SPREAD) visit(fragments[selection.name.value]!.selectionSet);
        else {
          const key = selection.alias?.value ?? selection.name.value;
          if (selection.name.value === '__typename') properties[key] = { type: 'string', const: type.name };
          else {
            const field = type.getFields()[selection.name.value]!;
            properties[key] = describe(outputSchema(field.type, selection.selectionSet, fragments, named), field.description);
          }
        }
      }
    };
    visit(selectionSet);
    return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
  }
  throw new Error(`No JSON Schema for GraphQL output type ${String(type)}`); // interfaces, unions: not used by REST
}

/** A REST input value of GraphQL `type`; `rules` are the domain constraints of the same value. */
export function inputSchema(type: GraphQLInputType, rules?: z.ZodType): JsonSchema {
  if (isNonNullType(type)) return nonNullInput(type.ofType, rules);
  // A field GraphQL lets be null that the rule refuses as null (a PATCH of a NOT NULL column is
  // `Required`, docs/decisions.md §12): the document does not offer null either.
  return refusesNull(rules) ? nonNullInput(type, rules) : orNull(nonNullInput(type, rules));
}

/** Whether the domain's rule answers `value` with an error (a rule that cannot say synchronously: no). */
export function refuses(rules: z.ZodType | undefined, value: unknown): boolean {
  if (!rules) return false;
  try {
    return !rules.safeParse(value).success;
  } catch {
    return false;
  }
}
const refusesNull = (rules: z.ZodType | undefined) => refuses(rules, null);

export function nonNullInput(type: GraphQLInputType, rules?: z.ZodType): JsonSchema {
  if (isNonNullType(type)) return nonNullInput(type.ofType, rules);
  if (isListType(type)) {
    // The rule's item counts (a batch's 1 to 100 records, an invoice's 1 to 100 lines).
    const counts = rules ? zodConstraints(rules) : {};
    const bounds = Object.fromEntries(Object.entries(counts).filter(([key]) => key === 'minItems' || key === 'maxItems'));
    return { type: 'array', items: inputSchema(type.ofType, rules && zodElement(rules)), ...bounds };
  }
  if (isInputObjectType(type)) return inputObjectSchema(type, rules);
  if (isEnumType(type)) return takenEnum(type, rules);
  const base = scalarSchema(type as GraphQLScalarType, 'input');
  // A scalar of any JSON value (JSON) says nothing of its shape: the zod rule for it does.
  if (rules && base.type === undefined) return { ...base, ...zodShape(rules) };
  const bounded = withConstraints(base, rules);
  // A refinement zod cannot state (an amount `> 0` over a range from 0): the lower bound itself refused is exclusive.
  if (typeof bounded.minimum === 'number' && refuses(rules, bounded.minimum) && !refuses(rules, (bounded.minimum as number) + 1)) {
    const { minimum, ...rest } = bounded;
    return { ...rest, exclusiveMinimum: minimum, ...statedOf(rules) };
  }
  return { ...(bounded.type === 'string' ? refinedText(bounded, rules) : bounded), ...statedOf(rules) };
}

/** The longest text probed for a bound zod cannot state: past the 1 MiB a body may have, no request holds more. */
const LONGEST_PROBED = 1024 * 1024;

/**
 * What a text's refinements enforce that zod cannot state (a note's body: not blank, at most 10,000
 * characters counted as PostgreSQL counts them), found by asking the rule itself: a rule that takes
 * `x` but refuses blanks wants a non-space character; one that refuses a long text, a `maxLength`
 * (the longest it takes, found by halving). Only where zod stated neither.
 */
function refinedText(schema: JsonSchema, rules: z.ZodType | undefined): JsonSchema {
  if (!rules) return schema;
  const key = `${schema.pattern}|${schema.minLength}|${schema.maxLength}|${schema['x-trimmed']}`;
  let known = probed.get(rules);
  if (!known) probed.set(rules, (known = new Map()));
  let found = known.get(key);
  if (!found) known.set(key, (found = probeText(schema, rules)));
  return found;
}
/** refinedText's answers per rule (a rule is asked once, however many inputs it judges). */
const probed = new WeakMap<z.ZodType, Map<string, JsonSchema>>();

function probeText(schema: JsonSchema, rules: z.ZodType): JsonSchema {
  if (refuses(rules, 'x')) return schema; // a format, an enum, a pattern: zod has said it
  const out = { ...schema };
  const minLength = typeof out.minLength === 'number' ? out.minLength : 0;
  if (out.pattern === undefined && minLength <= 1 && refuses(rules, ' ') && refuses(rules, ' \t\n ') && !refuses(rules, ' x ')) {
    delete out.minLength;
    out.pattern = '\\S';
  }
  // A trimmed text's bound is counted after trimming: said in its description (trimmed()), not probed.
  if (out.maxLength === undefined && !out['x-trimmed']) {
    if (refuses(rules, 'x'.repeat(LONGEST_PROBED))) {
      let [taken, refused] = [1, LONGEST_PROBED];
      while (refused - taken > 1) {
        const middle = Math.floor((taken + refused) / 2);
        if (refuses(rules, 'x'.repeat(middle))) refused = middle;
        else taken = middle;
      }
      out.maxLength = taken;
    }
  }
  return out;
}

/**
 * What a rule enforces that zod cannot state in JSON Schema (a refinement, a transform), stated beside
 * the rule where it is known (src/rest/openapi.ts, each with why it cannot be derived): looked up by
 * the rule itself, through its wrappers, so every input the rule judges carries it.
 */
const stated = new WeakMap<z.ZodType, (rule: z.ZodType) => JsonSchema>();

/** States `schema` (or what `schema` makes of the rule, asking it) for every input judged by `rule`. */
export function stateRule(rule: z.ZodType, schema: JsonSchema | ((rule: z.ZodType) => JsonSchema)): void {
  stated.set(rule, typeof schema === 'function' ? schema : () => schema);
}

function statedOf(rules: z.ZodType | undefined): JsonSchema {
  if (!rules) return {};
  const own = stated.get(rules);
  if (own) return own(rules);
  for (const child of zodChildren(rules)) {
    const found = statedOf(child);
    if (Object.keys(found).length) return found;
  }
  return {};
}

/** An input object as the REST layer reads it: snake_case keys, unknown keys refused. */
export function inputObjectSchema(type: GraphQLInputObjectType, rules?: z.ZodType): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of Object.values(type.getFields())) {
    const name = toSnake(field.name);
    // Keyed as GraphQL spells it, or as REST does where the rule reads both (an invoice's lines: `unit_price`).
    const rule = rules && (zodField(rules, field.name) ?? zodField(rules, toSnake(field.name)));
    properties[name] = describe(inputSchema(field.type, rule), field.description);
    if (field.defaultValue === undefined && (isNonNullType(field.type) || requiredBy(rule))) required.push(name);
  }
  // Nothing required, yet the rule refuses an empty object (a PATCH must change a field): at least one key.
  const nonEmpty = required.length === 0 && Object.keys(properties).length > 0 && refuses(rules, {});
  return { type: 'object', properties, ...(required.length ? { required } : {}), ...(nonEmpty ? { minProperties: 1 } : {}), additionalProperties: false, ...statedOf(rules) };
}

/** Whether a field's rule refuses it left out, though GraphQL lets it be (a batch upsert's `matchOn`: `Required`). */
export const requiredBy = (rule: z.ZodType | undefined): boolean => rule !== undefined && refuses(rule, undefined);

// --- zod: the domain's own constraints (lengths, ranges, formats, defaults) -----------------------

type ZodDef = { type: string; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType; element?: z.ZodType; shape?: Record<string, z.ZodType> };
const defOf = (schema: z.ZodType): ZodDef => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;

/** Wrappers (optional, nullable, default, pipes, transforms) around the schema that does the checking. */
function zodChildren(schema: z.ZodType): z.ZodType[] {
  const def = defOf(schema);
  return [def.innerType, def.in, def.out].filter((s): s is z.ZodType => s !== undefined);
}

/** The zod schema of one key of an object schema, looked up through wrappers. */
export function zodField(schema: z.ZodType, key: string): z.ZodType | undefined {
  const def = defOf(schema);
  if (def.type === 'object') return def.shape?.[key];
  for (const child of zodChildren(schema)) {
    const found = zodField(child, key);
    if (found) return found;
  }
  return undefined;
}

export function zodElement(schema: z.ZodType): z.ZodType | undefined {
  const def = defOf(schema);
  if (def.type === 'array') return def.element;
  for (const child of zodChildren(schema)) {
    const found = zodElement(child);
    if (found) return found;
  }
  return undefined;
}

const UUID_PATTERN = (z.toJSONSchema(uuid) as JsonSchema).pattern;
const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems'];
const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems'];
const FIRST_WINS = ['format', 'pattern', 'default', 'multipleOf'];

/**
 * The constraints zod can state in JSON Schema, gathered through every wrapper (a pipe's checks on
 * both sides; a transform states none): the tightest bound of each kind wins.
 */
export function zodConstraints(schema: z.ZodType): JsonSchema {
  const found: JsonSchema = {};
  const visit = (node: z.ZodType) => {
    let json: JsonSchema = {};
    try {
      json = z.toJSONSchema(node, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    } catch {
      /* a shape JSON Schema cannot state (cycles, custom types): its children may still say something */
    }
    const variants = Array.isArray(json.anyOf) ? (json.anyOf as JsonSchema[]) : [json];
    for (const variant of variants.filter((v) => v.type !== 'null')) {
      for (const key of LOWER_BOUNDS) if (typeof variant[key] === 'number') found[key] = Math.max(variant[key], (found[key] as number) ?? -Infinity);
      for (const key of UPPER_BOUNDS) if (typeof variant[key] === 'number') found[key] = Math.min(variant[key], (found[key] as number) ?? Infinity);
      for (const key of FIRST_WINS) if (variant[key] !== undefined && found[key] === undefined) found[key] = variant[key];
    }
    zodChildren(node).forEach(visit);
  };
  visit(schema);
  if (found.pattern === UUID_PATTERN) {
    delete found.pattern; // the same check, but case-insensitive: a JSON Schema pattern cannot say so
    found.format = 'uuid';
  }
  if (found.format !== undefined) delete found.pattern; // a format says it in words; the regex is noise
  // multipleOf 0.01 is a float check standard validators fail on 19.99: say "two decimals" as a rule of ours.
  if (typeof found.multipleOf === 'number' && !Number.isInteger(found.multipleOf)) {
    found['x-decimal-places'] = Math.round(-Math.log10(found.multipleOf));
    delete found.multipleOf;
  }
  if (trims(schema)) Object.assign(found, trimmed(found));
  return found;
}

/** Whether the rule trims a string before judging it (zod's `.trim()`, anywhere through wrappers). */
function trims(schema: z.ZodType): boolean {
  const checks = (defOf(schema) as { checks?: { _zod: { def: { check: string } } }[] }).checks ?? [];
  return checks.some((c) => c._zod.def.check === 'overwrite') || zodChildren(schema).some(trims);
}

/**
 * What a trimmed string's constraints mean before trimming, in JSON Schema: at least one non-space
 * character where one is required, an e-mail with spaces around allowed, lengths counted after trimming.
 */
function trimmed(found: JsonSchema): JsonSchema {
  const out: JsonSchema = { 'x-trimmed': true };
  if (typeof found.minLength === 'number' && found.minLength > 0) {
    out.pattern = '\\S';
    delete found.minLength;
  }
  if (found.format === 'email') {
    delete found.format;
    // Generous on purpose: a blank optional e-mail is stored as null, so "" passes too.
    out.pattern = '^\\s*([^\\s@]+@[^\\s@]+)?\\s*$';
  }
  if (typeof found.maxLength === 'number') {
    out.description = `Surrounding spaces are trimmed; then at most ${found.maxLength} characters.`;
    delete found.maxLength;
  } else out.description = 'Surrounding spaces are trimmed first.';
  return out;
}

/** The whole JSON Schema of a zod rule (its input side), or nothing when zod cannot state it. */
function zodShape(rules: z.ZodType): JsonSchema {
  try {
    const { $schema: _dialect, ...shape } = z.toJSONSchema(rules, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    return shape;
  } catch {
    return {};
  }
}

/** Adds the zod constraints to a GraphQL scalar's schema; where both bound a value, the tighter wins. */
function withConstraints(base: JsonSchema, rules: z.ZodType | undefined): JsonSchema {
  if (!rules) return base;
  const extra = zodConstraints(rules);
  const merged: JsonSchema = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    if (key === 'format' && base.format !== undefined) continue; // GraphQL's Date/DateTime stay
    if (LOWER_BOUNDS.includes(key) && typeof base[key] === 'number') merged[key] = Math.max(base[key], value as number);
    else if (UPPER_BOUNDS.includes(key) && typeof base[key] === 'number') merged[key] = Math.min(base[key], value as number);
    else merged[key] = value;
  }
  return merged;
}

/**
 * An answer's enum values as the OpenAPI document shows them (restEnum: `QUEUED` -> `queued`),
 * found by the selection's types, never by what a string looks like (a name may be all capitals).
 */
export function restEnums(value: unknown, type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, fragments: Fragments = {}): unknown {
  if (value == null) return value;
  const inner = getNullableType(type);
  if (isListType(inner)) return (value as unknown[]).map((item) => restEnums(item, inner.ofType, selectionSet, fragments));
  if (isEnumType(inner)) return typeof value === 'string' ? restEnum(value) : value;
  if (!isObjectType(inner) || !selectionSet) return value;
  const out = { ...(value as Record<string, unknown>) };
  const visit = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else if (selection.kind === Kind.FRAGMENT_SPREAD) visit(fragments[selection.name.value]!.selectionSet);
      else if (selection.name.value !== '__typename') {
        const key = selection.alias?.value ?? selection.name.value;
        out[key] = restEnums(out[key], inner.getFields()[selection.name.value]!.type, selection.selectionSet, fragments);
      }
    }
  };
  visit(selectionSet);
  return out;
}

/** Whether an answer of this selection can hold an enum value that restEnum changes (`QUEUED`), by its types. */
function changesEnums(type: GraphQLOutputType, selectionSet: SelectionSetNode | undefined, fragments: Fragments): boolean {
  const inner = getNamedType(type);
  if (isEnumType(inner)) return inner.getValues().some((v) => restEnum(v.name) !== v.name);
  if (!isObjectType(inner) || !selectionSet) return false;
  const visit = (set: SelectionSetNode): boolean =>
    set.selections.some((selection) => {
      if (selection.kind === Kind.INLINE_FRAGMENT) return visit(selection.selectionSet);
      if (selection.kind === Kind.FRAGMENT_SPREAD) return visit(fragments[selection.name.value]!.selectionSet);
      return selection.name.value !== '__typename' && changesEnums(inner.getFields()[selection.name.value]!.type, selection.selectionSet, fragments);
    });
  return visit(selectionSet);
}

type RootAnswer = { type: GraphQLOutputType; selectionSet: SelectionSetNode | undefined; fragments: Fragments; changes: boolean };
const rootAnswers = new WeakMap<DocumentNode, RootAnswer>();

/**
 * restEnums of the root field an operation `document` answers (its one root field's data). Most
 * answers hold no such enum (the contract's lists): they are returned as they are, not copied
 * object by object, which was about 3% of a list request's CPU (BENCHMARKS.md).
 */
export function restEnumsOf(schema: GraphQLSchema, document: DocumentNode, data: unknown): unknown {
  let root = rootAnswers.get(document);
  if (!root) {
    const operation = getOperationAST(document)!;
    const field = operation.selectionSet.selections[0] as FieldNode;
    const rootType = operation.operation === 'mutation' ? schema.getMutationType()! : schema.getQueryType()!;
    const fragments = Object.fromEntries(
      document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
    );
    const type = rootType.getFields()[field.name.value]!.type;
    root = { type, selectionSet: field.selectionSet, fragments, changes: changesEnums(type, field.selectionSet, fragments) };
    rootAnswers.set(document, root);
  }
  return root.changes ? restEnums(data, root.type, root.selectionSet, root.fragments) : data;
}
