-- Exact totals of an account's companies, notes and tasks from the counters too (docs/scaling.md#exact-totals):
-- a companies page counted its 10,000 rows in every request (0.36 ms of 0.56; BENCHMARKS.md
-- "Companies, notes and tasks counted"). These tables keep one total per account, not one per value
-- of a column: their triggers pass no key column, and their counters' key is ''.

-- As 20261122201534_record_counts wrote it, with counter_slot() as 20261126214500_counter_slots_free
-- made it, but for the key: none given means the one key ''.
CREATE OR REPLACE FUNCTION record_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  key_column text := CASE WHEN TG_NARGS = 0 THEN quote_literal('') ELSE quote_ident(TG_ARGV[0]) END;
  changes text := CASE TG_OP
    WHEN 'INSERT' THEN format('SELECT account_id, %s::text, 1 FROM new_rows', key_column)
    WHEN 'DELETE' THEN format('SELECT account_id, %s::text, -1 FROM old_rows', key_column)
    ELSE format('SELECT account_id, %1$s::text, 1 FROM new_rows UNION ALL SELECT account_id, %1$s::text, -1 FROM old_rows', key_column)
  END;
BEGIN
  EXECUTE format(
    'INSERT INTO record_counts AS c (account_id, table_name, key, slot, n)
     SELECT account_id, %L, key, $1, sum(change) FROM (%s) AS changes (account_id, key, change)
     GROUP BY account_id, key HAVING sum(change) <> 0 ORDER BY account_id, key
     ON CONFLICT (account_id, table_name, key, slot) DO UPDATE SET n = c.n + excluded.n',
    TG_TABLE_NAME, changes)
  USING counter_slot();
  RETURN NULL;
END $$;

-- Writes to these tables wait until this migration commits, so the backfill below counts exactly
-- the rows the triggers do not see; accounts first, as the app's transactions take them.
LOCK TABLE "accounts", "companies", "notes", "tasks" IN SHARE ROW EXCLUSIVE MODE;

-- An update changes no total (no key column), so no UPDATE trigger.
CREATE TRIGGER record_counts_insert AFTER INSERT ON "companies" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply();
CREATE TRIGGER record_counts_delete AFTER DELETE ON "companies" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply();
CREATE TRIGGER record_counts_truncate AFTER TRUNCATE ON "companies"
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_truncate();

CREATE TRIGGER record_counts_insert AFTER INSERT ON "notes" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply();
CREATE TRIGGER record_counts_delete AFTER DELETE ON "notes" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply();
CREATE TRIGGER record_counts_truncate AFTER TRUNCATE ON "notes"
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_truncate();

CREATE TRIGGER record_counts_insert AFTER INSERT ON "tasks" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply();
CREATE TRIGGER record_counts_delete AFTER DELETE ON "tasks" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply();
CREATE TRIGGER record_counts_truncate AFTER TRUNCATE ON "tasks"
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_truncate();

INSERT INTO record_counts (account_id, table_name, key, slot, n)
SELECT account_id, 'companies', '', 0, count(*) FROM "companies" GROUP BY account_id
UNION ALL
SELECT account_id, 'notes', '', 0, count(*) FROM "notes" GROUP BY account_id
UNION ALL
SELECT account_id, 'tasks', '', 0, count(*) FROM "tasks" GROUP BY account_id;
