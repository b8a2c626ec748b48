// Prisma's debug module keeps the arguments of its last 100 calls whatever DEBUG says (for its
// error reports), and the pg driver adapter calls it with every query and its parameters. An
// import's chunk sends ~0.5 MB of parameters (its new rows as JSON; ~1 MB when its events went
// apart), so those 100 entries held several chunks' worth, tens of MB that the service never freed
// (docs/imports.md).
// Calls of our own push them out: the history is a queue, not a cache.
import { Debug } from '@prisma/driver-adapter-utils';

/** How many entries Prisma's debug module keeps (MAX_ARGS_HISTORY in @prisma/debug). */
const HISTORY = 100;
const debug = Debug('crm:imports');

/** Pushes the queries of the chunk just committed (and their parameters) out of Prisma's debug history. */
export function forgetChunkQueries(): void {
  for (let i = 0; i < HISTORY; i++) debug('chunk committed');
}
