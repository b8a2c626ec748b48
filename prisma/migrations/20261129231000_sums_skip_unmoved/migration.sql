-- An update that changes no column report_sums or custom_field_numbers read does nothing to them
-- (custom_field_counts tests the same in its own migration, 20261129210000)
-- (docs/decisions.md §22: a merge moves 1,000 deals to their primary, changing contact_id alone, and
-- the triggers used to read, group and write back every moved row, 17-46 ms of the merge:
-- BENCHMARKS.md "Merge and duplicates"). Each trigger function first compares the read columns of
-- the rows after with those before, as multisets (EXCEPT ALL: a hash, where a join of the two
-- transition tables, which have no statistics, was planned as a nested loop and cost 0.4 s), and
-- returns when they are equal: every sum's change is then zero. An update that changes some of its
-- rows still counts them all, as before: the sums' HAVING keeps it exact.
-- PostgreSQL refuses transition tables on a trigger with a column list (AFTER UPDATE OF ...), hence
-- the test inside the functions.

-- report_sums_apply is generated (20261129100000_account_currency_receivables); the test goes in
-- front of its body, per table, with the columns each table's entries read.
DO $do$
DECLARE
  body text := (SELECT prosrc FROM pg_proc WHERE proname = 'report_sums_apply');
  guard CONSTANT text := $g$
BEGIN
  -- One IF per table: a condition is planned whole, and another table's columns are not in its rows.
  IF TG_OP = 'UPDATE' THEN
    IF TG_TABLE_NAME = 'deals' THEN
      IF NOT EXISTS (
           SELECT account_id, stage_id, status, value, probability, created_at, closed_at FROM new_rows EXCEPT ALL SELECT account_id, stage_id, status, value, probability, created_at, closed_at FROM old_rows) THEN
        RETURN NULL;
      END IF;
    ELSIF TG_TABLE_NAME = 'invoices' THEN
      IF NOT EXISTS (
           SELECT account_id, currency, due_date, status, amount, amount_paid FROM new_rows EXCEPT ALL SELECT account_id, currency, due_date, status, amount, amount_paid FROM old_rows) THEN
        RETURN NULL;
      END IF;
    ELSIF TG_TABLE_NAME = 'contacts' THEN
      IF NOT EXISTS (
           SELECT account_id, source FROM new_rows EXCEPT ALL SELECT account_id, source FROM old_rows) THEN
        RETURN NULL;
      END IF;
    END IF;
  END IF;$g$;
BEGIN
  IF body IS NULL OR position(E'\nBEGIN' IN body) = 0 THEN
    RAISE EXCEPTION 'report_sums_apply: body not as 20261129100000_account_currency_receivables made it';
  END IF;
  body := overlay(body PLACING guard FROM position(E'\nBEGIN' IN body) FOR length(E'\nBEGIN'));
  EXECUTE format('CREATE OR REPLACE FUNCTION report_sums_apply() RETURNS trigger LANGUAGE plpgsql AS %L', body);
END
$do$;

CREATE OR REPLACE FUNCTION custom_field_numbers_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT id, custom_fields FROM new_rows EXCEPT ALL SELECT id, custom_fields FROM old_rows) THEN
    RETURN NULL;
  END IF;
  DELETE FROM custom_field_numbers x
  USING old_rows o JOIN new_rows n ON n.id = o.id, LATERAL jsonb_each(o.custom_fields) e
  WHERE n.custom_fields IS DISTINCT FROM o.custom_fields AND jsonb_typeof(e.value) = 'number'
    AND x.account_id = o.account_id AND x.object = TG_ARGV[0]::custom_field_object AND x.key = e.key AND x.value = e.value::numeric AND x.record_id = o.id;
  INSERT INTO custom_field_numbers (account_id, object, key, value, record_id)
  SELECT n.account_id, TG_ARGV[0]::custom_field_object, e.key, e.value::numeric, n.id
  FROM new_rows n JOIN old_rows o ON o.id = n.id CROSS JOIN LATERAL jsonb_each(n.custom_fields) e
  WHERE n.custom_fields IS DISTINCT FROM o.custom_fields AND jsonb_typeof(e.value) = 'number'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;
