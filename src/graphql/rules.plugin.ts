import SchemaBuilder, {
  BasePlugin,
  type FieldNullability,
  type InputFieldMap,
  type ObjectRef,
  type OutputType,
  type PothosOutputFieldConfig,
  type SchemaTypes,
  type TypeParam,
} from '@pothos/core';
import type { GraphQLFieldResolver, GraphQLSchema } from 'graphql';
import type { Context } from '../context.js';
import type { ApiScope } from '../auth/scopes.js';
import { unboundedLists } from './cost.js';
import { enforce, notHonoured, requireKeyScope, type FieldRules } from './rules.js';

/**
 * What an API key needs to read records of an object type through another type's field
 * (docs/decisions.md §15): a scope, `false` for never, `'public'` for anyone, or `{ of }` the type
 * whose records it wraps (a connection, edge or page). Every type of a Prisma model says which (the
 * build fails otherwise); others (results, summaries) are read as their parent is.
 */
export type KeyScope = ApiScope | false | 'public' | { of: ObjectRef<any, any> | string };

/**
 * A Pothos plugin, like its own scope-auth and complexity plugins: root fields take a `rules`
 * option; the plugin keeps it on the built field (`extensions.rules`, read by the REST layer and
 * the OpenAPI document) and runs its checks before the resolver (src/graphql/rules.ts).
 * It also makes every root field nullable (docs/decisions.md §9 amended): a refused or failed field
 * answers `null` with its error, and the document's other root fields still answer. Below the root,
 * it holds an API key to the `keyScope` of each object type a field leads to, and keeps a plain
 * list's `maxItems` where the cost reads it; the build fails where either is missing.
 */
export class RulesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    const root = fieldConfig.kind === 'Query' || fieldConfig.kind === 'Mutation';
    const typed = root ? { ...fieldConfig, type: { ...fieldConfig.type, nullable: true } } : fieldConfig;
    // The cost (src/graphql/cost.ts) reads a plain list's bound where it reads the field.
    const { maxItems } = fieldConfig.pothosOptions as { maxItems?: number };
    const config = maxItems === undefined ? typed : { ...typed, extensions: { ...typed.extensions, maxItems } };
    const rules = rulesIn(fieldConfig);
    if (!rules) return config;
    if (!root && fieldConfig.kind !== 'Subscription') throw new Error(`${fieldConfig.parentType}.${fieldConfig.name}: rules are for root fields`);
    // Tools read it where they read the field: in the schema (GraphiQL, codegen), as in the OpenAPI document.
    const refusal = notHonoured(rules);
    const description = refusal ? [config.description, refusal].filter(Boolean).join('\n\n') : config.description;
    return { ...config, description, extensions: { ...config.extensions, rules } };
  }

  /**
   * Every root field says who may call it and, when it addresses a record, what an unknown one
   * answers; every mutation whether a retry with its `Idempotency-Key` is safe (docs/decisions.md §4).
   * A field that leaves one out fails the build, not a request.
   */
  override afterBuild(schema: GraphQLSchema): GraphQLSchema {
    for (const root of [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]) {
      for (const field of Object.values(root?.getFields() ?? {})) {
        const rules = field.extensions?.rules as FieldRules | undefined;
        if (!rules) throw new Error(`${root!.name}.${field.name} declares no rules (docs/fields.md)`);
        if (rules.target && rules.access !== 'public' && !rules.hidden) throw new Error(`${root!.name}.${field.name} has a target but no hidden (docs/fields.md)`);
        if (root === schema.getMutationType() && !rules.idempotent === !rules.notIdempotent) {
          throw new Error(`Mutation.${field.name} declares neither or both of idempotent and notIdempotent (docs/fields.md)`);
        }
      }
    }
    const unbounded = unboundedLists(schema);
    if (unbounded.length) throw new Error(`${unbounded.join(', ')}: a plain list declares maxItems, the most it can return (docs/graphql.md#cost-and-budget)`);
    for (const type of Object.values(schema.getTypeMap())) {
      const { pothosPrismaModel, pothosOptions } = (type.extensions ?? {}) as { pothosPrismaModel?: string; pothosOptions?: { keyScope?: KeyScope } };
      if (pothosPrismaModel && pothosOptions?.keyScope === undefined) throw new Error(`${type.name} declares no keyScope: what may an API key read of it? (docs/decisions.md §15)`);
    }
    return schema;
  }

  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    const rules = rulesIn(fieldConfig);
    if (!rules) {
      const scope = this.keyNeeds(fieldConfig);
      if (scope === undefined) return resolver;
      return async (parent, args, context, info) => {
        // A public root field's caller may have no credentials at all: then it is no key either.
        const viewer = await (context as unknown as Context).viewer().catch(() => null);
        if (viewer?.apiKey) requireKeyScope(scope, viewer);
        return resolver(parent, args, context, info);
      };
    }
    if (fieldConfig.kind === 'Subscription') return resolver;
    return async (parent, args, context, info) => {
      await enforce(rules, args as Record<string, unknown>, context as unknown as Context, info);
      return resolver(parent, args, context, info);
    };
  }

  /**
   * The scope a key needs to follow this field, or undefined when the root field's own scope covers
   * it: the field leads to records of another kind (Contact.deals needs DEALS_READ), or to what a key
   * may never read (User.accounts). A relation its parent's representation embeds (`embedded`: a
   * deal's contact) is read with the parent.
   */
  private keyNeeds(fieldConfig: PothosOutputFieldConfig<Types>): ApiScope | false | undefined {
    if ((fieldConfig.pothosOptions as { embedded?: boolean }).embedded) return undefined;
    let type = fieldConfig.type;
    while (type.kind === 'List') type = type.type;
    const needs = this.keyScopeOf(type.ref);
    if (needs === undefined) return undefined;
    const parent = this.keyScopeOf(fieldConfig.parentType);
    return needs === false || (parent !== undefined && needs !== parent) ? needs : undefined;
  }

  private keyScopeOf(type: OutputType<Types> | string): ApiScope | false | undefined {
    const { keyScope } = this.buildCache.getTypeConfig(type).pothosOptions as { keyScope?: KeyScope };
    if (keyScope && typeof keyScope === 'object') return this.keyScopeOf(keyScope.of as OutputType<Types>);
    return keyScope === 'public' ? undefined : keyScope;
  }

  /** A subscription's checks run once, when it starts (its resolver only maps each event). */
  override wrapSubscribe(
    subscribe: GraphQLFieldResolver<unknown, Types['Context'], object> | undefined,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> | undefined {
    const rules = rulesIn(fieldConfig);
    if (!rules || !subscribe) return subscribe;
    return async (parent, args, context, info) => {
      await enforce(rules, args as Record<string, unknown>, context as unknown as Context, info);
      return subscribe(parent, args, context, info);
    };
  }
}

const rulesIn = (fieldConfig: { pothosOptions: object }) =>
  (fieldConfig.pothosOptions as { rules?: FieldRules }).rules;

SchemaBuilder.registerPlugin('rules', RulesPlugin);

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      rules: RulesPlugin<Types>;
    }
    export interface ObjectTypeOptions<Types extends SchemaTypes = SchemaTypes, Shape = unknown> {
      keyScope?: KeyScope;
    }
    export interface FieldOptions<
      Types extends SchemaTypes = SchemaTypes,
      ParentShape = unknown,
      Type extends TypeParam<Types> = TypeParam<Types>,
      Nullable extends FieldNullability<Type> = FieldNullability<Type>,
      Args extends InputFieldMap = InputFieldMap,
      ResolveShape = unknown,
      ResolveReturnShape = unknown,
    > {
      /** Part of the parent's representation (the contract embeds it): an API key reads it with the parent. */
      embedded?: true;
      /**
       * A plain list's most items (not a connection's or page's, nor one bounded by its own `first`):
       * the cost counts it as that many, and multiplies what is selected under it by as many
       * (docs/graphql.md#cost-and-budget). Every such list declares one, or the schema does not build.
       */
      maxItems?: number;
    }
    export interface QueryFieldOptions<
      Types extends SchemaTypes,
      Type extends TypeParam<Types>,
      Nullable extends FieldNullability<Type>,
      Args extends InputFieldMap,
      ResolveReturnShape,
    > {
      rules?: FieldRules;
    }
    export interface SubscriptionFieldOptions<
      Types extends SchemaTypes,
      Type extends TypeParam<Types>,
      Nullable extends FieldNullability<Type>,
      Args extends InputFieldMap,
      ResolveShape,
      ResolveReturnShape,
    > {
      rules?: FieldRules;
    }
    export interface MutationFieldOptions<
      Types extends SchemaTypes,
      Type extends TypeParam<Types>,
      Nullable extends FieldNullability<Type>,
      Args extends InputFieldMap,
      ResolveReturnShape,
    > {
      rules?: FieldRules;
    }
  }
}
