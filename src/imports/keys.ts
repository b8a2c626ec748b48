// Duplicates in one file (docs/imports.md#duplicates-in-a-file): a match key (e-mail, external id)
// a row takes fails every later row with it, `Duplicate in this file (line N)`, whatever chunk either
// falls in. Within a chunk the batch's own check finds them (Duplicate in this batch), reworded here
// with the line; across chunks the keys taken so far are in import_keys, as SHA-256 digests: the
// database holds them, not the worker, so its memory stays one chunk's keys whatever the file's
// size, and they commit (or roll back) with the chunk that took them.
import { createHash } from 'node:crypto';
import { DUPLICATE, type Judged } from '../batches/batch.service.js';
import type { Prisma } from '../generated/prisma/client.js';

type Field = 'email' | 'externalId';
const REST: Record<Field, string> = { email: 'email', externalId: 'external_id' };

/** The keys a row is judged on, as the batch judges them: the e-mail too when the import matches on it. */
const fieldsOf = (matchOn: string | null): Field[] => (matchOn === 'email' ? ['email', 'externalId'] : ['externalId']);

/** A key as the batch compares them: an e-mail case-insensitively, an external id exactly (blank: none). */
const keyOf = (field: Field, value: unknown): string | null => {
  if (typeof value !== 'string' || value.trim() === '') return null;
  return field === 'email' ? value.trim().toLowerCase() : value.trim();
};

export const duplicateIn = (line: number) => `Duplicate in this file (line ${line})`;

/**
 * What import_keys keeps of a key: SHA-256 of `<field>:<key>`, hex (decoded to bytea in SQL). Taken
 * here, not in SQL: a join on an expression the planner may evaluate per pair of rows cost seconds a
 * chunk on PGlite.
 */
const digestOf = (field: Field, key: string) => createHash('sha256').update(`${field}:${key}`).digest('hex');

/**
 * The batch's `Duplicate in this batch` failures of a chunk, said with the line of the row that took
 * the key first. `inputs[i]` is what `judged[i]` was judged from, `lines[i]` its line.
 */
export function nameDuplicates(judged: Judged[], inputs: Record<string, unknown>[], lines: number[], matchOn: string | null): void {
  for (const field of fieldsOf(matchOn)) {
    const first = new Map<string, number>();
    for (const [i, item] of judged.entries()) {
      if ('data' in item) {
        const key = keyOf(field, item.data[field]);
        if (key !== null && !first.has(key)) first.set(key, lines[i]!);
      } else if (item.details[REST[field]]?.[0] === DUPLICATE) {
        const line = first.get(keyOf(field, inputs[i]![field]) ?? '');
        if (line !== undefined) judged[i] = { index: item.index, details: { ...item.details, [REST[field]]: [duplicateIn(line)] } };
      }
    }
  }
}

/**
 * In the chunk's transaction: fails each judged row whose key an earlier chunk's row took (in place
 * of `judged`), and records the keys of the others. `lines[i]` is the line of `judged[i]`.
 */
export async function takeKeys(tx: Prisma.TransactionClient, imp: { accountId: string; id: string; matchOn: string | null }, judged: Judged[], lines: number[]): Promise<void> {
  const keys: { i: number; field: Field; digest: string; line: number }[] = [];
  for (const [i, item] of judged.entries()) {
    if (!('data' in item)) continue;
    for (const field of fieldsOf(imp.matchOn)) {
      const key = keyOf(field, item.data[field]);
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
    judged[i] = { index: item.index, details: { ...details, [REST[field]]: [duplicateIn(line)] } };
  }
  const fresh = JSON.stringify(keys.filter((k) => 'data' in judged[k.i]!).map(({ digest, line }) => ({ digest, line })));
  await tx.$executeRaw`
    INSERT INTO import_keys (account_id, import_id, digest, line)
    SELECT ${imp.accountId}::uuid, ${imp.id}::uuid, decode(k.digest, 'hex'), k.line
      FROM json_to_recordset(${fresh}::json) AS k(digest text, line int)
    ON CONFLICT DO NOTHING`;
}

/** For eraseContact: the digests of a person's keys go from every import of the account (docs/changes.md). */
export async function forgetKeys(tx: Prisma.TransactionClient, accountId: string, contact: { email: string | null; externalId: string | null }): Promise<void> {
  const digests: string[] = [];
  for (const [field, value] of [['email', contact.email], ['externalId', contact.externalId]] as const) {
    const key = keyOf(field, value);
    if (key !== null) digests.push(digestOf(field, key));
  }
  if (digests.length === 0) return;
  await tx.$executeRaw`
    DELETE FROM import_keys WHERE account_id = ${accountId}::uuid
       AND digest = ANY (SELECT decode(d, 'hex') FROM unnest(${digests}::text[]) AS d)`;
}
