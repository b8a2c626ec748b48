import {
  coerceInputValue,
  getOperationAST,
  isInputType,
  isNonNullType,
  typeFromAST,
  type GraphQLError,
  type GraphQLSchema,
  type ASTVisitor,
  type OperationDefinitionNode,
  type ValidationContext,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { invalidVariables, validationFailed, type ErrorDetails } from '../errors.js';
import { withoutSuggestions } from './armor.js';

/**
 * Judges a document's variables before it runs, so a value that does not coerce is BAD_USER_INPUT
 * with `details` keyed by variable path (`input.email`), like REST's 400 (docs/decisions.md §9
 * amended). graphql-js refuses the same values, but with no code and the path only in its prose.
 * Also refuses, while validating, an operation kind the schema lacks (subscription), which
 * graphql-js would only report when it runs, with no code.
 */
export function useVariableErrors(production: boolean): Plugin {
  return {
    onValidate: ({ addValidationRule }) => addValidationRule(knownOperationKind),
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
