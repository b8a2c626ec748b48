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
import { defaultFieldResolver, getNamedType, isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql/index.js';
import type { Context } from '../context.js';
import type { ApiScope } from '../scopes.js';
import type { Viewer } from '../auth/viewer.js';
import { unboundedLists } from './cost.js';
import { enforce, keyLacks, keyRefusal, notHonoured, type FieldRules } from './rules.js';
import { writeAnswerLimit } from './write-answer.js';

/**
 * What an API key needs to read records of an object type through another type's field
 * (docs/decisions.md §15): a scope, `false` for never, `'public'` for anyone, or `{ of }` the type
 * whose records it wraps (a connection, edge or page). Every type of a Prisma model says which (the
 * build fails otherwise). Others are answers (a batch's items, a report's rows): a field of one
 * leading to records answers null to a key without their scope (§24: a batch answers ids and
 * statuses), or refuses it where it cannot be null.
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
      for (const field of isObjectType(type) ? Object.values(type.getFields()) : []) {
        const { embedded } = (field.extensions?.pothosOptions ?? {}) as { embedded?: readonly string[] };
        const target = getNamedType(field.type);
        const unknown = embedded && isObjectType(target) ? embedded.filter((name) => !target.getFields()[name]) : [];
        if (unknown.length) throw new Error(`${type.name}.${field.name} embeds ${unknown.join(', ')}, which ${target.name} has not (docs/fields.md)`);
      }
    }
    return schema;
  }

  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    const rules = rulesIn(fieldConfig);
    if (!rules) return this.keyReads(resolver, fieldConfig);
    if (fieldConfig.kind === 'Subscription') return resolver;
    const answer = fieldConfig.kind === 'Mutation' ? writeAnswer(resolver) : resolver;
    return async (parent, args, context, info) => {
      await enforce(rules, args as Record<string, unknown>, context as unknown as Context, info);
      return answer(parent, args, context, info);
    };
  }

  /**
   * What a key reads below the root, in the order a refusal names it: the scope of the records a
   * field leads to (keyNeeds); an answer's records, null without their scope (answerNeeds); and of
   * a record reached through an embedding, only the fields the embedding names (docs/decisions.md §24).
   */
  private keyReads(resolver: GraphQLFieldResolver<unknown, Types['Context'], object>, fieldConfig: PothosOutputFieldConfig<Types>) {
    const embedded = (fieldConfig.pothosOptions as { embedded?: readonly string[] }).embedded;
    const answer = this.answerNeeds(fieldConfig);
    const needs = this.keyNeeds(fieldConfig);
    let wrapped = resolver;
    // A record's fields (not a connection's, page's or answer's): what an embedding hands on. A plain
    // property keeps graphql's default resolver, which graphql-jit inlines as a read (a wrapper was 27 %
    // of a compiled page's allocations, BENCHMARKS.md "The fixed cost of a REST request"): an
    // embedding's view refuses it (embeddedView). Any other field checks the view here.
    const own = this.ownKeyScope(fieldConfig.parentType);
    if (own !== undefined && own !== 'public' && typeof own !== 'object') {
      const plain = resolver === defaultFieldResolver && !embedded && answer === undefined && needs === undefined;
      if (plain) plainFieldsOf(fieldConfig.parentType).add(fieldConfig.name);
      else wrapped = embeddedFieldsOnly(wrapped, fieldConfig.name);
    }
    if (embedded) wrapped = embedding(wrapped, this.keyScopeOf(leafOf(fieldConfig.type).ref) ?? false, new Set(embedded));
    if (answer !== undefined) wrapped = withKey(wrapped, (key) => keyLacks(answer, key) && (fieldConfig.type.nullable ? NOTHING : keyRefusal(answer)));
    if (needs !== undefined) wrapped = withKey(wrapped, (key) => keyLacks(needs, key) && keyRefusal(needs));
    return wrapped;
  }

  /**
   * The scope a key needs to follow this field, or undefined when the root field's own scope covers
   * it: the field leads to records of another kind (Contact.deals needs DEALS_READ), or to what a key
   * may never read (User.accounts). A relation its parent's representation embeds (`embedded`: a
   * deal's contact) is followed with the parent, and shows the fields it names.
   */
  private keyNeeds(fieldConfig: PothosOutputFieldConfig<Types>): ApiScope | false | undefined {
    if ((fieldConfig.pothosOptions as { embedded?: readonly string[] }).embedded) return undefined;
    const needs = this.keyScopeOf(leafOf(fieldConfig.type).ref);
    if (needs === undefined) return undefined;
    const parent = this.keyScopeOf(fieldConfig.parentType);
    return needs === false || (parent !== undefined && needs !== parent) ? needs : undefined;
  }

  /** An answer's (a type declaring no keyScope) field leading to records: the scope they need. */
  private answerNeeds(fieldConfig: PothosOutputFieldConfig<Types>): ApiScope | false | undefined {
    if (fieldConfig.kind === 'Query' || fieldConfig.kind === 'Mutation' || fieldConfig.kind === 'Subscription') return undefined;
    return this.ownKeyScope(fieldConfig.parentType) === undefined ? this.keyScopeOf(leafOf(fieldConfig.type).ref) : undefined;
  }

  private ownKeyScope(type: OutputType<Types> | string): KeyScope | undefined {
    return (this.buildCache.getTypeConfig(type).pothosOptions as { keyScope?: KeyScope }).keyScope;
  }

  private keyScopeOf(type: OutputType<Types> | string): ApiScope | false | undefined {
    const keyScope = this.ownKeyScope(type);
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

type Resolver = GraphQLFieldResolver<unknown, any, object>;
type ApiKeyGrant = NonNullable<Viewer['apiKey']>;

/** The type a field's (possibly nested) list holds. */
const leafOf = (type: { kind: string }): { ref: any } => {
  let leaf = type as { kind: string; type?: { kind: string }; ref?: unknown };
  while (leaf.kind === 'List') leaf = leaf.type!;
  return leaf as { ref: any };
};

/** A key's answer stands in for the field's: null. */
const NOTHING = Symbol('null');

/**
 * Runs the resolver unless the caller is a key that `judge` stops: a refusal to throw, or NOTHING
 * for null. A public root field's caller may have no credentials at all: then it is no key either.
 */
function withKey(resolver: Resolver, judge: (key: ApiKeyGrant) => false | typeof NOTHING | Error): Resolver {
  return async (parent, args, context, info) => {
    const key = (await (context as Context).viewer().catch(() => null))?.apiKey;
    const verdict = key ? judge(key) : false;
    if (verdict === NOTHING) return null;
    if (verdict) throw verdict;
    return resolver(parent, args, context, info);
  };
}

/**
 * A write's answer as its caller may read it (src/graphql/write-answer.ts): to a key without the
 * record's read scope, a view of the fields the rule leaves it, as an embedding shows a record.
 */
function writeAnswer(resolver: Resolver): Resolver {
  return async (parent, args, context, info) => {
    const found: unknown = await resolver(parent, args, context, info);
    if (!found || typeof found !== 'object') return found;
    const field = info.parentType.getFields()[info.fieldName]!;
    const limit = writeAnswerLimit(field, args as Record<string, unknown>, await (context as Context).viewer().catch(() => null));
    if (!limit) return found;
    const type = getNamedType(info.returnType).name;
    const view = (record: unknown) => (record && typeof record === 'object' ? embeddedView(record, type, limit.fields, limit.scope) : record);
    return Array.isArray(found) ? found.map(view) : view(found);
  };
}

/** Per record type, its fields graphql resolves by reading the property of the same name (no resolver). */
const plainFields = new Map<string, Set<string>>();
const plainFieldsOf = (type: string) => plainFields.get(type) ?? plainFields.set(type, new Set()).get(type)!;

/** What a key reached through an embedding without the record's scope may read of it, the refusal, and the record itself. */
const views = new WeakMap<object, { fields: ReadonlySet<string>; scope: ApiScope | false; record: object }>();

/**
 * An embedded relation (a deal's contact): to a key without the record's scope, the record shows
 * the fields the embedding names; its others refuse it, naming the scope (docs/decisions.md §24).
 * Such a key gets a view of each record in its place (embeddedView).
 */
function embedding(resolver: Resolver, scope: ApiScope | false, fields: ReadonlySet<string>): Resolver {
  return async (parent, args, context, info) => {
    const found: unknown = await resolver(parent, args, context, info);
    const key = found ? (await (context as Context).viewer().catch(() => null))?.apiKey : undefined;
    if (!key || !keyLacks(scope, key)) return found;
    const type = getNamedType(info.returnType).name;
    const view = (record: unknown) => (record && typeof record === 'object' ? embeddedView(record, type, fields, scope) : record);
    return Array.isArray(found) ? found.map(view) : view(found);
  };
}

/**
 * A record as a key reads it through an embedding: its plain fields (graphql's default resolver,
 * compiled or not) read the embedded ones' values and, for the others, the refusal, which graphql
 * answers as that field's error. A field with a resolver looks the view up (embeddedFieldsOnly).
 */
function embeddedView(record: object, type: string, fields: ReadonlySet<string>, scope: ApiScope | false): object {
  const refusal = keyRefusal(scope);
  const view: Record<string, unknown> = {};
  for (const name of plainFields.get(type) ?? []) view[name] = fields.has(name) ? (record as Record<string, unknown>)[name] : refusal;
  views.set(view, { fields, scope, record });
  return view;
}

/** A record field with a resolver: on a view, refused unless embedded, and resolved from the record itself. */
function embeddedFieldsOnly(resolver: Resolver, name: string): Resolver {
  return (parent, args, context, info) => {
    const only = parent && typeof parent === 'object' ? views.get(parent) : undefined;
    if (!only) return resolver(parent, args, context, info);
    if (!only.fields.has(name)) throw keyRefusal(only.scope);
    return resolver(only.record, args, context, info);
  };
}

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
      /**
       * A relation the parent's representation embeds (REST's `contacts` in a deal: the contact's id
       * and name): the fields of the record an API key reads with the parent; the record's others
       * need its own scope (docs/decisions.md §24). Names the build checks against the record's type.
       */
      embedded?: readonly string[];
      /**
       * A plain list's most items (not a connection's or page's, nor one bounded by its own `first`):
       * the cost counts it as that many, and multiplies what is selected under it by as many
       * (docs/graphql.md#cost-and-budget). Every such list declares one, or the schema does not build.
       */
      maxItems?: number;
      /** A root field's rules (src/graphql/rules.ts); on any other field the build fails. */
      rules?: FieldRules;
    }
  }
}
