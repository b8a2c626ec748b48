/** Query.import · Query.imports · Account.imports · Mutation.admitImport · Mutation.startImport · Mutation.queueImport · Mutation.cancelImport (docs/decisions.md §17, docs/imports.md) */
import { IMPORT_STARTS, WRITES } from '../graphql/limits.js';
import { z } from 'zod';
import { AccountRef } from '../accounts/account.schema.js';
import { builder } from '../graphql/builder.js';
import { defineCollection } from '../graphql/connection.js';
import { readById } from '../graphql/reads.js';
import { READS_BEYOND_CONTRACT } from '../graphql/limits.js';
import { checked, ownRow } from '../graphql/rules.js';
import type { ImportObjectName } from './columns.js';
import { IMPORT_OBJECTS, matchKeysOf, matchOnProblem } from './objects.js';
import type { Viewer } from '../auth/viewer.js';
import type { Context } from '../context.js';
import { rateLimited } from '../errors.js';
import type { Import } from '../generated/prisma/client.js';
import { byIdArgs, uuid } from '../validation.js';
import { workerAlive } from './worker.js';
import { holdUpload, uploadCounters } from '../ratelimit/upload-slots.js';
import { cancelImport, dropCancelledRows, dropImport, queueImport, startImport, admitImportArgs, startImportArgs, uploadIdentity, type StartImportArgs } from './import.service.js';

const ImportObjectEnum = builder.enumType('ImportObject', { values: { CONTACTS: { value: 'contacts' }, DEALS: { value: 'deals' }, COMPANIES: { value: 'companies' } } as const });
const ImportStatusEnum = builder.enumType('ImportStatus', {
  values: { QUEUED: { value: 'queued' }, RUNNING: { value: 'running' }, COMPLETED: { value: 'completed' }, FAILED: { value: 'failed' }, CANCELLED: { value: 'cancelled' } } as const,
});
const ImportMatchEnum = builder.enumType('ImportMatch', {
  values: {
    EMAIL: { value: 'email', description: 'Contacts: case-insensitive; the oldest contact if several' },
    DOMAIN: { value: 'domain', description: 'Companies: the domain as a write stores it' },
    EXTERNAL_ID: { value: 'externalId', description: 'Exact' },
    NONE: { value: 'none', description: 'Every row creates' },
  } as const,
});

export const ImportRef = builder.prismaObject('Import', {
  keyScope: 'IMPORTS',
  fields: (t) => ({
    id: t.exposeID('id'),
    accountId: t.exposeID('accountId'),
    object: t.field({ type: ImportObjectEnum, resolve: (i) => i.object }),
    status: t.field({ type: ImportStatusEnum, resolve: (i) => i.status }),
    // ImportMatch, not ContactMatch: a companies import matches on DOMAIN. Never NONE: null always creates.
    matchOn: t.field({ type: ImportMatchEnum, nullable: true, resolve: (i) => (i.matchOn as 'email' | 'domain' | 'externalId' | null) }),
    fileName: t.exposeString('fileName', { nullable: true }),
    errorsFileName: t.string({ description: 'The name the errors CSV is served under', resolve: (i) => `import-${i.id}-errors.csv` }),
    unknownColumns: t.exposeStringList('unknownColumns', { description: 'Headers that feed no field, as the file spells them: ignored (those mapping skips with "-" are not listed)' }),
    rowsTotal: t.exposeInt('rowsTotal', { nullable: true, description: 'Null while the file is still arriving' }),
    rowsProcessed: t.exposeInt('rowsProcessed'),
    created: t.exposeInt('created'),
    updated: t.exposeInt('updated'),
    unchanged: t.exposeInt('unchanged'),
    failed: t.exposeInt('failed'),
    createdBy: t.relation('createdBy', { nullable: true, embedded: ['id'] }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    error: t.exposeString('error', { nullable: true }),
    waitingToResume: t.boolean({
      description:
        'True while a RUNNING import has no live worker (its instance died, or an attempt failed): another takes it up within 15 s and resumes after its last committed chunk (docs/imports.md#waiting-to-resume)',
      resolve: async (i, _args, ctx) => i.status === 'running' && !(await workerAlive(ctx.db, i.leaseOwner)),
    }),
  }),
});

const importConnection = defineCollection(
  {
    name: 'Import',
    table: 'imports',
    orders: { CREATED_AT: { column: 'created_at', type: 'timestamptz' } },
    rows: (db, ids) => db.import.findMany({ where: { id: { in: ids } } }),
  },
  ImportRef,
);
builder.prismaObjectField(AccountRef, 'imports', importConnection(null, 'Imports, newest first'));
// GET /api/v1/imports/{id} and its errors CSV read this field: one bucket, like every read by id.
readById('import', 'Import', (db) => db.import, 'IMPORTS', READS_BEYOND_CONTRACT);

const listArgs = z.object({ accountId: uuid });
const queueArgs = z.object({ id: uuid, fileSha256: z.string().regex(/^[0-9a-f]{64}$/, 'Must be 64 lowercase hex digits') });
const target = ({ id }: { id: string }, ctx: { db: { import: { findUnique(a: object): Promise<{ accountId: string } | null> } } }) =>
  ctx.db.import.findUnique({ where: { id }, select: { accountId: true } });

/**
 * An import writes records of its object: a key needs that object's write scope as well as IMPORTS
 * (docs/decisions.md §24; an imports-only key overwrote contacts it could not write by POST).
 */
/**
 * `match_on` names a key of the import's object (contacts: email, external_id; companies: domain,
 * external_id; deals: external_id): a query problem, judged with the others in the input's 400, so
 * before the 403 the object's write scope may give (docs/decisions.md §2: 400 before 403; the
 * inputScope below is computed from the parsed input). Skipped when `object` or `match_on` failed to parse.
 */
const matchOnFits = (query: { object?: unknown; matchOn?: unknown }, ctx: z.RefinementCtx) => {
  const { object, matchOn } = query;
  if (typeof object !== 'string' || !Object.hasOwn(IMPORT_OBJECTS, object)) return;
  if (typeof matchOn !== 'string' || matchOn === 'none') return;
  if (!(matchKeysOf(object as ImportObjectName) as string[]).includes(matchOn)) ctx.addIssue({ code: 'custom', path: ['matchOn'], message: matchOnProblem(object as ImportObjectName) });
};
const ALWAYS = { when: () => true };
const admitImportInput = admitImportArgs.superRefine(matchOnFits, ALWAYS);
const startImportInput = startImportArgs.superRefine(matchOnFits, ALWAYS);

const objectScope = { of: (input: { object: ImportObjectName }) => IMPORT_OBJECTS[input.object].scope, may: Object.values(IMPORT_OBJECTS).map((o) => o.scope) };

/** Seconds a caller refused a place for a concurrent upload is told to wait (Retry-After). */
const UPLOAD_RETRY_SECONDS = 5;

/**
 * One of the caller's and the account's places for a concurrent upload (docs/imports.md#bounds),
 * held until the request's answer: 429 with Retry-After when either is full.
 */
async function takeUploadPlace(ctx: Context, viewer: Viewer, accountId: string) {
  if (await holdUpload(ctx.uploads, ctx.request, uploadCounters(viewer.id, accountId))) return;
  ctx.state.rateLimit = { allowed: false, limit: 0, remaining: 0, resetSeconds: UPLOAD_RETRY_SECONDS };
  throw rateLimited(UPLOAD_RETRY_SECONDS);
}

/** Query.imports answers the latest this many (Account.imports pages through all). */
const LATEST_IMPORTS = 100;

builder.queryField('imports', (t) =>
  t.prismaField({
    type: ['Import'],
    description: `The account's latest ${LATEST_IMPORTS} imports, newest first (Account.imports pages through all of them).`,
    maxItems: LATEST_IMPORTS,
    args: { accountId: t.arg.id({ required: true }) },
    // REST serves it (GET /api/v1/imports), where no cost budget applies: a new read's limit (§18) bounds it.
    rules: { access: 'member', scope: 'IMPORTS', input: listArgs, limit: READS_BEYOND_CONTRACT },
    resolve: (query, _root, _args, ctx, info) => {
      const { input } = checked<z.output<typeof listArgs>>(info);
      return ctx.db.import.findMany({ ...query, where: { accountId: input.accountId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: LATEST_IMPORTS });
    },
  }),
);

builder.mutationFields((t) => ({
  admitImport: t.boolean({
    description:
      "Admits an upload of a file to import from what is known before its body: access, the API key's scopes (IMPORTS and the object's write scope), " +
      "the 20 imports an hour, and a place among the caller's 2 and the account's 3 uploads under way, held until the request is answered. " +
      'POST /api/v1/imports runs it before reading the body, then startImport once the header is in (counted once between them).',
    args: {
      accountId: t.arg.id({ required: true }),
      object: t.arg({ type: ImportObjectEnum, required: true }),
      matchOn: t.arg({ type: ImportMatchEnum }),
      mapping: t.arg.string(),
      valueMapping: t.arg.string(),
      delimiter: t.arg.string(),
      encoding: t.arg.string(),
      fileName: t.arg.string(),
    },
    rules: { access: 'member', scope: 'IMPORTS', inputScope: objectScope, input: admitImportInput, limit: IMPORT_STARTS, notIdempotent: 'it begins nothing; startImport and queueImport do' },
    resolve: async (_root, _args, ctx, info) => {
      const { input, viewer } = checked<z.output<typeof admitImportArgs>>(info);
      await takeUploadPlace(ctx, viewer!, input.accountId);
      return true;
    },
  }),
  startImport: t.prismaField({
    type: 'Import',
    description:
      'Begins an import of a file whose header row is `columns`: judges the columns against the object (a required field without a column is refused) and answers the QUEUED import. ' +
      'POST /api/v1/imports calls it with the header of the file it receives, stores the rows, then calls queueImport.',
    args: {
      accountId: t.arg.id({ required: true }),
      object: t.arg({ type: ImportObjectEnum, required: true }),
      matchOn: t.arg({ type: ImportMatchEnum }),
      mapping: t.arg.string({ description: 'A JSON object: header -> field name (snake_case), or "-" to skip the column; overrides the recognised headers' }),
      valueMapping: t.arg.string({ description: 'A JSON object: field name (snake_case) -> {"the file\'s value": "the value to import"}; values match trimmed and case-insensitively' }),
      delimiter: t.arg.string({ description: 'The file\'s delimiter: ",", ";", "|" or "tab" (POST /api/v1/imports detects it from the header line when not given)' }),
      encoding: t.arg.string({ description: 'The file\'s encoding (POST /api/v1/imports reads it; a byte order mark overrides it): utf-8, utf-16le, utf-16be, windows-1252, iso-8859-1, iso-8859-15' }),
      fileName: t.arg.string(),
      columns: t.arg.stringList({ required: true }),
    },
    rules: {
      access: 'member',
      scope: 'IMPORTS',
      inputScope: objectScope,
      input: startImportInput,
      limit: IMPORT_STARTS,
      notIdempotent: 'it begins an import whose file is yet to come; queueImport takes the key, once the file is stored and known',
    },
    resolve: (_query, _root, _args, ctx, info) => {
      const { input, viewer } = checked<StartImportArgs>(info);
      return startImport(ctx.db, input, viewer!);
    },
  }),
  queueImport: t.prismaField({
    type: 'Import',
    description:
      'The file of a begun import is stored: records its row count, after which a worker may claim it. ' +
      'With an Idempotency-Key, a retry of an upload (same settings, same file) answers the first import, and this copy is dropped (docs/imports.md#retries).',
    args: { id: t.arg.id({ required: true }), fileSha256: t.arg.string({ required: true, description: "SHA-256 of the file's bytes, hex" }) },
    rules: { access: 'member', scope: 'IMPORTS', input: queueArgs, target, hidden: 'not-found', line: ownRow, limit: WRITES, idempotent: true },
    resolve: async (query, _root, _args, ctx, info) => {
      const { input, target: found, write } = checked<z.output<typeof queueArgs>, { accountId: string }>(info);
      const copy = await ctx.db.import.findUniqueOrThrow({ where: { id: input.id } });
      const answer = await write(
        async (tx) => {
          await queueImport(tx, found.accountId, input.id);
          return tx.import.findUniqueOrThrow({ ...query, where: { id: input.id } });
        },
        { request: uploadIdentity(copy, input.fileSha256) },
      );
      // A retry: the first upload's import stands, and this one's copy of the file goes.
      if (answer.id !== input.id) await dropImport(ctx.db, input.id);
      return answer as Import;
    },
  }),
  cancelImport: t.prismaField({
    type: 'Import',
    nullable: true,
    description: 'Stops a queued or running import; rows already written stay. An ended import is answered as it is.',
    args: { id: t.arg.id({ required: true }) },
    rules: { access: 'member', scope: 'IMPORTS', input: byIdArgs, target, hidden: 'not-found', line: ownRow, limit: WRITES, idempotent: true },
    resolve: async (query, _root, _args, ctx, info) => {
      const { input, target: found, write } = checked<z.output<typeof byIdArgs>, { accountId: string }>(info);
      // The answer is read in the write's transaction: it is what a retry with the same key gets back.
      const answer = await write(async (tx) => {
        await cancelImport(tx, found.accountId, input.id);
        return tx.import.findUniqueOrThrow({ ...query, where: { id: input.id } });
      });
      await dropCancelledRows(ctx.db, answer.accountId, input.id);
      return answer as Import;
    },
  }),
}));
