import type { Context } from '../context.js';
import { roleColumns, roleOf } from '../auth/access.js';
import { rawRead } from '../db/raw.js';
import { Prisma } from '../generated/prisma/client.js';
import { byIdArgs, isUuid, type ByIdArgs } from '../validation.js';
import type { ApiScope } from '../scopes.js';
import { builder } from './builder.js';
import { ident, rowJson, type Collection } from './collection.js';
import { checked, type FieldRules } from './rules.js';

/**
 * The record and a signed-in user's role in its account, in one statement: the access check that
 * follows finds the role in the context (ctx.knowRole) instead of asking for it (a contact's timeline
 * was three statements: the contact, the role, the page). undefined where it does not apply: an API
 * key (its role needs no read), a collection not read as JSON.
 */
async function recordWithRole(ctx: Context, collection: Collection, id: string): Promise<{ accountId: string } | null | undefined> {
  const json = rowJson(collection);
  const viewer = await ctx.viewer();
  if (!json || viewer.apiKey || !isUuid(viewer.id)) return undefined;
  const [found] = await rawRead<{ row: string; owner: boolean; member: boolean }>(ctx.db, Prisma.sql`
    SELECT ${json.object}::text AS row, ${roleColumns(viewer.id)}
    FROM ${ident(collection.table)} t JOIN accounts a ON a.id = t.account_id WHERE t.id = ${id}::uuid`);
  if (!found) return null;
  const row = json.read(JSON.parse(found.row) as Record<string, unknown>) as { accountId: string };
  ctx.knowRole(row.accountId, roleOf(found));
  return row;
}

// Loose on purpose: the eleven Prisma delegates share this call shape but not one TypeScript type.
type Delegate = { findUnique(args: any): Promise<any> };

/**
 * `<name>(id: ID!): <Type>`: the record, or null when it is unknown or in an account the caller
 * cannot see (the same answer: no existence oracle; docs/decisions.md §9 amended and §11).
 * `scope`: what an API key needs to read it (none: keys may not); `limit`: per caller, for the reads
 * REST serves too (GET /<records>/{id}). Anonymous callers get UNAUTHENTICATED; an id that is not a
 * UUID is BAD_USER_INPUT. `collection`: the record's collection, to read it with the caller's role (recordWithRole).
 */
export function readById(name: string, type: string, delegate: (db: Context['db']) => Delegate, scope?: ApiScope, limit?: FieldRules['limit'], collection?: Collection) {
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
        target: async ({ id }: ByIdArgs, ctx) => {
          const read = collection && (await recordWithRole(ctx, collection, id));
          return read !== undefined ? read : delegate(ctx.db).findUnique({ where: { id } });
        },
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
