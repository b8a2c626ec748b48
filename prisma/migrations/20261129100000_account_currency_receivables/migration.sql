-- docs/decisions.md §26, money as a business reads it.
-- An account's default currency: the currency of an invoice created without one, and the one the
-- receivables report answers when none is asked.
ALTER TABLE "accounts" ADD COLUMN "default_currency" VARCHAR(3) NOT NULL DEFAULT 'USD';

-- Reports never add currencies: the receivables entries of report_sums are keyed by the invoice's
-- currency (they were all under the key ''). report_sums_apply is generated again as
-- 20261127110000_counters_planned_once generates it, with that one key changed; then the entries are
-- rebuilt from the invoices, with writers held off so none is counted twice or missed.
LOCK TABLE "invoices" IN SHARE ROW EXCLUSIVE MODE;

DO $generate$
DECLARE
  ops CONSTANT text[][] := ARRAY[
    ['INSERT', 'SELECT %1$s, 1 AS sign FROM new_rows'],
    ['DELETE', 'SELECT %1$s, -1 AS sign FROM old_rows'],
    ['UPDATE', 'SELECT %1$s, 1 AS sign FROM new_rows UNION ALL SELECT %1$s, -1 AS sign FROM old_rows']];
  op text[];
  report record;
  sums text := '';
  branch text;
BEGIN
  -- report_sums: each table's entries (report, key, day, counted, weighted) of one row `r` and its amount.
  FOR report IN
    SELECT * FROM (VALUES
      ('deals', 'r.value', $q$(VALUES
        ('pipeline', coalesce(r.stage_id::text, ''), '-infinity'::date, r.status = 'open', r.value * r.probability::numeric),
        ('deals_created', r.status::text, (r.created_at AT TIME ZONE 'UTC')::date, true, 0::numeric),
        ('deals_won', '', (r.closed_at AT TIME ZONE 'UTC')::date, r.status = 'won' AND r.closed_at IS NOT NULL, 0::numeric))$q$),
      ('invoices', '(r.amount - r.amount_paid)', $q$(VALUES
        ('receivables', r.currency, r.due_date, r.status IN ('sent', 'viewed', 'partial', 'overdue'), 0::numeric))$q$),
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
    ELSE RAISE EXCEPTION 'report_sums_apply: no entries for table %% (migration *_account_currency_receivables)', TG_TABLE_NAME;
    END IF;
  RETURN NULL;
END $body$$f$, sums);
END $generate$;

DELETE FROM report_sums WHERE report = 'receivables';
INSERT INTO report_sums (account_id, report, key, day, slot, n, value, weighted)
  SELECT account_id, 'receivables', currency, due_date, 0, count(*), sum(amount - amount_paid), 0
  FROM "invoices" WHERE status IN ('sent', 'viewed', 'partial', 'overdue') GROUP BY account_id, currency, due_date;
