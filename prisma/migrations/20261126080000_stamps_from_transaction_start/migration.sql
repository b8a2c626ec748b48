-- Sync never skips a change (docs/rest.md#following-changes): a list read in ascending time order
-- stops short of the start of the oldest transaction still open (src/graphql/horizon.ts). That holds
-- only if no write's stamp is earlier than its transaction's start, but the service takes stamps in
-- JavaScript, sometimes before its transaction begins (a wait for a pooled connection or a lock
-- queue). These triggers move such a stamp, taken in the last ten minutes, to the transaction's
-- start; an older one was given on purpose (history, fixtures) and is kept. A later one is kept too:
-- it is still no earlier than the start.
CREATE FUNCTION stamps_from_transaction_start() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.updated_at < now() AND NEW.updated_at > now() - interval '10 minutes' THEN NEW.updated_at := now(); END IF;
  IF TG_OP = 'INSERT' AND NEW.created_at < now() AND NEW.created_at > now() - interval '10 minutes' THEN NEW.created_at := now(); END IF;
  RETURN NEW;
END $$;

CREATE FUNCTION event_stamp_from_transaction_start() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.occurred_at < now() AND NEW.occurred_at > now() - interval '10 minutes' THEN NEW.occurred_at := now(); END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "contacts" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "pipeline_stages" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "deals" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "invoices" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "lead_forms" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "form_submissions" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "proposals" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "contracts" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "galleries" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "bookings" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "workflows" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "webhook_endpoints" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER event_stamp_from_transaction_start BEFORE INSERT ON "events" FOR EACH ROW EXECUTE FUNCTION event_stamp_from_transaction_start();
