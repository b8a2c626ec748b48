// The one set-based write (docs/decisions.md §16, docs/batches.md): new rows and changed rows of one
// table, their events and webhook messages, in ONE SQL statement of data-modifying CTEs. A single
// create is a set of one; a batch of 100 costs the same one statement. The record_counts triggers
// (statement-level) keep the counters exact, and the answer is what the statement returned.
import { Prisma } from '../generated/prisma/client.js';
import { fieldsOf, type ModelField } from '../db/datamodel.js';
import { wakeSource } from '../events/emit.js';
import { outbox } from '../events/outbox.js';
import { eventId, uuidv7 } from '../events/ids.js';
import { isoTimeSql, serializeRecord } from '../events/serialize.js';
import { mapInSlices } from './yielding.js';
import { rawWrite } from '../db/raw.js';
import { isDataError } from '../db/sql-state.js';
import { together } from '../db/together.js';
import type { Actor, RecordKind } from '../events/types.js';
import { snakeCase } from '../names.js';

/** A row as Prisma returns it: every column, camelCase. */
export type Row = Record<string, unknown> & { id: string; accountId: string };

export type SetModel = { model: 'Contact' | 'Deal' | 'Company'; table: 'contacts' | 'deals' | 'companies'; kind: Extract<RecordKind, 'contact' | 'deal' | 'company'> };

type Column = ModelField & { column: string };
const scalarsCache = new Map<string, Column[]>();
/** The model's scalar and enum fields with their columns, worked out once (a batch converts every row). */
const scalars = (model: string): Column[] => {
  let found = scalarsCache.get(model);
  if (!found) {
    found = fieldsOf(model).filter((f) => f.kind === 'scalar' || f.kind === 'enum').map((f) => ({ ...f, column: snakeCase(f.name) }));
    scalarsCache.set(model, found);
  }
  return found;
};

/** A row as JSON for json_populate_recordset: column names, times ISO 8601 (a `date` column takes the day), money as exact text. */
function toColumns(model: string, row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of scalars(model)) {
    const value = row[f.name];
    if (value === undefined) continue;
    out[f.column] =
      value instanceof Date ? value.toISOString()
      : Prisma.Decimal.isDecimal(value) ? (value as Prisma.Decimal).toFixed()
      : (value ?? null);
  }
  return out;
}

/** A returned row (to_json of the table's row: column names) back as Prisma names and types. */
export function fromColumns(model: string, json: Record<string, unknown>): Row {
  const row: Record<string, unknown> = {};
  for (const f of scalars(model)) {
    const value = json[f.column];
    row[f.name] = value == null ? null : f.type === 'DateTime' ? new Date(value as string) : f.type === 'Decimal' ? new Prisma.Decimal(String(value)) : value;
  }
  return row as Row;
}

export type SetChange = { row: Row; previous: Record<string, unknown> };
export type Written = { created: Map<string, Row>; updated: Map<string, Row> };

/**
 * Inserts `creates` (every column given: ids, defaults and times are decided by the caller), skipping
 * a row whose `unique` key is taken (ON CONFLICT DO NOTHING: it is missing from `created`), and sets
 * every column of each `updates` row (the caller has locked those rows and read them), writing each
 * written row's `<kind>.created` / `<kind>.updated` event and webhook messages in the same statement.
 * `records: false`: the maps hold `{ id }` alone (the statement returns ids, not rows as JSON).
 * `companyByDomain`: a new row's domain whose company (of its account) the statement itself sets as
 * its `company_id` when it names none (a contact's e-mail domain, docs/decisions.md §21), so the look-up
 * is no round trip of its own; its event shows the company found.
 */
export function writeSet(db: Prisma.TransactionClient, spec: SetModel, actor: Actor, creates: Row[], updates: SetChange[], options: SetOptions = {}): Promise<Written> {
  // Outside a transaction (on a client that opens them), a few new rows alone may share their
  // statement with other requests' (src/db/together.ts); inside one, the statement is the transaction's.
  // (A transaction's client has no `$connect`, as src/events/emit.ts tells them apart.)
  if (updates.length || !creates.length || creates.length > LARGEST_SET_THAT_WAITS || !('$connect' in db)) return writeOne(db, spec, actor, creates, updates, options);
  const { records = true, unique = UNIQUE_BY_DEFAULT, companyByDomain, whileWriting } = options;
  whileWriting?.();
  const alike = ['set', spec.table, actor.type, actor.id, records, unique.join(), companyByDomain ? 'by domain' : '', Object.keys(creates[0]!).join()].join('|');
  // Each new row's event id is made here, in its own request, so a shared statement whose connection
  // breaks is resolved for each request by its own events (src/db/in-doubt.ts).
  for (const row of creates) createdEvents.set(row, eventId());
  const writeSets = async (sets: Row[][]) => {
    const written = await writeOne(db, spec, actor, sets.flat(), [], { records, unique, companyByDomain });
    return sets.map((set) => ownRows(written, set));
  };
  // A constraint one row breaks (a company removed since its request was checked) fails the shared statement: each set alone finds whose.
  return together(db, alike, creates, writeSets, { weight: (set) => set.length, most: MOST_ROWS_TOGETHER, ownError: isDataError });
}

/** The event ids of new rows that may share a statement with other requests' (writeSet). */
const createdEvents = new WeakMap<Row, string>();

/** The most new rows one statement takes from the sets that wait to share one (a full batch's worth: docs/batches.md). */
export const MOST_ROWS_TOGETHER = 100;

/**
 * A set of more new rows than this is written at once, never waiting to share a statement: its own
 * rows outweigh a statement's fixed cost, and waiting would only make concurrent batches take turns.
 */
export const LARGEST_SET_THAT_WAITS = 10;

/** What `written` holds of `set`'s rows (one skipped, its unique key taken by a record or by another set's row, stays missing). */
function ownRows(written: Written, set: Row[]): Written {
  const created = new Map<string, Row>();
  for (const { id } of set) {
    const row = written.created.get(id);
    if (row) created.set(id, row);
  }
  return { created, updated: new Map() };
}

type SetOptions = { records?: boolean; whileWriting?: () => void; unique?: readonly string[]; companyByDomain?: (row: Row) => string | null };

/** A new row's unique keys when its kind names none: the external id. */
const UNIQUE_BY_DEFAULT = ['externalId'] as const;

/** writeSet's one statement, for these rows alone. */
async function writeOne(
  db: Prisma.TransactionClient,
  spec: SetModel,
  actor: Actor,
  creates: Row[],
  updates: SetChange[],
  { records = true, whileWriting, unique = UNIQUE_BY_DEFAULT, companyByDomain }: SetOptions,
): Promise<Written> {
  const now = new Date();
  const table = Prisma.raw(`"${spec.table}"`);
  const columns = scalars(spec.model).map((f) => f.column).filter((c) => c !== 'id' && c !== 'account_id' && c !== 'created_at');
  const set = Prisma.raw(columns.map((c) => `"${c}" = c."${c}"`).join(', '));
  // The contact an event is about (the timeline's): the contact itself, a deal's contact, none for a company.
  const contactOf = (row: Row) => (spec.kind === 'contact' ? row.id : ((row.contactId as string | null) ?? null));
  // A new row is sent once, as its event shows it (snake_case columns, money as a number, a day as
  // YYYY-MM-DD: values json_populate_record takes as they are), with its account and its event's
  // id: the statement inserts it and makes its event's `object` of it, rather than receiving every
  // row twice (an import's chunk sent ~2 MB of JSON, its time in the socket's writev; BENCHMARKS.md).
  const created = await mapInSlices(creates, (row) => {
    const domain = companyByDomain?.(row);
    return { event: createdEvents.get(row) ?? eventId(), row: { account_id: row.accountId, ...serializeRecord(spec.kind, row) }, ...(domain ? { domain } : {}) };
  });
  const linking = created.some((c) => 'domain' in c);
  const updateEvents = await mapInSlices(updates, ({ row, previous }) => ({
    id: eventId(),
    subject_id: row.id,
    contact_id: contactOf(row),
    type: `${spec.kind}.updated`,
    data: { object: serializeRecord(spec.kind, row), previous: serializeRecord(spec.kind, previous) },
  }));
  const updateColumns = await mapInSlices(updates, (u) => toColumns(spec.model, u.row));
  // Only the columns the new rows give: a column they leave out keeps its database default.
  const given = created.length ? Object.keys(created[0]!.row) : ['id'];
  const insertColumns = Prisma.raw(given.map((c) => `"${c}"`).join(', '));
  const fromRecord = Prisma.raw(given.map((c) =>
    linking && c === 'company_id' ? `coalesce(r.company_id, (SELECT c.id FROM companies c WHERE c.account_id = r.account_id AND c.domain = new.domain))` : `r."${c}"`).join(', '));
  const createdContact = Prisma.raw(spec.kind === 'contact' ? 'ins.id' : spec.kind === 'deal' ? 'ins.contact_id' : 'NULL::uuid');
  // The `unique` keys (an external id, a company's domain) are all a new row can collide on (its id
  // is new; NULLs never collide): without one in the set, a plain INSERT spares each row ON
  // CONFLICT's probe of every unique index and its speculative insertion.
  const skipTaken = creates.some((row) => unique.some((field) => row[field] != null)) ? Prisma.sql`ON CONFLICT DO NOTHING` : Prisma.empty;
  const wake = wakeSource(db);
  // An event shows what the statement decided as stored: the stamps trigger moves a stamp taken
  // before the transaction began to its start (docs/rest.md#following-changes), and the company found.
  const decided = Prisma.raw(`'created_at', ${isoTimeSql('ins.created_at')}, 'updated_at', ${isoTimeSql('ins.updated_at')}${linking ? ", 'company_id', ins.company_id" : ''}`);
  const createEvents = Prisma.sql`
      SELECT new.event_id, ins.account_id, ${`${spec.kind}.created`}::text, ${now}::timestamptz, ${actor.type}, ${actor.id}, ins.id, ${createdContact},
             jsonb_build_object('object', new.obj::jsonb - 'account_id' || jsonb_build_object(${decided}))
      FROM new JOIN ins ON ins.id = (new.obj->>'id')::uuid`;
  const updatedEvents = Prisma.sql`
      SELECT e.id, w.account_id, e.type, ${now}::timestamptz, ${actor.type}, ${actor.id}, e.subject_id, e.contact_id,
             jsonb_set(e.data, '{object,updated_at}', to_jsonb(${Prisma.raw(isoTimeSql('w.updated_at'))}))
      FROM json_to_recordset(${JSON.stringify(updateEvents)}::json) AS e(id uuid, subject_id uuid, contact_id uuid, type text, data jsonb)
      JOIN upd w ON w.id = e.subject_id`;
  // No rows to insert (or to update): no INSERT (UPDATE) at all, for a statement-level trigger fires
  // on none too: the counters' and report sums' UPDATE triggers took 0.36 of a single create's
  // 1.6 ms (BENCHMARKS.md, "Writes as fast as reads"). Nor its CTEs and its events' join: the
  // planner then plans one half, not an empty other one too (planning a single create took about
  // 0.26 ms, now 0.18, beside about 0.8 ms to run; scripts/bench/explain-writes.ts).
  const halves = [creates.length ? 'ins' : null, updates.length ? 'upd' : null].filter((h) => h !== null);
  // Outside a transaction, straight on the primary's pool (src/db/raw.ts): the same statement without Prisma's raw-query path.
  const statement = rawWrite<{ rows: string }>(db, Prisma.sql`
    WITH ${creates.length ? Prisma.sql`
    new AS (
      SELECT (n.e->>'event')::uuid AS event_id, n.e->'row' AS obj, n.e->>'domain' AS domain FROM json_array_elements(${JSON.stringify(created)}::json) AS n(e)),
    ins AS (
      INSERT INTO ${table} (${insertColumns})
      SELECT ${fromRecord} FROM new CROSS JOIN LATERAL json_populate_record(NULL::${table}, new.obj) AS r
      ${skipTaken} RETURNING *),` : Prisma.empty}
    ${updates.length ? Prisma.sql`
    upd AS (
      UPDATE ${table} t SET ${set} FROM json_populate_recordset(NULL::${table}, ${JSON.stringify(updateColumns)}::json) c
      WHERE t.id = c.id AND t.account_id = c.account_id RETURNING t.*),` : Prisma.empty}
    written AS (${Prisma.raw(halves.map((h) => `SELECT '${h === 'ins' ? 'c' : 'u'}' AS op, ${h}.* FROM ${h}`).join(' UNION ALL '))}),
    ${outbox(Prisma.join([...(creates.length ? [createEvents] : []), ...(updates.length ? [updatedEvents] : [])], ' UNION ALL '))}
    SELECT coalesce(json_agg(${records ? Prisma.raw('written') : Prisma.raw("json_build_object('op', written.op, 'id', written.id)")}), '[]')::text AS rows ${wake.column} FROM written`)
    // A Prisma query starts when awaited: start it, then let the caller work while it runs.
    .then((answer) => answer);
  whileWriting?.();
  const [answer] = await statement;
  wake.then();
  const written: Written = { created: new Map(), updated: new Map() };
  for (const json of JSON.parse(answer!.rows) as Record<string, unknown>[]) {
    const row = records ? fromColumns(spec.model, json) : ({ id: json.id } as Row);
    (json.op === 'c' ? written.created : written.updated).set(row.id, row);
  }
  return written;
}

/** The rows `where` (SQL over alias `t`) selects, oldest first, locked until the transaction ends; `ctes`: a WITH clause `where` reads. */
export async function readRows(db: Prisma.TransactionClient, spec: SetModel, where: Prisma.Sql, ctes: Prisma.Sql = Prisma.empty): Promise<Row[]> {
  const table = Prisma.raw(`"${spec.table}"`);
  const rows = await db.$queryRaw<{ row: string }[]>`${ctes}SELECT to_json(t)::text AS row FROM ${table} t WHERE ${where} ORDER BY t.created_at, t.id FOR UPDATE`;
  return rows.map((r) => fromColumns(spec.model, JSON.parse(r.row) as Record<string, unknown>));
}

/** `values` as a row in the model's column order (as Prisma returns it, so events list fields alike); a field not given stays out. */
export function rowOf(model: string, values: Record<string, unknown>): Row {
  return Object.fromEntries(scalars(model).filter((f) => values[f.name] !== undefined).map((f) => [f.name, values[f.name]])) as Row;
}

/** A new row's id, as Prisma gives every row (`uuid(7)`): time-ordered. */
export const newId = (): string => uuidv7();
