// Imports' rules and writes besides the chunks (docs/imports.md): starting one (its columns judged
// against its object), queueing its stored file, cancelling, ending, and sweeping what a dead
// instance left. Nothing here knows GraphQL or HTTP.
import { z } from 'zod';
import { emit } from '../events/emit.js';
import { SYSTEM, type Actor } from '../events/types.js';
import { badInput } from '../errors.js';
import type { Import, Prisma, PrismaClient } from '../generated/prisma/client.js';
import { isStorableJson, UNSTORABLE_TEXT, uuid } from '../validation.js';
import { accountColumns, FIELDS, planColumns, type ImportObjectName } from './columns.js';
import { recordShapes } from '../model/shapes.js';
import { DELIMITERS, ENCODING_NAMES, ENCODINGS } from './dialect.js';
import { INTAKE_TIMEOUT_MS } from './intake.js';
import { IMPORT_OBJECTS, matchKeysOf, matchOnProblem } from './objects.js';

const mappingText = z.string().max(10_000, 'Must be at most 10000 characters').nullish();

/** A JSON object given as text (a query parameter): parsed here so a bad one is a 400 naming it. */
const jsonObjectOf = <T>(accepts: (value: unknown) => boolean, message: string) => (text: string | null | undefined, ctx: z.RefinementCtx): T | Record<string, never> => {
  if (!text) return {};
  let problem = message;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && Object.values(parsed).every(accepts)) {
      // Kept as JSON with the import: `\u0000` escapes parse to text the database cannot keep.
      if (isStorableJson(parsed)) return parsed as T;
      problem = UNSTORABLE_TEXT;
    }
  } catch {
    /* refused below */
  }
  ctx.addIssue({ code: 'custom', message: problem });
  return z.NEVER;
};
const isText = (v: unknown) => typeof v === 'string';
const isTextObject = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v) && Object.values(v).every(isText);

/** The query of an upload: judged before the body is read (admitImport) and again with the file's header. */
const importQuery = z.object({
  accountId: uuid,
  object: z.enum(['contacts', 'deals', 'companies'], { message: 'Must be one of: companies, contacts, deals' }),
  matchOn: z.enum(['email', 'domain', 'externalId', 'none'], { message: 'Must be one of: domain, email, external_id, none' }).nullish(),
  /** A JSON object, header -> field (REST name), or `-` to skip the column. */
  mapping: mappingText.transform(jsonObjectOf<Record<string, string>>(isText, 'Must be a JSON object of header -> field name (or - to skip the column)')),
  /** A JSON object, field (REST name) -> {the file's value -> the value to import}. */
  valueMapping: mappingText.transform(
    jsonObjectOf<Record<string, Record<string, string>>>(isTextObject, 'Must be a JSON object of field name -> {"the file\'s value": "the value to import"}'),
  ),
  /** The file's delimiter; detected from its header line when not given. */
  delimiter: z.string().refine((d) => Object.hasOwn(DELIMITERS, d), 'Must be one of: ",", ";", "|", tab').nullish(),
  /** The file's encoding; else the Content-Type's charset, else UTF-8 (a byte order mark overrides them). */
  encoding: z.string().refine((e) => Object.hasOwn(ENCODINGS, e.toLowerCase()), `Must be one of: ${ENCODING_NAMES.join(', ')}`).nullish(),
  fileName: z.string().max(255, 'Must be at most 255 characters').nullish(),
});

/**
 * `value_mapping` names fields of the import's object: a query problem, judged with the others in
 * one 400 (run even when another parameter fails; it skips what that failure leaves unparsed).
 */
const valueMappingFields = (query: { object?: unknown; valueMapping?: unknown }, ctx: z.RefinementCtx) => {
  const { object, valueMapping } = query;
  // Whatever failed to parse (a refused `object`, a `value_mapping` of the wrong shape) is named already.
  if (typeof object !== 'string' || !Object.hasOwn(FIELDS, object)) return;
  if (!valueMapping || typeof valueMapping !== 'object' || Array.isArray(valueMapping) || !Object.values(valueMapping).every(isTextObject)) return;
  const { fields } = FIELDS[object as ImportObjectName];
  for (const field of Object.keys(valueMapping)) {
    if (!Object.hasOwn(fields, field)) ctx.addIssue({ code: 'custom', path: ['valueMapping', field], message: `Must be one of: ${Object.keys(fields).join(', ')}` });
  }
};
const ALWAYS = { when: () => true };

export const admitImportArgs = importQuery.superRefine(valueMappingFields, ALWAYS);
export const startImportArgs = importQuery
  .extend({ columns: z.array(z.string().max(1000, 'Must be at most 1000 characters')).min(1, 'The file has no header').max(500, 'Must have at most 500 columns') })
  .superRefine(valueMappingFields, ALWAYS);
export type StartImportArgs = z.output<typeof startImportArgs>;

/** A new import, QUEUED, its file still to be stored (no `rowsTotal`: no worker claims it yet). */
/** `by`: the caller; a system's API key is recorded as the key (its records' events name it), a person as the user. */
export async function startImport(db: PrismaClient, input: StartImportArgs, by: { id: string; apiKey?: object }): Promise<Import> {
  const object = input.object as ImportObjectName;
  // Each object matches on its own keys (deals on the external id alone: docs/decisions.md §16); `none` and absent always create.
  const matchOn = input.matchOn === 'none' || !input.matchOn ? null : input.matchOn;
  if (matchOn && !matchKeysOf(object).includes(matchOn)) throw badInput({ matchOn: [matchOnProblem(object)] });
  // The account's own fields are columns too (docs/imports.md#columns), as its definitions stand now.
  const shapes = await recordShapes.of(db, input.accountId, IMPORT_OBJECTS[object].kind.spec);
  const plan = planColumns(accountColumns(shapes), input.columns, input.mapping, matchOn, input.valueMapping);
  if ('details' in plan) throw badInput(plan.details);
  return db.import.create({
    data: {
      accountId: input.accountId, object, matchOn, fileName: input.fileName ?? null,
      headers: input.columns, columns: plan.columns, unknownColumns: plan.unknown,
      delimiter: DELIMITERS[input.delimiter ?? ','], valueMapping: plan.values,
      createdById: by.apiKey ? null : by.id, apiKeyId: by.apiKey ? by.id : null,
    },
  });
}

/**
 * What makes two uploads one (docs/imports.md#retries): the account, the import's settings as
 * judged (its columns after `mapping`, its value mapping), and the file's bytes (which hold the
 * delimiter and encoding).
 */
export const uploadIdentity = (row: Import, sha256: string) =>
  ({ accountId: row.accountId, object: row.object, matchOn: row.matchOn, fileName: row.fileName, columns: row.columns, valueMapping: row.valueMapping, delimiter: row.delimiter, sha256 });

/**
 * The file is stored: its row count is recorded, and workers may claim it from now on. Once only:
 * an import queued already keeps its count.
 */
export async function queueImport(tx: Prisma.TransactionClient, accountId: string, id: string): Promise<void> {
  const stored = await tx.importRow.aggregate({ where: { accountId, importId: id }, _max: { seq: true } });
  await tx.import.updateMany({ where: { id, accountId, rowsTotal: null }, data: { rowsTotal: stored._max.seq ?? 0 } });
}

/** The file was refused after the import began: nothing of it stays (its staged rows go with it). */
export async function dropImport(db: PrismaClient, importId: string): Promise<void> {
  await db.import.deleteMany({ where: { id: importId } });
}

/** Stops a queued or running import (rows already written stay; an ended one stays as it is). */
export async function cancelImport(tx: Prisma.TransactionClient, accountId: string, id: string): Promise<void> {
  await tx.import.updateMany({
    where: { id, accountId, status: { in: ['queued', 'running'] } },
    data: { status: 'cancelled', finishedAt: new Date(), leaseOwner: null },
  });
}

/**
 * A cancelled import's stored rows, which no worker will write (it reads them only while the import
 * runs): deleted after the cancel commits, outside its transaction, since a file may hold a million.
 */
export async function dropCancelledRows(db: PrismaClient, accountId: string, id: string): Promise<void> {
  await db.importRow.deleteMany({ where: { accountId, importId: id, import: { status: 'cancelled' } } });
  await db.importKey.deleteMany({ where: { accountId, importId: id, import: { status: 'cancelled' } } });
}

/** Ends an import (`completed` or `failed`) with its event, in the caller's transaction; its staged rows and taken keys are dropped. */
export async function finishImport(tx: Prisma.TransactionClient, row: Import, status: 'completed' | 'failed', error: string | null, actor: Actor = SYSTEM) {
  const done = await tx.import.update({
    where: { id: row.id },
    data: { status, error, finishedAt: new Date(), leaseOwner: null },
  });
  await tx.importRow.deleteMany({ where: { accountId: row.accountId, importId: row.id } });
  await tx.importKey.deleteMany({ where: { accountId: row.accountId, importId: row.id } });
  await emit(tx, { type: `import.${status}`, accountId: row.accountId, actor, object: done });
  return done;
}

/** An upload this old whose file is still not stored was cut off: its instance died, or it was never sent. */
export const ABANDONED_UPLOAD_MS = 2 * INTAKE_TIMEOUT_MS;
const SWEEP_BATCH = 100;

/**
 * What an instance that died mid-way leaves behind, in bounded batches: imports whose file never
 * finished arriving are removed, as a refused file is (the client never had its 202); a cancelled
 * import's stored rows, which the cancel drops after its commit, are dropped. Safe on any number
 * of instances at once: an import another one is removing is skipped. Dead workers' heartbeats go too.
 */
export async function sweepImports(db: PrismaClient, now = new Date()): Promise<void> {
  const cutoff = new Date(now.getTime() - ABANDONED_UPLOAD_MS);
  await db.$executeRaw`
    DELETE FROM imports WHERE id IN (
      SELECT id FROM imports WHERE status = 'queued' AND rows_total IS NULL AND created_at < ${cutoff}::timestamptz
      ORDER BY created_at LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
  // Cancelled in the last two days (the status index): a cancel's own drop failing is rare and soon seen.
  await db.$executeRaw`
    DELETE FROM import_rows WHERE (account_id, import_id) IN (
      SELECT i.account_id, i.id FROM imports i
      WHERE i.status = 'cancelled' AND i.created_at > ${new Date(now.getTime() - 2 * 86_400_000)}::timestamptz
        AND EXISTS (SELECT 1 FROM import_rows r WHERE r.account_id = i.account_id AND r.import_id = i.id)
      LIMIT ${SWEEP_BATCH})`;
  // Heartbeats of workers dead a day (a SIGKILL leaves its row; a shutdown deletes its own).
  await db.$executeRaw`DELETE FROM import_workers WHERE alive_until < ${new Date(now.getTime() - 86_400_000)}::timestamptz`;
}
