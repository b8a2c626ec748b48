// Notes (docs/decisions.md §21): create, update, delete, each with its event in the write's
// transaction, by the helpers companies use (src/writes/update.ts, src/events/record.ts).
import { z } from 'zod';
import { updateGuarded, type Query, type UpdateArgs, writeRulesOf } from '../writes/update.js';
import type { Note, Prisma } from '../generated/prisma/client.js';
import { badInput } from '../errors.js';
import { changedFields, createdWithEvents, emitRow, updatedWithEvent, withColumns } from '../events/record.js';
import type { Actor } from '../events/types.js';
import { NOTE_MODEL } from './note.model.js';
import { targetless, targetProblems, targetProblemsOfMany, TARGET_FIELDS } from '../links/targets.js';
import type { RecordKey } from '../db/client.js';

/** The targets of a row, read to judge an update that clears some. */
export const TARGETS = { contactId: true, dealId: true, companyId: true } as const;

/** Its create and update rules, from the model (each field as note.model.ts writes it). */
export const { create: createNoteInput, update: updateNoteInput, updateArgs: updateNoteArgs } = writeRulesOf(NOTE_MODEL);
export type CreateNoteInput = z.output<typeof createNoteInput>;
export type UpdateNoteInput = z.output<typeof updateNoteInput>;
export type UpdateNoteArgs = UpdateArgs<UpdateNoteInput>;

/** A task's field naming one of the account's people (a note has none). */
const ASSIGNEE = 'assigneeId';

/** The `linked` rule of the note and task mutations (src/graphql/rules.ts): targets of the account, an assignee among its people. */
export const activityLinks = (fields: Record<string, unknown>, db: Prisma.TransactionClient, accountId: string) => targetProblems(db, accountId, fields, ASSIGNEE);

export const noteTarget = ({ id }: { id: string }, db: Prisma.TransactionClient) => db.note.findUnique({ where: { id }, select: { id: true, accountId: true } });

export async function assertLinks(db: Prisma.TransactionClient, accountId: string, fields: Record<string, unknown>) {
  const details = await activityLinks(fields, db, accountId);
  if (Object.keys(details).length) throw badInput(details);
}

/**
 * An update that clears targets must leave one: the row's targets (locked by the caller) with the
 * input's over them.
 */
export async function assertStillTargeted(row: Partial<Record<(typeof TARGET_FIELDS)[number], string | null>> | null, input: Record<string, unknown>) {
  if (!row || !TARGET_FIELDS.some((f) => input[f] === null)) return;
  const merged = Object.fromEntries(TARGET_FIELDS.map((f) => [f, input[f] === undefined ? row[f] : (input[f] as string | null)]));
  const details = targetless(merged);
  if (Object.keys(details).length) throw badInput(details);
}

export async function createNote(tx: Prisma.TransactionClient, input: CreateNoteInput, authorId: string | null, actor: Actor, query: Query = {}): Promise<Note> {
  const missing = targetless(input);
  if (Object.keys(missing).length) throw badInput(missing);
  await assertLinks(tx, input.accountId, input);
  const row = await tx.note.create({ ...withColumns('Note', query), data: { ...input, authorId } });
  await emitRow(tx, 'note.created', 'Note', actor, row);
  return row;
}

/** The links of many inputs, one query: the first input refused is refused as assertLinks would. */
export async function assertLinksOfMany(db: Prisma.TransactionClient, inputs: ({ accountId: string } & Record<string, unknown>)[]) {
  const refused = (await targetProblemsOfMany(db, inputs, ASSIGNEE)).find((details) => Object.keys(details).length);
  if (refused) throw badInput(refused);
}

/**
 * createNote for many at once (a burst of workflow runs' add_note steps: docs/workflows.md#runs):
 * the same rules and `note.created` events, in three statements whatever the count (the links, the
 * rows, the events). Any input refused refuses them all.
 */
export async function createNotes(tx: Prisma.TransactionClient, items: { input: CreateNoteInput; actor: Actor }[]): Promise<Note[]> {
  if (!items.length) return [];
  for (const { input } of items) {
    const missing = targetless(input);
    if (Object.keys(missing).length) throw badInput(missing);
  }
  await assertLinksOfMany(tx, items.map((i) => i.input));
  const spec = { type: 'note.created', model: 'Note' } as const;
  return createdWithEvents(tx, spec, items.map(({ input, actor }) => ({ data: { ...input, authorId: null }, actor })), (data) => tx.note.createManyAndReturn({ data }));
}

export async function updateNote(tx: Prisma.TransactionClient, note: RecordKey, args: UpdateNoteArgs, query: Query, actor: Actor) {
  await assertLinks(tx, note.accountId, args.input);
  const spec = { type: 'note.updated', model: 'Note', table: 'notes', actor } as const;
  return updatedWithEvent(tx, spec, note, changedFields(args.input), async () => {
    await assertStillTargeted(await tx.note.findUnique({ where: { id: note.id }, select: TARGETS }), args.input);
    return updateGuarded<Note>(tx.note, note, args.input, withColumns('Note', query), args.expectedUpdatedAt);
  });
}

export async function deleteNote(tx: Prisma.TransactionClient, note: RecordKey, actor: Actor) {
  const row = await tx.note.delete({ where: { id: note.id } });
  await emitRow(tx, 'note.deleted', 'Note', actor, row);
  return { id: note.id, deletedAt: new Date() };
}
