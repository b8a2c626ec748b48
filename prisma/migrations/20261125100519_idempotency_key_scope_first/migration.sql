-- The key's unique index leads with the caller's scope, so a retry whose record is gone (a delete's
-- second call) finds its stored answer without knowing the account (src/graphql/rules.ts). The new
-- index is built before the old one goes: no moment without the uniqueness a key's claim relies on.
CREATE UNIQUE INDEX "idempotency_keys_scope_operation_key_account_id_key" ON "idempotency_keys"("scope", "operation", "key", "account_id");

DROP INDEX "idempotency_keys_account_id_scope_operation_key_key";
