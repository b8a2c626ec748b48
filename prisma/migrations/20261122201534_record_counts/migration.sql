-- CreateTable
CREATE TABLE "record_counts" (
    "account_id" UUID NOT NULL,
    "table_name" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "slot" SMALLINT NOT NULL,
    "n" BIGINT NOT NULL,

    CONSTRAINT "record_counts_pkey" PRIMARY KEY ("account_id","table_name","key","slot")
);

-- Exact totals in constant time (docs/scaling.md#exact-totals). The triggers below keep
-- record_counts in the transaction of every write to contacts, deals and invoices, whatever makes
-- it: the API, the CLI, erasure, the bench seed's bulk INSERT ... SELECT unnest, cascades.

-- One statement's net change per (account, key) of the table's key column (the trigger's argument):
-- +1 per new row, -1 per old one. Only non-zero nets are written, so an update that keeps the key
-- writes nothing. All of one transaction's changes go to its slot (txid % 8): consecutive
-- transactions update different rows, so concurrent writers of one account seldom wait on each
-- other; rows are taken in key order, so two writers never lock the same rows in opposite orders.
CREATE FUNCTION record_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  key_column text := quote_ident(TG_ARGV[0]);
  changes text := CASE TG_OP
    WHEN 'INSERT' THEN format('SELECT account_id, %s::text, 1 FROM new_rows', key_column)
    WHEN 'DELETE' THEN format('SELECT account_id, %s::text, -1 FROM old_rows', key_column)
    ELSE format('SELECT account_id, %1$s::text, 1 FROM new_rows UNION ALL SELECT account_id, %1$s::text, -1 FROM old_rows', key_column)
  END;
BEGIN
  EXECUTE format(
    'INSERT INTO record_counts AS c (account_id, table_name, key, slot, n)
     SELECT account_id, %L, key, $1, sum(change) FROM (%s) AS changes (account_id, key, change)
     GROUP BY account_id, key HAVING sum(change) <> 0 ORDER BY account_id, key
     ON CONFLICT (account_id, table_name, key, slot) DO UPDATE SET n = c.n + excluded.n',
    TG_TABLE_NAME, changes)
  USING (txid_current() % 8)::smallint;
  RETURN NULL;
END $$;

-- TRUNCATE fires no DELETE trigger: the table's counters go with its rows.
CREATE FUNCTION record_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM record_counts WHERE table_name = TG_TABLE_NAME;
  RETURN NULL;
END $$;

-- A deleted account's counters go too (there is no foreign key to cascade them), at commit: the
-- cascade deletes the account's contacts, deals and invoices from the foreign keys' triggers, whose
-- statements fire the counters' triggers after every trigger of the account's own DELETE.
CREATE FUNCTION record_counts_forget_account() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM record_counts WHERE account_id = OLD.id;
  RETURN NULL;
END $$;

-- Writes to these tables wait from here until the migration commits (its script is one
-- transaction), so the backfill at the end counts exactly the rows the triggers did not see. Taken
-- at once, in the order the app's transactions write them (accounts before invoices: the invoice
-- number; deals and invoices before contacts: a contact's deletion), so no writer deadlocks with it.
LOCK TABLE "accounts", "deals", "invoices", "contacts" IN SHARE ROW EXCLUSIVE MODE;

-- Transition tables allow one event per trigger: three triggers per table.
CREATE TRIGGER record_counts_insert AFTER INSERT ON "contacts" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply('contact_type');
CREATE TRIGGER record_counts_update AFTER UPDATE ON "contacts" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply('contact_type');
CREATE TRIGGER record_counts_delete AFTER DELETE ON "contacts" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply('contact_type');
CREATE TRIGGER record_counts_truncate AFTER TRUNCATE ON "contacts"
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_truncate();

CREATE TRIGGER record_counts_insert AFTER INSERT ON "deals" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply('status');
CREATE TRIGGER record_counts_update AFTER UPDATE ON "deals" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply('status');
CREATE TRIGGER record_counts_delete AFTER DELETE ON "deals" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply('status');
CREATE TRIGGER record_counts_truncate AFTER TRUNCATE ON "deals"
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_truncate();

CREATE TRIGGER record_counts_insert AFTER INSERT ON "invoices" REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply('status');
CREATE TRIGGER record_counts_update AFTER UPDATE ON "invoices" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply('status');
CREATE TRIGGER record_counts_delete AFTER DELETE ON "invoices" REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_apply('status');
CREATE TRIGGER record_counts_truncate AFTER TRUNCATE ON "invoices"
  FOR EACH STATEMENT EXECUTE FUNCTION record_counts_truncate();

CREATE CONSTRAINT TRIGGER record_counts_forget_account AFTER DELETE ON "accounts" DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION record_counts_forget_account();

-- The rows already there (slot 0); every later write is the triggers' (see the LOCK above).
INSERT INTO record_counts (account_id, table_name, key, slot, n)
  SELECT account_id, 'contacts', contact_type::text, 0, count(*) FROM "contacts" GROUP BY account_id, contact_type;
INSERT INTO record_counts (account_id, table_name, key, slot, n)
  SELECT account_id, 'deals', status::text, 0, count(*) FROM "deals" GROUP BY account_id, status;
INSERT INTO record_counts (account_id, table_name, key, slot, n)
  SELECT account_id, 'invoices', status::text, 0, count(*) FROM "invoices" GROUP BY account_id, status;
