// Records merged into one (docs/decisions.md §22): every row that points at a duplicate, as the
// reference map reads them from the datamodel (src/db/references.ts), points at the primary instead.
// letGo (let-go.ts) is the other way a record's references end: cleared instead of moved.
import type { Prisma } from '../generated/prisma/client.js';
import { referencesTo, type Referenced } from '../db/references.js';
import { delegateOf } from '../db/datamodel.js';

type Delegate = { updateMany(args: object): Promise<{ count: number }> };

/**
 * Re-points every row of the account that points at one of `fromIds` to `toId`: the rows a delete
 * unlinks (deals, invoices, submissions, contacts of a company, ...) and the notes and tasks a
 * delete releases alike, each keeping its other targets. Prisma's updateMany moves their
 * updated_at, so a sync following changes sees them; no events (a link is not the row's own change,
 * as letGo's). Caches the database removes with a record (`cascade`: an invoice's PDF naming a
 * contact) are left to it: they are drawn again. Answers how many rows of each model moved.
 */
export async function moveReferences(
  tx: Prisma.TransactionClient,
  target: Referenced,
  { accountId, fromIds, toId }: { accountId: string; fromIds: readonly string[]; toId: string },
): Promise<Record<string, number>> {
  const moved: Record<string, number> = {};
  if (fromIds.length === 0) return moved;
  for (const ref of referencesTo(target)) {
    if (ref.onGone === 'cascade') continue;
    const { count } = await delegateOf<Delegate>(tx, ref.model).updateMany({ where: { accountId, [ref.field]: { in: [...fromIds] } }, data: { [ref.field]: toId } });
    moved[ref.model] = (moved[ref.model] ?? 0) + count;
  }
  return moved;
}
