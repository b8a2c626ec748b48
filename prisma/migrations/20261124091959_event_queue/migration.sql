-- The relay's queue (docs/events.md "How delivery works"). The relay used to mark each event
-- published: an UPDATE that rewrote the event and its six index entries, 30-55 ms per 500 events on
-- an idle database and 86 ms during an import (BENCHMARKS.md). Now an event is written once, and a
-- trigger copies it into event_queue in the same transaction; the relay deletes what it hands over
-- (about 5 ms per 500) and reads no other table, so no plan of a join back to `events` can go wrong.
CREATE TABLE "event_queue" (
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "event_id" UUID NOT NULL,
    "account_id" UUID NOT NULL,
    "type" VARCHAR(64) NOT NULL,
    "actor_type" VARCHAR(16) NOT NULL,
    "actor_id" VARCHAR(64),
    "subject_id" UUID,
    "contact_id" UUID,
    "data" JSONB NOT NULL,

    CONSTRAINT "event_queue_pkey" PRIMARY KEY ("occurred_at","event_id","account_id")
);

ALTER TABLE "event_queue" ADD CONSTRAINT "event_queue_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Events not yet relayed stay queued.
INSERT INTO "event_queue" ("occurred_at", "event_id", "account_id", "type", "actor_type", "actor_id", "subject_id", "contact_id", "data")
SELECT "occurred_at", "id", "account_id", "type", "actor_type", "actor_id", "subject_id", "contact_id", "data" FROM "events" WHERE "published_at" IS NULL;

DROP INDEX "events_published_at_occurred_at_idx";

ALTER TABLE "events" DROP COLUMN "published_at";

-- One INSERT per statement that inserts events, whatever their number (an import's chunk writes a
-- thousand at once). Every statement that writes events is covered, whichever file it is in.
CREATE FUNCTION enqueue_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_queue (occurred_at, event_id, account_id, type, actor_type, actor_id, subject_id, contact_id, data)
  SELECT occurred_at, id, account_id, type, actor_type, actor_id, subject_id, contact_id, data FROM inserted;
  RETURN NULL;
END
$$;

CREATE TRIGGER events_enqueue AFTER INSERT ON "events" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION enqueue_events();
