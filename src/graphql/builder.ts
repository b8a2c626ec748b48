import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import './rules.plugin.js';
import { answeredWithoutSelection } from './write.js';
import type PrismaTypes from '../generated/pothos-types.js';
import { getDatamodel } from '../generated/pothos-types.js';
import type { Context } from '../context.js';

/** The one Pothos builder. Types live in the domain folders; src/schema.ts (the composition root) assembles them. */
export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date };
    Date: { Input: Date; Output: Date };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  // Rules first: Pothos composes wrapResolve from the last plugin inwards, so the rules' checks wrap
  // Prisma's relation loader. Inside it, a view of a record (an embedding's, a write's answer to a key,
  // docs/decisions.md §24 and §26) missed the loader's row mapping and its fallback query answered the
  // relation without asking the rules.
  plugins: ['rules', PrismaPlugin],
  defaultFieldNullability: false,
  prisma: {
    // Per request, so each app (and each test app) talks to its own database.
    client: (ctx) => ctx.db,
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    // A resolver that forgot to pass `query` on costs a query per relation (the plugin's fallback):
    // said while developing, except where the rules know the selection was not needed this time.
    onUnusedQuery:
      process.env.NODE_ENV === 'production'
        ? null
        : (info) => {
            if (!answeredWithoutSelection(info)) console.warn(`Prisma query was unused in resolver for ${info.parentType.name}.${info.fieldName}`);
          },
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
