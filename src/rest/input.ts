import {
  coerceInputValue,
  GraphQLError,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql/index.js';
import type { ErrorDetails } from '../errors.js';
import { TYPE_MESSAGES } from '../validation.js';

import { camelCase as toCamel, snakeCase as toSnake } from '../names.js';

export { toCamel, toSnake };

/** REST shows a GraphQL enum value in UPPER_CASE (EXTERNAL_ID, CREATED) in lower case, as its other values are. */
export const restEnum = (value: string): string => (/^[A-Z][A-Z0-9_]*$/.test(value) ? value.toLowerCase() : value);

const MAX_INT = 2 ** 31 - 1;

/**
 * Turns REST parameters (query strings or JSON values, snake_case) into the operation's variables,
 * checking each against its GraphQL type so a wrong type is a 400 naming that field, in the
 * contract's words. Domain rules (lengths, ranges, formats) stay in the core.
 */
export class VariableReader {
  // No prototype: a field named `constructor` or `__proto__` is just another name to report.
  readonly details: ErrorDetails = Object.create(null) as ErrorDetails;
  constructor(private readonly fromQuery: boolean) {}

  /** Reads the operation's variables from one flat object of REST parameters. */
  variables(schema: GraphQLSchema, operation: OperationDefinitionNode, params: Record<string, unknown>, skip: string[] = []) {
    const variables: Record<string, unknown> = {};
    for (const definition of operation.variableDefinitions ?? []) {
      const name = definition.variable.name.value;
      if (skip.includes(name)) continue;
      const type = typeFromAST(schema, definition.type) as GraphQLInputType;
      const value = this.read(params[toSnake(name)], type, toSnake(name));
      if (value !== undefined) variables[name] = value;
    }
    return variables;
  }

  /** Reads one value of `type`; `field` is the REST name used in `details`. */
  read(value: unknown, type: GraphQLInputType, field: string): unknown {
    if (isNonNullType(type)) {
      if (value === undefined || value === null) return this.fail(field, 'Required');
      return this.read(value, type.ofType, field);
    }
    if (value === undefined) return undefined;
    if (value === null) return null;
    if (isListType(type)) {
      // A list in a query string: the name repeated (`types=a&types=b`, as generated clients send
      // it), its values separated by commas (`types=a,b`), or both.
      const items = this.fromQuery ? [value].flat().flatMap((v) => (typeof v === 'string' ? v.split(',').filter(Boolean) : [v])) : value;
      if (!Array.isArray(items)) return this.fail(field, 'Expected an array');
      return items.map((item, index) => this.read(item, type.ofType, `${field}.${index}`));
    }
    if (isInputObjectType(type)) {
      if (typeof value !== 'object' || Array.isArray(value)) return this.fail(field, 'Expected an object');
      const fields = type.getFields();
      const result: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const target = Object.hasOwn(fields, toCamel(key)) ? fields[toCamel(key)] : undefined;
        const name = field ? `${field}.${key}` : key;
        if (!target || toSnake(target.name) !== key) this.fail(name, 'Unknown field');
        else result[target.name] = this.read(item, target.type, name);
      }
      for (const target of Object.values(fields)) {
        const name = field ? `${field}.${toSnake(target.name)}` : toSnake(target.name);
        if (isNonNullType(target.type) && result[target.name] === undefined && !this.details[name]) {
          this.fail(name, 'Required');
        }
      }
      return result;
    }
    if (isEnumType(type)) {
      const allowed = type.getValues().map((v) => v.name);
      const shown = allowed.map(restEnum);
      const at = typeof value === 'string' ? shown.indexOf(value) : -1;
      return at >= 0 ? allowed[at] : this.fail(field, `Must be one of: ${shown.join(', ')}`);
    }
    if (isScalarType(type)) return this.scalar(value, type.name, field, type.parseValue.bind(type));
    return this.fail(field, 'Unsupported');
  }

  private scalar(value: unknown, name: string, field: string, parse: (v: unknown) => unknown): unknown {
    switch (name) {
      case 'String':
      case 'ID':
        return typeof value === 'string' ? value : this.fail(field, 'Expected a string');
      case 'Int': {
        const number = this.fromQuery && typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
        if (typeof number !== 'number' || !Number.isInteger(number)) return this.fail(field, 'Must be an integer');
        return Math.abs(number) <= MAX_INT ? number : this.fail(field, 'Out of range');
      }
      case 'Float': {
        const number = this.fromQuery && typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
        return typeof number === 'number' && Number.isFinite(number) ? number : this.fail(field, TYPE_MESSAGES.number);
      }
      case 'Boolean': {
        const bool = this.fromQuery && (value === 'true' || value === 'false') ? value === 'true' : value;
        return typeof bool === 'boolean' ? bool : this.fail(field, 'Expected true or false');
      }
      default:
        // Our own scalars (Date, DateTime, JSON) explain themselves; pass the raw value on.
        try {
          parse(value);
          return value;
        } catch (error) {
          return this.fail(field, error instanceof GraphQLError ? error.message : 'Invalid value');
        }
    }
  }

  /** Records a problem with one REST field. */
  fail(field: string, message: string): undefined {
    (this.details[field || 'body'] ??= []).push(message);
    return undefined;
  }
}

/**
 * The variables as the resolvers receive them, through graphql-js's own coercion: an enum's internal
 * value (`contacts`, not `CONTACTS`), a DateTime as a Date. The core's rules judge that shape, so a
 * refused request's other fields are judged in it too, and a valid one is not named with the rest.
 * Values the reader refused are already left out and named: coercion's own complaints add nothing.
 */
export function coercedVariables(schema: GraphQLSchema, operation: OperationDefinitionNode, variables: Record<string, unknown>): Record<string, unknown> {
  const coerced: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (variables[name] === undefined) continue;
    coerced[name] = coerceInputValue(variables[name], typeFromAST(schema, definition.type) as GraphQLInputType, () => {});
  }
  return coerced;
}
