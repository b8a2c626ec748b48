-- DropForeignKey
ALTER TABLE "invoice_lines" DROP CONSTRAINT "invoice_lines_invoice_id_fkey";

-- DropForeignKey
ALTER TABLE "payments" DROP CONSTRAINT "payments_invoice_id_fkey";

-- Every table carries account_id (the shard key): lines take their invoice's.
ALTER TABLE "invoice_lines" ADD COLUMN     "account_id" UUID;
UPDATE "invoice_lines" l SET "account_id" = i."account_id" FROM "invoices" i WHERE i."id" = l."invoice_id";
ALTER TABLE "invoice_lines" ALTER COLUMN "account_id" SET NOT NULL;

-- AlterTable
ALTER TABLE "invoices" ADD COLUMN     "issued_at" TIMESTAMPTZ(3),
ADD COLUMN     "page_token" VARCHAR(64);

-- CreateIndex
CREATE UNIQUE INDEX "invoices_page_token_key" ON "invoices"("page_token");

-- CreateIndex
CREATE UNIQUE INDEX "invoices_account_id_id_key" ON "invoices"("account_id", "id");

-- AddForeignKey
ALTER TABLE "invoice_lines" ADD CONSTRAINT "invoice_lines_account_id_invoice_id_fkey" FOREIGN KEY ("account_id", "invoice_id") REFERENCES "invoices"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_account_id_invoice_id_fkey" FOREIGN KEY ("account_id", "invoice_id") REFERENCES "invoices"("account_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A line's position is unique within its invoice, keyed by the account like every unique key.
DROP INDEX "invoice_lines_invoice_id_position_key";
CREATE UNIQUE INDEX "invoice_lines_account_id_invoice_id_position_key" ON "invoice_lines"("account_id", "invoice_id", "position");
