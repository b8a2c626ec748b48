-- Writes whose records hold no custom values count nothing and now return before any work
-- (docs/custom-fields.md#which-index-serves-what): the statement trigger took ~0.3 ms of a single
-- contact create's ~2.1 ms statement (15 %) to find that out, on every create, batch and delete of
-- contacts, deals, companies and invoices, with or without fields defined (BENCHMARKS.md, "Counting
-- nothing costs nothing"). The slot is taken only when there is something to count; the rest of the
-- body is as 20261129210000_custom_field_counts wrote it.
CREATE OR REPLACE FUNCTION custom_field_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  record_object CONSTANT custom_field_object := TG_ARGV[0]::custom_field_object;
  taken_slot smallint;
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
  -- Statements whose records hold no values (most writes) count nothing.
  IF TG_OP = 'INSERT' THEN
    IF NOT EXISTS (SELECT FROM new_rows WHERE custom_fields <> '{}') THEN
      RETURN NULL;
    END IF;
  ELSIF TG_OP = 'DELETE' THEN
    IF NOT EXISTS (SELECT FROM old_rows WHERE custom_fields <> '{}') THEN
      RETURN NULL;
    END IF;
  END IF;
  taken_slot := counter_slot();
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
