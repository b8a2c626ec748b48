-- docs/decisions.md §26: contacts and deals filter by owner (owner_id=<id>|me|none). A page of one
-- owner's records (or of those with none: a btree keeps NULLs) is a range scan of this index, as
-- company_id's is of its own. The plain owner_id index stays: it serves the SET NULL of a user's removal.
CREATE INDEX "contacts_account_id_owner_id_created_at_id_idx" ON "contacts"("account_id", "owner_id", "created_at" DESC, "id" DESC);

CREATE INDEX "deals_account_id_owner_id_created_at_id_idx" ON "deals"("account_id", "owner_id", "created_at" DESC, "id" DESC);
