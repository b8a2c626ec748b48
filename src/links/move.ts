// Records merged into one (docs/decisions.md §22): every row that points at a duplicate, as the
// reference map reads them from the datamodel (src/db/references.ts), points at the primary instead.
// letGo (let-go.ts) is the other way a record's references end: cleared instead of moved.
import { Prisma } from '../generated/prisma/client.js';
import { referencesTo, type Reference, type Referenced } from '../db/references.js';

/**
 * Re-points every row of the account that points at one of `fromIds` to `toId`: the rows a delete
 * unlinks (deals, invoices, submissions, contacts of a company, ...) and the notes and tasks a
 * delete releases alike, each keeping its other targets. In one statement: an UPDATE per
 * referencing table, each a data-modifying CTE (a table with two links to the target updates both
 * in its one UPDATE: a row is updated once per statement). updated_at moves (the time Prisma's
 * @updatedAt would set; the stamps trigger takes it to the transaction's start), so a sync
 * following changes sees them; no events (a link is not the row's own change, as letGo's). Caches
 * the database removes with a record (`cascade`: an invoice's PDF naming a contact) are left to it:
 * they are drawn again. Answers how many rows of each model moved.
 */
export async function moveReferences(
  tx: Prisma.TransactionClient,
  target: Referenced,
  { accountId, fromIds, toId }: { accountId: string; fromIds: readonly string[]; toId: string },
): Promise<Record<string, number>> {
  if (fromIds.length === 0) return {};
  const byTable = new Map<string, Reference[]>();
  for (const ref of referencesTo(target)) {
    if (ref.onGone === 'cascade') continue;
    byTable.set(ref.table, [...(byTable.get(ref.table) ?? []), ref]);
  }
  const tables = [...byTable.values()];
  if (tables.length === 0) return {};
  const from = Prisma.sql`${[...fromIds]}::uuid[]`;
  const now = new Date();
  const updates = tables.map((refs, i) => {
    const col = (ref: Reference) => Prisma.raw(`"${ref.column}"`);
    const set = refs.map((ref) => (refs.length === 1 ? Prisma.sql`${col(ref)} = ${toId}::uuid` : Prisma.sql`${col(ref)} = CASE WHEN ${col(ref)} = ANY(${from}) THEN ${toId}::uuid ELSE ${col(ref)} END`));
    if (refs[0]!.stamped) set.push(Prisma.sql`"updated_at" = ${now}::timestamptz`);
    const pointing = Prisma.join(refs.map((ref) => Prisma.sql`${col(ref)} = ANY(${from})`), ' OR ');
    return Prisma.sql`${Prisma.raw(`m${i}`)} AS (UPDATE ${Prisma.raw(`"${refs[0]!.table}"`)} SET ${Prisma.join(set, ', ')}
       WHERE "account_id" = ${accountId}::uuid AND (${pointing}) RETURNING 1)`;
  });
  const counts = Prisma.join(tables.map((_, i) => Prisma.raw(`(SELECT count(*) FROM m${i})::int AS m${i}`)), ', ');
  const [row] = await tx.$queryRaw<Record<string, number>[]>`WITH ${Prisma.join(updates, ', ')} SELECT ${counts}`;
  const moved: Record<string, number> = {};
  tables.forEach((refs, i) => (moved[refs[0]!.model] = Number(row![`m${i}`] ?? 0)));
  return moved;
}
