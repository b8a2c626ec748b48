-- Wakes every instance's event worker when events commit (docs/events.md "Live events"): one
-- notification per statement that inserts events, delivered by PostgreSQL at commit (none on rollback;
-- repeats within one transaction fold into one). The worker's poll stays as the fallback.
CREATE FUNCTION notify_events_committed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('crm_events', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER events_notify AFTER INSERT ON "events" FOR EACH STATEMENT EXECUTE FUNCTION notify_events_committed();
