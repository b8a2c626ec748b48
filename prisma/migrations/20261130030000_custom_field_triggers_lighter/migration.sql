-- Lighter custom-field triggers on the write every user takes (BENCHMARKS.md, "A batch with custom
-- values"): a batch of 100 contacts with 20 values each spent ~3 ms in custom_field_numbers_insert
-- and ~2.5 ms in custom_field_counts_insert, against ~25 ms for the whole statement.

-- New records' numbers cannot collide: a record's id is new and a JSON object holds a key once, so
-- (account, object, key, value, record) is new too. ON CONFLICT DO NOTHING made every row a
-- speculative insertion (a probe of the primary key and a second WAL record), 200 rows 2.8-3.4 ms
-- against 1.4-1.5 ms without. A restored record's numbers went with its delete (the delete trigger).
CREATE OR REPLACE FUNCTION custom_field_numbers_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO custom_field_numbers (account_id, object, key, value, record_id)
  SELECT n.account_id, TG_ARGV[0]::custom_field_object, e.key, e.value::numeric, n.id
  FROM inserted n CROSS JOIN LATERAL jsonb_each(n.custom_fields) e
  WHERE n.custom_fields <> '{}' AND jsonb_typeof(e.value) = 'number';
  RETURN NULL;
END
$$;

-- The counted values of a record, found from the account's counted fields (a few) by key, rather
-- than from every key the record holds (twenty in the bench) each joined to the definitions. Same
-- rows: a key is defined once per account and object, and a MULTI_SELECT's options once each.
CREATE OR REPLACE FUNCTION custom_field_counted(account uuid, object custom_field_object, fields jsonb)
RETURNS TABLE (key text, value text) LANGUAGE sql STABLE AS $$
  SELECT d.key, v.value
  FROM custom_field_definitions d
  CROSS JOIN LATERAL (
    SELECT DISTINCT jsonb_array_elements_text(fields -> d.key) WHERE jsonb_typeof(fields -> d.key) = 'array'
    UNION ALL SELECT fields ->> d.key WHERE jsonb_typeof(fields -> d.key) IN ('string', 'boolean')
  ) AS v (value)
  WHERE d.account_id = account AND d.object = custom_field_counted.object AND d.type IN ('SELECT', 'BOOLEAN', 'MULTI_SELECT')
$$;
