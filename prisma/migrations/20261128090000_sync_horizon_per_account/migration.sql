-- One tenant never holds back another's sync (docs/decisions.md §26; docs/rest.md#following-changes).
-- A list followed forward in time stops at its horizon (src/graphql/horizon.ts); that horizon was the
-- start of the oldest transaction open in the whole database, so another account's long import froze
-- every account's feed. Now a write shows whose it is: the first row a transaction writes for an
-- account takes a transaction-scoped shared advisory lock keyed by that account, and the account's
-- rows (records and events) in that transaction are stamped no earlier than the moment the lock was
-- held. A reader's horizon for account A is the start of the oldest transaction holding A's lock (now
-- when none does): a write whose lock it did not see took it after the reader looked, so its stamps
-- are later than the horizon; one it saw is waited for. Transaction-scoped locks hold behind
-- PgBouncer in transaction mode, and row triggers fire for COPY and multi-row inserts alike.
--
-- The lock: pg_advisory_xact_lock_shared(1937337955, hashtext(account_id::text)); 1937337955 is
-- 'sync' in ASCII, a class of two-key advisory locks no other lock of the service uses (theirs are
-- one bigint key). Shared: writers never wait for one another here. The moment it was taken is kept
-- for the transaction in two settings (set_config(..., true), gone at its end), so that later rows of
-- the same account cost a comparison, not a lock.
CREATE FUNCTION sync_stamp(account uuid) RETURNS timestamptz LANGUAGE plpgsql AS $$
DECLARE
  stamp timestamptz;
BEGIN
  IF current_setting('crm.sync_account', true) = account::text THEN
    RETURN current_setting('crm.sync_stamp')::timestamptz;
  END IF;
  PERFORM pg_advisory_xact_lock_shared(1937337955, hashtext(account::text));
  stamp := clock_timestamp();
  PERFORM set_config('crm.sync_account', account::text, true), set_config('crm.sync_stamp', stamp::text, true);
  RETURN stamp;
END $$;

-- As before (migration 20261126080000), a stamp taken within the last ten minutes but earlier than
-- the write's own moment is moved to it; an older one was given on purpose and is kept, a later one
-- too. The moment is now the account lock's, no earlier than the transaction's start.
CREATE OR REPLACE FUNCTION stamps_from_transaction_start() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  stamp timestamptz := sync_stamp(NEW.account_id);
BEGIN
  IF NEW.updated_at < stamp AND NEW.updated_at > now() - interval '10 minutes' THEN NEW.updated_at := stamp; END IF;
  IF TG_OP = 'INSERT' AND NEW.created_at < stamp AND NEW.created_at > now() - interval '10 minutes' THEN NEW.created_at := stamp; END IF;
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION event_stamp_from_transaction_start() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  stamp timestamptz := sync_stamp(NEW.account_id);
BEGIN
  IF NEW.occurred_at < stamp AND NEW.occurred_at > now() - interval '10 minutes' THEN NEW.occurred_at := stamp; END IF;
  RETURN NEW;
END $$;
