-- The counter triggers (record_counts_apply, report_sums_apply) built their statement as text and ran it
-- with EXECUTE, so PostgreSQL planned it again at every write: per single-record create 0.09 ms
-- (record_counts) and 0.10 ms (report_sums) of planning, against 0.04 and 0.08 ms of executing
-- (pg_stat_statements: plans = calls; BENCHMARKS.md "The counters planned once").
-- A static statement in PL/pgSQL is planned once per trigger and connection and the plan kept. Both
-- functions are rebuilt here of static statements, one per key column or table and per operation,
-- generated from the same templates; each trigger runs only the branch of its own table, so only that
-- branch is ever planned for it. They count exactly as before: the same rows, keys, sums and slot.
-- A trigger added later on a table or key column these branches do not name fails loudly (RAISE):
-- add its branch by rerunning this generator with it.
DO $generate$
DECLARE
  -- The rows a statement changed, each with its sign, for each operation.
  ops CONSTANT text[][] := ARRAY[
    ['INSERT', 'SELECT %1$s, 1 AS sign FROM new_rows'],
    ['DELETE', 'SELECT %1$s, -1 AS sign FROM old_rows'],
    ['UPDATE', 'SELECT %1$s, 1 AS sign FROM new_rows UNION ALL SELECT %1$s, -1 AS sign FROM old_rows']];
  op text[];
  key_column text;
  report record;
  counts text := '';
  sums text := '';
  branch text;
BEGIN
  -- record_counts: one branch per key column the triggers pass (none: the one key '').
  FOR key_column IN
    SELECT DISTINCT split_part(encode(tgargs, 'escape'), '\000', 1)
    FROM pg_trigger WHERE tgfoid = 'record_counts_apply'::regproc
  LOOP
    branch := '';
    FOREACH op SLICE 1 IN ARRAY ops LOOP
      branch := branch || format($s$
      %s TG_OP = %L THEN
        INSERT INTO record_counts AS c (account_id, table_name, key, slot, n)
        SELECT account_id, TG_TABLE_NAME, key, taken_slot, sum(change) FROM (%s) AS changes (account_id, key, change)
        GROUP BY account_id, key HAVING sum(change) <> 0 ORDER BY account_id, key
        ON CONFLICT (account_id, table_name, key, slot) DO UPDATE SET n = c.n + excluded.n;$s$,
        CASE WHEN branch = '' THEN 'IF' ELSE 'ELSIF' END, op[1],
        format(op[2], 'account_id, ' || CASE WHEN key_column = '' THEN quote_literal('') ELSE quote_ident(key_column) END || '::text'));
    END LOOP;
    counts := counts || format($s$
    %s coalesce(TG_ARGV[0], '') = %L THEN%s
      END IF;$s$, CASE WHEN counts = '' THEN 'IF' ELSE 'ELSIF' END, key_column, branch);
  END LOOP;
  EXECUTE format($f$
CREATE OR REPLACE FUNCTION record_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $body$
DECLARE
  taken_slot CONSTANT smallint := counter_slot();
BEGIN%s
    ELSE RAISE EXCEPTION 'record_counts_apply: no statement for key column %% (migration *_counters_planned_once)', TG_ARGV[0];
    END IF;
  RETURN NULL;
END $body$$f$, counts);

  -- report_sums: each table's entries (report, key, day, counted, weighted) of one row `r` and its amount.
  FOR report IN
    SELECT * FROM (VALUES
      ('deals', 'r.value', $q$(VALUES
        ('pipeline', coalesce(r.stage_id::text, ''), '-infinity'::date, r.status = 'open', r.value * r.probability::numeric),
        ('deals_created', r.status::text, (r.created_at AT TIME ZONE 'UTC')::date, true, 0::numeric),
        ('deals_won', '', (r.closed_at AT TIME ZONE 'UTC')::date, r.status = 'won' AND r.closed_at IS NOT NULL, 0::numeric))$q$),
      ('invoices', '(r.amount - r.amount_paid)', $q$(VALUES
        ('receivables', '', r.due_date, r.status IN ('sent', 'viewed', 'partial', 'overdue'), 0::numeric))$q$),
      ('contacts', '0::numeric', $q$(VALUES ('contact_source', r.source::text, '-infinity'::date, true, 0::numeric))$q$)
    ) AS t (table_name, amount, entries)
    WHERE table_name IN (SELECT c.relname::text FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid WHERE g.tgfoid = 'report_sums_apply'::regproc)
  LOOP
    branch := '';
    FOREACH op SLICE 1 IN ARRAY ops LOOP
      branch := branch || format($s$
      %s TG_OP = %L THEN
        INSERT INTO report_sums AS s (account_id, report, key, day, slot, n, value, weighted)
        SELECT r.account_id, e.report, e.key, e.day, taken_slot, sum(r.sign), sum(r.sign * %s), sum(r.sign * e.weighted)
        FROM (%s) AS r CROSS JOIN LATERAL %s AS e (report, key, day, counted, weighted)
        WHERE e.counted
        GROUP BY r.account_id, e.report, e.key, e.day
        HAVING sum(r.sign) <> 0 OR sum(r.sign * %3$s) <> 0 OR sum(r.sign * e.weighted) <> 0
        ORDER BY r.account_id, e.report, e.key, e.day
        ON CONFLICT (account_id, report, key, day, slot)
        DO UPDATE SET n = s.n + excluded.n, value = s.value + excluded.value, weighted = s.weighted + excluded.weighted;$s$,
        CASE WHEN branch = '' THEN 'IF' ELSE 'ELSIF' END, op[1], report.amount, format(op[2], '*'), report.entries);
    END LOOP;
    sums := sums || format($s$
    %s TG_TABLE_NAME = %L THEN%s
      END IF;$s$, CASE WHEN sums = '' THEN 'IF' ELSE 'ELSIF' END, report.table_name, branch);
  END LOOP;
  -- A table whose trigger this function serves but whose entries are not above: refused here, not at its next write.
  IF EXISTS (SELECT FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
             WHERE g.tgfoid = 'report_sums_apply'::regproc AND position(format('TG_TABLE_NAME = %L', c.relname) IN sums) = 0) THEN
    RAISE EXCEPTION 'report_sums_apply: a table with its trigger has no entries in this migration';
  END IF;
  EXECUTE format($f$
CREATE OR REPLACE FUNCTION report_sums_apply() RETURNS trigger LANGUAGE plpgsql AS $body$
DECLARE
  taken_slot CONSTANT smallint := counter_slot();
BEGIN%s
    ELSE RAISE EXCEPTION 'report_sums_apply: no entries for table %% (migration *_counters_planned_once)', TG_TABLE_NAME;
    END IF;
  RETURN NULL;
END $body$$f$, sums);
END $generate$;
