// What an import's rows carry beside the batch input (docs/imports.md#deals-linked-by-e-mail-external-id-and-stage-name): a
// record's creation time from the file, and the keys a deal names its contact and stage by in other
// systems' files (`contact_email`, `contact_external_id`, `stage_name`). Rows without their match key
// in an upsert by external id are judged as creates. The references of a whole chunk are found in
// one statement, in the chunk's transaction: never a query per row.
import { judgeBatch, matchKey, setKeys, DUPLICATE, type BatchKind, type BatchMode, type Judged } from '../writes/batch.service.js';
import type { ErrorDetails } from '../errors.js';
import type { Prisma } from '../generated/prisma/client.js';
import { snakeCase } from '../names.js';
import { REFERENCES, type ReferenceField } from './columns.js';

/** A row's references, as the file spells them (trimmed): the field each fills is absent from its input. */
export type Refs = Partial<Record<ReferenceField, string>>;
/** What the worker takes out of a row's input before its rules judge it. */
export type Extras = { createdAt: Date | null; refs: Refs | null };

/** Takes the import-only columns out of `input` (changed in place). A reference whose field the row gives itself (a `contact_id`) is left unused. */
export function takeExtras(input: Record<string, unknown>): Extras {
  const createdAt = input.createdAt instanceof Date ? input.createdAt : null;
  delete input.createdAt;
  let refs: Refs | null = null;
  for (const field of Object.keys(REFERENCES) as ReferenceField[]) {
    const value = input[field];
    delete input[field];
    if (typeof value !== 'string' || input[REFERENCES[field].fills] !== undefined) continue;
    (refs ??= {})[field] = value.trim();
  }
  return { createdAt, refs };
}

/** The match keys upserts may go without: a row with no external id is a new record (docs/decisions.md §26). */
const CREATES_WITHOUT_KEY = new Set(['externalId']);

/**
 * The rows judged by the kind's rules, as judgeBatch does; in an upsert on the external id, the
 * rows without one are judged as creates (and written as new records) rather than failed. Two rows
 * of one unique key fail the later, across both halves too. `judged[i]` is `inputs[i]`'s item.
 */
export async function judgeRows(kind: BatchKind, accountId: string, inputs: Record<string, unknown>[], mode: BatchMode): Promise<Judged[]> {
  if (mode.mode !== 'upsert' || !CREATES_WITHOUT_KEY.has(mode.on)) return judgeBatch(kind, accountId, inputs, mode);
  const keyless = inputs.flatMap((input, i) => (matchKey(kind, mode.on, input[mode.on]) === null ? [i] : []));
  if (keyless.length === 0) return judgeBatch(kind, accountId, inputs, mode);
  const without = new Set(keyless);
  const keyed = inputs.flatMap((_, i) => (without.has(i) ? [] : [i]));
  const [upserts, creates] = [await judgeBatch(kind, accountId, keyed.map((i) => inputs[i]!), mode), await judgeBatch(kind, accountId, keyless.map((i) => inputs[i]!), { mode: 'create' })];
  const judged: Judged[] = new Array(inputs.length);
  for (const [j, item] of upserts.entries()) judged[keyed[j]!] = { ...item, index: keyed[j]! };
  for (const [j, item] of creates.entries()) {
    const index = keyless[j]!;
    // An upsert's item that matches nothing is created from its create's verdict.
    judged[index] = 'data' in item ? { index, data: item.data, asCreate: { data: { ...item.data } } } : { ...item, index };
  }
  for (const field of setKeys(kind, mode)) {
    const seen = new Set<string>();
    for (const [i, item] of judged.entries()) {
      if (!('data' in item)) continue;
      const key = matchKey(kind, field, item.data[field]);
      if (key === null) continue;
      if (seen.has(key)) judged[i] = { index: i, details: { [snakeCase(field)]: [DUPLICATE] }, input: item.data };
      else seen.add(key);
    }
  }
  return judged;
}

/** What a new record is made of: a create's data, or an upsert item's create verdict (an update never changes `createdAt`). */
const createData = (item: Judged, mode: BatchMode): Record<string, unknown> | null =>
  !('data' in item) ? null : mode.mode === 'create' ? item.data : item.asCreate && 'data' in item.asCreate ? item.asCreate.data : null;

/** Each judged row's creation time from the file, on what a new record is made of (the import's kind writes it: src/imports/objects.ts). */
export function keepCreatedAt(judged: Judged[], extras: Extras[], mode: BatchMode): void {
  for (const [i, item] of judged.entries()) {
    const time = extras[i]?.createdAt;
    const data = time ? createData(item, mode) : null;
    if (data) data.createdAt = time;
  }
}

type Found = { by: string; key: string; id: string };

/**
 * The chunk's references found in one statement (contacts by lower-cased e-mail, the oldest first
 * as §5 has it, or by exact external id; stages by lower-cased name, the first in the pipeline's
 * order), and each row's filled in (the id in its data, and in its create verdict) or failed,
 * naming the column, beside any other problem it has. `refs[i]` belongs to `judged[i]`.
 */
export async function resolveReferences(tx: Prisma.TransactionClient, accountId: string, judged: Judged[], refs: (Refs | null)[]): Promise<void> {
  const keyOf = (field: ReferenceField, value: string) => (field === 'contactExternalId' ? value : value.toLowerCase());
  const wanted: Record<'email' | 'externalId' | 'name', Set<string>> = { email: new Set(), externalId: new Set(), name: new Set() };
  for (const r of refs) for (const [field, value] of Object.entries(r ?? {}) as [ReferenceField, string][]) wanted[REFERENCES[field].by].add(keyOf(field, value));
  if (wanted.email.size + wanted.externalId.size + wanted.name.size === 0) return;
  const list = (set: Set<string>) => JSON.stringify([...set]);
  const found = await tx.$queryRaw<Found[]>`
    SELECT DISTINCT ON (f.by, f.key) f.by, f.key, f.id FROM (
      SELECT 'email' AS by, lower(c.email) AS key, c.id::text AS id, extract(epoch FROM c.created_at) AS rank, c.id::text AS tie FROM contacts c
       WHERE c.account_id = ${accountId}::uuid AND lower(c.email) IN (SELECT json_array_elements_text(${list(wanted.email)}::json))
      UNION ALL
      SELECT 'externalId', c.external_id, c.id::text, 0, c.id::text FROM contacts c
       WHERE c.account_id = ${accountId}::uuid AND c.external_id IN (SELECT json_array_elements_text(${list(wanted.externalId)}::json))
      UNION ALL
      SELECT 'name', lower(s.name), s.id::text, s.position, s.id::text FROM pipeline_stages s
       WHERE s.account_id = ${accountId}::uuid AND lower(s.name) IN (SELECT json_array_elements_text(${list(wanted.name)}::json))
    ) f ORDER BY f.by, f.key, f.rank, f.tie`;
  const idOf = new Map(found.map((f) => [`${f.by}:${f.key}`, f.id]));
  for (const [i, r] of refs.entries()) {
    if (!r) continue;
    const item = judged[i]!;
    const problems: ErrorDetails = {};
    const fill: Record<string, string> = {};
    for (const [field, value] of Object.entries(r) as [ReferenceField, string][]) {
      const { fills, by, missing } = REFERENCES[field];
      const id = idOf.get(`${by}:${keyOf(field, value)}`);
      if (!id) problems[snakeCase(field)] = [missing];
      // An external id, exact, wins over an e-mail when a row gives both.
      else if (fill[fills] === undefined || field === 'contactExternalId') fill[fills] = id;
    }
    if (Object.keys(problems).length) {
      judged[i] = 'data' in item ? { index: item.index, details: problems, input: item.data } : { ...item, details: { ...item.details, ...problems } };
    } else if ('data' in item) {
      Object.assign(item.data, fill);
      if (item.asCreate && 'data' in item.asCreate) Object.assign(item.asCreate.data, fill);
    }
  }
}
