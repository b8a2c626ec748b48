-- A NOTIFY inside a writing transaction holds PostgreSQL's database-wide notify lock from its
-- pre-commit to its end, WAL flush included, so notifying commits line up one behind another
-- (BENCHMARKS.md, "Writes as fast as reads"). The service's own writes wake the workers after their
-- commit instead (src/events/emit.ts, wakeAfterCommit) and say so with a transaction-local setting;
-- every other write (the CLI, jobs, another client) is still announced here, at its commit.
CREATE OR REPLACE FUNCTION notify_events_committed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('crm.events_wake', true) IS DISTINCT FROM 'after_commit' THEN
    PERFORM pg_notify('crm_events', '');
  END IF;
  RETURN NULL;
END
$$;
