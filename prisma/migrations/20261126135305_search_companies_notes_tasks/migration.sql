-- Cross-object search gains companies, notes and tasks (docs/decisions.md §19, §21): one trigram
-- index per searched column, as deals' titles and invoices' numbers. The two of companies also
-- serve the companies list's `search` (name or domain), read as a BitmapOr of both.

-- CreateIndex
CREATE INDEX "companies_name_trgm_idx" ON "companies" USING GIN ("name" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "companies_domain_trgm_idx" ON "companies" USING GIN ("domain" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "notes_body_trgm_idx" ON "notes" USING GIN ("body" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "tasks_title_trgm_idx" ON "tasks" USING GIN ("title" gin_trgm_ops);
