-- docs/decisions.md §20: Account.revenue reads report_sums' 'revenue' entries (key: the currency,
-- day: a UTC day), kept like the other reports' in every write's transaction (slot txid % 8, rows
-- taken in key order). A payment counts once with its amount on the day of its paid_at; a refund
-- takes off what it gave back on the day it was made (the change of refunded_amount, on the day of
-- refunded_at, which each refund sets). A deleted payment (its account's deletion) takes off its
-- amount and its refunds, the latter on the day of its last refund, the only one the row remembers.
CREATE FUNCTION report_sums_add_revenue(entries jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO report_sums AS s (account_id, report, key, day, slot, n, value, weighted)
  SELECT e.account_id, 'revenue', e.currency, e.day, (txid_current() % 8)::smallint, sum(e.n), sum(e.value), 0
  FROM jsonb_to_recordset(entries) AS e (account_id uuid, currency text, day date, n bigint, value numeric)
  GROUP BY e.account_id, e.currency, e.day
  HAVING sum(e.n) <> 0 OR sum(e.value) <> 0
  ORDER BY e.account_id, e.currency, e.day
  ON CONFLICT (account_id, report, key, day, slot)
  DO UPDATE SET n = s.n + excluded.n, value = s.value + excluded.value
$$;

CREATE FUNCTION report_sums_payments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Each branch reads only the transition tables its operation has.
  IF TG_OP = 'INSERT' THEN
    PERFORM report_sums_add_revenue(coalesce((SELECT jsonb_agg(e) FROM (
      SELECT account_id, currency, (paid_at AT TIME ZONE 'UTC')::date AS day, 1 AS n, amount AS value FROM new_rows
      UNION ALL
      SELECT account_id, currency, (coalesce(refunded_at, updated_at) AT TIME ZONE 'UTC')::date, 0, -refunded_amount FROM new_rows WHERE refunded_amount <> 0
    ) AS e), '[]'));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM report_sums_add_revenue(coalesce((SELECT jsonb_agg(e) FROM (
      SELECT account_id, currency, (paid_at AT TIME ZONE 'UTC')::date AS day, -1 AS n, -amount AS value FROM old_rows
      UNION ALL
      SELECT account_id, currency, (coalesce(refunded_at, updated_at) AT TIME ZONE 'UTC')::date, 0, refunded_amount FROM old_rows WHERE refunded_amount <> 0
    ) AS e), '[]'));
  ELSE
    PERFORM report_sums_add_revenue(coalesce((SELECT jsonb_agg(e) FROM (
      SELECT account_id, currency, (paid_at AT TIME ZONE 'UTC')::date AS day, 1 AS n, amount AS value FROM new_rows
      UNION ALL
      SELECT account_id, currency, (paid_at AT TIME ZONE 'UTC')::date, -1, -amount FROM old_rows
      UNION ALL
      SELECT n.account_id, n.currency, (coalesce(n.refunded_at, n.updated_at) AT TIME ZONE 'UTC')::date, 0, o.refunded_amount - n.refunded_amount
      FROM new_rows AS n JOIN old_rows AS o ON o.id = n.id WHERE n.refunded_amount <> o.refunded_amount
    ) AS e), '[]'));
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION report_sums_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM report_sums WHERE report = ANY (CASE TG_TABLE_NAME
    WHEN 'deals' THEN ARRAY['pipeline', 'deals_created', 'deals_won']
    WHEN 'invoices' THEN ARRAY['receivables']
    WHEN 'payments' THEN ARRAY['revenue']
    ELSE ARRAY['contact_source'] END);
  RETURN NULL;
END $$;

-- Writers wait until this migration commits, so the backfill below counts exactly the rows the
-- triggers did not see.
LOCK TABLE "payments" IN SHARE ROW EXCLUSIVE MODE;

CREATE TRIGGER report_sums_insert AFTER INSERT ON "payments" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_payments();
CREATE TRIGGER report_sums_update AFTER UPDATE ON "payments" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_payments();
CREATE TRIGGER report_sums_delete AFTER DELETE ON "payments" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_payments();
CREATE TRIGGER report_sums_truncate AFTER TRUNCATE ON "payments"
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_truncate();

-- The payments already there (slot 0).
INSERT INTO report_sums (account_id, report, key, day, slot, n, value, weighted)
  SELECT account_id, 'revenue', currency, day, 0, sum(n), sum(value), 0 FROM (
    SELECT account_id, currency, (paid_at AT TIME ZONE 'UTC')::date AS day, 1 AS n, amount AS value FROM "payments"
    UNION ALL
    SELECT account_id, currency, (coalesce(refunded_at, updated_at) AT TIME ZONE 'UTC')::date, 0, -refunded_amount FROM "payments" WHERE refunded_amount <> 0
  ) AS e GROUP BY 1, 3, 4;
