// The mutations that address one record by id (docs/decisions.md §12), built once as readById builds
// the reads (reads.ts): `update<Type>(id:, input:)`, `delete<Type>(id:)`, `restore<Type>(id:)` and
// `set<Type>Status(id:, status:)` answer NOT_FOUND alike for a missing record and another account's, lock the record's
// row for the request (`line`), honour an Idempotency-Key and run their write in its transaction.
import type { InputObjectRef } from '@pothos/core';
import type { z } from 'zod';
import type { ApiScope } from '../scopes.js';
import type { Query } from '../db/client.js';
import { DeletedRecord, type Deleted } from '../graphql/changes.schema.js';
import { userActor, type Actor } from '../events/types.js';
import type { Prisma } from '../generated/prisma/client.js';
import { byIdArgs, type ByIdArgs } from '../validation.js';
import { builder } from '../graphql/builder.js';
import { checked, ownRow, type FieldLimit, type FieldRules } from '../graphql/rules.js';
import { restoreRecord } from './restore.js';
import type { TrashKind } from './trash.js';

type Tx = Prisma.TransactionClient;

/** A record's by-id mutations share its type, the key scope and limit they need, and how its row is found. */
export type ById<Key> = {
  /** The Prisma model and GraphQL type (`Deal`): the fields are `updateDeal`, `deleteDeal`, `setDealStatus`. */
  type: string;
  scope?: ApiScope;
  limit?: FieldLimit;
  /** The record's key (at least its account), or null when there is none with that id. */
  target: (args: { id: string }, db: Tx) => Promise<(Key & { accountId: string }) | null>;
};

// Loose on purpose: every record's input object and status enum share this role, not one TypeScript type.
type InputRef = InputObjectRef<any, object>;
type EnumRef = object;

/** What every field below checks before its write: the record, found in an account the caller is a member of. */
function byIdRules(record: ById<unknown>, input: z.ZodType, target: ById<unknown>['target'] = record.target): FieldRules {
  return {
    access: 'member',
    scope: record.scope,
    input,
    target: (args: { id: string }, ctx: { db: Tx }) => target(args, ctx.db),
    hidden: 'not-found',
    line: ownRow,
    limit: record.limit,
    idempotent: true,
  };
}

/** The description of an update that takes `expectedUpdatedAt` (docs/decisions.md §12 "optimistic concurrency"). */
export const staleConflict = (noun: string) => `CONFLICT (with currentUpdatedAt) when expectedUpdatedAt is given and the ${noun} changed since; nothing is written.`;

/**
 * `update<Type>(id:, input:[, expectedUpdatedAt:])`: `args` parses all the arguments; `linked` checks
 * the input's links to other records of the account (400 with details before the write).
 */
export function updateById<Key, Args>(
  record: ById<Key>,
  options: {
    input: InputRef;
    args: z.ZodType;
    update: (tx: Tx, key: Key, args: Args, query: Query, actor: Actor) => Promise<unknown>;
    linked?: FieldRules['linked'];
    /** false: no `expectedUpdatedAt` argument. */
    guarded?: boolean;
    description?: string;
  },
) {
  const { input, args, update, linked, guarded = true, description } = options;
  builder.mutationField(`update${record.type}`, (t) =>
    t.prismaField({
      type: record.type as 'Contact',
      nullable: true,
      description,
      args: {
        id: t.arg.id({ required: true }),
        input: t.arg({ type: input, required: true }),
        ...(guarded ? { expectedUpdatedAt: t.arg({ type: 'DateTime' }) } : {}),
      },
      rules: { ...byIdRules(record, args), linked },
      resolve: (query, _root, _args, _ctx, info) => {
        const { viewer, input: parsed, target, write } = checked<Args, Key>(info);
        return write((tx) => update(tx, target, parsed, query, userActor(viewer))) as never;
      },
    }),
  );
}

/** `delete<Type>(id:[, ...args])`: answers what it removed; `args` (and `input`, their rules) for a delete that takes more than the id. */
export function deleteById<Key, Args = ByIdArgs>(
  record: ById<Key>,
  options: {
    remove: (tx: Tx, key: Key, actor: Actor, args: Args) => Promise<Deleted>;
    description?: string;
    args?: (t: { arg: { id: (options?: { required?: boolean }) => any } }) => Record<string, any>;
    input?: z.ZodType;
  },
) {
  const { remove, description, args, input = byIdArgs } = options;
  builder.mutationField(`delete${record.type}`, (t) =>
    t.field({
      type: DeletedRecord,
      nullable: true,
      description,
      args: { id: t.arg.id({ required: true }), ...args?.(t) },
      rules: byIdRules(record, input),
      resolve: (_root, _args, _ctx, info) => {
        const { viewer, input: parsed, target, write } = checked<Args, Key>(info);
        return write((tx) => remove(tx, target, userActor(viewer), parsed));
      },
    }),
  );
}

/**
 * `restore<Type>(id:)` (docs/trash.md): the record back from the trash with every link it had,
 * answered as it is back. Its target is the trash row, so a record not in the trash of an account the
 * caller is a member of is NOT_FOUND, as a missing record is for a delete.
 */
export function restoreById(record: ById<unknown>, kind: TrashKind, description: string) {
  const inTrash = async ({ id }: { id: string }, db: Tx) => {
    const item = await db.trashItem.findFirst({ where: { recordId: id, recordType: kind.kind }, select: { recordId: true, accountId: true } });
    return item && { id: item.recordId, accountId: item.accountId };
  };
  builder.mutationField(`restore${record.type}`, (t) =>
    t.prismaField({
      type: record.type as 'Contact',
      nullable: true,
      description,
      args: { id: t.arg.id({ required: true }) },
      rules: byIdRules(record, byIdArgs, inTrash),
      resolve: (query, _root, _args, _ctx, info) => {
        const { viewer, target, write } = checked<ByIdArgs, { id: string; accountId: string }>(info);
        return write((tx) => restoreRecord(tx, kind, target, userActor(viewer), query)) as never;
      },
    }),
  );
}

// Loose on purpose: the models' delegates share these calls, not one TypeScript type.
type Delegate = (db: Tx) => { findUnique(args: object): Promise<any>; findUniqueOrThrow(args: object): Promise<any> };

/** `<name>(id:)`: a change of the record that takes nothing but its id (completeTask), answered with the record as it is after. */
export function changeById<Key>(record: ById<Key>, name: string, options: { change: (tx: Tx, key: Key, actor: Actor) => Promise<unknown>; delegate: Delegate; description: string }) {
  const { change, delegate, description } = options;
  builder.mutationField(name, (t) =>
    t.prismaField({
      type: record.type as 'Contact',
      nullable: true,
      description,
      args: { id: t.arg.id({ required: true }) },
      rules: byIdRules(record, byIdArgs),
      resolve: (query, _root, _args, _ctx, info) => {
        const { viewer, target, write } = checked<ByIdArgs, Key & { id: string }>(info);
        return write(async (tx) => {
          await change(tx, target, userActor(viewer));
          return delegate(tx).findUniqueOrThrow({ ...query, where: { id: target.id } });
        }) as never;
      },
    }),
  );
}

/**
 * `set<Type>Status(id:, status:)`: a move of the record's state machine (`machine`: INVALID_TRANSITION
 * for a move it does not allow), answered with the record as it is after. The target is read with its
 * status, which the move checks.
 */
export function setStatusById<Key extends { status: string }>(
  record: ById<unknown>,
  options: {
    status: EnumRef;
    args: z.ZodType;
    move: (tx: Tx, key: Key, status: never, actor: Actor) => Promise<unknown>;
    delegate: Delegate;
    description: string;
  },
) {
  const { status, args, move, delegate, description } = options;
  const withStatus = ({ id }: { id: string }, db: Tx) => delegate(db).findUnique({ where: { id }, select: { id: true, accountId: true, status: true } });
  builder.mutationField(`set${record.type}Status`, (t) =>
    t.prismaField({
      type: record.type as 'Contact',
      description,
      args: { id: t.arg.id({ required: true }), status: t.arg({ type: status as never, required: true }) },
      rules: { ...byIdRules(record, args, withStatus), machine: true },
      resolve: (query, _root, _args, _ctx, info) => {
        const { viewer, input, target, write } = checked<{ id: string; status: string }, Key>(info);
        return write(async (tx) => {
          await move(tx, target, input.status as never, userActor(viewer));
          return delegate(tx).findUniqueOrThrow({ ...query, where: { id: input.id } });
        }) as never;
      },
    }),
  );
}
