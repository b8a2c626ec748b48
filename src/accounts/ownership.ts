// When a member is removed or leaves (docs/decisions.md §21), the records they owned become unowned
// and their open tasks unassigned, each with its `<kind>.updated` event (previous owner_id or
// assignee_id), in the removal's transaction.
import type { Prisma } from '../generated/prisma/client.js';
import { emitMany, type EmitInput } from '../events/emit.js';
import type { Actor, EventType } from '../events/types.js';

type Owned = { updateManyAndReturn(args: object): Promise<({ id: string; accountId: string } & object)[]> };

/** Every contact, deal and company of the account that `userId` owned, unowned now, and their open tasks unassigned; the events in one statement. */
export async function releaseOwnership(tx: Prisma.TransactionClient, accountId: string, userId: string, actor: Actor): Promise<number> {
  const where = { accountId, ownerId: userId };
  const data = { ownerId: null };
  const kinds: [EventType, Owned][] = [
    ['contact.updated', tx.contact as unknown as Owned],
    ['deal.updated', tx.deal as unknown as Owned],
    ['company.updated', tx.company as unknown as Owned],
  ];
  const events: EmitInput[] = [];
  for (const [type, delegate] of kinds) {
    for (const object of await delegate.updateManyAndReturn({ where, data })) events.push({ type, accountId, actor, object, previous: { ownerId: userId } });
  }
  // A done task keeps who did it.
  for (const object of await tx.task.updateManyAndReturn({ where: { accountId, assigneeId: userId, status: 'open' }, data: { assigneeId: null } })) {
    events.push({ type: 'task.updated', accountId, actor, object, previous: { assigneeId: userId } });
  }
  await emitMany(tx, events);
  return events.length;
}
