import type { FieldMap } from '@pothos/core';
import type PrismaTypes from '../generated/pothos-types.js';
import { builder } from './builder.js';
import type { KeyScope } from './rules.plugin.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
type FieldBuilder<Name extends keyof PrismaTypes> = PothosSchemaTypes.PrismaObjectFieldBuilder<Types, PrismaTypes[Name]>;

/** The models a record of an account is kept in: an id, the account's id and the two times. */
type RecordModel = {
  [Name in keyof PrismaTypes]: PrismaTypes[Name]['Shape'] extends { id: string; accountId: string; createdAt: Date; updatedAt: Date } ? Name : never;
}[keyof PrismaTypes];

type OwnFields<Name extends RecordModel> = (t: FieldBuilder<Name>) => FieldMap;

/**
 * A record's object type: `id` and `accountId` first, then its own fields, then `createdAt` and
 * `updatedAt`, the order every record answers in. `keyScope`: what an API key needs to reach it
 * through another type's field (docs/fields.md).
 */
export function recordObject<Name extends RecordModel>(name: Name, keyScope: KeyScope, own: OwnFields<Name>) {
  return builder.prismaObject(name, {
    keyScope,
    fields: (t) => {
      // Loose on purpose: every RecordModel has these four columns, which a generic model cannot show.
      const common = t as unknown as FieldBuilder<'Note'>;
      return {
        id: common.exposeID('id'),
        accountId: common.exposeID('accountId'),
        ...own(t as never),
        createdAt: common.expose('createdAt', { type: 'DateTime' }),
        updatedAt: common.expose('updatedAt', { type: 'DateTime' }),
      };
    },
  });
}
