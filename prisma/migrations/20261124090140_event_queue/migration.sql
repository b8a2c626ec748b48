-- The relay's queue (docs/events.md "How delivery works"). The relay used to mark each event
-- published: an UPDATE that rewrote the event and its six index entries, 30-55 ms per 500 events on
-- an idle database and 86 ms during an import (BENCHMARKS.md). Now an event is written once; a
-- trigger puts its key in event_queue in the same transaction, and the relay deletes what it hands
-- over (about 5 ms per 500).
CREATE TABLE "event_queue" (
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "event_id" UUID NOT NULL,
    "account_id" UUID NOT NULL,

    CONSTRAINT "event_queue_pkey" PRIMARY KEY ("occurred_at","event_id")
);

-- Events not yet relayed stay queued.
INSERT INTO "event_queue" ("occurred_at", "event_id", "account_id")
SELECT "occurred_at", "id", "account_id" FROM "events" WHERE "published_at" IS NULL;

DROP INDEX "events_published_at_occurred_at_idx";

ALTER TABLE "events" DROP COLUMN "published_at";

-- One INSERT per statement that inserts events, whatever their number (an import's chunk writes
-- a thousand at once). Every statement that writes events is covered, whichever file it is in.
CREATE FUNCTION enqueue_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_queue (occurred_at, event_id, account_id) SELECT occurred_at, id, account_id FROM inserted;
  RETURN NULL;
END
$$;

CREATE TRIGGER events_enqueue AFTER INSERT ON "events" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION enqueue_events();
