-- How many records hold each value of a choice field (docs/custom-fields.md#which-index-serves-what):
-- an equality filter's exact total (`cf.tier=gold`) counted every match through the lossy GIN index
-- and the table, 1.7 s for 90,000 matches at a million contacts (BENCHMARKS.md). For SELECT, BOOLEAN
-- and MULTI_SELECT fields (each option a record holds), one counter per account, object, key and
-- value, kept like record_counts (docs/scaling.md#exact-totals): statement triggers add each
-- statement's net change in the write's transaction, in the transaction's own slot (counter_slot()),
-- so the total is a sum of a few rows read by primary key and concurrent writers never wait on each
-- other's counters. Text, e-mail, URL, phone and date values are not counted: nearly every one is
-- distinct, a counter per record. A field's type never changes (updateCustomField takes no type),
-- so which keys are counted is read from the definitions at each write.

-- CreateTable
CREATE TABLE "custom_field_counts" (
    "account_id" UUID NOT NULL,
    "object" "custom_field_object" NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "slot" SMALLINT NOT NULL,
    "n" BIGINT NOT NULL,

    CONSTRAINT "custom_field_counts_pkey" PRIMARY KEY ("account_id","object","key","value","slot")
);

-- The counted values of a record's custom_fields: a BOOLEAN's `true`/`false`, a SELECT's option,
-- each option of a MULTI_SELECT's array (once), for the keys the account defines with those types.
CREATE FUNCTION custom_field_counted(account uuid, object custom_field_object, fields jsonb)
RETURNS TABLE (key text, value text) LANGUAGE sql STABLE AS $$
  SELECT DISTINCT e.key, v.value
  FROM jsonb_each(fields) e
  JOIN custom_field_definitions d ON d.account_id = account AND d.object = custom_field_counted.object AND d.key = e.key
   AND d.type IN ('SELECT', 'BOOLEAN', 'MULTI_SELECT')
  CROSS JOIN LATERAL (
    SELECT jsonb_array_elements_text(e.value) WHERE jsonb_typeof(e.value) = 'array'
    UNION ALL SELECT e.value #>> '{}' WHERE jsonb_typeof(e.value) IN ('string', 'boolean')
  ) AS v (value)
$$;

-- One statement's net change per (account, key, value): +1 per new row's value, -1 per old row's.
-- Rows whose custom_fields did not change are left out, so most updates count nothing; only
-- non-zero nets are written, in key order (no two writers lock counters in opposite orders).
CREATE FUNCTION custom_field_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  record_object CONSTANT custom_field_object := TG_ARGV[0]::custom_field_object;
  taken_slot CONSTANT smallint := counter_slot();
BEGIN
  -- An update that changes no record's custom_fields (a merge's moved deals) counts nothing: the
  -- multisets compared with EXCEPT ALL (a hash; a join of the transition tables, which have no
  -- statistics, was planned as a nested loop). Nested: a condition is planned whole, and an
  -- INSERT's or a DELETE's trigger has one of the two tables only.
  IF TG_OP = 'UPDATE' THEN
    IF NOT EXISTS (SELECT id, custom_fields FROM new_rows EXCEPT ALL SELECT id, custom_fields FROM old_rows) THEN
      RETURN NULL;
    END IF;
  END IF;
  IF TG_OP = 'INSERT' THEN
    INSERT INTO custom_field_counts AS c (account_id, object, key, value, slot, n)
    SELECT r.account_id, record_object, v.key, v.value, taken_slot, count(*)
    FROM new_rows r CROSS JOIN LATERAL custom_field_counted(r.account_id, record_object, r.custom_fields) v
    WHERE r.custom_fields <> '{}'
    GROUP BY r.account_id, v.key, v.value ORDER BY r.account_id, v.key, v.value
    ON CONFLICT (account_id, object, key, value, slot) DO UPDATE SET n = c.n + excluded.n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO custom_field_counts AS c (account_id, object, key, value, slot, n)
    SELECT r.account_id, record_object, v.key, v.value, taken_slot, -count(*)
    FROM old_rows r CROSS JOIN LATERAL custom_field_counted(r.account_id, record_object, r.custom_fields) v
    WHERE r.custom_fields <> '{}'
    GROUP BY r.account_id, v.key, v.value ORDER BY r.account_id, v.key, v.value
    ON CONFLICT (account_id, object, key, value, slot) DO UPDATE SET n = c.n + excluded.n;
  ELSE
    INSERT INTO custom_field_counts AS c (account_id, object, key, value, slot, n)
    SELECT x.account_id, record_object, x.key, x.value, taken_slot, sum(x.change)
    FROM (
      SELECT n.account_id, v.key, v.value, 1 AS change
      FROM new_rows n JOIN old_rows o ON o.id = n.id CROSS JOIN LATERAL custom_field_counted(n.account_id, record_object, n.custom_fields) v
      WHERE n.custom_fields IS DISTINCT FROM o.custom_fields
      UNION ALL
      SELECT o.account_id, v.key, v.value, -1
      FROM old_rows o JOIN new_rows n ON n.id = o.id CROSS JOIN LATERAL custom_field_counted(o.account_id, record_object, o.custom_fields) v
      WHERE n.custom_fields IS DISTINCT FROM o.custom_fields
    ) AS x
    GROUP BY x.account_id, x.key, x.value HAVING sum(x.change) <> 0 ORDER BY x.account_id, x.key, x.value
    ON CONFLICT (account_id, object, key, value, slot) DO UPDATE SET n = c.n + excluded.n;
  END IF;
  RETURN NULL;
END $$;

-- TRUNCATE fires no DELETE trigger: the table's counters go with its rows.
CREATE FUNCTION custom_field_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM custom_field_counts WHERE object = TG_ARGV[0]::custom_field_object;
  RETURN NULL;
END $$;

-- A deleted account's counters go at commit: its cascade may delete the definitions before the
-- records, and a record's delete then finds no definition to count by.
CREATE FUNCTION custom_field_counts_forget_account() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM custom_field_counts WHERE account_id = OLD.id;
  RETURN NULL;
END $$;

CREATE TRIGGER custom_field_counts_insert AFTER INSERT ON "contacts" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('CONTACT');
CREATE TRIGGER custom_field_counts_update AFTER UPDATE ON "contacts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('CONTACT');
CREATE TRIGGER custom_field_counts_delete AFTER DELETE ON "contacts" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('CONTACT');
CREATE TRIGGER custom_field_counts_truncate AFTER TRUNCATE ON "contacts" FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_truncate('CONTACT');
CREATE TRIGGER custom_field_counts_insert AFTER INSERT ON "deals" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('DEAL');
CREATE TRIGGER custom_field_counts_update AFTER UPDATE ON "deals" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('DEAL');
CREATE TRIGGER custom_field_counts_delete AFTER DELETE ON "deals" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('DEAL');
CREATE TRIGGER custom_field_counts_truncate AFTER TRUNCATE ON "deals" FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_truncate('DEAL');
CREATE TRIGGER custom_field_counts_insert AFTER INSERT ON "companies" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('COMPANY');
CREATE TRIGGER custom_field_counts_update AFTER UPDATE ON "companies" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('COMPANY');
CREATE TRIGGER custom_field_counts_delete AFTER DELETE ON "companies" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('COMPANY');
CREATE TRIGGER custom_field_counts_truncate AFTER TRUNCATE ON "companies" FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_truncate('COMPANY');
CREATE TRIGGER custom_field_counts_insert AFTER INSERT ON "invoices" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('INVOICE');
CREATE TRIGGER custom_field_counts_update AFTER UPDATE ON "invoices" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('INVOICE');
CREATE TRIGGER custom_field_counts_delete AFTER DELETE ON "invoices" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_apply('INVOICE');
CREATE TRIGGER custom_field_counts_truncate AFTER TRUNCATE ON "invoices" FOR EACH STATEMENT EXECUTE FUNCTION custom_field_counts_truncate('INVOICE');
CREATE CONSTRAINT TRIGGER custom_field_counts_forget_account AFTER DELETE ON "accounts" DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION custom_field_counts_forget_account();

-- The values written before this migration (its script is one transaction: writes to the four
-- tables wait for it from here, so the triggers and this count never both see a row).
LOCK TABLE "deals", "invoices", "companies", "contacts" IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO custom_field_counts (account_id, object, key, value, slot, n)
SELECT account_id, object, key, value, 0, count(*) FROM (
  SELECT r.account_id, 'CONTACT'::custom_field_object AS object, v.key, v.value FROM contacts r CROSS JOIN LATERAL custom_field_counted(r.account_id, 'CONTACT', r.custom_fields) v WHERE r.custom_fields <> '{}'
  UNION ALL
  SELECT r.account_id, 'DEAL', v.key, v.value FROM deals r CROSS JOIN LATERAL custom_field_counted(r.account_id, 'DEAL', r.custom_fields) v WHERE r.custom_fields <> '{}'
  UNION ALL
  SELECT r.account_id, 'COMPANY', v.key, v.value FROM companies r CROSS JOIN LATERAL custom_field_counted(r.account_id, 'COMPANY', r.custom_fields) v WHERE r.custom_fields <> '{}'
  UNION ALL
  SELECT r.account_id, 'INVOICE', v.key, v.value FROM invoices r CROSS JOIN LATERAL custom_field_counted(r.account_id, 'INVOICE', r.custom_fields) v WHERE r.custom_fields <> '{}'
) AS counted
GROUP BY account_id, object, key, value;
