// The bench dataset's companies, notes and tasks (docs/decisions.md §21), bulk-loaded like its
// contacts. Open tasks fall due in the future, so the service's overdue job has nothing to announce
// during a bench run (scripts/bench/overdue.ts makes its own due tasks). One contact, the newest,
// gets TIMELINE_ITEMS notes and tasks with their created events: the timeline case reads it.
import { SYSTEM } from '../events/types.js';
import { recordJsonSql } from '../events/serialize.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { inChunks, type BenchProgress, type BulkTable } from './bulk-insert.js';
import { benchCompany, DAY, pick, PRODUCTS, type Random, uuidv7 } from './seed-bench-data.js';

/** Notes plus tasks of the timeline contact (half each). */
export const TIMELINE_ITEMS = 50;

const COMPANIES: BulkTable = {
  table: 'companies',
  columns: [['id', 'uuid'], ['account_id', 'uuid'], ['name', 'text'], ['domain', 'text'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz']],
  // A domain someone already gave a company of the account is left out rather than failing the run.
  suffix: 'ON CONFLICT DO NOTHING',
};
const NOTES: BulkTable = {
  table: 'notes',
  columns: [['id', 'uuid'], ['account_id', 'uuid'], ['body', 'text'], ['pinned', 'bool'], ['contact_id', 'uuid'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz']],
};
const TASKS: BulkTable = {
  table: 'tasks',
  columns: [
    ['id', 'uuid'], ['account_id', 'uuid'], ['title', 'text'], ['due_at', 'timestamptz'], ['status', 'text', 'task_status'], ['completed_at', 'timestamptz'],
    ['contact_id', 'uuid'], ['created_at', 'timestamptz'], ['updated_at', 'timestamptz'],
  ],
};

export type ActivitySeed = {
  accountId: string;
  contactIds: string[];
  /** When contact `i` was created (ms). */
  bornAt: (i: number) => number;
  counts: { companies: number; notes: number; tasks: number };
  random: Random;
  now: number;
  chunk: { chunkSize: number; onProgress?: (progress: BenchProgress) => void };
};

const iso = (ms: number) => new Date(ms).toISOString();

export async function seedActivities(db: PrismaClient, s: ActivitySeed): Promise<{ companies: number; notes: number; tasks: number }> {
  const { accountId, contactIds, random, now } = s;
  const after = (ms: number) => Math.floor(ms + random() * (now - ms));
  const contact = () => Math.floor(random() * contactIds.length);
  const timeline = contactIds.length - 1;
  // The timeline contact's items are the last rows of each table, created after it.
  const own = (i: number, total: number) => i >= total - TIMELINE_ITEMS / 2 && timeline >= 0;
  const companies = await inChunks(db, COMPANIES, 'companies', s.counts.companies, s.chunk, (i) => {
    const createdAt = Math.floor(now - random() * 730 * DAY);
    const { name, domain } = benchCompany(random, i);
    return [uuidv7(createdAt), accountId, name, domain, iso(createdAt), iso(createdAt)];
  });
  const notes = await inChunks(db, NOTES, 'notes', s.counts.notes, s.chunk, (i) => {
    const c = own(i, s.counts.notes) ? timeline : contact();
    const createdAt = after(s.bornAt(c));
    const body = `Call about the ${pick(random, PRODUCTS)}.\n\n- budget confirmed\n- next step: send the proposal`;
    return [uuidv7(createdAt), accountId, body, random() < 0.05, contactIds[c], iso(createdAt), iso(createdAt)];
  });
  const tasks = await inChunks(db, TASKS, 'tasks', s.counts.tasks, s.chunk, (i) => {
    const c = own(i, s.counts.tasks) ? timeline : contact();
    const createdAt = after(s.bornAt(c));
    const done = random() < 0.7;
    const dueAt = done ? createdAt + 7 * DAY : now + (1 + Math.floor(random() * 60)) * DAY;
    return [uuidv7(createdAt), accountId, `Follow up: ${pick(random, PRODUCTS)}`, iso(dueAt), done ? 'done' : 'open', done ? iso(after(createdAt)) : null, contactIds[c], iso(createdAt), iso(createdAt)];
  });
  if (timeline >= 0 && s.counts.notes + s.counts.tasks > 0) await timelineEvents(db, accountId, contactIds[timeline]!);
  return { companies, notes, tasks };
}

/** The created events of the timeline contact's notes and tasks, as the service writes them (one statement each). */
async function timelineEvents(db: PrismaClient, accountId: string, contactId: string): Promise<void> {
  for (const [table, kind, model] of [['notes', 'note', 'Note'], ['tasks', 'task', 'Task']] as const) {
    // data.object as the service's events show the record (recordJsonSql: no account_id, times in UTC with Z).
    await db.$executeRawUnsafe(
      `INSERT INTO events (id, account_id, type, occurred_at, actor_type, subject_id, contact_id, data)
       SELECT gen_random_uuid(), r.account_id, $3, r.created_at, $4, r.id, r.contact_id, jsonb_build_object('object', ${recordJsonSql(kind, model, 'r').sql})
         FROM ${table} r WHERE r.account_id = $1::uuid AND r.contact_id = $2::uuid`,
      accountId, contactId, `${kind}.created`, SYSTEM.type,
    );
  }
}
