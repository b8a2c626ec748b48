-- docs/decisions.md §16: external ids. A plain unique index is "unique where present": NULLs are
-- distinct in PostgreSQL, so any number of records have none; upserts use it as their ON CONFLICT target.
-- AlterTable
ALTER TABLE "contacts" ADD COLUMN     "external_id" VARCHAR(255);

-- AlterTable
ALTER TABLE "deals" ADD COLUMN     "external_id" VARCHAR(255);

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "external_id" VARCHAR(255);

-- CreateIndex
CREATE UNIQUE INDEX "contacts_account_id_external_id_key" ON "contacts"("account_id", "external_id");

-- CreateIndex
CREATE UNIQUE INDEX "deals_account_id_external_id_key" ON "deals"("account_id", "external_id");

-- CreateIndex
CREATE UNIQUE INDEX "invoices_account_id_external_id_key" ON "invoices"("account_id", "external_id");
