// Duplicates in one file (docs/imports.md#duplicates-in-a-file): a match key (e-mail, domain, external id)
// a row takes fails every later row with it, `Duplicate in this file (line N)`, whatever chunk either
// falls in. Within a chunk the batch's own check finds them (Duplicate in this batch), reworded here
// with the line; across chunks the keys taken so far are in import_keys, as SHA-256 digests: the
// database holds them, not the worker, so its memory stays one chunk's keys whatever the file's
// size, and they commit (or roll back) with the chunk that took them.
import { createHash } from 'node:crypto';
import { DUPLICATE, matchKey, setKeys, type BatchKind, type BatchMode, type Judged, type MatchOn } from '../writes/batch.service.js';
import type { Prisma } from '../generated/prisma/client.js';
import { snakeCase } from '../names.js';

/** The keys a row is judged on, as the batch judges them: the match key, and those unique in the account. */
const modeOf = (matchOn: string | null): BatchMode => (matchOn ? { mode: 'upsert', on: matchOn as MatchOn } : { mode: 'create' });
const fieldsOf = (kind: BatchKind, matchOn: string | null): MatchOn[] => setKeys(kind, modeOf(matchOn));

export const duplicateIn = (line: number) => `Duplicate in this file (line ${line})`;

/**
 * What import_keys keeps of a key: SHA-256 of `<field>:<key>`, hex (decoded to bytea in SQL). Taken
 * here, not in SQL: a join on an expression the planner may evaluate per pair of rows cost seconds a
 * chunk on PGlite.
 */
const digestOf = (field: MatchOn, key: string) => createHash('sha256').update(`${field}:${key}`).digest('hex');

/**
 * The batch's `Duplicate in this batch` failures of a chunk, said with the line of the row that took
 * the key first (a duplicate keeps what it gave, as parsed: a domain normalised). `lines[i]` is the line of `judged[i]`.
 */
export function nameDuplicates(kind: BatchKind, judged: Judged[], lines: number[], matchOn: string | null): void {
  for (const field of fieldsOf(kind, matchOn)) {
    const rest = snakeCase(field);
    const first = new Map<string, number>();
    for (const [i, item] of judged.entries()) {
      if ('data' in item) {
        const key = matchKey(kind, field, item.data[field]);
        if (key !== null && !first.has(key)) first.set(key, lines[i]!);
      } else if (item.details[rest]?.[0] === DUPLICATE) {
        const line = first.get(matchKey(kind, field, item.input?.[field]) ?? '');
        if (line !== undefined) judged[i] = { ...item, details: { ...item.details, [rest]: [duplicateIn(line)] } };
      }
    }
  }
}

/**
 * In the chunk's transaction: fails each judged row whose key an earlier chunk's row took (in place
 * of `judged`), and records the keys of the others. `lines[i]` is the line of `judged[i]`.
 */
export async function takeKeys(
  tx: Prisma.TransactionClient,
  kind: BatchKind,
  imp: { accountId: string; id: string; matchOn: string | null },
  judged: Judged[],
  lines: number[],
): Promise<void> {
  const keys: { i: number; field: MatchOn; digest: string; line: number }[] = [];
  for (const [i, item] of judged.entries()) {
    if (!('data' in item)) continue;
    for (const field of fieldsOf(kind, imp.matchOn)) {
      const key = matchKey(kind, field, item.data[field]);
      if (key !== null) keys.push({ i, field, digest: digestOf(field, key), line: lines[i]! });
    }
  }
  if (keys.length === 0) return;
  // The digests taken already, looked up by the primary key; matched to the rows here.
  const taken = await tx.$queryRaw<{ digest: string; line: number }[]>`
    SELECT encode(digest, 'hex') AS digest, line FROM import_keys
     WHERE account_id = ${imp.accountId}::uuid AND import_id = ${imp.id}::uuid
       AND digest = ANY (SELECT decode(d, 'hex') FROM unnest(${keys.map((k) => k.digest)}::text[]) AS d)`;
  const lineOf = new Map(taken.map((t) => [t.digest, t.line]));
  for (const { i, field, digest } of keys) {
    const line = lineOf.get(digest);
    if (line === undefined) continue;
    const item = judged[i]!;
    const details = 'details' in item ? item.details : {};
    judged[i] = { index: item.index, details: { ...details, [snakeCase(field)]: [duplicateIn(line)] } };
  }
  const fresh = JSON.stringify(keys.filter((k) => 'data' in judged[k.i]!).map(({ digest, line }) => ({ digest, line })));
  await tx.$executeRaw`
    INSERT INTO import_keys (account_id, import_id, digest, line)
    SELECT ${imp.accountId}::uuid, ${imp.id}::uuid, decode(k.digest, 'hex'), k.line
      FROM json_to_recordset(${fresh}::json) AS k(digest text, line int)
    ON CONFLICT DO NOTHING`;
}

/**
 * For eraseContact: the digests of a person's keys go from every import of the account
 * (docs/changes.md). `kind` is the contacts' batch kind, compared as it compares them (the caller
 * names it: the contacts import this folder, not the other way round).
 */
export async function forgetKeys(tx: Prisma.TransactionClient, kind: BatchKind, accountId: string, contact: { email: string | null; externalId: string | null }): Promise<void> {
  const digests: string[] = [];
  for (const [field, value] of [['email', contact.email], ['externalId', contact.externalId]] as const) {
    const key = matchKey(kind, field, value);
    if (key !== null) digests.push(digestOf(field, key));
  }
  if (digests.length === 0) return;
  await tx.$executeRaw`
    DELETE FROM import_keys WHERE account_id = ${accountId}::uuid
       AND digest = ANY (SELECT decode(d, 'hex') FROM unnest(${digests}::text[]) AS d)`;
}
