-- Duplicates answered from the index alone (docs/decisions.md §22, docs/duplicates.md "How fast").
-- The keys' expression indexes of 20261129140000_duplicate_keys gave each rule its range in key
-- order, but PostgreSQL then read every contact's row and computed the key again (0.4-0.7 s a rule
-- at 100,000 contacts, BENCHMARKS.md). Each index now also holds the columns its key is made of
-- (INCLUDE), so the planner reads an index-only scan and takes the key's value from the index: no
-- row is read and no key computed again (a row changed since the last VACUUM is one heap visit).
-- Every write keeps an index right on both databases, so no write path has anything to do, and no
-- column is added that answers, exports or events would have to leave out.

-- Both call pg_trgm's show_trgm by its schema's name: an index is built and kept with search_path
-- set to pg_catalog alone (PostgreSQL 17 and later, PGlite), where an unqualified name is not found.
DO $do$
DECLARE trgm text := (SELECT quote_ident(extnamespace::regnamespace::text) FROM pg_extension WHERE extname = 'pg_trgm');
BEGIN
  -- How many distinct trigrams pg_trgm makes of a text (show_trgm's, the ones similarity() compares).
  EXECUTE format($f$
    CREATE FUNCTION dedupe_trigrams(key text)
    RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $b$
      SELECT coalesce(array_length(%s.show_trgm(key), 1), 0)
    $b$$f$, trgm);
  -- The same trigrams as 64 bits: one bit per trigram's hash. A trigram that one text has and the
  -- other lacks may share a bit with another, never clears one; so the bits set in one sketch and
  -- not in the other are at most the trigrams only that text has, and with dedupe_trigrams they
  -- bound similarity() from above, exactly (src/contacts/duplicates.ts: a pair the bound rules
  -- out is never compared).
  EXECUTE format($f$
    CREATE FUNCTION dedupe_sketch(key text)
    RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $b$
      SELECT coalesce(bit_or(1::bigint << (hashtext(g) & 63)), 0) FROM unnest(%s.show_trgm(key)) AS g
    $b$$f$, trgm);
END
$do$;

DROP INDEX "contacts_dedupe_email_idx";
DROP INDEX "contacts_dedupe_phone_idx";
DROP INDEX "contacts_dedupe_company_name_idx";
DROP INDEX "contacts_dedupe_domain_name_idx";
DROP INDEX "companies_dedupe_domain_idx";
DROP INDEX "companies_dedupe_name_idx";

CREATE INDEX "contacts_dedupe_email_idx" ON "contacts" ("account_id", dedupe_email("email")) INCLUDE ("id", "email");
CREATE INDEX "contacts_dedupe_phone_idx" ON "contacts" ("account_id", dedupe_phone("phone")) INCLUDE ("id", "phone");
CREATE INDEX "contacts_dedupe_company_name_idx" ON "contacts" (
  "account_id", dedupe_company("company_id", "company"), dedupe_name("first_name", "last_name"),
  dedupe_trigrams(dedupe_name("first_name", "last_name")), dedupe_sketch(dedupe_name("first_name", "last_name"))
) INCLUDE ("id", "company_id", "company", "first_name", "last_name");
CREATE INDEX "contacts_dedupe_domain_name_idx" ON "contacts" (
  "account_id", dedupe_email_domain("email"), dedupe_name("first_name", "last_name"),
  dedupe_trigrams(dedupe_name("first_name", "last_name")), dedupe_sketch(dedupe_name("first_name", "last_name"))
) INCLUDE ("id", "email", "first_name", "last_name");
CREATE INDEX "companies_dedupe_domain_idx" ON "companies" ("account_id", dedupe_company_domain("domain", "website")) INCLUDE ("id", "domain", "website");
CREATE INDEX "companies_dedupe_name_idx" ON "companies" (
  "account_id", dedupe_company_name("name"), dedupe_trigrams(dedupe_company_name("name")), dedupe_sketch(dedupe_company_name("name"))
) INCLUDE ("id", "name");

-- An index-only scan skips the row on the pages the visibility map marks all-visible: autovacuum
-- keeps it (a migration runs in a transaction, where VACUUM cannot).
ANALYZE "contacts";
ANALYZE "companies";
