// A contact, deal or company is going (deleted, erased, merged away): every row that points at it,
// as the reference map reads them from the datamodel (src/db/references.ts), lets go of it here.
import type { Prisma } from '../generated/prisma/client.js';
import { referencesTo, type Referenced } from '../db/references.js';
import { releaseTargets, type TargetField } from './targets.js';
import type { RecordKey } from '../db/client.js';
import { delegateOf } from '../db/datamodel.js';

type Delegate = { updateMany(args: object): Promise<{ count: number }> };

/**
 * Clears the link of every row that points at `record` (Prisma's updateMany moves their updated_at),
 * releases its notes and tasks (docs/decisions.md §21), and answers how many rows of each model
 * lost the link. Caches the database removes with the record (`cascade`) are left to it.
 */
export async function letGo(tx: Prisma.TransactionClient, target: Referenced, { id, accountId }: RecordKey): Promise<Record<string, number>> {
  const unlinked: Record<string, number> = {};
  let released: TargetField | null = null;
  for (const ref of referencesTo(target)) {
    if (ref.onGone === 'release') released = ref.field as TargetField;
    if (ref.onGone !== 'unlink') continue;
    const { count } = await delegateOf<Delegate>(tx, ref.model).updateMany({ where: { accountId, [ref.field]: id }, data: { [ref.field]: null } });
    unlinked[ref.model] = count;
  }
  if (released) await releaseTargets(tx, accountId, released, id);
  return unlinked;
}
