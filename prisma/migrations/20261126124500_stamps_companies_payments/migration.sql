-- Companies and payments are stamped from their transaction's start like every other synced table
-- (docs/decisions.md §24): a follower reading by updated_at or created_at never passes a write
-- that is still waiting to commit.
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "companies" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
CREATE TRIGGER stamps_from_transaction_start BEFORE INSERT OR UPDATE ON "payments" FOR EACH ROW EXECUTE FUNCTION stamps_from_transaction_start();
