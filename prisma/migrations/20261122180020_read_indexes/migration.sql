-- Indexes behind the filters and orders of the connections (docs/decisions.md §11). Every connection
-- pages by keyset (order column, id) within an account (src/graphql/connection.ts), so each index
-- leads with account_id, then the order column, then id: a page is one index range scan, forward
-- or backward, whatever page it is. Each index says which query it serves.

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "contacts_account_id_email_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "contracts_account_id_created_at_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "deals_account_id_contact_id_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "deals_account_id_stage_id_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "export_logs_account_id_created_at_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "form_submissions_account_id_created_at_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "form_submissions_account_id_form_id_created_at_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "galleries_account_id_created_at_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "invoices_account_id_contact_id_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "proposals_account_id_created_at_idx";

-- Replaced below by an index that also holds the keyset order (..., created_at DESC, id DESC) or id.
DROP INDEX "workflows_account_id_created_at_idx";

-- Account.bookings: the default order CREATED_AT DESC, keyset (created_at, id); read backwards for ASC and `last`
CREATE INDEX "bookings_account_id_created_at_id_idx" ON "bookings"("account_id", "created_at" DESC, "id" DESC);

-- Contact.bookings (the contact's bookings newest first, keyset by (created_at, id); the LATERAL per contact in src/graphql/connection.ts)
CREATE INDEX "bookings_account_id_contact_id_created_at_id_idx" ON "bookings"("account_id", "contact_id", "created_at" DESC, "id" DESC);

-- Account.bookings(orderBy: UPDATED_AT) and filter.updatedAfter/updatedBefore: the incremental sync, keyset (updated_at, id)
CREATE INDEX "bookings_account_id_updated_at_id_idx" ON "bookings"("account_id", "updated_at", "id");

-- Account.contacts(orderBy: UPDATED_AT) and filter.updatedAfter/updatedBefore: the incremental sync, keyset (updated_at, id)
CREATE INDEX "contacts_account_id_updated_at_id_idx" ON "contacts"("account_id", "updated_at", "id");

-- Account.contacts(orderBy: FIRST_NAME), keyset (first_name, id), either direction
CREATE INDEX "contacts_account_id_first_name_id_idx" ON "contacts"("account_id", "first_name", "id");

-- Account.contacts(orderBy: LAST_NAME), keyset (last_name, id), either direction
CREATE INDEX "contacts_account_id_last_name_id_idx" ON "contacts"("account_id", "last_name", "id");

-- Account.contacts(orderBy: EMAIL (and filter.email through lower(email), see contact_search)), keyset (email, id), either direction
CREATE INDEX "contacts_account_id_email_id_idx" ON "contacts"("account_id", "email", "id");

-- Account.contracts: the default order CREATED_AT DESC, keyset (created_at, id); read backwards for ASC and `last`
CREATE INDEX "contracts_account_id_created_at_id_idx" ON "contracts"("account_id", "created_at" DESC, "id" DESC);

-- Contact.contracts (the contact's contracts newest first, keyset by (created_at, id); the LATERAL per contact in src/graphql/connection.ts)
CREATE INDEX "contracts_account_id_contact_id_created_at_id_idx" ON "contracts"("account_id", "contact_id", "created_at" DESC, "id" DESC);

-- Account.contracts(orderBy: UPDATED_AT) and filter.updatedAfter/updatedBefore: the incremental sync, keyset (updated_at, id)
CREATE INDEX "contracts_account_id_updated_at_id_idx" ON "contracts"("account_id", "updated_at", "id");

-- Contact.deals (the contact's deals newest first, keyset by (created_at, id); the LATERAL per contact in src/graphql/connection.ts)
CREATE INDEX "deals_account_id_contact_id_created_at_id_idx" ON "deals"("account_id", "contact_id", "created_at" DESC, "id" DESC);

-- PipelineStage.deals (a stage's deals newest first, keyset by (created_at, id))
CREATE INDEX "deals_account_id_stage_id_created_at_id_idx" ON "deals"("account_id", "stage_id", "created_at" DESC, "id" DESC);

-- Account.deals(orderBy: UPDATED_AT) and filter.updatedAfter/updatedBefore: the incremental sync, keyset (updated_at, id)
CREATE INDEX "deals_account_id_updated_at_id_idx" ON "deals"("account_id", "updated_at", "id");

-- Account.deals(orderBy: VALUE (and filter.minValue/maxValue)), keyset (value, id), either direction
CREATE INDEX "deals_account_id_value_id_idx" ON "deals"("account_id", "value", "id");

-- Account.deals(orderBy: EXPECTED_CLOSE_DATE (and filter.expectedCloseAfter/Before)), keyset (expected_close_date, id), either direction
CREATE INDEX "deals_account_id_expected_close_date_id_idx" ON "deals"("account_id", "expected_close_date", "id");

-- Account.deals(orderBy: TITLE), keyset (title, id), either direction
CREATE INDEX "deals_account_id_title_id_idx" ON "deals"("account_id", "title", "id");

-- Account.exports: the default order CREATED_AT DESC, keyset (created_at, id); read backwards for ASC and `last`
CREATE INDEX "export_logs_account_id_created_at_id_idx" ON "export_logs"("account_id", "created_at" DESC, "id" DESC);

-- Account.formSubmissions: the default order CREATED_AT DESC, keyset (created_at, id); read backwards for ASC and `last`
CREATE INDEX "form_submissions_account_id_created_at_id_idx" ON "form_submissions"("account_id", "created_at" DESC, "id" DESC);

-- LeadForm.submissions and FormSubmissionFilter.formId (a form's submissions newest first)
CREATE INDEX "form_submissions_account_id_form_id_created_at_id_idx" ON "form_submissions"("account_id", "form_id", "created_at" DESC, "id" DESC);

-- Contact.submissions (the contact's submissions newest first, keyset by (created_at, id); the LATERAL per contact in src/graphql/connection.ts)
CREATE INDEX "form_submissions_account_id_contact_id_created_at_id_idx" ON "form_submissions"("account_id", "contact_id", "created_at" DESC, "id" DESC);

-- Account.formSubmissions(orderBy: UPDATED_AT) and filter.updatedAfter/updatedBefore: the incremental sync, keyset (updated_at, id)
CREATE INDEX "form_submissions_account_id_updated_at_id_idx" ON "form_submissions"("account_id", "updated_at", "id");

-- Account.galleries: the default order CREATED_AT DESC, keyset (created_at, id); read backwards for ASC and `last`
CREATE INDEX "galleries_account_id_created_at_id_idx" ON "galleries"("account_id", "created_at" DESC, "id" DESC);

-- Contact.galleries (the contact's galleries newest first, keyset by (created_at, id); the LATERAL per contact in src/graphql/connection.ts)
CREATE INDEX "galleries_account_id_contact_id_created_at_id_idx" ON "galleries"("account_id", "contact_id", "created_at" DESC, "id" DESC);

-- Account.galleries(orderBy: UPDATED_AT) and filter.updatedAfter/updatedBefore: the incremental sync, keyset (updated_at, id)
CREATE INDEX "galleries_account_id_updated_at_id_idx" ON "galleries"("account_id", "updated_at", "id");

-- Contact.invoices (the contact's invoices newest first, keyset by (created_at, id); the LATERAL per contact in src/graphql/connection.ts)
CREATE INDEX "invoices_account_id_contact_id_created_at_id_idx" ON "invoices"("account_id", "contact_id", "created_at" DESC, "id" DESC);

-- Account.invoices(orderBy: UPDATED_AT) and filter.updatedAfter/updatedBefore: the incremental sync, keyset (updated_at, id)
CREATE INDEX "invoices_account_id_updated_at_id_idx" ON "invoices"("account_id", "updated_at", "id");

-- Account.invoices(orderBy: DUE_DATE (and filter.dueAfter/dueBefore)), keyset (due_date, id), either direction
CREATE INDEX "invoices_account_id_due_date_id_idx" ON "invoices"("account_id", "due_date", "id");

-- Account.invoices(orderBy: AMOUNT), keyset (amount, id), either direction
CREATE INDEX "invoices_account_id_amount_id_idx" ON "invoices"("account_id", "amount", "id");

-- Account.proposals: the default order CREATED_AT DESC, keyset (created_at, id); read backwards for ASC and `last`
CREATE INDEX "proposals_account_id_created_at_id_idx" ON "proposals"("account_id", "created_at" DESC, "id" DESC);

-- Contact.proposals (the contact's proposals newest first, keyset by (created_at, id); the LATERAL per contact in src/graphql/connection.ts)
CREATE INDEX "proposals_account_id_contact_id_created_at_id_idx" ON "proposals"("account_id", "contact_id", "created_at" DESC, "id" DESC);

-- Account.proposals(orderBy: UPDATED_AT) and filter.updatedAfter/updatedBefore: the incremental sync, keyset (updated_at, id)
CREATE INDEX "proposals_account_id_updated_at_id_idx" ON "proposals"("account_id", "updated_at", "id");

-- Account.workflows: the default order CREATED_AT DESC, keyset (created_at, id); read backwards for ASC and `last`
CREATE INDEX "workflows_account_id_created_at_id_idx" ON "workflows"("account_id", "created_at" DESC, "id" DESC);

-- Account.workflows(orderBy: UPDATED_AT) and filter.updatedAfter/updatedBefore: the incremental sync, keyset (updated_at, id)
CREATE INDEX "workflows_account_id_updated_at_id_idx" ON "workflows"("account_id", "updated_at", "id");
