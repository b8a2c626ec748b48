/** Mutation.mergeContacts · Account.duplicateContacts · Query.duplicateContacts (docs/decisions.md §22, docs/duplicates.md) */
import type { ObjectRef } from '@pothos/core';
import type { Contact, Prisma } from '../generated/prisma/client.js';
import { builder } from '../graphql/builder.js';
import { READS_BEYOND_CONTRACT, WRITES } from '../graphql/limits.js';
import { checked, type FieldRules } from '../graphql/rules.js';
import { userActor } from '../events/types.js';
import { parseInput } from '../validation.js';
import { AccountRef } from '../accounts/account.schema.js';
import { ContactRef } from './contact.schema.js';
import { contactTarget } from './contact.service.js';
import { CONTACTS, MAX_DUPLICATES, mergeArgs, mergeRecords, type MergeArgs, type MergeKind } from './merge.js';
import { duplicatesArgs, duplicatesByAccountArgs, MAX_GROUP, type ContactGroup } from './duplicates.js';
import { duplicateContacts } from './duplicate-groups.js';
import type { RecordKey } from '../db/client.js';

/** The rules of a merge: the primary found in an account the caller is a member of (else NOT_FOUND), its row's line, a key's write scope. */
const mergeRules = (scope: FieldRules['scope'], target: (args: { id: string }, db: never) => Promise<RecordKey | null>): FieldRules => ({
  access: 'member',
  scope,
  input: mergeArgs,
  target: (args: MergeArgs, ctx) => target({ id: args.primaryId }, ctx.db as never),
  hidden: 'not-found',
  line: (input: MergeArgs) => `row:${input.primaryId}`,
  limit: WRITES,
  idempotent: true,
});

const MERGE_DESCRIPTION = (noun: string) =>
  `Merges 1–${MAX_DUPLICATES} duplicates of the primary's account into it: the primary keeps its values, each empty field takes the first non-empty value among the duplicates (oldest first); every record pointing at a duplicate points at the primary; the duplicates are deleted. NOT_FOUND when the primary or any duplicate is not a ${noun} of the account (unknown, another account's, or already merged away): nothing is written.`;

export const DuplicateGroupRef = builder.objectRef<ContactGroup<Contact>>('DuplicateGroup').implement({
  description: 'Contacts that are likely one person (docs/duplicates.md)',
  fields: (t) => ({
    contacts: t.field({ type: [ContactRef], maxItems: MAX_GROUP, description: `At most ${MAX_GROUP}, oldest first`, resolve: (g) => g.contacts }),
    score: t.exposeFloat('score', { description: 'How likely they are one: 0 to 1, from the reasons' }),
    reasons: t.exposeStringList('reasons', { description: 'email (case and +tag ignored), phone (the last 9 digits), name (similar names in one company or e-mail domain)' }),
  }),
});

const FIRST = 'How many groups, best score first (1–100)';

/**
 * A record's merge and duplicates fields (`mergeContacts`, `Account.duplicateContacts`,
 * `Query.duplicateContacts`), written once for every record that merges.
 */
export function mergeFields<Group extends object>(record: {
  /** Its model, table and event kind: the fields are named by the table (`mergeContacts`). */
  kind: MergeKind;
  scopes: { write: FieldRules['scope']; read: FieldRules['scope'] };
  target: (args: { id: string }, db: never) => Promise<RecordKey | null>;
  /** What the merge's description adds to MERGE_DESCRIPTION's. */
  moves?: string;
  groupRef: ObjectRef<typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never, Group>;
  /** `Account.duplicate<Plural>`'s description. */
  groups: string;
  duplicates: (db: Prisma.TransactionClient, accountId: string, first: number) => Promise<Group[]>;
}) {
  const { kind, duplicates } = record;
  const collection = kind.table;
  const plural = collection.charAt(0).toUpperCase() + collection.slice(1);
  builder.mutationField(`merge${plural}`, (t) =>
    t.prismaField({
      type: kind.model,
      nullable: true,
      description: [MERGE_DESCRIPTION(kind.kind), record.moves].filter(Boolean).join(' '),
      args: { primaryId: t.arg.id({ required: true }), duplicateIds: t.arg.idList({ required: true }) },
      rules: mergeRules(record.scopes.write, record.target),
      resolve: (query, _root, _args, _ctx, info) => {
        const { viewer, input, target, write } = checked<MergeArgs, RecordKey>(info);
        return write((tx) => mergeRecords(tx, kind, target, input.duplicateIds, userActor(viewer), query)) as never;
      },
    }),
  );

  builder.prismaObjectFields(AccountRef, (t) => ({
    [`duplicate${plural}`]: t.field({
      type: [record.groupRef],
      description: record.groups,
      args: { first: t.arg.int({ defaultValue: 25, description: FIRST }) },
      resolve: (account, args, ctx) => duplicates(ctx.db, account.id, parseInput(duplicatesArgs, args).first),
    }),
  }));

  builder.queryField(`duplicate${plural}`, (t) =>
    t.field({
      type: [record.groupRef],
      nullable: true,
      description: `Account.duplicate${plural} by account id (API keys: ${collection}:read; REST GET /api/v1/${collection}/duplicates)`,
      args: { accountId: t.arg.id({ required: true }), first: t.arg.int({ defaultValue: 25, description: FIRST }) },
      rules: { access: 'member', scope: record.scopes.read, input: duplicatesByAccountArgs, limit: READS_BEYOND_CONTRACT },
      resolve: (_root, _args, ctx, info) => {
        const { accountId, first } = checked<{ accountId: string; first: number }>(info).input;
        return duplicates(ctx.db, accountId, first);
      },
    }),
  );
}

mergeFields({
  kind: CONTACTS,
  scopes: { write: 'CONTACTS_WRITE', read: 'CONTACTS_READ' },
  target: contactTarget as never,
  groupRef: DuplicateGroupRef,
  groups: 'Groups of contacts that are likely one person, best score first',
  duplicates: (db, accountId, first) => duplicateContacts<Contact>(db, accountId, first),
});
