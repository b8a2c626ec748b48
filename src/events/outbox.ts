import { Prisma } from '../generated/prisma/client.js';

/**
 * The outbox every writer composes into its own statement (docs/events.md, docs/decisions.md §13):
 * two WITH items, `e` that writes the events `rows` selects and `hooks` that queues each for every
 * enabled endpoint of its account that wants its type. One statement, so a committed change always
 * has its events and webhook messages and a rolled-back one never. `rows`: a SELECT of (id,
 * account_id, type, occurred_at, actor_type, actor_id, subject_id, contact_id, data), in that order.
 * PostgreSQL runs a data-modifying WITH item whether or not the statement reads it.
 */
export const outbox = (rows: Prisma.Sql): Prisma.Sql => Prisma.sql`
    e AS (
      INSERT INTO events (id, account_id, type, occurred_at, actor_type, actor_id, subject_id, contact_id, data)
      ${rows}
      RETURNING account_id, id, type),
    hooks AS (
      INSERT INTO webhook_messages (id, account_id, endpoint_id, event_id)
      SELECT gen_random_uuid(), w.account_id, w.id, e.id FROM e JOIN webhook_endpoints w ON w.account_id = e.account_id
      WHERE w.enabled AND (e.type = ANY (w.event_types) OR '*' = ANY (w.event_types)))`;
