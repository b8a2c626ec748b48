// Companies (docs/decisions.md §21): create, update, delete, each with its event in the write's
// transaction, by the helpers contacts and deals use (src/writes/update.ts, src/events/record.ts).
import { letGo } from '../links/let-go.js';
import { toTrash, TRASH_KINDS } from '../writes/trash.js';
import { z } from 'zod';
import { isUniqueViolation, TAKEN, updateGuarded, type Query, type UpdateArgs } from '../writes/update.js';
import { Prisma, type Company } from '../generated/prisma/client.js';
import { badInput } from '../errors.js';
import { changedFields, emitRow, updatedWithEvent, withColumns } from '../events/record.js';
import type { Actor } from '../events/types.js';
import { COMPANY_MODEL } from './company.model.js';
import { assertUpdateValues, createWithValues, customValueProblems } from '../writes/custom-values.js';
import { checkOwnership, ownershipProblems } from '../links/company-owner.js';
import { batchKindOf } from '../writes/batch.service.js';
import { rowOf } from '../writes/set-write.js';
import type { RecordKey } from '../db/client.js';

export const DOMAIN_TAKEN = 'Already used by another company';

/**
 * Companies on the set-based write path (src/writes/): the model and its batch keys; an
 * upsert matches on the domain (as normalised) or the external id, both unique in the account.
 */
export const companyBatch = batchKindOf(COMPANY_MODEL, {
  keys: { domain: { taken: DOMAIN_TAKEN }, externalId: { taken: TAKEN } },
  newRow: (input, id, now) => rowOf('Company', { ...input, id, createdAt: now, updatedAt: now }),
  // docs/decisions.md §21: an owner who is one of the account's people.
  links: (tx, accountId, judged) => checkOwnership(tx, accountId, judged, { company: false }),
});

/** Its single create's and update's rules, derived from the model (each field as it writes it). */
export const { create: createCompanyInput, update: updateCompanyInput, updateArgs: updateCompanyArgs } = companyBatch.rules;
export type CreateCompanyInput = z.output<typeof createCompanyInput>;
export type UpdateCompanyInput = z.output<typeof updateCompanyInput>;
export type UpdateCompanyArgs = UpdateArgs<UpdateCompanyInput>;

/** The `linked` rule of the company mutations (src/graphql/rules.ts): the owner is one of the account's people; values the account's fields take (an update's patch when `target` is the company). */
export const companyLinks = async (fields: Record<string, unknown>, db: Prisma.TransactionClient, accountId: string, _ctx?: unknown, target?: unknown) => ({
  ...(await ownershipProblems(db, accountId, { ownerId: fields.ownerId })),
  ...(await customValueProblems(db, accountId, COMPANY_MODEL, fields.customFields, target ? 'update' : 'create')),
});

export const companyTarget = ({ id }: { id: string }, db: Prisma.TransactionClient) =>
  db.company.findUnique({ where: { id }, select: { id: true, accountId: true } });

/** A taken domain or external id as the 400 naming it (the unique index that refused the row says which). */
function takenAs(error: unknown): never {
  if (!isUniqueViolation(error)) throw error;
  const meta = JSON.stringify((error as { meta?: unknown }).meta ?? {});
  throw meta.includes('domain') ? badInput({ domain: [DOMAIN_TAKEN] }) : badInput({ externalId: [TAKEN] });
}

export async function createCompany(tx: Prisma.TransactionClient, input: CreateCompanyInput, actor: Actor, query: Query = {}): Promise<Company> {
  const data = await createWithValues(tx, input.accountId, COMPANY_MODEL, input, await ownershipProblems(tx, input.accountId, { ownerId: input.ownerId }));
  const row = await tx.company.create({ ...withColumns('Company', query), data }).catch(takenAs);
  await emitRow(tx, 'company.created', 'Company', actor, row);
  return row;
}

export async function updateCompany(tx: Prisma.TransactionClient, company: RecordKey, args: UpdateCompanyArgs, query: Query, actor: Actor) {
  await assertUpdateValues(tx, company.accountId, COMPANY_MODEL, args.input, await ownershipProblems(tx, company.accountId, { ownerId: args.input.ownerId }));
  const spec = { type: 'company.updated', model: 'Company', table: 'companies', actor } as const;
  return updatedWithEvent(tx, spec, company, changedFields(args.input), () =>
    updateGuarded<Company>(tx.company, company, args.input, withColumns('Company', query), args.expectedUpdatedAt),
  ).catch(takenAs);
}

/** Removes the company; its contacts, deals, tasks and the notes also about something else stay, unlinked; notes about it alone go (no event for them: their company_id is a link, as a deleted contact's deals). */
export async function deleteCompany(tx: Prisma.TransactionClient, company: RecordKey, actor: Actor) {
  // To the trash first, with every row that points at it (docs/trash.md); then let go as ever.
  await toTrash(tx, TRASH_KINDS.company, company.accountId, [company.id], actor);
  await letGo(tx, 'Company', company);
  const row = await tx.company.delete({ where: { id: company.id } });
  await emitRow(tx, 'company.deleted', 'Company', actor, row);
  return { id: company.id, deletedAt: new Date() };
}
