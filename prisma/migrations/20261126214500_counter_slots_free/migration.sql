-- The counters' slot (record_counts, report_sums: docs/scaling.md#exact-totals) is now one no other
-- running transaction holds, rather than txid % 8. A counter row stays locked from a write's INSERT
-- until its COMMIT's flush ends, and with txid % 8 concurrent writers of one account shared slots:
-- 32 form submits at once waited 73 % of their time on each other's counter rows (BENCHMARKS.md,
-- "Writes as fast as reads"). Totals are sums over every slot, so which slot a change goes to never
-- changes a total: the rows already there stay as they are, and this migration moves nothing.

-- A transaction's first counter change takes the lowest free slot, marked by a transaction-scoped
-- advisory lock (the two-key form, apart from the app's one-key locks), and keeps it for the rest of
-- the transaction (a transaction-local setting): no two running transactions share a slot, so no
-- writer waits on another's counter rows, and as few slots are used as writers run at once. When all
-- 32 are held the transaction shares slot txid % 32 and waits on its rows, as every writer did before.
CREATE FUNCTION counter_slot() RETURNS smallint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  held text := current_setting('crm.counter_slot', true);
  slot int;
BEGIN
  -- '' rather than null once a transaction before this one in the session set it.
  IF held <> '' THEN RETURN held::smallint; END IF;
  slot := 0;
  LOOP
    IF slot = 32 THEN
      slot := txid_current() % 32;
      EXIT;
    END IF;
    EXIT WHEN pg_try_advisory_xact_lock(hashtext('counter_slot'), slot);
    slot := slot + 1;
  END LOOP;
  PERFORM set_config('crm.counter_slot', slot::text, true);
  RETURN slot;
END $$;

-- Every counter function takes its slot from counter_slot(): their bodies stay as the migrations
-- before wrote them (20261122201534_record_counts, 20261126091600_receivables_amount_due,
-- 20261126110000_revenue) but for that one expression, checked to be there.
DO $$
DECLARE
  name text;
  definition text;
BEGIN
  FOREACH name IN ARRAY ARRAY['record_counts_apply', 'report_sums_apply', 'report_sums_add_revenue'] LOOP
    definition := pg_get_functiondef(name::regproc);
    IF position('(txid_current() % 8)::smallint' IN definition) = 0 THEN
      RAISE EXCEPTION '%: no txid_current() %% 8 slot to replace', name;
    END IF;
    EXECUTE replace(definition, '(txid_current() % 8)::smallint', 'counter_slot()');
  END LOOP;
END $$;
