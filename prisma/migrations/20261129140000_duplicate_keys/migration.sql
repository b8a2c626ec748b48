-- Finding duplicates (docs/decisions.md §22, docs/duplicates.md): each rule compares a key of the
-- record, and each key is an IMMUTABLE function with an expression index led by account_id, so an
-- account's candidates are read in key order from an index, never by comparing every pair. The
-- queries (src/contacts/duplicates.ts, src/companies/duplicates.ts) call these functions, and
-- PostgreSQL inlines them, so the query's expression is the index's. Expression indexes:
-- schema.prisma cannot state them, and the schema engine leaves them out of its diffs.

-- An e-mail address as duplicates compare it: lower case, without the local part's "+tag".
CREATE FUNCTION dedupe_email(email text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN strpos(email, '@') > 1
    THEN lower(regexp_replace(split_part(btrim(email), '@', 1), '\+.*$', '') || '@' || substr(btrim(email), strpos(btrim(email), '@') + 1))
  END
$$;

-- A phone number as duplicates compare it: its last 9 digits (none with fewer than 7 digits).
CREATE FUNCTION dedupe_phone(phone text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN length(regexp_replace(phone, '\D', '', 'g')) >= 7 THEN right(regexp_replace(phone, '\D', '', 'g'), 9) END
$$;

-- A person's name as trigrams compare it: "first last", lower case.
CREATE FUNCTION dedupe_name(first_name text, last_name text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT lower(btrim(first_name || ' ' || coalesce(last_name, '')))
$$;

-- The company a person's name is compared within: the linked company, else the free-text one.
CREATE FUNCTION dedupe_company(company_id uuid, company text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(company_id::text, nullif(lower(btrim(company)), ''))
$$;

-- The e-mail domain a person's name is compared within.
CREATE FUNCTION dedupe_email_domain(email text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT nullif(lower(btrim(substring(email from '@([^@]*)$'))), '')
$$;

-- A company's domain, else its website's host (without scheme, path, port and "www.").
CREATE FUNCTION dedupe_company_domain(domain text, website text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(domain, nullif(lower(regexp_replace(regexp_replace(regexp_replace(btrim(website), '^[a-zA-Z][a-zA-Z0-9+.-]*://', ''), '[/?#:].*$', ''), '^www\.', '')), ''))
$$;

-- A company's name as trigrams compare it: lower case, letters and digits, without a legal form.
CREATE FUNCTION dedupe_company_name(name text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT btrim(regexp_replace(
    regexp_replace(lower(name), '[^[:alnum:]]+', ' ', 'g'),
    '(^| )(inc|incorporated|llc|ltd|limited|corp|corporation|co|company|gmbh|ag|sa|sas|sarl|bv|nv|plc|srl|spa|oy|ab|as|pty|kk)( |$)', ' ', 'g'))
$$;

CREATE INDEX "contacts_dedupe_email_idx" ON "contacts" ("account_id", dedupe_email("email"));
CREATE INDEX "contacts_dedupe_phone_idx" ON "contacts" ("account_id", dedupe_phone("phone"));
CREATE INDEX "contacts_dedupe_company_name_idx" ON "contacts" ("account_id", dedupe_company("company_id", "company"), dedupe_name("first_name", "last_name"));
CREATE INDEX "contacts_dedupe_domain_name_idx" ON "contacts" ("account_id", dedupe_email_domain("email"), dedupe_name("first_name", "last_name"));
CREATE INDEX "companies_dedupe_domain_idx" ON "companies" ("account_id", dedupe_company_domain("domain", "website"));
CREATE INDEX "companies_dedupe_name_idx" ON "companies" ("account_id", dedupe_company_name("name"));

ANALYZE "contacts";
ANALYZE "companies";
