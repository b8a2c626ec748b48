-- Contact search (contactsWhere: ILIKE '%text%' on first name, last name and e-mail) reads trigram
-- GIN indexes instead of every contact of the account. PGlite loads pg_trgm too (src/db/migration-adapters.ts).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- CreateIndex
CREATE INDEX "contacts_first_name_trgm_idx" ON "contacts" USING GIN ("first_name" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "contacts_last_name_trgm_idx" ON "contacts" USING GIN ("last_name" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "contacts_email_trgm_idx" ON "contacts" USING GIN ("email" gin_trgm_ops);

-- The form submission looks an address up case-insensitively (submission.service.ts: lower(email) = lower($1)).
-- An expression index: schema.prisma cannot state it, and the schema engine leaves it out of its diffs.
CREATE INDEX "contacts_account_id_lower_email_idx" ON "contacts"("account_id", lower("email"));

-- Statistics for the new expression now, not at the next autovacuum: until then the planner guesses
-- 0.5% of an account shares an address and prefers scanning the account in created_at order.
ANALYZE "contacts";
