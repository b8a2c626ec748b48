import type { Context } from '../context.js';
import { byIdArgs, type ByIdArgs } from '../validation.js';
import type { ApiScope } from '../scopes.js';
import { builder } from './builder.js';
import { checked, type FieldRules } from './rules.js';

/** Reads REST serves beyond the contract count 120 a minute per user (docs/decisions.md §18): by id, the events feed, search, reports, imports, webhook endpoints. */
export const READS_BEYOND_CONTRACT = { max: 120, window: '1m', per: 'user' } as const;

// Loose on purpose: the eleven Prisma delegates share this call shape but not one TypeScript type.
type Delegate = { findUnique(args: any): Promise<any> };

/**
 * `<name>(id: ID!): <Type>`: the record, or null when it is unknown or in an account the caller
 * cannot see (the same answer: no existence oracle; docs/decisions.md §9 amended and §11).
 * `scope`: what an API key needs to read it (none: keys may not); `limit`: per caller, for the reads
 * REST serves too (GET /<records>/{id}). Anonymous callers get UNAUTHENTICATED; an id that is not a
 * UUID is BAD_USER_INPUT.
 */
export function readById(name: string, type: string, delegate: (db: Context['db']) => Delegate, scope?: ApiScope, limit?: FieldRules['limit']) {
  builder.queryField(name, (t) =>
    t.prismaField({
      type: type as 'Contact',
      nullable: true,
      description: `The ${type} with this id; null when it does not exist or the caller may not see it`,
      args: { id: t.arg.id({ required: true }) },
      rules: {
        access: 'member',
        scope,
        input: byIdArgs,
        // The whole row (its scalars): a selection that asks no relation is answered with it, no second read.
        target: ({ id }: ByIdArgs, ctx) => delegate(ctx.db).findUnique({ where: { id } }),
        hidden: 'null',
        limit,
      },
      resolve: async (query, _root, _args, ctx, info) => {
        const { input, target } = checked<ByIdArgs, { accountId: string } | null>(info);
        if (!target) return null;
        if (Object.keys(query).length === 0) return target as never;
        return delegate(ctx.db).findUnique({ ...query, where: { id: input.id } });
      },
    }),
  );
}
