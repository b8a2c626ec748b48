-- CreateTable
CREATE TABLE "report_sums" (
    "account_id" UUID NOT NULL,
    "report" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "slot" SMALLINT NOT NULL,
    "n" BIGINT NOT NULL,
    "value" DECIMAL NOT NULL,
    "weighted" DECIMAL NOT NULL,

    CONSTRAINT "report_sums_pkey" PRIMARY KEY ("account_id","report","key","day","slot")
);

-- The sums ride in an index of their own (INCLUDE): a report is an index-only scan of its account's
-- range. At 300,000 deals (20,000 rows of deals_created) that took 16 ms against 65 ms reading the
-- rows from the heap, where they lie scattered. Its last key is an expression (slot + 0), so the
-- schema engine, which cannot state INCLUDE, leaves the index out of its diffs, as it does every
-- expression index; the reports never filter on slot.
CREATE INDEX "report_sums_covering_idx" ON "report_sums" ("account_id", "report", "key", "day", ("slot" + 0)) INCLUDE ("n", "value", "weighted");

-- The dashboard reports (docs/decisions.md §19, Reports) read sums kept here, so a report reads its
-- account's sums (at most days × keys × 8 slots), not its rows. Kept like record_counts (docs/scaling.md#exact-totals):
-- statement-level triggers with transition tables, in the write's transaction, one slot per
-- transaction (txid % 8), rows taken in key order. Per row of the source table, one entry per
-- report it counts in:
--   deals    pipeline       key stage id ('' = no stage), open deals only; weighted = value × probability
--            deals_created  key status, day created_at (UTC)
--            deals_won      key '', day closed_at (UTC), won deals only
--   invoices receivables    key '', day due_date, outstanding (sent, viewed, partial, overdue) only
--   contacts contact_source key source
-- `day` is '-infinity' for reports without one. Money stays numeric: sums are exact.
CREATE FUNCTION report_sums_apply() RETURNS trigger LANGUAGE plpgsql AS $$
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
  amount text := CASE TG_TABLE_NAME WHEN 'deals' THEN 'r.value' WHEN 'invoices' THEN 'r.amount' ELSE '0::numeric' END;
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

CREATE FUNCTION report_sums_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM report_sums WHERE report = ANY (CASE TG_TABLE_NAME
    WHEN 'deals' THEN ARRAY['pipeline', 'deals_created', 'deals_won']
    WHEN 'invoices' THEN ARRAY['receivables']
    ELSE ARRAY['contact_source'] END);
  RETURN NULL;
END $$;

CREATE FUNCTION report_sums_forget_account() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM report_sums WHERE account_id = OLD.id;
  RETURN NULL;
END $$;

-- As in record_counts: writers wait until this migration commits, so the backfill below counts
-- exactly the rows the triggers did not see; the same lock order as the app's writers.
LOCK TABLE "accounts", "deals", "invoices", "contacts" IN SHARE ROW EXCLUSIVE MODE;

CREATE TRIGGER report_sums_insert AFTER INSERT ON "deals" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_apply();
CREATE TRIGGER report_sums_update AFTER UPDATE ON "deals" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_apply();
CREATE TRIGGER report_sums_delete AFTER DELETE ON "deals" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_apply();
CREATE TRIGGER report_sums_truncate AFTER TRUNCATE ON "deals"
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_truncate();

CREATE TRIGGER report_sums_insert AFTER INSERT ON "invoices" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_apply();
CREATE TRIGGER report_sums_update AFTER UPDATE ON "invoices" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_apply();
CREATE TRIGGER report_sums_delete AFTER DELETE ON "invoices" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_apply();
CREATE TRIGGER report_sums_truncate AFTER TRUNCATE ON "invoices"
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_truncate();

CREATE TRIGGER report_sums_insert AFTER INSERT ON "contacts" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_apply();
CREATE TRIGGER report_sums_update AFTER UPDATE ON "contacts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_apply();
CREATE TRIGGER report_sums_delete AFTER DELETE ON "contacts" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_apply();
CREATE TRIGGER report_sums_truncate AFTER TRUNCATE ON "contacts"
  FOR EACH STATEMENT EXECUTE FUNCTION report_sums_truncate();

CREATE CONSTRAINT TRIGGER report_sums_forget_account AFTER DELETE ON "accounts" DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION report_sums_forget_account();

-- The rows already there (slot 0).
INSERT INTO report_sums (account_id, report, key, day, slot, n, value, weighted)
  SELECT account_id, 'pipeline', coalesce(stage_id::text, ''), '-infinity', 0, count(*), sum(value), sum(value * probability::numeric)
  FROM "deals" WHERE status = 'open' GROUP BY 1, 3;
INSERT INTO report_sums (account_id, report, key, day, slot, n, value, weighted)
  SELECT account_id, 'deals_created', status::text, (created_at AT TIME ZONE 'UTC')::date, 0, count(*), sum(value), 0
  FROM "deals" GROUP BY 1, 3, 4;
INSERT INTO report_sums (account_id, report, key, day, slot, n, value, weighted)
  SELECT account_id, 'deals_won', '', (closed_at AT TIME ZONE 'UTC')::date, 0, count(*), sum(value), 0
  FROM "deals" WHERE status = 'won' AND closed_at IS NOT NULL GROUP BY 1, 4;
INSERT INTO report_sums (account_id, report, key, day, slot, n, value, weighted)
  SELECT account_id, 'receivables', '', due_date, 0, count(*), sum(amount), 0
  FROM "invoices" WHERE status IN ('sent', 'viewed', 'partial', 'overdue') GROUP BY 1, 4;
INSERT INTO report_sums (account_id, report, key, day, slot, n, value, weighted)
  SELECT account_id, 'contact_source', source::text, '-infinity', 0, count(*), 0, 0
  FROM "contacts" GROUP BY 1, 3;
