import {
  coerceInputValue,
  getNullableType,
  getOperationAST,
  isInputObjectType,
  isInputType,
  isLeafType,
  isListType,
  isNonNullType,
  GraphQLError,
  Kind,
  typeFromAST,
  type GraphQLInputType,
  type GraphQLSchema,
  type ASTVisitor,
  type OperationDefinitionNode,
  type ValidationContext,
  type ValueNode,
} from 'graphql/index.js';
import type { Plugin } from 'graphql-yoga';
import { invalidLiteral, invalidVariables, isAppError, validationFailed, type ErrorDetails } from '../errors.js';
import { withoutSuggestions } from '../graphql/armor.js';

/**
 * Judges a document's variables before it runs, so a value that does not coerce is BAD_USER_INPUT
 * with `details` keyed by variable path (`input.email`), like REST's 400 (docs/decisions.md §9
 * amended). graphql-js refuses the same values, but with no code and the path only in its prose.
 * A literal a scalar refuses (`filter: { updatedAfter: "notadate" }`) is BAD_USER_INPUT with
 * `details` keyed by argument path (`filter.updatedAfter`): graphql-js reports the scalar's own
 * error, with neither path nor location. Also refuses, while validating, an operation kind the
 * schema lacks, which graphql-js would only report when it runs, with no code.
 */
export function useVariableErrors(production: boolean): Plugin {
  return {
    onValidate: ({ addValidationRule }) => {
      addValidationRule(knownOperationKind);
      addValidationRule(refusedLiterals);
      return ({ result, setResult }) => {
        // A located error with details stands for each bare one the scalar threw (when it found any).
        if (result.some(isBareLiteralError) && result.some(isLocatedLiteralError)) setResult(result.filter((error) => !isBareLiteralError(error)));
      };
    },
    onExecute: ({ args, setResultAndStopExecution }) => {
      const operation = getOperationAST(args.document, args.operationName);
      if (!operation || !rootOf(args.schema, operation)) return; // refused before (operation name, validation)
      const details = variableErrors(args.schema, operation, (args.variableValues ?? {}) as Record<string, unknown>);
      if (Object.keys(details).length === 0) return;
      if (production) for (const key of Object.keys(details)) details[key] = details[key]!.map(withoutSuggestions);
      setResultAndStopExecution({ errors: [invalidVariables(details)] });
    },
  };
}

const knownOperationKind = (context: ValidationContext): ASTVisitor => ({
  OperationDefinition: (node) => {
    if (!rootOf(context.getSchema(), node)) context.reportError(validationFailed(`This API has no ${node.operation} operations`));
  },
});

/**
 * Each literal of the document a scalar refuses (src/graphql/scalars.ts throws invalidValue from
 * parseLiteral): reported at the literal, `details` keyed by the argument's path, input fields and
 * list indexes joined by dots as for variables (`filter.updatedAfter`, `ids.2`); a variable's
 * default value by the variable's name. graphql-js's ValuesOfCorrectTypeRule reports the same
 * failure bare (the thrown error as it is); the validation result keeps this one instead.
 */
const refusedLiterals = (context: ValidationContext): ASTVisitor => {
  const check = (node: ValueNode, type: GraphQLInputType, path: (string | number)[]): void => {
    if (node.kind === Kind.VARIABLE || node.kind === Kind.NULL) return; // variables are judged with their values
    const nullable = getNullableType(type);
    if (isListType(nullable)) {
      if (node.kind === Kind.LIST) node.values.forEach((item, i) => check(item, nullable.ofType, [...path, i]));
      else check(node, nullable.ofType, path); // one value where a list goes is a list of one
    } else if (isInputObjectType(nullable)) {
      if (node.kind !== Kind.OBJECT) return; // not an object: graphql-js's own error says so
      const fields = nullable.getFields();
      for (const field of node.fields) {
        const definition = fields[field.name.value];
        if (definition) check(field.value, definition.type, [...path, field.name.value]);
      }
    } else if (isLeafType(nullable)) {
      try {
        nullable.parseLiteral(node, undefined);
      } catch (error) {
        if (isBareLiteralError(error)) context.reportError(invalidLiteral(path.join('.'), error.message, node));
      }
    }
  };
  return {
    Argument: (node) => {
      const argument = context.getArgument();
      if (argument) check(node.value, argument.type, [node.name.value]);
    },
    VariableDefinition: (node) => {
      const type = typeFromAST(context.getSchema(), node.type);
      if (node.defaultValue && type && isInputType(type)) check(node.defaultValue, type, [node.variable.name.value]);
    },
  };
};

/** What a scalar throws for a value it refuses (invalidValue): BAD_USER_INPUT, with no details and no location. */
const isBareLiteralError = (error: unknown): error is GraphQLError =>
  isAppError(error) && error.code === 'BAD_USER_INPUT' && !error.details && !error.nodes;
const isLocatedLiteralError = (error: unknown) =>
  error instanceof GraphQLError && error.extensions?.code === 'BAD_USER_INPUT' && Boolean(error.extensions.details) && Boolean(error.nodes);

const rootOf = (schema: GraphQLSchema, operation: OperationDefinitionNode) =>
  operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();

/** Variable path -> messages, the way graphql-js coerces them (defaults, null for non-null, nested input fields). */
export function variableErrors(schema: GraphQLSchema, operation: OperationDefinitionNode, values: Record<string, unknown>): ErrorDetails {
  const details: ErrorDetails = {};
  const add = (path: string, message: string) => (details[path] ??= []).push(message);
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type);
    if (!type || !isInputType(type)) continue; // validation refused the document already
    if (!Object.hasOwn(values, name) || values[name] === undefined) {
      if (isNonNullType(type) && !definition.defaultValue) add(name, `Required: a value of type ${String(type)}`);
      continue;
    }
    if (values[name] === null && isNonNullType(type)) {
      add(name, `Must not be null: a value of type ${String(type)}`);
      continue;
    }
    coerceInputValue(values[name], type, (path, _value, error: GraphQLError) => add([name, ...path].join('.'), error.message));
  }
  return details;
}
