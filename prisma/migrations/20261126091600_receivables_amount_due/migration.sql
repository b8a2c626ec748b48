-- docs/decisions.md §20: receivables sum what is still due (amount − amount_paid), not the invoices' totals.
-- report_sums_apply as in 20261123200000_reports, with the invoices' amount so; the sums are rebuilt.
CREATE OR REPLACE FUNCTION report_sums_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  -- The entries of one row `r` with sign `r.sign`, as (report, key, day, counted, weighted).
  entries text := CASE TG_TABLE_NAME
    WHEN 'deals' THEN $q$(VALUES
        ('pipeline', coalesce(r.stage_id::text, ''), '-infinity'::date, r.status = 'open', r.value * r.probability::numeric),
        ('deals_created', r.status::text, (r.created_at AT TIME ZONE 'UTC')::date, true, 0::numeric),
        ('deals_won', '', (r.closed_at AT TIME ZONE 'UTC')::date, r.status = 'won' AND r.closed_at IS NOT NULL, 0::numeric))$q$
    WHEN 'invoices' THEN $q$(VALUES
        ('receivables', '', r.due_date, r.status IN ('sent', 'viewed', 'partial', 'overdue'), 0::numeric))$q$
    ELSE $q$(VALUES ('contact_source', r.source::text, '-infinity'::date, true, 0::numeric))$q$
  END;
  amount text := CASE TG_TABLE_NAME WHEN 'deals' THEN 'r.value' WHEN 'invoices' THEN '(r.amount - r.amount_paid)' ELSE '0::numeric' END;
  changes text := CASE TG_OP
    WHEN 'INSERT' THEN 'SELECT *, 1 AS sign FROM new_rows'
    WHEN 'DELETE' THEN 'SELECT *, -1 AS sign FROM old_rows'
    ELSE 'SELECT *, 1 AS sign FROM new_rows UNION ALL SELECT *, -1 AS sign FROM old_rows'
  END;
BEGIN
  EXECUTE format(
    'INSERT INTO report_sums AS s (account_id, report, key, day, slot, n, value, weighted)
     SELECT r.account_id, e.report, e.key, e.day, $1, sum(r.sign), sum(r.sign * %s), sum(r.sign * e.weighted)
     FROM (%s) AS r CROSS JOIN LATERAL %s AS e (report, key, day, counted, weighted)
     WHERE e.counted
     GROUP BY r.account_id, e.report, e.key, e.day
     HAVING sum(r.sign) <> 0 OR sum(r.sign * %1$s) <> 0 OR sum(r.sign * e.weighted) <> 0
     ORDER BY r.account_id, e.report, e.key, e.day
     ON CONFLICT (account_id, report, key, day, slot)
     DO UPDATE SET n = s.n + excluded.n, value = s.value + excluded.value, weighted = s.weighted + excluded.weighted',
    amount, changes, entries)
  USING (txid_current() % 8)::smallint;
  RETURN NULL;
END $$;


DELETE FROM report_sums WHERE report = 'receivables';
INSERT INTO report_sums (account_id, report, key, day, slot, n, value, weighted)
  SELECT account_id, 'receivables', '', due_date, 0, count(*), sum(amount - amount_paid), 0
  FROM "invoices" WHERE status IN ('sent', 'viewed', 'partial', 'overdue') GROUP BY 1, 4;
