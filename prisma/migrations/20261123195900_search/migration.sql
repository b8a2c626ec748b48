-- Search served by one trigram index per collection (docs/decisions.md §19).

-- A contact's searchable text: "first last", e-mail, company and phone, space-separated. One
-- definition: the index below and every query (src/contacts/contact-search.ts) call this function,
-- and PostgreSQL inlines it, so the query's expression is the index's. ILIKE '%x%' on it finds the
-- candidates; each query then checks its own fields (a match may straddle two of them).
CREATE FUNCTION contact_search_text(first_name text, last_name text, email text, company text, phone text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT first_name || ' ' || coalesce(last_name, '') || ' ' || coalesce(email, '') || ' ' || coalesce(company, '') || ' ' || coalesce(phone, '')
$$;

-- Replaced by contacts_search_trgm_idx: one index instead of three to read per search and to
-- update per write.
DROP INDEX "contacts_first_name_trgm_idx";
DROP INDEX "contacts_last_name_trgm_idx";
DROP INDEX "contacts_email_trgm_idx";

-- An expression index: schema.prisma cannot state it, and the schema engine leaves it out of its diffs.
CREATE INDEX "contacts_search_trgm_idx" ON "contacts" USING GIN (contact_search_text("first_name", "last_name", "email", "company", "phone") gin_trgm_ops);

-- CreateIndex
CREATE INDEX "deals_title_trgm_idx" ON "deals" USING GIN ("title" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "invoices_invoice_number_trgm_idx" ON "invoices" USING GIN ("invoice_number" gin_trgm_ops);

-- Statistics for the new expression now (the planner estimates a fragment's share of the account from them).
ANALYZE "contacts";
