-- The NUMBER values of the account's own fields in a btree (docs/custom-fields.md#which-index-serves-what):
-- a range on a NUMBER field (`cf.score.gte=`) and an order by one read the value inside each record's
-- JSON, which no index held: the range's exact total and the sort's first page read every record of
-- the account (160 ms at 200,000 contacts, growing with them; BENCHMARKS.md). One row per record and
-- key whose value is a JSON number (a NUMBER field's: values are judged on write, and a key keeps its
-- type), in value order per account, object and key: a range's total counts index entries, a sort's
-- first page takes the first entries. Only numbers: an equality filter stays on the GIN index, and
-- a write of 20 values adds 2 rows here for the bench's 2 NUMBER fields, not 20.
-- The primary key is the only index (a row's identity is all its columns): the triggers delete a
-- record's old rows by the values its old JSON held, so no second index by record is needed.

-- CreateTable
CREATE TABLE "custom_field_numbers" (
    "account_id" UUID NOT NULL,
    "object" "custom_field_object" NOT NULL,
    "key" TEXT NOT NULL,
    "value" DECIMAL NOT NULL,
    "record_id" UUID NOT NULL,

    CONSTRAINT "custom_field_numbers_pkey" PRIMARY KEY ("account_id","object","key","value","record_id")
);

-- A statement's new rows' numbers (TG_ARGV[0]: the object). ON CONFLICT: a key held twice by one
-- JSON object cannot be (jsonb keeps the last), but two statements of one transaction may rewrite a row.
CREATE FUNCTION custom_field_numbers_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO custom_field_numbers (account_id, object, key, value, record_id)
  SELECT n.account_id, TG_ARGV[0]::custom_field_object, e.key, e.value::numeric, n.id
  FROM inserted n CROSS JOIN LATERAL jsonb_each(n.custom_fields) e
  WHERE n.custom_fields <> '{}' AND jsonb_typeof(e.value) = 'number'
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

-- Rows whose values changed: their old numbers go, their new ones come (the rest keep theirs).
CREATE FUNCTION custom_field_numbers_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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

CREATE FUNCTION custom_field_numbers_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM custom_field_numbers x
  USING deleted o, LATERAL jsonb_each(o.custom_fields) e
  WHERE o.custom_fields <> '{}' AND jsonb_typeof(e.value) = 'number'
    AND x.account_id = o.account_id AND x.object = TG_ARGV[0]::custom_field_object AND x.key = e.key AND x.value = e.value::numeric AND x.record_id = o.id;
  RETURN NULL;
END
$$;

CREATE TRIGGER custom_field_numbers_insert AFTER INSERT ON "contacts" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_insert('CONTACT');
CREATE TRIGGER custom_field_numbers_update AFTER UPDATE ON "contacts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_update('CONTACT');
CREATE TRIGGER custom_field_numbers_delete AFTER DELETE ON "contacts" REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_delete('CONTACT');
CREATE TRIGGER custom_field_numbers_insert AFTER INSERT ON "deals" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_insert('DEAL');
CREATE TRIGGER custom_field_numbers_update AFTER UPDATE ON "deals" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_update('DEAL');
CREATE TRIGGER custom_field_numbers_delete AFTER DELETE ON "deals" REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_delete('DEAL');
CREATE TRIGGER custom_field_numbers_insert AFTER INSERT ON "companies" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_insert('COMPANY');
CREATE TRIGGER custom_field_numbers_update AFTER UPDATE ON "companies" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_update('COMPANY');
CREATE TRIGGER custom_field_numbers_delete AFTER DELETE ON "companies" REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_delete('COMPANY');
CREATE TRIGGER custom_field_numbers_insert AFTER INSERT ON "invoices" REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_insert('INVOICE');
CREATE TRIGGER custom_field_numbers_update AFTER UPDATE ON "invoices" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_update('INVOICE');
CREATE TRIGGER custom_field_numbers_delete AFTER DELETE ON "invoices" REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION custom_field_numbers_delete('INVOICE');

-- The values written before this migration.
INSERT INTO custom_field_numbers (account_id, object, key, value, record_id)
SELECT r.account_id, 'CONTACT'::custom_field_object, e.key, e.value::numeric, r.id FROM contacts r CROSS JOIN LATERAL jsonb_each(r.custom_fields) e WHERE r.custom_fields <> '{}' AND jsonb_typeof(e.value) = 'number'
UNION ALL
SELECT r.account_id, 'DEAL'::custom_field_object, e.key, e.value::numeric, r.id FROM deals r CROSS JOIN LATERAL jsonb_each(r.custom_fields) e WHERE r.custom_fields <> '{}' AND jsonb_typeof(e.value) = 'number'
UNION ALL
SELECT r.account_id, 'COMPANY'::custom_field_object, e.key, e.value::numeric, r.id FROM companies r CROSS JOIN LATERAL jsonb_each(r.custom_fields) e WHERE r.custom_fields <> '{}' AND jsonb_typeof(e.value) = 'number'
UNION ALL
SELECT r.account_id, 'INVOICE'::custom_field_object, e.key, e.value::numeric, r.id FROM invoices r CROSS JOIN LATERAL jsonb_each(r.custom_fields) e WHERE r.custom_fields <> '{}' AND jsonb_typeof(e.value) = 'number';
